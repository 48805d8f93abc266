package main

// The fault-injection suite: real ZooKeeper, real ballot, a command that
// ticks into a shared file, and one fault per test. Each test checks from
// the file that two leaderships never overlapped (where the policy promises
// it) and logs the failover time, for the README's reliability table.

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"ballot/internal/keeper"
)

// commandPid is the pid of the command the candidate started last.
func commandPid(t *testing.T, p *ballotProc) int {
	t.Helper()
	return eventPid(t, p, logEvCommandStarted)
}

func parentPid(pid int) int {
	f := procStat(pid)
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// report logs a fault's figures in one greppable line.
func report(t *testing.T, fault string, gaps []time.Duration, overlap time.Duration) {
	var g []string
	for _, d := range gaps {
		g = append(g, d.Round(time.Millisecond).String())
	}
	t.Logf("RELIABILITY fault=%q failover=%s overlap=%s", fault, strings.Join(g, ","), overlap.Round(time.Millisecond))
}

// overlapOf measures how long tenures ran at the same time in total.
func overlapOf(t *testing.T, file string) time.Duration {
	ts := readTenures(t, file)
	var total time.Duration
	for i := range ts {
		for j := i + 1; j < len(ts); j++ {
			start, end := ts[j].first, ts[i].last
			if ts[j].last.Before(end) {
				end = ts[j].last
			}
			if end.After(start) {
				total += end.Sub(start)
			}
		}
	}
	return total
}

// TestFaultFrozenLeader: ballot and its command are stopped together (as a
// VM pause) for twice the session timeout. The other candidate takes over
// once the session expires; on resume the old leader must find its lease
// gone on its own clock and kill its command before anything else.
func TestFaultFrozenLeader(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	a := e.add("a", nil, nil, "tick")
	e.leader(10 * time.Second)
	b := e.add("b", nil, nil, "tick")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)

	cpid := commandPid(t, a)
	keeper := parentPid(cpid)
	freeze := func(sig syscall.Signal) {
		_ = syscall.Kill(a.Pid(), sig)
		_ = syscall.Kill(keeper, sig)
		_ = syscall.Kill(-cpid, sig)
	}
	freeze(syscall.SIGSTOP)
	frozen := time.Now()
	b.WaitEvent(logEvCommandStarted, 10*time.Second)
	if d := time.Since(frozen); d < 4*time.Second {
		time.Sleep(4*time.Second - d)
	}
	freeze(syscall.SIGCONT)
	resumed := time.Now()
	for processAlive(cpid) {
		if time.Since(resumed) > 2*time.Second {
			t.Fatalf("the frozen leader's command still runs 2s after resume")
		}
		time.Sleep(time.Millisecond)
	}
	a.WaitEvent(logEvLeaseExpired, 5*time.Second)
	a.WaitEvent(logEvFollowing, 10*time.Second)

	ts := readTenures(t, e.ticks)
	if len(ts) != 2 {
		t.Fatalf("want 2 tenures (a, b), have %d", len(ts))
	}
	stale := ts[0].last.Sub(resumed)
	if stale < 0 {
		stale = 0
	}
	t.Logf("the frozen leader's command ticked for %s after resume (its last tick %s after SIGCONT)", stale, ts[0].last.Sub(resumed))
	oldTok, _ := strconv.ParseInt(ts[0].token, 10, 64)
	newTok, _ := strconv.ParseInt(ts[1].token, 10, 64)
	if oldTok >= newTok {
		t.Errorf("the stale leader's fencing token %d is not below the new leader's %d", oldTok, newTok)
	}
	// The tick spans overlap by the whole freeze, but the old command did
	// not run while frozen: what ran at once is its time after resume,
	// which no timer can prevent and the fencing token covers.
	report(t, "leader frozen (SIGSTOP) for 2x session timeout; overlap = the old command's run after resume", []time.Duration{ts[1].first.Sub(frozen)}, stale)
	if b.Exited() {
		t.Errorf("b exited")
	}
}

// partitioned starts candidate a of e behind a proxy, leading, and b
// directly, both with runFlags and commands that tick; the proxy's
// Blackhole cuts a off from ZooKeeper.
func partitioned(e *election, runFlags ...string) (*tcpProxy, *ballotProc, *ballotProc) {
	e.t.Helper()
	proxy := newTCPProxy(e.t, e.zk.Servers())
	a := e.add("a", runFlags, []string{proxy.Addr()}, "tick")
	e.leader(10 * time.Second)
	b := e.add("b", runFlags, nil, "tick")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	waitTenures(e.t, e.ticks, 1, 10*time.Second)
	return proxy, a, b
}

