package main

// run crontab's jobs: a crontab FILE, one job a line, or the config file's
// "jobs", each turned into the settings run cron would have for it.
//
//	# NAME   SCHEDULE    [OPTIONS]                  COMMAND (by /bin/sh -c)
//	backup   0 3 * * *   --timeout 1h --retries 2   /usr/local/bin/backup --all
//
// Every error is one line: where (FILE:LINE), the field, the value, what
// is allowed; option errors have the command line's words.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"strconv"
	"strings"
	"time"

	"ballot/internal/jsonlite"
)

// Limits of a job's name: one path element, short enough for a log line.
const jobNameMax = 64

// crontabShell runs a line's command, as cron does.
var crontabShell = []string{"/bin/sh", "-c"}

// loadCrontab reads the jobs of a crontab file (set.CrontabFile) or,
// without one, of the config file's "jobs"; every error is one line naming
// the file, the line, the field, the bad value and what is allowed.
//
// It reads the file again at each call (a reload: SIGHUP), the config
// file's "jobs" too; the process's settings are set's, from the start.
func loadCrontab(set *Settings) (jobs []cronJob, err error) {
	defer func() { shareSettingsMaps(jobs) }()
	if set.CrontabFile == "" {
		raw, err := reloadConfigJobs(set)
		if err != nil {
			return nil, err
		}
		return configJobs(set, raw, time.Now())
	}
	f := set.CrontabFile
	data, err := os.ReadFile(f)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, usagef("run crontab %s: no such file", f)
	case err != nil && isDirErr(f):
		return nil, usagef("run crontab %s: is a directory, not a crontab file", f)
	case err != nil:
		return nil, usagef("run crontab %s: cannot read: %v", f, pathErr(err))
	}
	return parseCrontab(set, f, data, time.Now())
}

// shareSettingsMaps: once a load's jobs are checked, each job's Sources
// and Values are only read (checkRun again at launch, sameJob at a
// reload), and most are the process's with the job's schedule added.
// Without the schedule's entries (the schedule is Settings.Schedule,
// which sameJob compares; its line is cronJob.Where), equal maps are
// one map shared by their jobs (issue 34: 200 jobs' copies were 0.9 MB
// of live heap). Nothing writes a job's maps after its load.
func shareSettingsMaps(jobs []cronJob) {
	seen := map[string]map[string]string{}
	share := func(m map[string]string) map[string]string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sortStrings(keys)
		var b strings.Builder
		for _, k := range keys {
			b.WriteString(k + "\x00" + m[k] + "\x00")
		}
		if s, ok := seen[b.String()]; ok {
			return s
		}
		seen[b.String()] = m
		return m
	}
	for _, j := range jobs {
		delete(j.Set.Sources, "schedule")
		delete(j.Set.Values, "schedule")
		j.Set.Sources, j.Set.Values = share(j.Set.Sources), share(j.Set.Values)
	}
}

// reloadConfigJobs is the config file's "jobs" as the file is now; the
// parse's copy when there is no file to read again.
func reloadConfigJobs(set *Settings) ([]byte, error) {
	if set.ConfigFile == "" {
		return set.ConfigJobs, nil
	}
	data, err := os.ReadFile(set.ConfigFile)
	if err != nil {
		return nil, usagef("config file %s: cannot read: %v", set.ConfigFile, pathErr(err))
	}
	cfg, err := parseConfig(set.ConfigFile, data)
	if err != nil {
		return nil, err
	}
	raw, ok := cfg.get(configJobsKey)
	if !ok {
		return nil, usagef(`config file %s: no "jobs" in it any more; run crontab takes its jobs from there`, set.ConfigFile)
	}
	return raw, nil
}

func isDirErr(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// parseCrontab parses a crontab's text; file is for messages, now for the
// schedules' check that a time comes.
func parseCrontab(set *Settings, file string, data []byte, now time.Time) ([]cronJob, error) {
	if err := checkProcess(set); err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	lines := strings.Split(string(data), "\n")
	var jobs []cronJob
	taken := map[string]string{} // name: where
	for i := 0; i < len(lines); i++ {
		start := i + 1
		line := strings.TrimSuffix(lines[i], "\r")
		if t := strings.TrimLeft(line, " \t"); t == "" || t[0] == '#' {
			continue // a comment never continues
		}
		// A trailing backslash joins the next line, as in sh: both go.
		for strings.HasSuffix(line, `\`) && !strings.HasSuffix(line, `\\`) {
			if i+1 == len(lines) || i+2 == len(lines) && lines[i+1] == "" {
				return nil, usagef(`%s:%d: the line ends with "\" but no line follows it; remove the "\"`, file, start)
			}
			i++
			line = line[:len(line)-1] + strings.TrimSuffix(lines[i], "\r")
		}
		where := file + ":" + strconv.Itoa(start)
		job, err := parseCrontabLine(set, where, line, now)
		if err != nil {
			return nil, err
		}
		if prev, dup := taken[job.Name]; dup {
			return nil, usagef("%s: job name %q: already the name of the job at %s; give each job its own name", where, job.Name, prev)
		}
		taken[job.Name] = where
		jobs = append(jobs, job)
	}
	if len(jobs) == 0 {
		return nil, usagef("run crontab %s: no jobs in it; a job is a line NAME SCHEDULE [OPTIONS] COMMAND (see ballot help run crontab)", file)
	}
	return jobs, nil
}

