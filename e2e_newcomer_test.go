package main

// What a newcomer hits in the first hour (issue 36): a command that exits
// 0 at once must not spin; readers must not write; a crontab stays quiet.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestQuickSuccessBacksOff: `true` under rerun and under reelect is rerun
// on the quick-run back-off schedule (run 1 → 2 at once, then 100 ms,
// 200 ms, 400 ms, 800 ms, 1.6 s, 3.2 s ...), not ~90 times a second, and
// the first quick success is said once, at WARN. Counted in events: when
// ballot says it waits 3.2 s (the pause after the 7th run), exactly 7
// runs have started, whatever the box's speed.
func TestQuickSuccessBacksOff(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	const T = 2 * time.Second // runArgs' session timeout
	for _, policy := range []string{"rerun", "reelect"} {
		t.Run(policy, func(t *testing.T) {
			e := newElection(t, c)
			p := startBallot(t, policy, ballotEnv(t),
				runArgs(c.Servers(), e.base, policy, "--no-wait", "--on-child-success", policy, "--", "true")...)
			// The pauses before the 7th wait add up to 3.1 s; each
			// reelection may take a few T on a busy box (5 T each).
			p.WaitLog("wait=3.2s", 3100*time.Millisecond+7*5*T)
			out := p.out.String()
			before := out[:strings.Index(out, "wait=3.2s")]
			if n := strings.Count(before, "event="+string(logEvCommandStarted)); n != 7 {
				t.Errorf("%d command-started events before the 3.2 s pause, want 7", n)
			}
			if n := strings.Count(out, "a command that daemonizes must run in the foreground"); n != 1 {
				t.Errorf("the quick-success warning said %d times, want once", n)
			}
			if !logLineHas(out, "the command exited 0 after", "WARN") {
				t.Errorf("no WARN line \"the command exited 0 after ...\"")
			}
		})
	}
}

// logLineHas: some line of out contains both sub and want.
func logLineHas(out, sub, want string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, sub) && strings.Contains(line, want) {
			return true
		}
	}
	return false
}

// zkTree lists every node under root (root included) with what any write
// changes: data, versions, czxid/mzxid/pzxid, owner. Creating and deleting
// a child changes its parent's cversion and pzxid, so even a throwaway
// node shows. (ZooKeeper's own zxid also counts sessions, which a reader
// opens and closes, so the tree is compared, not srvr's Zxid.)
func zkTree(t *testing.T, conn *zk.Conn, root string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	var walk func(p string)
	walk = func(p string) {
		data, st, err := conn.Get(p)
		if errors.Is(err, zk.ErrNoNode) {
			return
		}
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		tree[p] = fmt.Sprintf("czxid=%#x mzxid=%#x pzxid=%#x version=%d cversion=%d aversion=%d owner=%#x children=%d data=%q",
			st.Czxid, st.Mzxid, st.Pzxid, st.Version, st.Cversion, st.Aversion, st.EphemeralOwner, st.NumChildren, data)
		kids, _, err := conn.Children(p)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			t.Fatalf("list %s: %v", p, err)
		}
		for _, k := range kids {
			walk(strings.TrimSuffix(p, "/") + "/" + k)
		}
	}
	walk(root)
	return tree
}

func treeDiff(before, after map[string]string) []string {
	var d []string
	for p, b := range before {
		if a, ok := after[p]; !ok {
			d = append(d, "deleted "+p)
		} else if a != b {
			d = append(d, "changed "+p+": "+b+" → "+a)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			d = append(d, "created "+p)
		}
	}
	sort.Strings(d)
	return d
}

