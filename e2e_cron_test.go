package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"ballot/internal/keeper"
)

// cronElection is an election of `run cron` candidates whose runs append
// "scheduled-time token candidate" to one file and tick into another.
type cronElection struct {
	*election
	runs string
}

func newCronElection(t *testing.T, c *zkCluster) *cronElection {
	e := newElection(t, c)
	return &cronElection{election: e, runs: filepath.Join(t.TempDir(), "runs")}
}

func (e *cronElection) add(id, schedule, runFor string, flags ...string) *ballotProc {
	e.t.Helper()
	env := ballotEnv(e.t, "BALLOT_TEST_CHILD=run", "TICK_FILE="+e.ticks)
	args := []string{"--zookeeper-servers", e.zk.ConnString(), "--zookeeper-base-path", e.base,
		"--zookeeper-session-timeout", "2s", "run", "cron", "--candidate-id", id, "--schedule", schedule}
	args = append(append(args, flags...), "--", selfExe(), e.runs, runFor)
	p := startBallot(e.t, id, env, args...)
	e.cands = append(e.cands, p)
	return p
}

type cronRun struct{ scheduled, token, candidate string }

func (e *cronElection) readRuns() []cronRun {
	var out []cronRun
	for _, l := range fileLines(e.t, e.runs) {
		if fs := strings.Fields(l); len(fs) == 3 {
			out = append(out, cronRun{fs[0], fs[1], fs[2]})
		}
	}
	return out
}