// parseCrontabLine is one job's line: NAME SCHEDULE [OPTIONS] COMMAND.
func parseCrontabLine(set *Settings, where, line string, now time.Time) (cronJob, error) {
	fail := func(format string, a ...any) (cronJob, error) {
		return cronJob{}, usagef("%s: "+format, append([]any{where}, a...)...)
	}
	name, i, _ := nextWord(line, 0, false)
	if err := checkJobName(name); err != nil {
		return fail("job name %q: %v", name, err)
	}

	// The schedule: an @word (@every takes its duration too), a quoted
	// expression (any form --schedule takes), or five fields.
	var sched string
	first, j, err := nextWord(line, i, true)
	switch {
	case err != nil:
		return fail("schedule: %v", err)
	case first == "":
		return fail("job %s: no schedule and no command; a job is NAME SCHEDULE [OPTIONS] COMMAND, e.g. %s 0 3 * * * /usr/local/bin/%s", name, name, name)
	case j > i && (line[skipBlanks(line, i)] == '"' || line[skipBlanks(line, i)] == '\''):
		sched, i = first, j
	case first == "@every":
		d, k, _ := nextWord(line, j, false)
		sched, i = first+" "+d, k
	case strings.HasPrefix(first, "@"):
		sched, i = first, j
	default:
		fields := []string{first}
		i = j
		for len(fields) < 5 {
			f, k, _ := nextWord(line, i, false)
			if f == "" {
				return fail("schedule %q: %d fields and no command; give five fields (minute hour day-of-month month day-of-week) or an @word such as @daily, then the command", strings.Join(fields, " "), len(fields))
			}
			fields, i = append(fields, f), k
		}
		sched = strings.Join(fields, " ")
	}

	job := newJobSettings(set, name, where)
	job.Schedule = sched
	job.Sources["schedule"], job.Values["schedule"] = "crontab "+where, sched

	// Options, up to "--" or the first word without a leading "-".
	given := map[string]string{}
	for {
		k := skipBlanks(line, i)
		if k == len(line) || line[k] != '-' {
			break
		}
		opt, next, err := nextWord(line, k, true)
		if err != nil {
			return fail("%v", err)
		}
		i = next
		if opt == "--" {
			break
		}
		flag, v, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(opt, "-"), "-"), "=")
		p, err := jobParam(flag)
		if err != nil {
			return fail("%v", err)
		}
		if !hasValue && p.kind != kindBool {
			if v, next, err = nextWord(line, i, true); err != nil {
				return fail("--%s: %v", flag, err)
			}
			if skipBlanks(line, i) == len(line) {
				return fail("--%s needs a value, e.g. --%s=VALUE, and the command after it", flag, flag)
			}
			i = next
		} else if !hasValue {
			v = "true"
		}
		if prev, dup := given[flag]; dup {
			return fail("--%s given 2 times (%q, %q): it takes one value; give it once", flag, prev, v)
		}
		given[flag] = v
		if err := applyJobOption(job, p, v, "crontab "+where); err != nil {
			return fail("%v", err)
		}
	}
	cmd := strings.TrimRight(line[skipBlanks(line, i):], " \t")
	if cmd == "" {
		return fail("job %s: no command; put it after the schedule and options (it runs by /bin/sh -c)", name)
	}
	if w, _, _ := nextWord(cmd, 0, false); looksLikeField(w) {
		// "30 0 3 * * * cmd" would run "* cmd", a glob, at 00:30 on the 3rd.
		return fail(`job %s: the command starts with %q, which reads like a sixth schedule field; quote a schedule of six or seven fields ("30 0 3 * * *")`, name, w)
	}
	if strings.IndexByte(cmd, 0) >= 0 {
		return fail("job %s: the command contains a NUL character, which no command line can hold", name)
	}
	job.Args = append(append([]string(nil), crontabShell...), cmd)
	return finishJob(job, name, where, now)
}

