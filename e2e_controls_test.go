package main

// ballot step-down, pause and resume: operators' controls through
// ZooKeeper, from any host, never two commands at once.

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// control runs a one-shot ballot command against e's election.
func control(t *testing.T, e *election, args ...string) (string, int) {
	t.Helper()
	all := append([]string{"--zookeeper-servers", e.zk.ConnString(), "--zookeeper-base-path", e.base,
		"--zookeeper-session-timeout", "2s"}, args...)
	cmd := exec.Command(ballotBin, all...)
	cmd.Env = ballotEnv(t)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

func TestStepDown(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	a := e.add("a", []string{"--stop-grace-period", "1s"}, nil, "stubborn")
	e.leader(10 * time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)

	// Alone: nobody to hand over to.
	if out, code := control(t, e, "step-down"); code != 1 || !strings.Contains(out, "no other candidate") {
		t.Fatalf("step-down of a lone leader: exit %d: %s", code, out)
	}
	b := e.add("b", []string{"--stop-grace-period", "1s"}, nil, "stubborn")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	if out, code := control(t, e, "step-down", "--candidate-id", "b"); code != 1 || !strings.Contains(out, "does not lead") {
		t.Fatalf("step-down of a follower: exit %d: %s", code, out)
	}

	out, code := control(t, e, "step-down", "--wait", "15s")
	if code != 0 || !strings.Contains(out, "b leads") {
		t.Fatalf("step-down: exit %d: %s", code, out)
	}
	waitTenures(t, e.ticks, 2, 10*time.Second)
	gaps := checkNoOverlap(t, e.ticks)
	logGaps(t, "step-down (the command ignores SIGTERM: killed after the grace period)", gaps)
	a.WaitEvent(logEvStepDown, 5*time.Second)
	// a stands again at the back of the line.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(a.out.String()[strings.Index(a.out.String(), "asked to step down"):], "following") {
		if time.Now().After(deadline) {
			t.Fatalf("a does not follow after stepping down:\n%s", a.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if a.Exited() {
		t.Errorf("a exited after stepping down")
	}

	e.checkTokensGrow()
}

func TestPauseAndResume(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	flags := []string{"--stop-grace-period", "1s"}
	a := e.add("a", flags, nil, "stubborn")
	e.leader(10 * time.Second)
	b := e.add("b", flags, nil, "stubborn")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)

	if out, code := control(t, e, "pause", "--reason", "disk replacement"); code != 0 {
		t.Fatalf("pause: exit %d: %s", code, out)
	}
	a.WaitEvent(logEvPaused, 10*time.Second)
	if ticking(e.ticks, 300*time.Millisecond) {
		t.Fatalf("the command still runs while paused")
	}
	if out, _ := control(t, e, "info"); !strings.Contains(out, "disk replacement") {
		t.Errorf("info does not show the pause:\n%s", out)
	}

	// The pause survives restarting every candidate.
	a.Signal(syscall.SIGTERM)
	b.Signal(syscall.SIGTERM)
	a.Wait(10 * time.Second)
	b.Wait(10 * time.Second)
	a2 := e.add("a2", flags, nil, "stubborn")
	a2.WaitEvent(logEvPaused, 10*time.Second)
	e.add("b2", flags, nil, "stubborn")
	time.Sleep(time.Second)
	if n := len(readTenures(t, e.ticks)); n != 1 || ticking(e.ticks, 300*time.Millisecond) {
		t.Fatalf("a command ran while paused after a restart (%d tenures)", n)
	}

	if out, code := control(t, e, "resume"); code != 0 || !strings.Contains(out, "resumed") {
		t.Fatalf("resume: exit %d: %s", code, out)
	}
	waitTenures(t, e.ticks, 2, 10*time.Second)
	checkNoOverlap(t, e.ticks)
	if out, code := control(t, e, "resume"); code != 0 || !strings.Contains(out, "was not paused") {
		t.Errorf("a second resume: exit %d: %s", code, out)
	}
}

// TestPauseSkipsCron: a paused run cron leader skips its scheduled times,
// saying why.
func TestPauseSkipsCron(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	if out, code := control(t, e, "pause", "--reason", "freeze"); code != 0 {
		t.Fatalf("pause: exit %d: %s", code, out)
	}
	args := []string{"--zookeeper-servers", c.ConnString(), "--zookeeper-base-path", e.base, "--zookeeper-session-timeout", "2s",
		"run", "cron", "--candidate-id", "a", "--schedule", "* * * * * *", "--", selfExe(), "0", "10ms"}
	a := startBallot(t, "a", ballotEnv(t, "BALLOT_TEST_CHILD=exit", "TICK_FILE="+e.ticks), args...)
	a.WaitEvent(logEvRunSkipped, 10*time.Second, "skip", "paused")
	if a.Logged("scheduled run starting") {
		t.Fatalf("a cron run started while paused")
	}
	control(t, e, "resume")
	a.WaitEvent(logEvRunStarting, 10*time.Second)
}

// TestStepDownEndsAOnceRun: a --once-key run an operator steps down is
// recorded as finished with its exit code, and its ballot exits with it;
// nobody runs the key again.
func TestStepDownEndsAOnceRun(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	a := onceCandidate(t, c, e.base, "a", "k", nil, e.ticks, "tick", e.ticks)
	a.WaitEvent(logEvCommandStarted, 10*time.Second)
	b := onceCandidate(t, c, e.base, "b", "k", []string{"--once-retry-unfinished"}, e.ticks, "tick", e.ticks)
	b.WaitEvent(logEvFollowing, 10*time.Second)
	if out, code := control(t, e, "step-down"); code != 0 {
		t.Fatalf("step-down: exit %d: %s", code, out)
	}
	if code := a.Wait(15 * time.Second); code != 128+int(syscall.SIGTERM) {
		t.Errorf("a exited %d, want %d (its command died of the SIGTERM)", code, 128+int(syscall.SIGTERM))
	}
	if code := b.Wait(15 * time.Second); code != 0 || !b.Logged("with exit status 143") {
		t.Errorf("b: exit %d; it should find k finished with status 143:\n%s", code, b.out.String())
	}
	if n := len(readTenures(t, e.ticks)); n != 1 {
		t.Errorf("k ran %d times, want once", n)
	}
}
