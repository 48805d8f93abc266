package main

// run once --once-key: a job started by every host's own scheduler runs at
// most once per key, whoever starts it and whenever.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// onceRuns counts the runs recorded by the "run" child mode in file.
func onceRuns(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// onceCandidate starts "ballot run once --once-key key" whose command is
// child (a test child mode and its arguments).
func onceCandidate(t *testing.T, c *zkCluster, base, id, key string, flags []string, tickFile string, child ...string) *ballotProc {
	t.Helper()
	env := ballotEnv(t, "BALLOT_TEST_CHILD="+child[0], "TICK_FILE="+tickFile)
	args := runArgs(c.Servers(), base, id, append([]string{"--once-key", key}, flags...)...)
	args = append(append(args, "--", selfExe()), child[1:]...)
	return startBallot(t, id, env, args...)
}

func TestOnceKey(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	dir := t.TempDir()
	runs, ticks := filepath.Join(dir, "runs"), filepath.Join(dir, "ticks")
	base := "/ballot/test/once"

	// Every host's crontab starts the job at the same moment.
	var ps []*ballotProc
	for _, id := range []string{"h1", "h2", "h3"} {
		ps = append(ps, onceCandidate(t, c, base, id, "2026-11-23", nil, ticks, "run", runs, "300ms"))
	}
	for _, p := range ps {
		if code := p.Wait(20 * time.Second); code != 0 {
			t.Errorf("%s exited %d, want 0", p.name, code)
		}
	}
	if n := onceRuns(t, runs); n != 1 {
		t.Fatalf("the key ran %d times, want once", n)
	}
	skipped := 0
	for _, p := range ps {
		if p.Logged("once key already run") {
			skipped++
		}
	}
	if skipped != 2 {
		t.Errorf("%d candidates said the key was already run, want 2", skipped)
	}

	// The same key later: nothing runs; a new key runs once.
	late := onceCandidate(t, c, base, "h2", "2026-11-23", nil, ticks, "run", runs, "10ms")
	if code := late.Wait(15 * time.Second); code != 0 || onceRuns(t, runs) != 1 || !late.Logged("run by ") {
		t.Errorf("the same key again: exit %d, %d runs, output:\n%s", code, onceRuns(t, runs), late.out.String())
	}
	next := onceCandidate(t, c, base, "h3", "2026-11-24", nil, ticks, "run", runs, "10ms")
	if code := next.Wait(15 * time.Second); code != 0 || onceRuns(t, runs) != 2 {
		t.Errorf("a new key: exit %d, %d runs, want 2", code, onceRuns(t, runs))
	}

	// The run's exit code is the runner's exit code.
	failing := onceCandidate(t, c, base, "h1", "failing", nil, ticks, "exit", "7", "10ms")
	if code := failing.Wait(15 * time.Second); code != 7 {
		t.Errorf("a run that exits 7: ballot exited %d", code)
	}
	again := onceCandidate(t, c, base, "h2", "failing", nil, ticks, "exit", "7", "10ms")
	if code := again.Wait(15 * time.Second); code != 0 || !again.Logged("with exit status 7") {
		t.Errorf("the failed key again: exit %d, want 0 and its status logged:\n%s", code, again.out.String())
	}

	// info shows the recent keys.
	out, _, _ := runBallotInfo(t, c.Servers(), base)
	if !strings.Contains(out, "2026-11-23") || !strings.Contains(out, "failing") {
		t.Errorf("info does not show the recent keys:\n%s", out)
	}
}

// TestOnceKeyUnfinished: a runner that dies mid-run leaves its key started
// and unfinished: nobody runs it again, unless --once-retry-unfinished, and
// then never while the first runner's session lives.
func TestOnceKeyUnfinished(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	dir := t.TempDir()
	ticks := filepath.Join(dir, "ticks")
	base := "/ballot/test/once-unfinished"

	a := onceCandidate(t, c, base, "a", "k1", nil, ticks, "tick", ticks)
	a.WaitEvent(logEvCommandStarted, 10*time.Second)
	waitTenures(t, ticks, 1, 10*time.Second)
	a.Signal(syscall.SIGKILL)
	a.Wait(5 * time.Second)

	b := onceCandidate(t, c, base, "b", "k1", nil, ticks, "exit", "0", "200ms")
	if code := b.Wait(15 * time.Second); code != 0 || !b.Logged("not finished") {
		t.Errorf("without --once-retry-unfinished: exit %d, output:\n%s", code, b.out.String())
	}
	if n := len(readTenures(t, ticks)); n != 1 {
		t.Fatalf("%d runs of k1, want 1 (no retry without the flag)", n)
	}

	// The runner is stopped, not dead: its session lives on until it
	// expires; the retry waits for that.
	ticks2 := filepath.Join(dir, "ticks2")
	s := onceCandidate(t, c, base, "s", "k2", nil, ticks2, "tick", ticks2)
	s.WaitEvent(logEvCommandStarted, 10*time.Second)
	waitTenures(t, ticks2, 1, 10*time.Second)
	s.Signal(syscall.SIGSTOP)
	defer s.Signal(syscall.SIGCONT)
	stopped := time.Now()
	r := onceCandidate(t, c, base, "r", "k2", []string{"--once-retry-unfinished"}, ticks2, "exit", "0", "200ms")
	if code := r.Wait(20 * time.Second); code != 0 {
		t.Errorf("with --once-retry-unfinished: exit %d", code)
	}
	if !r.Logged("earlier run never finished") {
		t.Errorf("r did not say it retried an unfinished key:\n%s", r.out.String())
	}
	ts := readTenures(t, ticks2)
	if len(ts) != 2 {
		t.Fatalf("%d runs of k2, want 2 (the first, unfinished, and the retry)", len(ts))
	}
	// Not while s's session lived: it expires a session timeout after s
	// stopped, at the earliest.
	if d := ts[1].first.Sub(stopped); d < 2*time.Second {
		t.Errorf("the retry started %s after the runner stopped, before its session could expire", d)
	}
	checkNoOverlap(t, ticks2)
	s.Signal(syscall.SIGCONT)
	if code := s.Wait(15 * time.Second); code != exitFailure {
		t.Errorf("the stopped runner exited %d after SIGCONT, want %d (its run was cut short)", code, exitFailure)
	}
}

// TestNoWait: like flock -n, a candidate that finds another leading exits
// 75 at once instead of waiting in line.
func TestNoWait(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	a := e.add("a", nil, nil, "tick")
	e.leader(10 * time.Second)
	b := e.add("b", []string{"--no-wait"}, nil, "tick")
	if code := b.Wait(10 * time.Second); code != exitBusy {
		t.Fatalf("b exited %d, want %d", code, exitBusy)
	}
	if !b.Logged("another candidate leads") || len(e.proposals()) != 1 || a.Exited() {
		t.Errorf("after --no-wait: proposals %v, a exited %v; b said:\n%s", e.proposals(), a.Exited(), b.out.String())
	}
	// Alone, --no-wait runs the command as usual.
	a.Signal(syscall.SIGTERM)
	a.Wait(10 * time.Second)
	d := e.add("d", []string{"--no-wait", "--on-child-success", "exit"}, nil, "exit", "0", "10ms")
	if code := d.Wait(10 * time.Second); code != 0 || !d.Logged("command started") {
		t.Errorf("alone with --no-wait: exit %d:\n%s", code, d.out.String())
	}
}