// newJobSettings is a job's settings before its own options: the
// process's, for the election <base>/<name>.
func newJobSettings(set *Settings, name, where string) *Settings {
	job := *set
	job.Command = cmdRunCron
	job.BasePath = set.BasePath + "/" + name
	job.Sources, job.Values = maps.Clone(set.Sources), maps.Clone(set.Values)
	job.CrontabFile, job.CrontabCheck, job.ConfigJobs = "", false, nil
	job.Args = nil
	return &job
}

// applyJobOption sets one of a job's options, worded as the command line
// words it; giving one of --ping-url and --ping-url-file drops the
// process's other, which would otherwise contradict it.
func applyJobOption(job *Settings, p *param, v, src string) error {
	if err := p.apply(job, v); err != nil {
		return fmt.Errorf("--%s %s: %v", p.name, p.quote(v), err)
	}
	job.Sources[p.name], job.Values[p.name] = src, v
	switch p.name {
	case "ping-url":
		job.PingURLFile = ""
	case "ping-url-file":
		job.PingURL = ""
	}
	return nil
}

// finishJob checks a job's settings as run cron checks its own, and its
// schedule; where prefixes every error.
func finishJob(job *Settings, name, where string, now time.Time) (cronJob, error) {
	expr, err := hashExpr(job.Schedule, job.BasePath)
	if err != nil {
		return cronJob{}, usagef("%s: schedule %q: %v", where, job.Schedule, err)
	}
	if _, err := parseSchedule(expr, where+": schedule", job.Timezone, now); err != nil {
		return cronJob{}, usagef("%v", err)
	}
	if _, _, err := checkRun(job); err != nil {
		return cronJob{}, usagef("%s: %v", where, err)
	}
	return cronJob{Name: name, Where: where, Set: job}, nil
}

// checkProcess checks the process's own settings once, as run cron would
// (a job's check names its line; these came from the command line).
func checkProcess(set *Settings) error {
	proc := newJobSettings(set, "check", "")
	proc.Schedule, proc.Args = "@daily", append(append([]string(nil), crontabShell...), "true")
	if _, _, err := checkRun(proc); err != nil {
		return usagef("run crontab: %v", err)
	}
	return nil
}

// jobParam is the parameter of a job's option, or why a job cannot take it.
func jobParam(name string) (*param, error) {
	p := lookupParam(name)
	switch {
	case name == "schedule":
		return nil, errors.New("--schedule: a job's schedule is its line's second field; leave --schedule out")
	case p == nil || !p.scope.usedBy(cmdRunCrontab):
		if p != nil {
			return nil, fmt.Errorf("unknown option --%s; it applies to %s only; a job takes %s", name, p.scope.commands(), jobOptionList())
		}
		return nil, fmt.Errorf("unknown option --%s; a job takes %s", name, jobOptionList())
	case !p.job:
		return nil, fmt.Errorf("--%s: not per job; it is the whole process's (one session, one log, one candidate), so give it on ballot run crontab's command line", name)
	}
	return p, nil
}

// jobOptionList names the options a job takes, for messages.
func jobOptionList() string {
	var names []string
	for _, p := range params {
		if p.job {
			names = append(names, "--"+p.name)
		}
	}
	return strings.Join(names, ", ")
}

// checkJobName: a job's name is one ZooKeeper path element of its own,
// never a node ballot keeps under an election (nodes.go), so that a job's
// election never reads as a node of an election at the base path.
func checkJobName(name string) error {
	const allowed = "use letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters"
	switch {
	case name == "":
		return errors.New("empty; " + allowed)
	case len(name) > jobNameMax:
		return fmt.Errorf("%d characters long; %s", len(name), allowed)
	case !isAlnum(name[0]):
		return fmt.Errorf("starts with %q; %s", name[0], allowed)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' {
			return fmt.Errorf("contains %q; %s", c, allowed)
		}
	}
	if ballotNodeName(name) {
		return errors.New("is the name of one of ballot's own nodes under an election (baton, handover, cron, leader, once, history, pause, step-down, trigger, released, drain-…); choose another")
	}
	return nil
}