// TestReadersNeverWrite: info, watch, leader, history and check create,
// change and delete nothing in ZooKeeper, on a path that does not exist
// (a typo in a monitoring check, run every minute) and on an election
// with a past; a missing path is reported as such.
func TestReadersNeverWrite(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	conn := basicZKConn(t, c)
	defer conn.Close()

	// An election with a past: a once key run, its history, the baton
	// given back; the candidate gone.
	e := newElection(t, c)
	p := startBallot(t, "job", ballotEnv(t), runArgs(c.Servers(), e.base, "job", "--once-key", "k1", "--", "true")...)
	if code := p.Wait(30 * time.Second); code != 0 {
		t.Fatalf("the job exited %d, want 0", code)
	}

	for _, tc := range []struct {
		name, base string
		exists     bool
	}{
		{"missing", "/typo1/deep/x", false},
		{"existing", e.base, true},
		{"parent", path.Dir(e.base), true}, // the election is a job of it (ballot jobs)
	} {
		global := []string{"--zookeeper-servers", c.ConnString(), "--zookeeper-base-path", tc.base, "--zookeeper-session-timeout", "2s"}
		for _, r := range []struct {
			name string
			args []string
			code int    // on a missing path; -1: stopped by SIGTERM (watch)
			says string // on a missing path, on stdout or stderr
		}{
			{"info", []string{"info"}, 1, "does not exist"},
			{"info-verbose-json", []string{"info", "--verbose", "--output", "json"}, 1, "does not exist"},
			{"watch", []string{"watch"}, -1, "does not exist"},
			{"leader", []string{"leader"}, 1, "does not exist"},
			{"leader-wait", []string{"leader", "--wait", "1s"}, 1, "no leader"},
			{"history", []string{"history"}, 0, "does not exist"},
			{"check", []string{"check", "--max-age", "26h"}, exitUnknown, "UNKNOWN"},
			{"jobs", []string{"jobs"}, 1, "does not exist"},
			{"jobs-json", []string{"jobs", "--output", "json"}, 1, "[]"},
		} {
			t.Run(tc.name+"/"+r.name, func(t *testing.T) {
				before := zkTree(t, conn, "/")
				var out string
				if r.code == -1 {
					w := startBallot(t, r.name, ballotEnv(t), append(global, r.args...)...)
					w.WaitLog(tc.base, 10*time.Second) // its first snapshot
					w.Signal(syscall.SIGTERM)
					w.Wait(10 * time.Second)
					out = w.out.String()
				} else {
					res := basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, append(global, r.args...)...)
					out = res.stdout + res.stderr
					if !tc.exists && res.code != r.code {
						t.Errorf("exit %d on a missing path, want %d\n%s", res.code, r.code, out)
					}
				}
				if !tc.exists && !strings.Contains(out, r.says) {
					t.Errorf("on a missing path, says nothing of %q:\n%s", r.says, out)
				}
				if d := treeDiff(before, zkTree(t, conn, "/")); len(d) > 0 {
					t.Errorf("%s wrote to ZooKeeper:\n%s\noutput:\n%s", r.name, strings.Join(d, "\n"), out)
				}
			})
		}
	}
}

// crontabRecipe is the "From crontab" line (docs/cron.md) for host on
// servers, as /bin/sh would run it after cron: the schedule and user cut,
// cron's \% unescaped, the job and the key replaced (the key's date is the
// test's to choose).
func crontabRecipe(t *testing.T, servers, base, host, key, job string) string {
	t.Helper()
	recipe := section(t, readme(t), "## From crontab or a systemd timer")
	_, after, ok := strings.Cut(recipe, "# /etc/crontab on every host: the nightly backup runs on one of them\n")
	if !ok {
		t.Fatal("docs: the From crontab recipe is gone")
	}
	line, _, _ := strings.Cut(after, "\n```")
	line = strings.ReplaceAll(line, "\\\n", " ")
	const cron = "0 3 * * *  root  "
	if !strings.HasPrefix(line, cron+"ballot ") {
		t.Fatalf("docs: the crontab line does not start with %q: %q", cron+"ballot ", line)
	}
	line = strings.TrimPrefix(line, cron)
	for _, r := range [][2]string{
		{`\%`, `%`},
		{"ballot ", ballotBin + " "},
		{"zk1,zk2,zk3", servers},
		{"/ballot/backup", base},
		{`"$(hostname)"`, host},
		{`"$(date +%F)"`, key},
		{"/usr/local/bin/backup", job},
	} {
		if !strings.Contains(line, r[0]) {
			t.Fatalf("docs: the crontab line has no %q: %q", r[0], line)
		}
		line = strings.Replace(line, r[0], r[1], 1)
	}
	return line
}

// TestCrontabRecipeQuiet: the crontab recipe of docs/cron.md on three hosts at
// once: the one that runs the job prints the job's output and nothing
// else, unwrapped; the two that find the key run print nothing and exit
// 0 — cron mails nothing from them.
func TestCrontabRecipeQuiet(t *testing.T) {
	// Serial: the winner must print the job's output and nothing else, and
	// a WARN prints even under --quiet (a renewal slowed by load, say).
	// The recipe keeps the default session timeout, 5 s: a tickTime that
	// allows it (2 to 20 ticks), or the server's clamp is a WARN, rightly
	// printed even under --quiet.
	c := startZKWith(t, zkOptions{TickTime: 500 * time.Millisecond})
	for _, tc := range []struct {
		name  string
		fresh bool // the election's first ever run
	}{{"fresh", true}, {"seeded", false}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newElection(t, c)
			if tc.fresh {
				e = newFreshElection(t, c)
			}
			dir := t.TempDir()
			job := filepath.Join(dir, "backup")
			if err := os.WriteFile(job, []byte("#!/bin/sh\necho \"backed up on $BALLOT_CANDIDATE_ID\"\necho 'a note on stderr' >&2\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			var ps []*exec.Cmd
			var outs, errs []*bytes.Buffer
			for _, h := range []string{"h1", "h2", "h3"} {
				cmd := exec.Command("/bin/sh", "-c", crontabRecipe(t, c.ConnString(), e.base, h, "2026-11-25", job))
				cmd.Env = ballotEnv(t)
				var o, e bytes.Buffer
				cmd.Stdout, cmd.Stderr = &o, &e
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				ps, outs, errs = append(ps, cmd), append(outs, &o), append(errs, &e)
			}
			ran := 0
			for i, cmd := range ps {
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				var err error
				select {
				case err = <-done:
				case <-time.After(60 * time.Second):
					_ = cmd.Process.Kill()
					t.Fatalf("host %d did not exit", i+1)
				}
				host := fmt.Sprintf("h%d", i+1)
				stdout, stderr := outs[i].String(), errs[i].String()
				switch {
				case err != nil:
					t.Errorf("%s: %v\nstdout:\n%s\nstderr:\n%s", host, err, stdout, stderr)
				case stdout == "" && stderr == "":
					// skipped: nothing for cron to mail
				case stdout == "backed up on "+host+"\n" && stderr == "a note on stderr\n":
					ran++
				default:
					t.Errorf("%s printed more than the job's output (or less):\nstdout:\n%s\nstderr:\n%s", host, stdout, stderr)
				}
			}
			if ran != 1 {
				t.Errorf("%d hosts printed the job's output, want exactly 1", ran)
			}
		})
	}
}