// TestFaultPartitionReelect: the leader is cut off from ZooKeeper (traffic
// silently dropped) while the follower still sees it. The leader must stop
// its command before ZooKeeper can expire its session and elect b.
func TestFaultPartitionReelect(t *testing.T) {
	t.Parallel()
	e := newElection(t, sharedZK(t))
	proxy, a, b := partitioned(e, "--on-connection-loss", "reelect")
	proxy.Blackhole(true)
	cut := time.Now()
	a.WaitEvent(logEvLeaseRunningOut, 5*time.Second)
	b.WaitEvent(logEvCommandStarted, 10*time.Second)
	if d := time.Since(cut); d < 4*time.Second {
		time.Sleep(4*time.Second - d)
	}
	proxy.Blackhole(false)
	a.WaitEvent(logEvRejoining, 10*time.Second)
	a.WaitEvent(logEvFollowing, 15*time.Second)
	gaps := checkNoOverlap(t, e.ticks)
	report(t, "leader partitioned from ZooKeeper for 2x session timeout, on-connection-loss=reelect", gaps, overlapOf(t, e.ticks))
	e.checkTokensGrow()
}

// TestFaultPartitionIgnore: the same partition with on-connection-loss
// ignore: the old leader's command keeps running until it learns its session
// expired, so two commands run at once. The overlap is measured, not
// prevented: that is what ignore means.
func TestFaultPartitionIgnore(t *testing.T) {
	t.Parallel()
	e := newElection(t, sharedZK(t))
	proxy, a, b := partitioned(e, "--on-connection-loss", "ignore")
	cpid := commandPid(t, a)
	proxy.Blackhole(true)
	b.WaitEvent(logEvCommandStarted, 10*time.Second)
	time.Sleep(time.Second)
	if !processAlive(cpid) {
		t.Fatalf("with ignore, the partitioned leader's command should still run")
	}
	proxy.Blackhole(false)
	a.WaitEvent(logEvSessionLost, 15*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for processAlive(cpid) {
		if time.Now().After(deadline) {
			t.Fatalf("the old leader's command survived the news of its expired session")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ov := overlapOf(t, e.ticks)
	if ov <= 0 {
		t.Errorf("expected the two commands to overlap under ignore")
	}
	report(t, "leader partitioned from ZooKeeper for 2x session timeout, on-connection-loss=ignore", nil, ov)
}

// TestFaultServerKilled: the ZooKeeper member the leader is connected to
// dies; the leader moves to another member within its session and keeps
// its command running.
func TestFaultServerKilled(t *testing.T) {
	t.Parallel()
	c := startZKWith(t, zkOptions{N: 3})
	e := newElection(t, c)
	a := e.add("a", []string{"--zookeeper-session-timeout", "4s"}, nil, "tick")
	e.leader(15 * time.Second)
	b := e.add("b", []string{"--zookeeper-session-timeout", "4s"}, nil, "tick")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)
	cpid := commandPid(t, a)

	member := -1
	for _, line := range strings.Split(a.out.String(), "\n") {
		if i := strings.Index(line, "session established"); i >= 0 {
			for m, addr := range c.Servers() {
				if strings.Contains(line, "server="+addr) {
					member = m
				}
			}
		}
	}
	if member < 0 {
		t.Fatalf("cannot tell which member a is connected to:\n%s", a.out.String())
	}
	c.Kill(member)
	a.WaitEvent(logEvReconnected, 10*time.Second)
	time.Sleep(3 * time.Second) // more than the time left on the lease at the cut
	if !processAlive(cpid) || a.Logged("command stopped") {
		t.Fatalf("the leader stopped its command for a member's death")
	}
	if b.Logged("command started") {
		t.Fatalf("the follower took over although the leader's session lives")
	}
	if ts := readTenures(t, e.ticks); len(ts) != 1 {
		t.Fatalf("%d leaderships, want 1", len(ts))
	}
	report(t, "ZooKeeper member serving the leader killed (3-node ensemble)", nil, overlapOf(t, e.ticks))
}

// TestFaultEnsembleRestart: the whole ensemble goes down and comes back,
// within the session timeout and for longer than it, per
// on-connection-loss.
func TestFaultEnsembleRestart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy string
		long   bool
	}{
		{"reelect", false}, {"reelect", true}, {"ignore", false}, {"ignore", true}, {"exit", true},
	} {
		name := tc.policy + "-short"
		if tc.long {
			name = tc.policy + "-long"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each its own ensemble; the outages' margins are seconds, not load-sized
			// A leader rides out any outage shorter than 7T/16 less a
			// round trip, whatever the phase of its renewals (lease.go).
			// Debian's tickTime 2s allows a 40s session, far more than a
			// restart (~1s) and the client's pauses between rounds of
			// servers. The long outage uses a 2s session and stays down
			// for 4s.
			opts, session, outage := zkOptions{N: 3, TickTime: 2 * time.Second}, "40s", time.Duration(0)
			if tc.long {
				opts, session, outage = zkOptions{N: 3}, "2s", 4*time.Second
			}
			c := startZKWith(t, opts)
			e := newElection(t, c)
			flags := []string{"--zookeeper-session-timeout", session, "--on-connection-loss", tc.policy}
			a := e.add("a", flags, nil, "tick")
			e.leader(15 * time.Second)
			b := e.add("b", flags, nil, "tick")
			b.WaitEvent(logEvFollowing, 10*time.Second)
			waitTenures(t, e.ticks, 1, 10*time.Second)
			cpid := commandPid(t, a)

			c.StopAll()
			down := time.Now()
			time.Sleep(outage)
			c.StartAll()
			t.Logf("ensemble down for %s", time.Since(down).Round(time.Millisecond))
			switch {
			case !tc.long:
				a.WaitEvent(logEvReconnected, 15*time.Second)
				time.Sleep(time.Second)
				if !processAlive(cpid) {
					t.Errorf("a short outage stopped the command")
				}
			case tc.policy == "exit":
				if code := a.Wait(15 * time.Second); code != 125 {
					t.Errorf("a exited %d, want 125", code)
				}
				waitTenures(t, e.ticks, 2, 20*time.Second)
			case tc.policy == "reelect":
				waitTenures(t, e.ticks, 2, 20*time.Second)
			case tc.policy == "ignore":
				// Leaders and followers keep their roles through the
				// outage if their sessions survive it (ZooKeeper restores
				// sessions on restart); otherwise the command is killed on
				// the news of the expiry.
				time.Sleep(2 * time.Second)
				if processAlive(cpid) && !a.Logged("session lost") {
					t.Logf("a kept its command and its session through the outage")
				}
			}
			gaps := checkNoOverlap(t, e.ticks)
			report(t, fmt.Sprintf("whole ensemble restarted (%s), on-connection-loss=%s", map[bool]string{false: "within the session timeout", true: "after more than the session timeout"}[tc.long], tc.policy), gaps, overlapOf(t, e.ticks))
		})
	}
}

