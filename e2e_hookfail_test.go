package main

// End-to-end: hooks that fail or hang, and stops that come while a hook
// runs or while ZooKeeper cannot be reached. The hooks' events file and
// its helpers are in e2e_hooks_test.go.

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFailingPromoteHook: a's promote hook fails; a failing promote hook
// is a failing command: its command never runs, the on-child-error policy
// applies.
func TestFailingPromoteHook(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	t.Run("reelect", func(t *testing.T) {
		e := newHookElection(t, c)
		failing := []string{
			"--on-promote", hookCmd(e.events, "promote", 200*time.Millisecond, 1),
			"--on-demote", hookCmd(e.events, "demote", 50*time.Millisecond, 0),
			"--on-child-error", "reelect",
		}
		a := e.add("a", failing, nil, "tick")
		a.WaitEvent(logEvHookStarted, 10*time.Second, "hook", "on-promote")
		b := e.add("b", hookFlags(e.events, "--on-child-error", "reelect"), nil, "tick")
		b.WaitEvent(logEvCommandStarted, 15*time.Second)
		ts := waitTenures(t, e.ticks, 1, 10*time.Second)
		time.Sleep(500 * time.Millisecond)
		if a.Logged("command started") {
			t.Errorf("a started its command although its promote hook failed")
		}
		if a.Exited() {
			t.Errorf("a exited (%d) under reelect", a.code)
		}
		ls := leaderships(t, e.events, e.ticks)
		var fails int
		for i, l := range ls {
			t.Log(checkOwnOrder(t, l))
			if l.cand == "a" {
				fails++
				if l.ticks != nil {
					t.Errorf("a's command ran with token %s", l.token)
				}
				if l.demote == nil {
					t.Errorf("a's failed promote (token %s) was not followed by a demote", l.token)
				} else if l.demote.reason != "promote-failed" {
					t.Errorf("a's demote after its failed promote: reason %q, want promote-failed", l.demote.reason)
				}
			}
			if i > 0 {
				t.Log(checkHandover(t, ls[i-1], l))
			}
		}
		if fails == 0 || ls[len(ls)-1].cand != "b" {
			t.Errorf("want a's failed promotes then b's leadership: %v", readEvents(t, e.events))
		}
		if len(ts) != 1 || ls[len(ls)-1].ticks == nil || ls[len(ls)-1].ticks.token != ts[0].token {
			t.Errorf("the one command that ran is not b's")
		}
	})
	t.Run("exit", func(t *testing.T) {
		e := newHookElection(t, c)
		a := e.add("a", []string{"--on-promote", hookCmd(e.events, "promote", 0, 1), "--on-child-error", "exit"}, nil, "tick")
		if code := a.Wait(15 * time.Second); code != 1 {
			t.Errorf("a exited %d, want the promote hook's 1", code)
		}
		if a.Logged("command started") || len(readTenures(t, e.ticks)) != 0 {
			t.Errorf("a's command ran although its promote hook failed")
		}
		if evs := readEvents(t, e.events); len(evs) != 1 || evs[0].event != "promote" {
			t.Errorf("want one promote event, have %v", evs)
		}
	})
}

