package main

// Hearing from each run, end to end on a real ZooKeeper (session timeout
// 2s): the output tail in the history (history --show-output, check) and
// the --on-run-end hook.

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitFile waits until file's content satisfies cond; its content.
func waitFile(t *testing.T, file string, timeout time.Duration, what string, cond func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b, _ := os.ReadFile(file)
		if cond(string(b)) {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s; %s holds:\n%s", timeout, what, file, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunOutputInHistory(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	dir := t.TempDir()

	// A cron job that prints 3000 lines, then its complaint, and fails:
	// its entry keeps the last --history-output-bytes of it; history
	// --show-output prints them; check quotes the last line.
	e := newCronElection(t, c)
	job := script(t, dir, "job", "seq 1 3000\necho 'disk full on /var'\nexit 3\n")
	args := []string{"--zookeeper-servers", c.ConnString(), "--zookeeper-base-path", e.base, "--zookeeper-session-timeout", "2s",
		"run", "cron", "--candidate-id", "a", "--schedule", "* * * * * *", "--on-child-error", "ignore",
		"--history-output-bytes", "100", "--", job}
	a := startBallot(t, "a", ballotEnv(t), args...)
	e.cands = append(e.cands, a)
	items := waitHistory(t, c, e.base, 15*time.Second, "a failed run", func(items []*historyItem) bool {
		return find(items, func(it *historyItem) bool { return it.Kind == historyCron && it.Ended == endExited }) != nil
	})
	run := find(items, func(it *historyItem) bool { return it.Kind == historyCron && it.Ended == endExited })
	if run.ExitCode == nil || *run.ExitCode != 3 || len(run.Output) != 100 || !strings.HasSuffix(run.Output, "2999\n3000\ndisk full on /var\n") {
		t.Fatalf("the failed run's entry: exit %v, output (%d bytes) %q", run.ExitCode, len(run.Output), run.Output)
	}

	out, code := reader(t, c.ConnString(), e.base, "history", "--show-output", "--limit", "5") // the newest may be running: no output yet
	t.Logf("ballot history --show-output --limit 5:\n%s", out)
	if code != 0 || !strings.Contains(out, "\n  3000\n  disk full on /var\n") || !strings.Contains(out, "# output of run-") {
		t.Errorf("history --show-output (exit %d) does not print the output tail:\n%s", code, out)
	}
	out, _ = reader(t, c.ConnString(), e.base, "history", "--limit", "1")
	if strings.Contains(out, "disk full") {
		t.Errorf("history without --show-output prints the output:\n%s", out)
	}
	out, code = reader(t, c.ConnString(), e.base, "check", "--max-age", "1h")
	t.Logf("ballot check (exit %d): %s", code, out)
	if code != 1 || !strings.Contains(out, `: "disk full on /var"`) {
		t.Errorf("check (exit %d, want 1: WARNING) does not quote the failing run's last line:\n%s", code, out)
	}
}

func TestOnRunEnd(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)

	// run once --once-key: the hook runs after the run, with its outcome
	// and its output; the hook's own failure is logged and counted, and
	// changes neither ballot's exit code nor the run's record.
	t.Run("OnceKey", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		e := newElection(t, c)
		got := filepath.Join(dir, "got")
		hook := script(t, dir, "hook", "{ env | grep '^BALLOT_' | sort; echo ---; cat \"$BALLOT_OUTPUT_FILE\"; echo \"file $BALLOT_OUTPUT_FILE\"; } >> "+got+"\nexit 9\n")
		job := script(t, dir, "job", "echo hello from the job\nexit 4\n")
		metrics := filepath.Join(dir, "metrics.prom")
		p := startBallot(t, "a", ballotEnv(t), runArgs(c.Servers(), e.base, "a", "--once-key", "k1", "--on-run-end", hook,
			"--metrics-file", metrics, "--", job)...)
		if code := p.Wait(20 * time.Second); code != 4 {
			t.Fatalf("ballot exited %d, want the command's 4", code)
		}
		out := waitFile(t, got, time.Second, "the hook's report", func(s string) bool { return strings.Contains(s, "file ") })
		for _, want := range []string{"BALLOT_RUN_RESULT=failure\n", "BALLOT_EXIT_CODE=4\n", "BALLOT_ATTEMPT=1\n", "BALLOT_SCHEDULED_TIME=\n",
			"BALLOT_ONCE_KEY=k1\n", "BALLOT_RUN_ENDED=exited\n", "BALLOT_CANDIDATE_ID=a\n", "---\nhello from the job\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("the hook did not get %q:\n%s", want, out)
			}
		}
		if !regexp.MustCompile(`(?m)^BALLOT_DURATION=\d+\.\d{3}$`).MatchString(out) {
			t.Errorf("BALLOT_DURATION is not seconds with milliseconds:\n%s", out)
		}
		if f := regexp.MustCompile(`file (\S+)`).FindStringSubmatch(out); f == nil {
			t.Errorf("no BALLOT_OUTPUT_FILE:\n%s", out)
		} else if _, err := os.Stat(f[1]); !os.IsNotExist(err) {
			t.Errorf("the output file %s is left behind (%v)", f[1], err)
		}
		p.WaitEvent(logEvHookEnded, time.Second, "hook", "on-run-end")
		m := waitProm(t, metrics, func(m map[string]float64) bool { return m["ballot_up"] == 0 })
		if n := m[`ballot_hook_failures_total{hook="on-run-end"}`]; n != 1 {
			t.Errorf("ballot_hook_failures_total{hook=\"on-run-end\"} = %v, want 1: %v", n, m)
		}
		items := historyOf(t, c, e.base)
		if r := find(items, func(it *historyItem) bool { return it.Kind == historyOnce }); r == nil || r.ExitCode == nil || *r.ExitCode != 4 ||
			r.Output != "hello from the job\n" {
			t.Errorf("the run's entry: %s", entriesText(items))
		}
	})

	// A hook that outlives --hook-timeout is stopped, logged and counted;
	// ballot exits with the command's code once it is gone.
	t.Run("TimedOut", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		e := newElection(t, c)
		hook := script(t, dir, "hook", "exec sleep 60\n")
		job := script(t, dir, "job", "exit 0\n")
		metrics := filepath.Join(dir, "metrics.prom")
		p := startBallot(t, "a", ballotEnv(t), runArgs(c.Servers(), e.base, "a", "--once-key", "k2", "--on-run-end", hook,
			"--hook-timeout", "1s", "--metrics-file", metrics, "--", job)...)
		if code := p.Wait(20 * time.Second); code != 0 {
			t.Fatalf("ballot exited %d, want the command's 0", code)
		}
		if !p.Logged("on-run-end hook timed out") {
			t.Errorf("no timeout logged:\n%s", p.out.String())
		}
		m := waitProm(t, metrics, func(m map[string]float64) bool { return m["ballot_up"] == 0 })
		if n := m[`ballot_hook_failures_total{hook="on-run-end"}`]; n != 1 {
			t.Errorf("ballot_hook_failures_total{hook=\"on-run-end\"} = %v, want 1", n)
		}
	})

	// run cron --retries: a hook after each attempt, each with its own
	// BALLOT_ATTEMPT and outcome, for the same scheduled time (the 5 s
	// schedule leaves room for two attempts and the 200 ms retry delay, as
	// in TestCronRetryAfterFailure).
	t.Run("CronAttempts", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		e := newCronElection(t, c)
		got := filepath.Join(dir, "got")
		hook := script(t, dir, "hook", "echo \"$BALLOT_SCHEDULED_TIME $BALLOT_ATTEMPT $BALLOT_RUN_RESULT $BALLOT_EXIT_CODE\" >> "+got+"\n")
		e.addAttempt("a", "*/5 * * * * *", filepath.Join(dir, "failed-once"), "10ms", "--retries", "2", "--retry-delay", "200ms",
			"--on-child-error", "rerun", "--on-child-success", "rerun", "--on-run-end", hook)
		out := waitFile(t, got, 20*time.Second, "two hooks", func(s string) bool { return strings.Count(s, "\n") >= 2 })
		l := strings.Split(out, "\n")[:2]
		sort.Slice(l, func(i, j int) bool {
			return l[i][strings.IndexByte(l[i], ' ')+1:] < l[j][strings.IndexByte(l[j], ' ')+1:]
		}) // hooks run side by side
		f1, f2 := strings.Fields(l[0]), strings.Fields(l[1])
		if len(f1) != 4 || len(f2) != 4 || f1[0] != f2[0] || strings.Join(f1[1:], " ") != "1 failure 1" || strings.Join(f2[1:], " ") != "2 success 0" {
			t.Errorf("hooks told %q, want attempt 1 failure 1 and attempt 2 success 0 of one scheduled time", l)
		}
	})

	// run cron: hooks that wait for a gate do not hold up the schedule:
	// three runs start while the first run's hook still waits; each gets
	// its own scheduled time and success; none is left once the gate opens.
	t.Run("CronNeverWaitsForTheHook", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		e := newCronElection(t, c)
		got, gate := filepath.Join(dir, "got"), filepath.Join(dir, "gate")
		hook := script(t, dir, "hook", "echo \"start $BALLOT_SCHEDULED_TIME $BALLOT_RUN_RESULT $BALLOT_EXIT_CODE\" >> "+got+
			"\nwhile [ ! -e "+gate+" ]; do sleep 0.05; done\necho \"end $BALLOT_SCHEDULED_TIME\" >> "+got+"\n")
		a := e.add("a", "* * * * * *", "10ms", "--on-run-end", hook)
		starts := func(s string) int { return strings.Count(s, "start ") }
		out := waitFile(t, got, 15*time.Second, "three hooks started", func(s string) bool { return starts(s) >= 3 })
		if strings.Contains(out, "end ") {
			t.Fatalf("a hook ended before its gate opened:\n%s", out)
		}
		if n := len(e.readRuns()); n < 3 {
			t.Fatalf("%d runs for %d hooks started", n, starts(out))
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		seen := map[string]bool{}
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) != 4 || f[2] != "success" || f[3] != "0" || seen[f[1]] {
				t.Errorf("hook line %q: want start TIME success 0, each time once", l)
			}
			seen[f[1]] = true
		}
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		waitFile(t, got, 10*time.Second, "each hook ended", func(s string) bool { return strings.Count(s, "end ") >= len(lines) })
		a.WaitEvent(logEvHookEnded, 5*time.Second)
	})
}