// looksLikeField: w is made of a cron field's digits and signs only (a
// command never is), or is an H field.
func looksLikeField(w string) bool {
	if w == "H" || strings.HasPrefix(w, "H(") || strings.HasPrefix(w, "H/") {
		return true
	}
	return w != "" && strings.Trim(w, "0123456789*/,-?") == ""
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// nextWord is the blank-separated word of line at or after i, and where
// it ends; with quotes, '…' and "…" and \ quote as in sh (the options'
// values: --on-run-end '/usr/local/bin/notify --job backup').
func nextWord(line string, i int, quotes bool) (word string, end int, err error) {
	i = skipBlanks(line, i)
	var b strings.Builder
	for ; i < len(line) && line[i] != ' ' && line[i] != '\t'; i++ {
		c := line[i]
		switch {
		case !quotes:
			b.WriteByte(c)
		case c == '\'':
			k := strings.IndexByte(line[i+1:], '\'')
			if k < 0 {
				return "", 0, errors.New(`unterminated single quote; close it with '`)
			}
			b.WriteString(line[i+1 : i+1+k])
			i += k + 1
		case c == '"':
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\\\"$`", line[i+1]) >= 0 {
					i++
				}
				b.WriteByte(line[i])
			}
			if i == len(line) {
				return "", 0, errors.New(`unterminated double quote; close it with "`)
			}
		case c == '\\' && i+1 < len(line):
			i++
			b.WriteByte(line[i])
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), i, nil
}

// configJobs is the config file's "jobs": an array of objects with
// "name", "schedule", "command" (a shell line) or "args" (argv), and the
// per-job options by their keys. A job's place is jobs[i], from 0, as jq
// numbers it.
func configJobs(set *Settings, raw []byte, now time.Time) ([]cronJob, error) {
	if err := checkProcess(set); err != nil {
		return nil, err
	}
	prefix := fmt.Sprintf("config file %s: key %q", set.ConfigFile, configJobsKey)
	var elems []jsonlite.RawMessage
	if err := jsonlite.Unmarshal(raw, &elems); err != nil || elems == nil {
		return nil, usagef(`%s: expected an array of jobs such as [{"name": "backup", "schedule": "0 3 * * *", "command": "/usr/local/bin/backup"}], got %s`, prefix, describeJSON(raw))
	}
	if len(elems) == 0 {
		return nil, usagef(`%s: no jobs in it; give at least one {"name": …, "schedule": …, "command": …}`, prefix)
	}
	var jobs []cronJob
	taken := map[string]string{}
	for i, e := range elems {
		where := fmt.Sprintf("config file %s: jobs[%d]", set.ConfigFile, i)
		job, err := configJob(set, where, e, now)
		if err != nil {
			return nil, err
		}
		if prev, dup := taken[job.Name]; dup {
			return nil, usagef("%s: job name %q: already the name of %s; give each job its own name", job.Where, job.Name, strings.TrimPrefix(prev, "config file "+set.ConfigFile+": "))
		}
		taken[job.Name] = job.Where
		jobs = append(jobs, job)
	}
	return jobs, nil
}