// TestHangingHooksAreStopped: a hook still running at --hook-timeout is
// stopped. A promote hook that timed out has failed, whatever its status;
// a demote hook that hangs does not keep ballot from exiting.
func TestHangingHooksAreStopped(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	t.Run("promote", func(t *testing.T) {
		e := newHookElection(t, c)
		// With on-child-success ignore, a timed-out hook taken for a success
		// would keep a leading; as a failure, on-child-error exit ends it.
		a := e.add("a", []string{"--on-promote", hookCmd(e.events, "promote", time.Minute, 0), "--hook-timeout", "500ms",
			"--on-child-success", "ignore", "--on-child-error", "exit"}, nil, "tick")
		a.WaitEvent(logEvHookStarted, 10*time.Second, "hook", "on-promote")
		hook := eventPid(t, a, logEvHookStarted, "hook", "on-promote")
		code := a.Wait(10 * time.Second)
		if code == 0 {
			t.Errorf("a exited 0: a timed-out promote hook was not a failure")
		}
		if !a.Logged("on-promote hook timed out") {
			t.Fatalf("a did not log the hook's timeout")
		}
		// Timed on ballot's own log: the test may notice "started" late.
		took := loggedAt(t, a, "on-promote hook timed out").Sub(loggedAt(t, a, "on-promote hook started"))
		if took < 450*time.Millisecond || took > 3*time.Second {
			t.Errorf("a's promote hook timed out %s after it started, want about the 500ms hook timeout", took)
		}
		waitGone(t, hook, 5*time.Second, "the timed-out promote hook")
		if a.Logged("command started") || len(readTenures(t, e.ticks)) != 0 {
			t.Errorf("a's command ran after its promote hook timed out")
		}
		if len(readEvents(t, e.events)) != 0 {
			t.Errorf("the promote hook ran to its end: %v", readEvents(t, e.events))
		}
		t.Logf("timed-out promote hook: a exited %d; the hook timed out %s after it started", code, ms(took))
	})
	t.Run("demote", func(t *testing.T) {
		e := newHookElection(t, c)
		a := e.add("a", []string{"--on-demote", hookCmd(e.events, "demote", time.Minute, 0), "--hook-timeout", "500ms"}, nil, "tick")
		waitTenures(t, e.ticks, 1, 10*time.Second)
		a.Signal(syscall.SIGTERM)
		a.WaitEvent(logEvHookStarted, 5*time.Second, "hook", "on-demote")
		hook := eventPid(t, a, logEvHookStarted, "hook", "on-demote")
		a.Wait(10 * time.Second)
		if !a.Logged("on-demote hook timed out") {
			t.Fatalf("a did not log the demote hook's timeout")
		}
		// Timed on ballot's own log, as for the promote hook: from the stop
		// request to the demote hook's end, after which ballot exits.
		took := loggedAt(t, a, "on-demote hook ended").Sub(loggedAt(t, a, "stop requested"))
		if took < 450*time.Millisecond || took > 3*time.Second {
			t.Errorf("a's demote hook held its exit %s after the stop request, want just over the 500ms hook timeout", took)
		}
		waitGone(t, hook, 5*time.Second, "the timed-out demote hook")
		if ps := e.proposals(); len(ps) != 0 {
			t.Errorf("proposals left after a exited: %v", ps)
		}
		t.Logf("hanging demote hook: ended %s after the stop request", ms(took))
	})
}

// TestSIGTERMDuringPartitionIgnore: under on-connection-loss ignore the
// command runs through a partition; a SIGTERM then must still stop it at
// once (removing the leader node, a ZooKeeper request that waits for the
// reconnect, once held it up until the partition healed).
func TestSIGTERMDuringPartitionIgnore(t *testing.T) {
	t.Parallel()
	e := newHookElection(t, sharedZK(t))
	proxy, a, _ := partitioned(e.election, hookFlags(e.events, "--on-connection-loss", "ignore")...)
	cpid := commandPid(t, a)
	proxy.Blackhole(true)
	defer proxy.Blackhole(false)
	a.WaitEvent(logEvDisconnected, 5*time.Second)
	a.Signal(syscall.SIGTERM)
	waitGone(t, cpid, time.Second, "the command after SIGTERM")
}

// TestStopDuringPromoteHook: SIGTERM while the promote hook runs stops the
// hook and ends ballot with 0, as any stop before the command ran, in run
// once and run cron alike.
func TestStopDuringPromoteHook(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	for _, mode := range []string{"once", "cron"} {
		t.Run(mode, func(t *testing.T) {
			e := newHookElection(t, c)
			args := []string{"--zookeeper-servers", strings.Join(c.Servers(), ","), "--zookeeper-base-path", e.base,
				"--zookeeper-session-timeout", "2s", "run", mode, "--candidate-id", "a",
				"--on-promote", hookCmd(e.events, "promote", time.Minute, 0)}
			if mode == "cron" {
				args = append(args, "--schedule", "@every 1s")
			}
			a := startBallot(t, "a", ballotEnv(t, "BALLOT_TEST_CHILD=tick"), append(args, "--", selfExe(), e.ticks)...)
			a.WaitEvent(logEvHookStarted, 10*time.Second, "hook", "on-promote")
			hook := eventPid(t, a, logEvHookStarted, "hook", "on-promote")
			a.Signal(syscall.SIGTERM)
			if code := a.Wait(15 * time.Second); code != exitOK {
				t.Errorf("run %s: exit code %d after SIGTERM during the promote hook, want 0", mode, code)
			}
			waitGone(t, hook, time.Second, "the promote hook")
			if a.Logged("command started") {
				t.Errorf("run %s: the command started after SIGTERM", mode)
			}
		})
	}
}
