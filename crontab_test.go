package main

// run crontab's jobs: the crontab file's lines and the config file's
// "jobs", each to the settings run cron would have, or one exact line.

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// crontabNow is the parse's clock: a schedule's check needs one.
var crontabNow = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// crontabProcess is run crontab's process settings for FILE f.tab, with
// extra flags before the FILE; $DIR/url holds a ping URL.
func crontabProcess(t *testing.T, extra ...string) *Settings {
	t.Helper()
	dir := configTestEnv(t, map[string]string{"url": "https://hc.example/from-the-file\n"})
	args := append(append(a("run", "crontab", "--candidate-id", "c", "--zookeeper-base-path", "/b"), extra...), "f.tab")
	set, err := parseIn(dir, args, nil)
	if err != nil {
		t.Fatalf("parseCommandLine(%q): %v", args, err)
	}
	return set
}

func TestParseCrontab(t *testing.T) {
	type want struct {
		name, where, sched string
		args               []string
		check              func(*Settings) string // "" or what is wrong
	}
	sh := func(cmd string) []string { return a("/bin/sh", "-c", cmd) }
	tests := []struct {
		name  string
		flags []string // the process's, before FILE
		text  string
		jobs  []want
		err   string // the whole message, when the text is bad
	}{
		{name: "the lead's example", text: "# one job a line: NAME SCHEDULE [OPTIONS] COMMAND\n" +
			"backup       0 3 * * *       --timeout 1h --retries 2        /usr/local/bin/backup --all\n" +
			"report       @daily                                          /usr/local/bin/report > /var/log/report.log 2>&1\n" +
			"\n" +
			"rotate       H 4 * * *       --overlap skip -- --weird-cmd-starting-with-dashes\n",
			jobs: []want{
				{"backup", "f.tab:2", "0 3 * * *", sh("/usr/local/bin/backup --all"), func(s *Settings) string {
					if s.Timeout != time.Hour || s.Retries != 2 || s.BasePath != "/b/backup" || s.Command != cmdRunCron ||
						s.Sources["timeout"] != "crontab f.tab:2" || s.Values["retries"] != "2" || s.Sources["schedule"] != "crontab f.tab:2" {
						return "timeout, retries, base path, command or sources"
					}
					return ""
				}},
				{"report", "f.tab:3", "@daily", sh("/usr/local/bin/report > /var/log/report.log 2>&1"), func(s *Settings) string {
					if s.Timeout != 0 || s.Retries != 0 || s.BasePath != "/b/report" || s.Sources["timeout"] != "default" {
						return "the defaults"
					}
					return ""
				}},
				{"rotate", "f.tab:5", "H 4 * * *", sh("--weird-cmd-starting-with-dashes"), nil},
			}},
		{name: "process defaults, a line overrides", flags: a("--timeout", "5m", "--retries", "1", "--timezone", "Europe/Paris"),
			text: "a @hourly --retries=3 --timezone UTC x\nb @hourly y\n",
			jobs: []want{
				{"a", "f.tab:1", "@hourly", sh("x"), func(s *Settings) string {
					if s.Timeout != 5*time.Minute || s.Retries != 3 || s.Timezone != time.UTC || s.Sources["timeout"] != "flag" {
						return "timeout 5m from the flag, retries 3 and UTC from the line"
					}
					return ""
				}},
				{"b", "f.tab:2", "@hourly", sh("y"), func(s *Settings) string {
					if s.Retries != 1 || s.Timezone.String() != "Europe/Paris" {
						return "the process's retries and zone"
					}
					return ""
				}},
			}},
		{name: "quoted six-field schedule, @every, quoted option value, negative value, % kept",
			text: "  # an indented comment\n" +
				"secs \"30 0 3 * * *\" date +%F\n" +
				"tick @every 30s --on-run-end '/bin/echo a b' --priority -5 echo \"it's $HOME\" | cat # a comment for sh\n",
			jobs: []want{
				{"secs", "f.tab:2", "30 0 3 * * *", sh("date +%F"), nil},
				{"tick", "f.tab:3", "@every 30s", sh(`echo "it's $HOME" | cat # a comment for sh`), func(s *Settings) string {
					if !slices.Equal(s.OnRunEnd, a("/bin/echo", "a", "b")) || s.Priority != -5 {
						return "--on-run-end split as on the command line, priority -5"
					}
					return ""
				}},
			}},
		{name: "continued lines, CRLF and a byte order mark",
			text: "\xef\xbb\xbfa 0 3 * * * \\\r\n   --timeout 1h \\\r\n   /bin/backup\r\n# c \\\nb @daily y\r\n",
			jobs: []want{
				{"a", "f.tab:1", "0 3 * * *", sh("/bin/backup"), func(s *Settings) string {
					if s.Timeout != time.Hour {
						return "timeout 1h from the continued line"
					}
					return ""
				}},
				{"b", "f.tab:5", "@daily", sh("y"), nil},
			}},
		{name: "a line's ping URL replaces the process's URL file", flags: a("--ping-url-file", "$DIR/url"),
			text: "a @daily --ping-url https://hc.example/abc x\n",
			jobs: []want{{"a", "f.tab:1", "@daily", sh("x"), func(s *Settings) string {
				if s.PingURL != "https://hc.example/abc" || s.PingURLFile != "" {
					return "the line's URL alone"
				}
				return ""
			}}}},

		// bad lines: one line each, naming the file, line, field and value
		{name: "name with a slash", text: "bad/name @daily x\n",
			err: `f.tab:1: job name "bad/name": contains '/'; use letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters`},
		{name: "name starting with a dot", text: ".hidden @daily x\n",
			err: `f.tab:1: job name ".hidden": starts with '.'; use letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters`},
		{name: "name too long", text: strings.Repeat("n", 65) + " @daily x\n",
			err: `f.tab:1: job name "` + strings.Repeat("n", 65) + `": 65 characters long; use letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters`},
		{name: "name of a node", text: "ok @daily x\nhistory @daily x\n",
			err: `f.tab:2: job name "history": is the name of one of ballot's own nodes under an election (baton, handover, cron, leader, once, history, pause, step-down, trigger, released, drain-…); choose another`},
		{name: "name of a drain node", text: "drain-web1 @daily x\n",
			err: `f.tab:1: job name "drain-web1": is the name of one of ballot's own nodes under an election (baton, handover, cron, leader, once, history, pause, step-down, trigger, released, drain-…); choose another`},
		{name: "name of a slot's baton", text: "baton-1 @daily x\n",
			err: `f.tab:1: job name "baton-1": is the name of one of ballot's own nodes under an election (baton, handover, cron, leader, once, history, pause, step-down, trigger, released, drain-…); choose another`},
		{name: "two jobs, one name", text: "a @daily x\n\na @hourly y\n",
			err: `f.tab:3: job name "a": already the name of the job at f.tab:1; give each job its own name`},
		{name: "a name alone", text: "lonely\n",
			err: `f.tab:1: job lonely: no schedule and no command; a job is NAME SCHEDULE [OPTIONS] COMMAND, e.g. lonely 0 3 * * * /usr/local/bin/lonely`},
		{name: "four fields", text: "a 0 3 * *\n",
			err: `f.tab:1: schedule "0 3 * *": 4 fields and no command; give five fields (minute hour day-of-month month day-of-week) or an @word such as @daily, then the command`},
		{name: "six fields unquoted", text: "a 30 0 3 * * * /bin/backup\n",
			err: `f.tab:1: job a: the command starts with "*", which reads like a sixth schedule field; quote a schedule of six or seven fields ("30 0 3 * * *")`},
		{name: "a year unquoted", text: "a 0 3 1 1 * 2027 /bin/backup\n",
			err: `f.tab:1: job a: the command starts with "2027", which reads like a sixth schedule field; quote a schedule of six or seven fields ("30 0 3 * * *")`},
		{name: "field out of range", text: "a 61 * * * * x\n",
			err: `f.tab:1: schedule "61 * * * *": not a valid cron expression: minute field 61: allowed 0-59`},
		{name: "date that never comes", text: "a 0 0 30 2 * x\n",
			err: `f.tab:1: schedule "0 0 30 2 *": valid syntax, but no such date comes (e.g. 30 February, or a year in the past); use a schedule that fires`},
		{name: "bad @every", text: "a @every 1.5s x\n",
			err: `f.tab:1: schedule "@every 1.5s": @every needs a whole number of seconds, at least 1s, such as @every 30s or @every 1h30m`},
		{name: "unknown @word", text: "a @sometimes x\n",
			err: `f.tab:1: schedule "@sometimes": not a valid cron expression; use 5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, an optional year last, or @yearly, @monthly, @weekly, @daily, @hourly, @every 30s`},
		{name: "bad option value", text: "a @daily --timeout 1hour x\n",
			err: `f.tab:1: --timeout "1hour": not a duration; use a Go duration such as 5s or 500ms`},
		{name: "bad enum value", text: "a @daily --overlap never x\n",
			err: `f.tab:1: --overlap "never": not an overlap policy; use one of skip, queue, replace, allow`},
		{name: "unknown option", text: "a @daily --frobnicate 1 x\n",
			err: `f.tab:1: unknown option --frobnicate; a job takes ` + jobOptionList()},
		{name: "a process flag", text: "a @daily --zookeeper-servers zk9 x\n",
			err: `f.tab:1: --zookeeper-servers: not per job; it is the whole process's (one session, one log, one candidate), so give it on ballot run crontab's command line`},
		{name: "the candidate", text: "a @daily --candidate-id other x\n",
			err: `f.tab:1: --candidate-id: not per job; it is the whole process's (one session, one log, one candidate), so give it on ballot run crontab's command line`},
		{name: "a health check", text: "a @daily --health-check=true x\n",
			err: `f.tab:1: --health-check: not per job; it is the whole process's (one session, one log, one candidate), so give it on ballot run crontab's command line`},
		{name: "the metrics file", text: "a @daily --metrics-file /tmp/a.prom x\n",
			err: `f.tab:1: --metrics-file: not per job; it is the whole process's (one session, one log, one candidate), so give it on ballot run crontab's command line`},
		{name: "a run once flag", text: "a @daily --once-key k x\n",
			err: `f.tab:1: unknown option --once-key; it applies to run once only; a job takes ` + jobOptionList()},
		{name: "--schedule on a line", text: "a @daily --schedule @hourly x\n",
			err: `f.tab:1: --schedule: a job's schedule is its line's second field; leave --schedule out`},
		{name: "an option twice", text: "a @daily --retries 1 --retries=2 x\n",
			err: `f.tab:1: --retries given 2 times ("1", "2"): it takes one value; give it once`},
		{name: "an option without its value", text: "a @daily --timeout\n",
			err: `f.tab:1: --timeout needs a value, e.g. --timeout=VALUE, and the command after it`},
		{name: "no command", text: "a @daily --timeout 1h\n",
			err: `f.tab:1: job a: no command; put it after the schedule and options (it runs by /bin/sh -c)`},
		{name: "no command after --", text: "a @daily --timeout 1h --   \n",
			err: `f.tab:1: job a: no command; put it after the schedule and options (it runs by /bin/sh -c)`},
		{name: "a NUL in the command", text: "a @daily echo \x00\n",
			err: `f.tab:1: job a: the command contains a NUL character, which no command line can hold`},
		{name: "unterminated quote", text: "a @daily --on-run-end 'x y\n",
			err: `f.tab:1: --on-run-end: unterminated single quote; close it with '`},
		{name: "continuation at the end", text: "a @daily x \\\n",
			err: `f.tab:1: the line ends with "\" but no line follows it; remove the "\"`},
		{name: "no jobs", text: "# nothing yet\n\n",
			err: `run crontab f.tab: no jobs in it; a job is a line NAME SCHEDULE [OPTIONS] COMMAND (see ballot help run crontab)`},
		{name: "run cron's cross-checks, by line", text: "a @daily x\nb @daily --slots 2 --preempt-after 1m y\n",
			err: `f.tab:2: --preempt-after 1m0s: not with --slots 2, where no holder hands over for a priority (priorities only order the line); leave it out, or give 0`},
		{name: "a process default that is bad for every job", flags: a("--ping-url-file", "/nonexistent/url"), text: "a @daily x\n",
			err: `run crontab: --ping-url-file "/nonexistent/url": cannot read it: no such file or directory`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := crontabProcess(t, tt.flags...)
			jobs, err := parseCrontab(set, "f.tab", []byte(tt.text), crontabNow)
			if tt.err != "" {
				var ue *usageError
				if !errors.As(err, &ue) {
					t.Fatalf("parseCrontab = %d jobs, %v (%T), want the usage error %q", len(jobs), err, err, tt.err)
				}
				if err.Error() != tt.err {
					t.Errorf("message:\n got %s\nwant %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != len(tt.jobs) {
				t.Fatalf("%d jobs, want %d", len(jobs), len(tt.jobs))
			}
			for i, w := range tt.jobs {
				j := jobs[i]
				if j.Name != w.name || j.Where != w.where || j.Set.Schedule != w.sched || !slices.Equal(j.Set.Args, w.args) {
					t.Errorf("job %d = %q at %q, schedule %q, args %q; want %q at %q, %q, %q", i, j.Name, j.Where, j.Set.Schedule, j.Set.Args, w.name, w.where, w.sched, w.args)
				}
				if j.Set == set || j.Set.Command != cmdRunCron || j.Set.BasePath != "/b/"+w.name {
					t.Errorf("job %s: settings not its own run cron's (base %q)", w.name, j.Set.BasePath)
				}
				if w.check != nil {
					if bad := w.check(j.Set); bad != "" {
						t.Errorf("job %s: want %s; got %+v", w.name, bad, *j.Set)
					}
				}
			}
			if set.Timeout != 0 && set.Sources["timeout"] != "flag" || set.Sources["retries"] == "crontab f.tab:1" {
				t.Errorf("a job's options changed the process's settings: %v", set.Sources)
			}
		})
	}
}

// TestCrontabConfigJobs: the config file's "jobs", and their errors.
func TestCrontabConfigJobs(t *testing.T) {
	tests := []struct {
		name string
		jobs string // the value of "jobs"
		err  string // "" for good; the message, $CFG for the file
	}{
		{name: "good", jobs: `[{"name": "backup", "schedule": "0 3 * * *", "command": "/bin/backup --all > /dev/null", "timeout": "1h", "retries": 2},
			{"name": "rotate", "schedule": "30 0 4 * * *", "args": ["/bin/echo", "--keep", "7"], "on-run-end": ["/bin/echo", "a b"]}]`},
		{name: "not an array", jobs: `{"name": "a"}`,
			err: `config file $CFG: key "jobs": expected an array of jobs such as [{"name": "backup", "schedule": "0 3 * * *", "command": "/usr/local/bin/backup"}], got {"name":"a"}`},
		{name: "empty", jobs: `[]`,
			err: `config file $CFG: key "jobs": no jobs in it; give at least one {"name": …, "schedule": …, "command": …}`},
		{name: "not an object", jobs: `["a"]`,
			err: `config file $CFG: jobs[0]: expected a job object such as {"name": "backup", "schedule": "0 3 * * *", "command": "/usr/local/bin/backup"}, got "a"`},
		{name: "no name", jobs: `[{"schedule": "@daily", "command": "x"}]`,
			err: `config file $CFG: jobs[0]: key "name": missing or empty; every job needs a name, its election's node under the base path`},
		{name: "bad name", jobs: `[{"name": "a b", "schedule": "@daily", "command": "x"}]`,
			err: `config file $CFG: jobs[0]: key "name" "a b": contains ' '; use letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters`},
		{name: "no schedule", jobs: `[{"name": "a", "command": "x"}]`,
			err: `config file $CFG: jobs[0] (a): key "schedule": missing or empty; use a cron expression such as "0 3 * * *" or @daily`},
		{name: "bad schedule", jobs: `[{"name": "a", "schedule": "0 25 * * *", "command": "x"}]`,
			err: `config file $CFG: jobs[0] (a): schedule "0 25 * * *": not a valid cron expression: hour field 25: allowed 0-23`},
		{name: "command and args", jobs: `[{"name": "a", "schedule": "@daily", "command": "x", "args": ["x"]}]`,
			err: `config file $CFG: jobs[0] (a): both "command" and "args"; give one: "command" is a shell line, "args" the argv run as it is`},
		{name: "neither command nor args", jobs: `[{"name": "a", "schedule": "@daily"}]`,
			err: `config file $CFG: jobs[0] (a): no "command" (a shell line) and no "args" (argv); give one`},
		{name: "empty command", jobs: `[{"name": "a", "schedule": "@daily", "command": " "}]`,
			err: `config file $CFG: jobs[0] (a): key "command": empty or with a NUL character; give the command line, run by /bin/sh -c`},
		{name: "bad args", jobs: `[{"name": "a", "schedule": "@daily", "args": "x"}]`,
			err: `config file $CFG: jobs[0] (a): key "args": expected a non-empty array of strings such as ["/usr/local/bin/backup", "--all"], got "x"`},
		{name: "wrong type", jobs: `[{"name": "a", "schedule": "@daily", "command": "x", "retries": "2"}]`,
			err: `config file $CFG: jobs[0] (a): key "retries": expected a whole number such as 3, got "2"`},
		{name: "bad value", jobs: `[{"name": "a", "schedule": "@daily", "command": "x", "overlap": "never"}]`,
			err: `config file $CFG: jobs[0] (a): key "overlap" "never": not an overlap policy; use one of skip, queue, replace, allow`},
		{name: "a process key", jobs: `[{"name": "a", "schedule": "@daily", "command": "x", "log-level": "debug"}]`,
			err: `config file $CFG: jobs[0] (a): key "log-level": --log-level: not per job; it is the whole process's (one session, one log, one candidate), so give it at the config file's top level`},
		{name: "the metrics file", jobs: `[{"name": "a", "schedule": "@daily", "command": "x", "metrics-file": "/tmp/a.prom"}]`,
			err: `config file $CFG: jobs[0] (a): key "metrics-file": --metrics-file: not per job; it is the whole process's (one session, one log, one candidate), so give it at the config file's top level`},
		{name: "an unknown key", jobs: `[{"name": "a", "schedule": "@daily", "command": "x", "frob": 1}]`,
			err: `config file $CFG: jobs[0] (a): key "frob": unknown option --frob; a job takes ` + jobOptionList()},
		{name: "a key twice", jobs: `[{"name": "a", "schedule": "@daily", "command": "x", "command": "y"}]`,
			err: `config file $CFG: jobs[0]: key "command" appears more than once`},
		{name: "two jobs, one name", jobs: `[{"name": "a", "schedule": "@daily", "command": "x"}, {"name": "a", "schedule": "@daily", "command": "y"}]`,
			err: `config file $CFG: jobs[1] (a): job name "a": already the name of jobs[0] (a); give each job its own name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := configTestEnv(t, map[string]string{"c.json": `{"zookeeper-base-path": "/b", "timeout": "5m", "jobs": ` + tt.jobs + `}`})
			cfg := filepath.Join(dir, "c.json")
			set, err := parseIn(dir, a("run", "crontab", "--candidate-id", "c", "--config-file", cfg), nil)
			if err != nil {
				t.Fatal(err)
			}
			jobs, err := configJobs(set, set.ConfigJobs, crontabNow)
			if tt.err != "" {
				if want := strings.ReplaceAll(tt.err, "$CFG", cfg); err == nil || err.Error() != want {
					t.Errorf("message:\n got %v\nwant %s", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 2 {
				t.Fatalf("%d jobs, want 2", len(jobs))
			}
			b, r := jobs[0], jobs[1]
			if b.Name != "backup" || b.Where != "config file "+cfg+": jobs[0] (backup)" || b.Set.BasePath != "/b/backup" ||
				!slices.Equal(b.Set.Args, a("/bin/sh", "-c", "/bin/backup --all > /dev/null")) || b.Set.Timeout != time.Hour || b.Set.Retries != 2 {
				t.Errorf("backup = %+v, %+v", b, *b.Set)
			}
			if r.Name != "rotate" || r.Set.Schedule != "30 0 4 * * *" || !slices.Equal(r.Set.Args, a("/bin/echo", "--keep", "7")) ||
				r.Set.Timeout != 5*time.Minute || !slices.Equal(r.Set.OnRunEnd, a("/bin/echo", "a b")) {
				t.Errorf("rotate = %+v, %+v", r, *r.Set)
			}
		})
	}
}

// TestLoadCrontabFile: the FILE itself, missing or not a file.
func TestLoadCrontabFile(t *testing.T) {
	dir := t.TempDir()
	set := crontabProcess(t)
	for _, tt := range []struct{ file, want string }{
		{filepath.Join(dir, "missing"), "run crontab $DIR/missing: no such file"},
		{dir, "run crontab $DIR: is a directory, not a crontab file"},
	} {
		set.CrontabFile = tt.file
		if _, err := loadCrontab(set); err == nil || err.Error() != strings.ReplaceAll(tt.want, "$DIR", dir) {
			t.Errorf("loadCrontab(%s) = %v, want %s", tt.file, err, tt.want)
		}
	}
	f := filepath.Join(dir, "good.tab")
	if err := os.WriteFile(f, []byte("a @daily x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set.CrontabFile = f
	if jobs, err := loadCrontab(set); err != nil || len(jobs) != 1 || jobs[0].Where != f+":1" {
		t.Errorf("loadCrontab(%s) = %+v, %v", f, jobs, err)
	}
}

// TestCrontabDocs: docs/cron.md's list of per-job options is the table's.
func TestCrontabDocs(t *testing.T) {
	data, err := os.ReadFile("docs/cron.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(data), "<!-- per-job options: kept equal to params.go's job marks by TestCrontabDocs -->")
	list, _, ok2 := strings.Cut(list, "<!-- end of per-job options -->")
	if !ok || !ok2 {
		t.Fatal("docs/cron.md lacks the marked list of per-job options")
	}
	var got []string
	for _, m := range regexp.MustCompile("`--([a-z-]+)`").FindAllStringSubmatch(list, -1) {
		got = append(got, "--"+m[1])
	}
	if want := strings.Split(jobOptionList(), ", "); !slices.Equal(got, want) {
		t.Errorf("docs/cron.md's per-job options are\n%q\nparams.go's\n%q", got, want)
	}
}

// TestLoadCrontabConfigReload: without a FILE, each load (a reload) reads
// the config file's "jobs" as the file is then.
func TestLoadCrontabConfigReload(t *testing.T) {
	dir := configTestEnv(t, map[string]string{"c.json": `{"jobs": [{"name": "a", "schedule": "@daily", "command": "x"}]}`})
	cfg := filepath.Join(dir, "c.json")
	set, err := parseIn(dir, a("run", "crontab", "--candidate-id", "c", "--config-file", cfg), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := func() ([]string, error) {
		jobs, err := loadCrontab(set)
		var n []string
		for _, j := range jobs {
			n = append(n, j.Name)
		}
		return n, err
	}
	if n, err := names(); err != nil || !slices.Equal(n, a("a")) {
		t.Fatalf("first load: %q, %v", n, err)
	}
	write := func(text string) {
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"jobs": [{"name": "a", "schedule": "@daily", "command": "x"}, {"name": "b", "schedule": "@hourly", "command": "y"}]}`)
	if n, err := names(); err != nil || !slices.Equal(n, a("a", "b")) {
		t.Errorf("after an edit: %q, %v; want a and b", n, err)
	}
	write(`{"timeout": "1h"}`)
	if _, err := names(); err == nil || err.Error() != `config file `+cfg+`: no "jobs" in it any more; run crontab takes its jobs from there` {
		t.Errorf("without jobs: %v", err)
	}
}

// TestLoadCrontabSharesSettingsMaps: jobs whose settings maps are equal
// once their schedules' entries are out share one map each (issue 34);
// a job with an option of its own keeps its own; none shares the
// process's, which a job's parse would otherwise have written; a reload
// of the same file finds every job unchanged.
func TestLoadCrontabSharesSettingsMaps(t *testing.T) {
	dir := t.TempDir()
	set := crontabProcess(t)
	f := filepath.Join(dir, "f.tab")
	if err := os.WriteFile(f, []byte("a @daily x\nb 0 3 * * * y\nc @hourly --timeout 5m z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set.CrontabFile = f
	jobs, err := loadCrontab(set)
	if err != nil || len(jobs) != 3 {
		t.Fatalf("loadCrontab = %+v, %v", jobs, err)
	}
	same := func(x, y map[string]string) bool {
		return reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer()
	}
	a, b, c := jobs[0].Set, jobs[1].Set, jobs[2].Set
	if !same(a.Sources, b.Sources) || !same(a.Values, b.Values) {
		t.Error("jobs a and b, equal but for their schedules, do not share their settings maps")
	}
	if same(a.Sources, c.Sources) || same(a.Values, c.Values) || c.Values["timeout"] != "5m" || c.Sources["timeout"] != "crontab "+f+":3" {
		t.Errorf("job c (--timeout 5m) shares a's maps or lost its option: %q from %q", c.Values["timeout"], c.Sources["timeout"])
	}
	if same(a.Sources, set.Sources) || same(a.Values, set.Values) {
		t.Error("a job shares the process's own maps")
	}
	for _, j := range jobs {
		if _, ok := j.Set.Values["schedule"]; ok || j.Set.Schedule == "" {
			t.Errorf("job %s: schedule %q, in its Values too: %v", j.Name, j.Set.Schedule, ok)
		}
	}
	again, err := loadCrontab(set)
	if err != nil {
		t.Fatal(err)
	}
	for i := range jobs {
		if !sameJob(jobs[i], again[i]) {
			t.Errorf("job %s: a reload of the same file finds it changed", jobs[i].Name)
		}
	}
	changed := jobs[1]
	changed.Set = &Settings{}
	*changed.Set = *jobs[1].Set
	changed.Set.Schedule = "0 4 * * *"
	if sameJob(jobs[1], changed) {
		t.Error("a changed schedule is not a changed job")
	}
}