// TestSIGKILLedLeaderRunsItsDemoteHook: ballot is killed outright while
// leading; its keeper runs the on-demote hook (reason ballot-died) while
// keeping ballot's session, and so its baton, alive, then gives the baton
// back. The hook lasts two session timeouts: without the keeper's pings the
// session would expire and, after the wait for a dropped baton (3/4 of it),
// the follower be promoted before the hook ends. The follower's promote
// hook starts after it, and without waiting for a dropped baton.
func TestSIGKILLedLeaderRunsItsDemoteHook(t *testing.T) {
	t.Parallel()
	const sessionTimeout = 2 * time.Second // runArgs
	e := newHookElection(t, sharedZK(t))
	flags := []string{
		"--on-promote", hookCmd(e.events, "promote", 50*time.Millisecond, 0),
		"--on-demote", hookCmd(e.events, "demote", sessionTimeout*2, 0),
	}
	a := e.add("a", flags, nil, "tick")
	e.leader(10 * time.Second)
	b := e.add("b", flags, nil, "tick")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)

	killed := time.Now()
	a.Signal(syscall.SIGKILL)
	demote := waitEvent(t, e.events, "demote", "a", sessionTimeout*3)
	promote := waitEvent(t, e.events, "promote", "b", sessionTimeout*3)
	waitTenures(t, e.ticks, 2, 10*time.Second)
	// a's output ends once its keeper has released and exited.
	a.Wait(sessionTimeout * 2)

	if demote.reason != keeper.DemoteReasonBallotDied || demote.role != "follower" {
		t.Errorf("a's demote hook ran with reason %q, role %q; want %s, follower", demote.reason, demote.role, keeper.DemoteReasonBallotDied)
	}
	ls := leaderships(t, e.events, e.ticks)
	if len(ls) != 2 || ls[0].cand != "a" || ls[1].cand != "b" {
		t.Fatalf("want leaderships a then b, have %v", readEvents(t, e.events))
	}
	t.Log(checkOwnOrder(t, ls[0]))
	t.Log(checkHandover(t, ls[0], ls[1]))
	checkNoOverlap(t, e.ticks)
	if b.Logged("dropped it without releasing") {
		t.Errorf("b waited for a dropped baton: a's keeper did not give it back")
	}
	for _, want := range []string{"running the on-demote hook, holding the baton", "on-demote hook ended"} {
		if !a.Logged(want) {
			t.Errorf("a's keeper did not log %q", want)
		}
	}
	t.Logf("after SIGKILL of a: its demote hook ran +%s..+%s; b promoted +%s (%s after the hook ended)",
		ms(demote.start.Sub(killed)), ms(demote.end.Sub(killed)), ms(promote.start.Sub(killed)), ms(promote.start.Sub(demote.end)))
}
