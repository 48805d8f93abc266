package main

// ballot drain / undrain: a candidate kept out of the line from anywhere,
// across its restarts; a drained leader hands over as on step-down.

import (
	"encoding/json"
	"os"
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
	c := sharedZK(t)
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

// TestDrainUntilReboot: drain --until-reboot records the boot id the
// candidate's proposal published (its host's); the drain holds through a
// restart of its ballot on the same boot, and a drain --until-reboot while
// it is out of the line keeps that boot id; after a reboot (simulated: the
// drain node names another boot, as one written during an earlier boot
// would) the candidate deletes the node and stands. A candidate not in
// line cannot be drained until reboot: one line, exit 1, nothing written.
func TestDrainUntilReboot(t *testing.T) {
	t.Parallel()
	e := newElection(t, sharedZK(t))
	raw, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	boot := strings.TrimSpace(string(raw))
	a := e.add("a", nil, nil, "tick")
	e.leader(10 * time.Second)
	b := e.add("b", nil, nil, "tick")
	b.WaitEvent(logEvFollowing, 10*time.Second)

	// Not in line: refused, nothing written.
	out, code := control(t, e, "drain", "--candidate-id", "nobody", "--until-reboot")
	if code != 1 || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "--until-reboot: nobody is not in line") {
		t.Fatalf("drain --until-reboot of a candidate not in line: exit %d, want 1 and one line: %q", code, out)
	}
	if inf, _ := infoJSON(t, e.zk.Servers(), e.base); len(inf.Drained) != 0 {
		t.Fatalf("a refused drain --until-reboot wrote %+v", inf.Drained)
	}

	out, code = control(t, e, "drain", "--candidate-id", "b", "--until-reboot", "--reason", "firmware", "--wait", "15s")
	if code != 0 || !strings.Contains(out, "until its host reboots (boot id "+boot+")") || !strings.Contains(out, "b is out of the line") {
		t.Fatalf("drain --until-reboot b: exit %d: %s", code, out)
	}
	b.WaitEvent(logEvWithdrew, 10*time.Second, "reason", "drained")
	inf, _ := infoJSON(t, e.zk.Servers(), e.base)
	if len(inf.Drained) != 1 || !inf.Drained[0].UntilReboot || inf.Drained[0].BootID != boot ||
		!hasNote(inf.Notes, "b is drained (firmware, by ") || !hasNote(inf.Notes, "until its host reboots or ballot undrain") {
		t.Fatalf("info: drained %+v, notes %q; want b until reboot of boot %s", inf.Drained, inf.Notes, boot)
	}
	if out, _ := control(t, e, "info"); !strings.Contains(out, "b until reboot, by ") {
		t.Errorf("info's summary does not say until reboot:\n%s", out)
	}

	// Its ballot restarted on the same boot: still drained.
	b.Signal(syscall.SIGTERM)
	b.Wait(10 * time.Second)
	b2 := e.add("b", nil, nil, "tick")
	b2.WaitEvent(logEvDrained, 10*time.Second, "until", "reboot", "reason", "firmware")
	// Out of the line, drained until reboot: drain --until-reboot keeps the
	// boot id it has.
	if out, code := control(t, e, "drain", "--candidate-id", "b", "--until-reboot", "--reason", "firmware again"); code != 0 ||
		!strings.Contains(out, "boot id "+boot) {
		t.Fatalf("drain --until-reboot of b drained until reboot: exit %d: %s", code, out)
	}
	b2.Signal(syscall.SIGTERM)
	b2.Wait(10 * time.Second)
	if b2.Logged("proposal made") {
		t.Fatalf("b stood for election while drained until reboot on the same boot:\n%s", b2.out.String())
	}

	// "Rebooted": the drain names another boot than this host's.
	conn := zkConnect(t, e.zk.Servers(), 2*time.Second)
	defer conn.Close()
	p := drainPath(e.base, "b")
	data, _, err := conn.Get(p)
	if err != nil {
		t.Fatal(err)
	}
	var d drainRecord
	if err := json.Unmarshal(data, &d); err != nil || d.BootID != boot {
		t.Fatalf("drain node %s: %s (%v), want boot id %s", p, data, err, boot)
	}
	d.BootID = "00000000-0000-0000-0000-000000000000"
	data, _ = json.Marshal(d)
	if _, err := conn.Set(p, data, -1); err != nil {
		t.Fatal(err)
	}
	b3 := e.add("b", nil, nil, "tick")
	b3.WaitEvent(logEvUndrained, 10*time.Second, "reason", "rebooted")
	b3.WaitEvent(logEvJoined, 10*time.Second)
	if ok, _, err := conn.Exists(p); err != nil || ok {
		t.Errorf("the expired drain node is still there (%v)", err)
	}
	if b3.Logged("drained (ballot drain") {
		t.Errorf("b treated an expired drain as a drain:\n%s", b3.out.String())
	}
	a.Signal(syscall.SIGTERM)
	b3.WaitEvent(logEvElected, 15*time.Second)
}
