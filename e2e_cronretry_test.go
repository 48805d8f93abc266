package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Retries of run cron (--retries, --retry-delay): every test's command is
// the test binary's "attempt" mode, which appends one line per attempt.

type attemptLine struct {
	scheduled time.Time
	attempt   int
	candidate string
}

// addAttempt adds a run cron candidate whose command is
// `attempt FILE MARKER DURATION` (e2e_helpers_test.go).
func (e *cronElection) addAttempt(id, schedule, marker, runFor string, flags ...string) *ballotProc {
	e.t.Helper()
	args := []string{"--zookeeper-servers", e.zk.ConnString(), "--zookeeper-base-path", e.base,
		"--zookeeper-session-timeout", "2s", "run", "cron", "--candidate-id", id, "--schedule", schedule}
	args = append(append(args, flags...), "--", selfExe(), e.runs, marker, runFor)
	p := startBallot(e.t, id, ballotEnv(e.t, "BALLOT_TEST_CHILD=attempt"), args...)
	e.cands = append(e.cands, p)
	return p
}

func (e *cronElection) readAttempts() []attemptLine {
	e.t.Helper()
	var out []attemptLine
	for _, l := range fileLines(e.t, e.runs) {
		fs := strings.Fields(l)
		if len(fs) != 4 {
			continue
		}
		ts, err := time.Parse(time.RFC3339, fs[0])
		n, aerr := strconv.Atoi(fs[1])
		if err != nil || aerr != nil {
			e.t.Fatalf("attempt line %q: want a scheduled time and BALLOT_ATTEMPT", l)
		}
		out = append(out, attemptLine{ts, n, fs[2]})
	}
	return out
}

