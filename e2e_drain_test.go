package main

// ballot drain / undrain: a candidate kept out of the line from anywhere,
// across its restarts; a drained leader hands over as on step-down.

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDrain: a drained follower leaves the line; a drained leader hands
// over and leaves it; a drained candidate stays out through its restart;
// with every candidate drained nobody leads and info says why; undrained,
// a candidate stands again and leads.
func TestDrain(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	e := newElection(t, c)
	flags := []string{"--stop-grace-period", "1s"}
	a := e.add("a", flags, nil, "stubborn")
	e.leader(10 * time.Second)
	b := e.add("b", flags, nil, "stubborn")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	cc := e.add("c", flags, nil, "stubborn")
	cc.WaitEvent(logEvFollowing, 10*time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)

	if out, code := control(t, e, "drain", "--candidate-id", "b", "--wait", "15s"); code != 0 || !strings.Contains(out, "b is out of the line") {
		t.Fatalf("drain b: exit %d: %s", code, out)
	}
	b.WaitEvent(logEvWithdrew, 10*time.Second, "reason", "drained")

	// The leader drained: it hands over to c (its command ignores
	// SIGTERM: killed after the grace period) and leaves the line.
	out, code := control(t, e, "drain", "--candidate-id", "a", "--reason", "kernel update", "--wait", "15s")
	if code != 0 || !strings.Contains(out, "a is out of the line") {
		t.Fatalf("drain a: exit %d: %s", code, out)
	}
	a.WaitEvent(logEvDrained, 10*time.Second, "reason", "kernel update")
	waitTenures(t, e.ticks, 2, 10*time.Second)
	checkNoOverlap(t, e.ticks)
	inf, _ := infoJSON(t, e.zk.Servers(), e.base)
	if len(inf.Drained) != 2 || inf.Drained[0].CandidateID != "a" || inf.Drained[0].Reason != "kernel update" ||
		inf.Leader == nil || inf.Leader.ID != "c" || len(inf.Candidates) != 1 {
		t.Fatalf("info after draining a and b: drained %+v, leader %+v, %d candidates; want a and b drained, c alone leading",
			inf.Drained, inf.Leader, len(inf.Candidates))
	}

	// It stays drained through a restart of its ballot.
	a.Signal(syscall.SIGTERM)
	if code := a.Wait(10 * time.Second); code != 0 {
		t.Errorf("a drained and stopped: exit %d, want 0", code)
	}
	a2 := e.add("a", flags, nil, "stubborn")
	a2.WaitEvent(logEvDrained, 10*time.Second, "reason", "kernel update")
	if a2.Logged("proposal made") {
		t.Fatalf("a drained candidate joined the line after a restart:\n%s", a2.out.String())
	}

	// Every candidate drained: nobody leads, info says why.
	if out, code := control(t, e, "drain", "--candidate-id", "c", "--wait", "15s"); code != 0 {
		t.Fatalf("drain c: exit %d: %s", code, out)
	}
	inf, _ = infoJSON(t, e.zk.Servers(), e.base)
	if inf.Leader != nil || len(inf.Drained) != 3 || !hasNote(inf.Notes, "nobody leads") {
		t.Fatalf("info with every candidate drained: leader %+v, drained %+v, notes %q", inf.Leader, inf.Drained, inf.Notes)
	}
	if ticking(e.ticks, 300*time.Millisecond) {
		t.Fatalf("a command runs with every candidate drained")
	}

	// Undrained, b stands again and leads.
	if out, code := control(t, e, "undrain", "--candidate-id", "b"); code != 0 || !strings.Contains(out, "undrained b") {
		t.Fatalf("undrain: exit %d: %s", code, out)
	}
	b.WaitEvent(logEvUndrained, 10*time.Second)
	waitTenures(t, e.ticks, 3, 10*time.Second)
	checkNoOverlap(t, e.ticks)
	if out, code := control(t, e, "undrain", "--candidate-id", "b"); code != 0 || !strings.Contains(out, "was not drained") {
		t.Errorf("a second undrain: exit %d: %s", code, out)
	}
	e.checkTokensGrow()
}