func (e *cronElection) waitRuns(n int, timeout time.Duration) []cronRun {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if runs := e.readRuns(); len(runs) >= n {
			return runs
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("waited %s for %d runs, have %d", timeout, n, len(e.readRuns()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkOnce fails if a scheduled time ran twice, or times went backwards.
func (e *cronElection) checkOnce() []time.Time {
	e.t.Helper()
	var times []time.Time
	seen := map[string]bool{}
	for _, r := range e.readRuns() {
		if seen[r.scheduled] {
			e.t.Errorf("scheduled time %s ran twice", r.scheduled)
		}
		seen[r.scheduled] = true
		ts, err := time.Parse(time.RFC3339, r.scheduled)
		if err != nil {
			e.t.Fatalf("BALLOT_SCHEDULED_TIME %q is not RFC 3339", r.scheduled)
		}
		if len(times) > 0 && !ts.After(times[len(times)-1]) {
			e.t.Errorf("scheduled times went backwards: %s after %s", ts, times[len(times)-1])
		}
		times = append(times, ts)
	}
	return times
}

// TestCronLeaderRunsEveryTickAndFollowerTakesOver: the leader runs each
// second; the follower runs nothing; the leader is SIGKILLed and the
// follower goes on without running any time twice and without overlap.
func TestCronLeaderRunsEveryTickAndFollowerTakesOver(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newCronElection(t, c)
	a := e.add("a", "* * * * * *", "100ms", "--on-child-success", "rerun")
	e.leader(10 * time.Second)
	b := e.add("b", "* * * * * *", "100ms", "--on-child-success", "rerun")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	e.waitRuns(3, 10*time.Second)
	for _, r := range e.readRuns() {
		if r.candidate != "a" {
			t.Fatalf("candidate %s ran while a leads", r.candidate)
		}
	}
	before := len(e.readRuns())
	a.Signal(syscall.SIGKILL)
	a.Wait(5 * time.Second)
	runs := e.waitRuns(before+3, 15*time.Second)
	if runs[len(runs)-1].candidate != "b" {
		t.Errorf("b did not take over: %v", runs[len(runs)-1])
	}
	times := e.checkOnce()
	checkNoOverlap(t, e.ticks)
	for i := 1; i < len(times); i++ {
		if times[i].Sub(times[i-1]) != time.Second {
			t.Logf("gap in the schedule: %s → %s (the failover)", times[i-1].Format(time.TimeOnly), times[i].Format(time.TimeOnly))
		}
	}
	if !b.Logged("last scheduled run recorded") {
		t.Errorf("b did not read the record of a's runs")
	}
}

// TestCronReelectRotates: with reelect the leader resigns after each run,
// so runs move between the hosts.
func TestCronReelectRotates(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newCronElection(t, c)
	e.add("a", "* * * * * *", "50ms", "--on-child-success", "reelect")
	e.leader(10 * time.Second)
	b := e.add("b", "* * * * * *", "50ms", "--on-child-success", "reelect")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	n := len(e.readRuns())
	runs := e.waitRuns(n+4, 15*time.Second)
	by := map[string]int{}
	for _, r := range runs[n:] {
		by[r.candidate]++
	}
	if by["a"] == 0 || by["b"] == 0 {
		t.Errorf("runs did not rotate between a and b: %v", runs[n:])
	}
	e.checkOnce()
	checkNoOverlap(t, e.ticks)
}

// TestCronLongRunSkipsNextTick: a run longer than the interval makes the
// next scheduled time be skipped and logged, never run concurrently.
func TestCronLongRunSkipsNextTick(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newCronElection(t, c)
	a := e.add("a", "* * * * * *", "2500ms", "--on-child-success", "rerun")
	a.WaitEvent(logEvRunSkipped, 10*time.Second, "skip", "overlap")
	e.waitRuns(2, 10*time.Second)
	times := e.checkOnce()
	if d := times[1].Sub(times[0]); d < 3*time.Second {
		t.Errorf("second run scheduled %s after the first, while the first ran 2.5s", d)
	}
	checkNoOverlap(t, e.ticks)
}

// TestCronTimeout: a run still going after --timeout is stopped (SIGTERM
// to its group, grace, SIGKILL) and counts as an error.
func TestCronTimeout(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newCronElection(t, c)
	a := e.add("a", "* * * * * *", "30s", "--timeout", "1s", "--on-child-error", "exit", "--stop-grace-period", "500ms")
	a.WaitEvent(logEvTimedOut, 10*time.Second)
	code := a.Wait(10 * time.Second)
	if code == 0 {
		t.Errorf("a timed-out run exited ballot with 0; it must count as an error")
	}
	if !ticking(e.ticks, 0) && ticking(e.ticks, 200*time.Millisecond) {
		t.Errorf("the timed-out run still ticks")
	}
}

// TestCronStartingDeadline: scheduled times with no leader are missed; a
// new leader runs the latest one if it is less late than the
// starting-deadline (by default: it catches up), and otherwise skips it and
// says so (--starting-deadline 0).
func TestCronStartingDeadline(t *testing.T) {
	// Serial: b starts 1.5 s before the next time and must lead by then, a
	// start-up that load could stretch. Its subtests (own elections, the
	// same wall-clock schedule) run together.
	c := startZK(t, 1)
	for _, tc := range []struct {
		name     string
		deadline string
		catchUp  bool
	}{
		{"catch-up", "10s", true},
		{"catch-up by default", "", true},
		{"skip", "0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newCronElection(t, c)
			a := e.add("a", "*/3 * * * * *", "10ms", "--on-child-success", "exit")
			if code := a.Wait(15 * time.Second); code != 0 {
				t.Fatalf("a exited %d", code)
			}
			first := e.checkOnce()[0]
			// Nobody leads at first+3s; b comes 1.5s after it.
			time.Sleep(time.Until(first.Add(4500 * time.Millisecond)))
			var flags []string
			if tc.deadline != "" {
				flags = []string{"--starting-deadline", tc.deadline}
			}
			b := e.add("b", "*/3 * * * * *", "10ms", append(flags, "--on-child-success", "rerun")...)
			runs := e.waitRuns(2, 10*time.Second)
			times := e.checkOnce()
			missed := first.Add(3 * time.Second)
			if tc.catchUp {
				if !times[1].Equal(missed) {
					t.Errorf("b ran %s first, want the missed %s", times[1], missed)
				}
				b.WaitEvent(logEvMissedRun, time.Second)
			} else {
				if !times[1].Equal(missed.Add(3 * time.Second)) {
					t.Errorf("b ran %s first, want %s (the missed time skipped)", times[1], missed.Add(3*time.Second))
				}
				b.WaitEvent(logEvRunSkipped, time.Second, "skip", "missed")
			}
			if runs[1].candidate != "b" {
				t.Errorf("second run by %s", runs[1].candidate)
			}
		})
	}
}

// TestCronLeaderKilledBetweenRunsGivesTheBatonBack: a cron leader keeps a
// keeper between runs, so a SIGKILL of its ballot gives the baton back at
// once (keeperidle.go): the next leader does not wait for a dropped one.
func TestCronLeaderKilledBetweenRunsGivesTheBatonBack(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newCronElection(t, c)
	const yearly = "0 0 1 1 *" // never due while the test runs
	a := e.add("a", yearly, "100ms", "--log-level", "debug")
	e.leader(10 * time.Second)
	a.WaitEvent(logEvKeeperReady, 10*time.Second)
	b := e.add("b", yearly, "100ms")
	b.WaitEvent(logEvFollowing, 10*time.Second)

	a.Signal(syscall.SIGKILL)
	a.Wait(5 * time.Second)
	b.WaitEvent(logEvElected, 10*time.Second)
	if b.Logged("its last holder dropped it") {
		t.Errorf("b waited for a dropped baton: a's keeper did not give it back\n%s", b.out.String())
	}
	if !b.Logged("starting on credit") && !b.Logged("baton taken") {
		t.Errorf("b did not take the baton")
	}
}

// TestCronLeaderKilledBetweenRunsRunsItsDemoteHookFirst: the idle keeper
// of a cron leader SIGKILLed between runs runs the on-demote hook, holding
// the session, and only then gives the baton back in the multi-op that
// also deletes the proposal (Handoff.Withdraw): the next in line, woken
// by that delete, is promoted after the hook has ended, and without a wait
// for a dropped baton.
func TestCronLeaderKilledBetweenRunsRunsItsDemoteHookFirst(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newCronElection(t, c)
	events := filepath.Join(t.TempDir(), "events")
	const yearly = "0 0 1 1 *" // never due while the test runs
	flags := []string{"--on-promote", hookCmd(events, "promote", 0, 0),
		"--on-demote", hookCmd(events, "demote", 500*time.Millisecond, 0)}
	a := e.add("a", yearly, "100ms", append(flags, "--log-level", "debug")...)
	a.WaitEvent(logEvKeeperReady, 10*time.Second)
	b := e.add("b", yearly, "100ms", flags...)
	b.WaitEvent(logEvFollowing, 10*time.Second)

	a.Signal(syscall.SIGKILL)
	demote := waitEvent(t, events, "demote", "a", 10*time.Second)
	promote := waitEvent(t, events, "promote", "b", 10*time.Second)
	a.Wait(5 * time.Second)
	if demote.reason != keeper.DemoteReasonBallotDied {
		t.Errorf("a's demote hook ran with reason %q, want %s", demote.reason, keeper.DemoteReasonBallotDied)
	}
	if !promote.start.After(demote.end) {
		t.Errorf("b promoted before a's demote hook ended:\n%s\n%s", demote, promote)
	}
	if b.Logged("dropped it without releasing") {
		t.Errorf("b waited for a dropped baton: a's keeper did not give it back\n%s", b.out.String())
	}
	t.Logf("b promoted %s after a's demote hook ended", ms(promote.start.Sub(demote.end)))
}

// killHost kills a candidate's whole host: its ballot and every process it
// started (a keeper, the command), all by SIGKILL, so nobody closes its
// session and its successor waits for ZooKeeper to expire it. Everything
// is stopped first, ballot before its children: no keeper sees ballot go
// and gives the baton back, and nothing new is started meanwhile.
func killHost(p *ballotProc) {
	_ = syscall.Kill(p.Pid(), syscall.SIGSTOP)
	var all []int
	for round := 0; round < 3; round++ { // a child forked just before the stop
		all = descendants(p.Pid())
		for _, pid := range all {
			_ = syscall.Kill(pid, syscall.SIGSTOP)
		}
	}
	for _, pid := range all {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = syscall.Kill(p.Pid(), syscall.SIGKILL)
}

// descendants are the processes below pid, from /proc.
func descendants(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	kids := map[int][]int{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp := parentPid(n); pp > 0 {
			kids[pp] = append(kids[pp], n)
		}
	}
	var out []int
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		for _, k := range kids[queue[0]] {
			out = append(out, k)
			queue = append(queue, k)
		}
	}
	return out
}

// TestCronHostDeathCatchUp: the leader's host dies (ballot and its keeper
// SIGKILLed together) shortly before a scheduled time S. Its session
// expires T later and the successor leads about T + 3T/4 after the death,
// so S passes with no leader. With the default flags the successor runs S,
// once, and never twice. T = 2 s (cronElection.add); the death comes 3T/4
// = 1.5 s before S, so the successor leads ~T after S: late by far more
// than the 1 s tolerated as on time, well before S + N. N = 10 s = 5T
// leaves more than T + 3T/4 between S and the next time, so the run of S
// cannot be confused with the next one.
func TestCronHostDeathCatchUp(t *testing.T) {
	t.Parallel()
	const (
		T = 2 * time.Second
		N = 5 * T
	)
	c := sharedZK(t)
	e := newCronElection(t, c)
	a := e.add("a", "*/10 * * * * *", "10ms", "--on-child-success", "rerun")
	e.waitRuns(1, N+10*time.Second) // recorded: the election is not new
	b := e.add("b", "*/10 * * * * *", "10ms", "--on-child-success", "rerun")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	first := e.checkOnce()[0]
	s := first.Add(N)
	for time.Until(s) < 3*T/4+200*time.Millisecond {
		s = s.Add(N)
	}
	time.Sleep(time.Until(s.Add(-3 * T / 4)))
	before := len(e.readRuns())
	killHost(a)
	a.Wait(5 * time.Second)

	ev := b.WaitEvent(logEvMissedRun, N)
	runs := e.waitRuns(before+1, T) // the command's own line, just after
	times := e.checkOnce()
	var ranS int
	for i, ts := range times {
		if ts.Equal(s) {
			ranS++
			if runs[i].candidate != "b" {
				t.Errorf("%s ran by %s, want the successor b", s, runs[i].candidate)
			}
		}
	}
	if ranS != 1 {
		t.Errorf("the missed time %s ran %d times, want once; runs %v", s.Format(time.TimeOnly), ranS, runs)
	}
	t.Logf("the time missed by the host's death ran %s late", ev["late_by"])
	if b.Logged("missed and") {
		t.Errorf("b skipped the missed time:\n%s", b.out.String())
	}
}

// TestCronOverlapSkipAcrossReelect: a run longer than the interval makes
// its leader skip the time due meanwhile; with reelect (the default) it
// resigns after the run, and the next leader must not run that time as a
// missed one (the catch-up is for times nobody saw). Runs of 3.5 s every
// 2 s: S runs (started up to 1 s late, on time), so S+2 always comes
// during it and is skipped; the next run is S+4 or later, never S+2.
func TestCronOverlapSkipAcrossReelect(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newCronElection(t, c)
	e.add("a", "*/2 * * * * *", "3500ms")
	e.leader(10 * time.Second)
	b := e.add("b", "*/2 * * * * *", "3500ms")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	n := len(e.readRuns())
	e.waitRuns(n+2, 20*time.Second)
	times := e.checkOnce()
	if d := times[n+1].Sub(times[n]); d < 4*time.Second {
		t.Errorf("after the run of %s came %s (%s later), want 4s later or more: the overlapped time is skipped",
			times[n].Format(time.TimeOnly), times[n+1].Format(time.TimeOnly), d)
	}
	checkNoOverlap(t, e.ticks)
}