func (e *cronElection) waitAttempts(n int, timeout time.Duration) []attemptLine {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if got := e.readAttempts(); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("waited %s for %d attempts, have %v", timeout, n, e.readAttempts())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cronAttempts are the history's entries of scheduled time s, oldest first.
func cronAttempts(items []*historyItem, s time.Time) []*historyItem {
	var out []*historyItem
	for i := len(items) - 1; i >= 0; i-- {
		if it := items[i]; it.Kind == historyCron && it.ScheduledTime != nil && it.ScheduledTime.Equal(s) {
			out = append(out, it)
		}
	}
	return out
}

// TestCronRetryAfterFailure: a command that fails the first time and
// succeeds the second runs twice for one scheduled time, as attempts 1
// and 2 of 3, recorded so in the history, and check judges the second.
// The schedule's 5 s leave room for the two attempts and the 200 ms retry
// delay.
func TestCronRetryAfterFailure(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newCronElection(t, c)
	marker := filepath.Join(t.TempDir(), "failed-once")
	a := e.addAttempt("a", "*/5 * * * * *", marker, "10ms", "--retries", "2", "--retry-delay", "200ms",
		"--on-child-error", "rerun", "--on-child-success", "rerun")
	got := e.waitAttempts(2, 20*time.Second)
	if !got[0].scheduled.Equal(got[1].scheduled) || got[0].attempt != 1 || got[1].attempt != 2 {
		t.Fatalf("attempts %v, want attempts 1 and 2 of one scheduled time", got)
	}
	a.WaitEvent(logEvRetrying, time.Second, "attempt", "2", "of", "3")
	s := got[0].scheduled
	items := waitHistory(t, c, e.base, 5*time.Second, "the second attempt's end", func(items []*historyItem) bool {
		h := cronAttempts(items, s)
		return len(h) == 2 && h[1].Ended != ""
	})
	h := cronAttempts(items, s)
	if h[0].Attempt != 1 || h[1].Attempt != 2 || h[0].Attempts != 3 || h[0].succeeded() || !h[1].succeeded() {
		t.Fatalf("history of %s: %s; want attempt 1 of 3 failed, attempt 2 of 3 succeeded", s, entriesText(h))
	}
	out, _ := reader(t, c.ConnString(), e.base, "history")
	if !strings.Contains(out, "attempt 1 of 3") || !strings.Contains(out, "attempt 2 of 3") {
		t.Errorf("history's human output does not show the attempts:\n%s", out)
	}
	if out, code := reader(t, c.ConnString(), e.base, "check"); code != 0 {
		t.Errorf("check judges the last attempt, which succeeded: exit %d\n%s", code, out)
	}
	for _, l := range e.readAttempts()[2:] {
		if l.scheduled.Equal(s) {
			t.Errorf("attempt %d of %s after a success", l.attempt, s)
		}
	}
}

// TestCronRetriesAcrossLeaders: a command that always fails, --retries 2,
// two candidates and --on-child-error reelect: the leader resigns after
// each failure and either candidate may take the next attempt, yet the
// count goes on in the record: exactly 3 attempts of the scheduled time,
// then none until the next. The delays double: 100 ms, then 200 ms. The
// schedule's 10 s leave room for 3 attempts, 2 reelections and 300 ms of
// delays before the next time (a reelection is one round of the line, far
// below T = 2 s).
func TestCronRetriesAcrossLeaders(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newCronElection(t, c)
	flags := []string{"--retries", "2", "--retry-delay", "100ms", "--on-child-error", "reelect"}
	a := e.addAttempt("a", "*/10 * * * * *", "-", "10ms", flags...)
	e.leader(10 * time.Second)
	b := e.addAttempt("b", "*/10 * * * * *", "-", "10ms", flags...)
	b.WaitEvent(logEvFollowing, 10*time.Second)
	first := e.waitAttempts(1, 20*time.Second)[0].scheduled
	// The last attempt's leader says so; wait for it, then past the
	// longest delay, before counting.
	deadline := first.Add(10 * time.Second)
	for !a.Logged("no attempt left") && !b.Logged("no attempt left") {
		if time.Now().After(deadline) {
			t.Fatalf("no leader logged the last attempt; attempts %v", e.readAttempts())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var of []attemptLine
	for _, l := range e.readAttempts() {
		if l.scheduled.Equal(first) {
			of = append(of, l)
		}
	}
	if len(of) != 3 {
		t.Fatalf("attempts of %s: %v, want exactly 3", first, of)
	}
	for i, l := range of {
		if l.attempt != i+1 {
			t.Errorf("attempt %d says BALLOT_ATTEMPT=%d", i+1, l.attempt)
		}
	}
	t.Logf("attempts by %s, %s, %s", of[0].candidate, of[1].candidate, of[2].candidate)
	both := a.out.String() + b.out.String()
	if !strings.Contains(both, "retry_in=100ms") || !strings.Contains(both, "retry_in=200ms") {
		t.Errorf("the delays do not double from 100ms")
	}
	// Nothing more for this time, up to the next one.
	time.Sleep(time.Until(first.Add(10*time.Second - 500*time.Millisecond)))
	n := 0
	for _, l := range e.readAttempts() {
		if l.scheduled.Equal(first) {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d attempts of %s, want 3", n, first)
	}
}

// TestCronRetryLostRun: the leader's host dies mid-run (ballot, keeper and
// command SIGKILLed). With --retries 1 the successor starts attempt 2 of
// the same scheduled time at once: about T + 3T/4 after the death, so
// within the schedule's 10 s = 5T.
func TestCronRetryLostRun(t *testing.T) {
	t.Parallel()
	const T = 2 * time.Second
	c := sharedZK(t)
	e := newCronElection(t, c)
	flags := []string{"--retries", "1", "--on-child-success", "rerun"}
	a := e.addAttempt("a", "*/10 * * * * *", "never-created", "20s", flags...)
	e.leader(10 * time.Second)
	b := e.addAttempt("b", "*/10 * * * * *", "never-created", "20s", flags...)
	b.WaitEvent(logEvFollowing, 10*time.Second)
	first := e.waitAttempts(1, 20*time.Second)[0]
	if first.candidate != "a" || first.attempt != 1 {
		t.Fatalf("first attempt %v, want a's attempt 1", first)
	}
	killHost(a)
	a.Wait(5 * time.Second)
	b.WaitEvent(logEvRetrying, 5*T, "attempt", "2")
	got := e.waitAttempts(2, T)
	if got[1].candidate != "b" || got[1].attempt != 2 || !got[1].scheduled.Equal(first.scheduled) {
		t.Fatalf("after the host's death: %v, want b's attempt 2 of %s", got[1], first.scheduled)
	}
	if !strings.Contains(b.out.String(), "lost with its leader") {
		t.Errorf("b does not say why it retries")
	}
}

// onceAttempts are the attempt numbers (BALLOT_ATTEMPT) the "attempt"
// child wrote into file, in order.
func onceAttempts(t *testing.T, file string) []string {
	t.Helper()
	var out []string
	for _, l := range fileLines(t, file) {
		if fs := strings.Fields(l); len(fs) == 4 {
			out = append(out, fs[1])
		}
	}
	return out
}

// onceEntries are the history's entries of once key key, oldest first.
func onceEntries(items []*historyItem, key string) []*historyItem {
	var out []*historyItem
	for i := len(items) - 1; i >= 0; i-- {
		if it := items[i]; it.Kind == historyOnce && it.Key == key {
			out = append(out, it)
		}
	}
	return out
}

// TestOnceKeyRetries: run once --once-key with --retries 2. A command
// that fails once then succeeds runs twice (attempts 1 and 2 of 3) and
// ballot exits 0; one that always fails runs exactly 3 times and ballot
// exits with its code; a candidate started afterwards runs nothing.
func TestOnceKeyRetries(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	for _, tc := range []struct {
		name     string
		marker   string // "-": always fails
		attempts []string
		code     int
	}{
		{"fails once", "failed-once", []string{"1", "2"}, 0},
		{"always fails", "-", []string{"1", "2", "3"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			runs, marker := filepath.Join(dir, "runs"), tc.marker
			if marker != "-" {
				marker = filepath.Join(dir, marker)
			}
			base := "/ballot/test/onceretry/" + strings.ReplaceAll(tc.name, " ", "-")
			flags := []string{"--retries", "2", "--retry-delay", "100ms"}
			a := onceCandidate(t, c, base, "a", "k1", flags, "", "attempt", runs, marker, "10ms")
			if code := a.Wait(20 * time.Second); code != tc.code {
				t.Fatalf("a exited %d, want %d", code, tc.code)
			}
			if got := onceAttempts(t, runs); strings.Join(got, ",") != strings.Join(tc.attempts, ",") {
				t.Fatalf("attempts %v, want %v", got, tc.attempts)
			}
			h := onceEntries(historyOf(t, c, base), "k1")
			if len(h) != len(tc.attempts) {
				t.Fatalf("history: %s; want %d attempts", entriesText(h), len(tc.attempts))
			}
			for i, e := range h {
				if e.Attempt != i+1 || e.Attempts != 3 {
					t.Errorf("history entry %d: attempt %d of %d, want %d of 3", i, e.Attempt, e.Attempts, i+1)
				}
			}
			if last := h[len(h)-1]; last.succeeded() != (tc.code == 0) {
				t.Errorf("the last attempt succeeded=%v, want %v", last.succeeded(), tc.code == 0)
			}
			b := onceCandidate(t, c, base, "b", "k1", flags, "", "attempt", runs, marker, "10ms")
			if code := b.Wait(20 * time.Second); code != 0 || !b.Logged("once key already run") {
				t.Errorf("b exited %d (want 0, the key done)", code)
			}
			if got := onceAttempts(t, runs); len(got) != len(tc.attempts) {
				t.Errorf("b ran the key again: attempts %v", got)
			}
		})
	}
}

// TestOnceKeyRetryLostRun: the runner's host dies mid-run (ballot, keeper
// and command SIGKILLed). With --retries 1 the candidate waiting in line
// keeps its place (the key may need a retry), leads once the runner's
// session is gone (T + 3T/4 after the death, T = 2 s) and runs attempt 2.
func TestOnceKeyRetryLostRun(t *testing.T) {
	t.Parallel()
	const T = 2 * time.Second
	c := sharedZK(t)
	dir := t.TempDir()
	runs, ok := filepath.Join(dir, "runs"), filepath.Join(dir, "ok")
	if err := os.WriteFile(ok, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	base := "/ballot/test/onceretrylost"
	flags := []string{"--retries", "1"}
	a := onceCandidate(t, c, base, "a", "k1", flags, "", "attempt", runs, ok, "30s")
	for len(onceAttempts(t, runs)) == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	b := onceCandidate(t, c, base, "b", "k1", flags, "", "attempt", runs, ok, "10ms")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	killHost(a)
	a.Wait(5 * time.Second)
	if code := b.Wait(5 * T); code != 0 {
		t.Fatalf("b exited %d, want 0 after its attempt", code)
	}
	if got := onceAttempts(t, runs); strings.Join(got, ",") != "1,2" {
		t.Fatalf("attempts %v, want a's 1 then b's 2", got)
	}
	b.WaitEvent(logEvRetrying, time.Second, "attempt", "2", "of", "2")
}