func TestPing(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)

	// run once --once-key, the URL from a file: URL/start, then URL/4 with
	// the output as the body, both sent before ballot exits; the URL's
	// secret path is in no log line.
	t.Run("OnceKey", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		recv := &pingReceiver{}
		srv := httptest.NewServer(recv)
		defer srv.Close()
		file := filepath.Join(dir, "ping-url")
		if err := os.WriteFile(file, []byte(srv.URL+"/uuid-secret-123\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		e := newElection(t, c)
		job := script(t, dir, "job", "echo hello from the job\nexit 4\n")
		p := startBallot(t, "a", ballotEnv(t), runArgs(c.Servers(), e.base, "a", "--once-key", "k1", "--ping-url-file", file,
			"--log-level", "debug", "--", job)...)
		if code := p.Wait(20 * time.Second); code != 4 {
			t.Fatalf("ballot exited %d, want the command's 4", code)
		}
		got := recv.requests()
		if len(got) != 2 || got[0] != "POST /uuid-secret-123/start " || got[1] != "POST /uuid-secret-123/4 hello from the job\n" {
			t.Errorf("the receiver got %q", got)
		}
		if strings.Contains(p.out.String(), "uuid-secret") {
			t.Errorf("the ping URL's secret is in ballot's log:\n%s", p.out.String())
		}
		if !strings.Contains(p.out.String(), strings.TrimPrefix(srv.URL, "http://")+"/…") {
			t.Errorf("the log does not name the ping URL redacted:\n%s", p.out.String())
		}
	})

	// run cron: a ping receiver that holds every request does not hold up
	// the schedule: three runs end while no ping has been answered.
	t.Run("CronNeverWaitsForThePing", func(t *testing.T) {
		t.Parallel()
		gate := make(chan struct{})
		var answered, asked atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			asked.Add(1)
			<-gate
			answered.Add(1)
		}))
		defer srv.Close()
		defer close(gate) // before srv.Close, which waits for the handlers
		e := newCronElection(t, c)
		e.add("a", "* * * * * *", "10ms", "--ping-url", srv.URL+"/hold")
		for deadline := time.Now().Add(15 * time.Second); asked.Load() == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no ping reached the receiver")
			}
		}
		items := waitHistory(t, c, e.base, 10*time.Second, "three runs ended", func(items []*historyItem) bool {
			n := 0
			for _, it := range items {
				if it.succeeded() {
					n++
				}
			}
			return n >= 3
		})
		if answered.Load() != 0 {
			t.Fatalf("%d pings answered, want none: the receiver holds them (history: %s)", answered.Load(), entriesText(items))
		}
	})
}