// configJob is one entry of "jobs".
func configJob(set *Settings, where string, raw jsonlite.RawMessage, now time.Time) (cronJob, error) {
	keys, vals, err := jsonObject(raw)
	if err != nil {
		return cronJob{}, usagef("%s: %v", where, err)
	}
	str := func(key string) (string, error) {
		var s string
		if raw, ok := vals[key]; !ok {
			return "", nil
		} else if string(raw) == "null" || jsonlite.Unmarshal(raw, &s) != nil {
			return "", fmt.Errorf("key %q: expected a string, got %s", key, describeJSON(raw))
		}
		return s, nil
	}
	name, err := str("name")
	if err == nil && name == "" {
		err = errors.New(`key "name": missing or empty; every job needs a name, its election's node under the base path`)
	}
	if err == nil {
		if e := checkJobName(name); e != nil {
			err = fmt.Errorf("key \"name\" %q: %v", name, e)
		}
	}
	if err != nil {
		return cronJob{}, usagef("%s: %v", where, err)
	}
	where = fmt.Sprintf("%s (%s)", where, name)
	sched, err := str("schedule")
	if err == nil && strings.TrimSpace(sched) == "" {
		err = errors.New(`key "schedule": missing or empty; use a cron expression such as "0 3 * * *" or @daily`)
	}
	if err != nil {
		return cronJob{}, usagef("%s: %v", where, err)
	}
	job := newJobSettings(set, name, where)
	job.Schedule = sched
	job.Sources["schedule"], job.Values["schedule"] = where, sched

	c := &configFile{path: set.ConfigFile + ": " + strings.TrimPrefix(where, "config file "+set.ConfigFile+": ")}
	for _, k := range keys {
		switch k {
		case "name", "schedule":
			continue
		case "command":
			cmd, err := str(k)
			if err != nil {
				return cronJob{}, usagef("%s: %v", where, err)
			}
			if strings.TrimSpace(cmd) == "" || strings.IndexByte(cmd, 0) >= 0 {
				return cronJob{}, usagef(`%s: key "command": empty or with a NUL character; give the command line, run by /bin/sh -c`, where)
			}
			job.Args = append(append([]string(nil), crontabShell...), cmd)
			continue
		case "args":
			var argv []string
			if err := jsonlite.Unmarshal(vals[k], &argv); err != nil || checkArgv(argv) != nil {
				return cronJob{}, usagef(`%s: key "args": expected a non-empty array of strings such as ["/usr/local/bin/backup", "--all"], got %s`, where, describeJSON(vals[k]))
			}
			job.Args = argv
			continue
		}
		p, err := jobParam(k)
		if err != nil {
			return cronJob{}, usagef("%s: key %q: %v", where, k, strings.Replace(err.Error(), "on ballot run crontab's command line", "at the config file's top level", 1))
		}
		if err := c.apply(job, p, vals[k]); err != nil {
			return cronJob{}, err
		}
		job.Sources[p.name], job.Values[p.name] = where, compactJSON(vals[k])
		switch p.name {
		case "ping-url":
			job.PingURLFile = ""
		case "ping-url-file":
			job.PingURL = ""
		}
	}
	_, hasCmd := vals["command"]
	_, hasArgs := vals["args"]
	switch {
	case hasCmd && hasArgs:
		return cronJob{}, usagef(`%s: both "command" and "args"; give one: "command" is a shell line, "args" the argv run as it is`, where)
	case !hasCmd && !hasArgs:
		return cronJob{}, usagef(`%s: no "command" (a shell line) and no "args" (argv); give one`, where)
	}
	return finishJob(job, name, where, now)
}

// jsonObject is a JSON object's keys in order and their values; a key
// given twice is an error, as at the config file's top level.
func jsonObject(raw jsonlite.RawMessage) ([]string, map[string]jsonlite.RawMessage, error) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil, fmt.Errorf(`expected a job object such as {"name": "backup", "schedule": "0 3 * * *", "command": "/usr/local/bin/backup"}, got %s`, describeJSON(raw))
	}
	var keys []string
	vals := map[string]jsonlite.RawMessage{}
	ks, vs := jsonlite.Object(raw) // raw is a part of the config file, whose JSON was read whole
	for i, key := range ks {
		v := vs[i]
		if _, dup := vals[key]; dup {
			return nil, nil, fmt.Errorf("key %q appears more than once", key)
		}
		keys, vals[key] = append(keys, key), v
	}
	return keys, vals, nil
}

// checkCrontab is run crontab --check: the jobs, one line each (name,
// schedule, next run in the local zone, command), or the one-line error;
// it connects to nothing.
func checkCrontab(set *Settings, out io.Writer) int {
	jobs, err := loadCrontab(set)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballot: "+err.Error())
		return exitUsage
	}
	now := time.Now()
	rows := make([][4]string, len(jobs))
	var width [3]int
	for i, j := range jobs {
		rows[i] = [4]string{j.Name, j.Set.Schedule, "next " + nextRunText(j.Set, now), commandText(j.Set.Args)}
		for c := range width {
			width[c] = max(width[c], len(rows[i][c]))
		}
	}
	for _, r := range rows {
		fmt.Fprintf(out, "%-*s  %-*s  %-*s  %s\n", width[0], r[0], width[1], r[1], width[2], r[2], r[3])
	}
	return 0
}

// nextRunText is when a job's next run starts (its --spread offset
// included), in the local zone.
func nextRunText(job *Settings, now time.Time) string {
	expr, err := hashExpr(job.Schedule, job.BasePath)
	if err != nil {
		return "?"
	}
	sched, err := parseSchedule(expr, "schedule", job.Timezone, now)
	if err != nil {
		return "?"
	}
	next, err := sched.Next(now)
	if err != nil {
		return "never"
	}
	return next.Add(spreadOffset(job.BasePath, job.Spread)).Local().Format("2006-01-02 15:04:05 MST")
}

// commandText is a job's command as its line gave it: the shell line, or
// the config file's args, quoted where needed.
func commandText(args []string) string {
	if len(args) == 3 && args[0] == crontabShell[0] && args[1] == crontabShell[1] {
		return args[2]
	}
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]#~") {
			q[i] = strconv.Quote(a)
		}
	}
	return strings.Join(q, " ")
}