// TestFailingRunWarns: a run that fails ends at WARN, with its exit code
// and the last line it wrote, under run once and run cron alike; a run
// that succeeds stays at INFO.
func TestFailingRunWarns(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	const T = 2 * time.Second // runArgs' session timeout
	// Both lines on one stream: ballot reads stdout and stderr apart, so
	// which of two streams' lines comes last is not the command's order.
	script := `echo "starting" >&2; echo "disk full: /var/backups" >&2; exit 3`
	t.Run("once", func(t *testing.T) {
		e := newElection(t, c)
		p := startBallot(t, "once", ballotEnv(t), runArgs(c.Servers(), e.base, "once",
			"--on-child-error", "exit", "--", "/bin/sh", "-c", script)...)
		if code := p.Wait(10 * T); code != 3 {
			t.Errorf("exit %d, want the command's 3", code)
		}
		p.WaitEvent(logEvCommandEnded, 0, "level", "WARN", "exit_code", "3", "last_line", "disk full: /var/backups")
	})
	t.Run("cron", func(t *testing.T) {
		e := newElection(t, c)
		args := runArgs(c.Servers(), e.base, "cron", "--schedule", "* * * * * *", "--", "/bin/sh", "-c", `echo ok; [ -e "$0" ] || { touch "$0"; exit 0; }; `+script)
		args[7] = "cron" // run cron, not run once
		args = append(args, filepath.Join(t.TempDir(), "first-done"))
		p := startBallot(t, "cron", ballotEnv(t), args...)
		// The first run succeeds, the next fails: a second apart, at most
		// a few T each on a busy box.
		p.WaitEvent(logEvCommandEnded, 10*T, "level", "WARN", "exit_code", "3", "last_line", "disk full: /var/backups")
		if ok := p.Events(logEvCommandEnded, "exit_code", "0"); len(ok) == 0 || ok[0]["level"] != "INFO" {
			t.Errorf("the successful run ended %v, want at INFO", ok)
		}
		p.Signal(syscall.SIGTERM)
		p.Wait(10 * T)
	})
}

// TestLeaderWithoutData: `ballot leader` on a leader that runs without
// --leader-data says so on stderr and in JSON; stdout stays one (empty)
// line per leader and the exit status 0, as scripts expect.
func TestLeaderWithoutData(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	a := e.add("a", nil, nil, "tick")
	a.WaitEvent(logEvAcknowledged, 10*time.Second)
	r := leaderQuery(t, c.Servers(), e.base)
	if r.code != 0 || r.stdout != "\n" || !strings.Contains(r.stderr, "leader a published no data: it runs without --leader-data") {
		t.Errorf("ballot leader: exit %d, stdout %q, stderr %q; want 0, an empty line, and a word on stderr", r.code, r.stdout, r.stderr)
	}
	r = leaderQuery(t, c.Servers(), e.base, "--output", "json")
	var rec map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil || r.code != 0 {
		t.Fatalf("ballot leader --output json: exit %d, %v: %q", r.code, err, r.stdout)
	}
	if rec["data"] != "" || rec["candidateId"] != "a" || !strings.Contains(fmt.Sprint(rec["note"]), "published no data") {
		t.Errorf("ballot leader --output json: %s; want data \"\", candidateId a and a note", r.stdout)
	}
}

// TestNewElectionWaitWording: a brand-new election's first leader waits W
// once (TestNewElectionWaits), and says it as what it is, not as a holder
// that dropped the baton.
func TestNewElectionWaitWording(t *testing.T) {
	t.Parallel()
	e := newFreshElection(t, sharedZK(t))
	a := e.add("a", nil, nil, "tick")
	ev := a.WaitEvent(logEvBatonWait, 20*time.Second)
	if !strings.HasPrefix(ev["msg"], "a new election (no handover record yet): waiting 1.5s once, in case") {
		t.Errorf("the first wait says %q", ev["msg"])
	}
	if a.Logged("dropped it without releasing") {
		t.Errorf("a new election's first leader speaks of a dropped baton")
	}
}
