package main

// The ways to run two commands that a fault review found after the baton
// landed, each closed (issue: the remaining holes), and the leader whose
// supervision is stuck. The deposed ZooKeeper leader is in
// e2e_ensemble_test.go; ballot and keeper stopped together and the
// keeper's own races in e2e_keeper_test.go.

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// operatorCleanup deletes what an operator "cleaning up a stuck leader"
// would: the handover record, the baton and the leader's proposal, the
// proposal last, so that the next candidate, which watches it, finds the
// other two gone.
func operatorCleanup(t *testing.T, e *election) {
	t.Helper()
	conn := zkConnect(t, e.zk.Servers(), 2*time.Second)
	defer conn.Close()
	for _, p := range []string{e.base + "/" + handoverName, e.base + "/" + batonName, e.base + "/" + e.proposals()[0]} {
		if err := conn.Delete(p, -1); err != nil {
			t.Fatalf("delete %s: %v", p, err)
		}
	}
}

// TestMixedSessionTimeoutsRecordDeleted: a leader with a 4 s session is
// cut off from ZooKeeper; an operator deletes its proposal, the baton and
// the handover record; the next candidate has a 2 s session. It must wait
// the leader's W (3 s, recorded in the election's own data), not its own
// (1.5 s), for the cut-off leader's lease to run out.
func TestMixedSessionTimeoutsRecordDeleted(t *testing.T) {
	t.Parallel()
	e := newElection(t, sharedZK(t))
	proxy := newTCPProxy(t, e.zk.Servers())
	a := e.add("a", []string{"--zookeeper-session-timeout", "4s", "--stop-grace-period", "1s"}, []string{proxy.Addr()}, "stubborn")
	a.WaitEvent(logEvCommandStarted, 20*time.Second)
	b := e.add("b", []string{"--stop-grace-period", "1s"}, nil, "stubborn")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)

	proxy.Blackhole(true)
	cut := time.Now()
	operatorCleanup(t, e)
	b.WaitEvent(logEvCommandStarted, 20*time.Second)
	if !b.Logged("wait=3s") {
		t.Errorf("b did not wait the cut-off leader's W (3s):\n%s", b.out.String())
	}
	ts := waitTenures(t, e.ticks, 2, 10*time.Second)
	gaps := checkNoOverlap(t, e.ticks)
	t.Logf("RELIABILITY fault=%q fault→new command=%s gap=%s", "leader (T 4 s) cut off, its records deleted, successor T 2 s",
		ts[1].first.Sub(cut).Round(time.Millisecond), gaps[0].Round(time.Millisecond))
}

// TestLateReleaseIsFencedByTheProposal: a leader whose proposal is gone
// gives nothing back, even when the handover record's version matches
// (an operator deleted the record and a successor re-created it, at
// version 0 like the leader's own create): the release would mark the
// successor's take released and delete its baton.
func TestLateReleaseIsFencedByTheProposal(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	base := "/ballot/test/" + t.Name()
	p := newInProcess(t, zkc, base)
	c := p.join(p.session(), "a")
	if _, err := c.takeBaton(nil); err != nil {
		t.Fatal(err)
	}
	if c.baton.version != 0 {
		t.Fatalf("the leader created the record: version %d, want 0", c.baton.version)
	}

	// The operator's cleanup, and a successor's take in another session.
	other := zkConnect(t, zkc.Servers(), 2*time.Second)
	for _, p := range []string{c.node, c.batonPath(), c.handoverPath()} {
		if err := other.Delete(p, -1); err != nil {
			t.Fatalf("delete %s: %v", p, err)
		}
	}
	successor := []byte(`{"state":"taken","candidateId":"b"}`)
	if _, err := other.Create(c.handoverPath(), successor, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Create(c.batonPath(), successor, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	released, err := retireMulti(c, append([]any{&zk.DeleteRequest{Path: c.node, Version: -1}}, releaseOps(c, handTo{})...), nil)
	if err != nil {
		t.Fatalf("retire: %v", err)
	}
	if released {
		t.Errorf("the late release reports the baton given back")
	}
	if b, _, err := other.Get(c.handoverPath()); err != nil || string(b) != string(successor) {
		t.Errorf("the successor's handover record changed: %q, %v", b, err)
	}
	if ok, _, err := other.Exists(c.batonPath()); err != nil || !ok {
		t.Errorf("the successor's baton was deleted (exists %v, %v)", ok, err)
	}
}

// fSetPipeSize is F_SETPIPE_SZ of fcntl(2) (Linux 2.6.35 and later).
const fSetPipeSize = 1031

// TestBlockedStderrDoesNotStallSupervision: nobody reads ballot's stderr
// (a stalled journal, a full pipe). Supervision must go on: with
// on-child-success rerun the leader keeps starting its command, which
// logs as it goes, long after the pipe is full; then a SIGTERM still hands
// over at once.
func TestBlockedStderrDoesNotStallSupervision(t *testing.T) {
	t.Parallel()
	e := newElection(t, sharedZK(t))
	// Each run lasts just over the 1 s under which a run counts as
	// quick (backoffFor): quick runs, successful or not, are backed off.
	const runFor = 1100 * time.Millisecond
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	args := runArgs(e.zk.Servers(), e.base, "a", "--on-child-success", "rerun", "--log-level", "debug", "--wrap-child-logs",
		"--", selfExe(), "0", runFor.String())
	cmd := exec.Command(ballotBin, args...)
	cmd.Env = ballotEnv(t, "BALLOT_TEST_CHILD=exit", "TICK_FILE="+e.ticks)
	cmd.Stdout, cmd.Stderr = w, w
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), fSetPipeSize, 4096); errno != 0 {
		t.Fatalf("F_SETPIPE_SZ: %v", errno)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })

	// Read until the command runs, then never again: with the pipe shrunk
	// to a page, a few runs' lines fill it.
	var seen []byte
	var buf [4096]byte
	for !strings.Contains(string(seen), "command started") {
		n, err := r.Read(buf[:])
		if err != nil {
			t.Fatalf("ballot's output ended: %v\n%s", err, seen)
		}
		seen = append(seen, buf[:n]...)
	}
	runs := func() int { // one pid per run, all in one leadership
		n := 0
		for _, tn := range readTenures(t, e.ticks) {
			n += len(tn.pids)
		}
		return n
	}
	// Each run logs about 1 KiB at debug level: 12 runs are three times
	// what the pipe holds. Each takes runFor plus a rerun's start (well
	// under a second); 3 s a run leaves room for a busy machine.
	const more = 12
	before := runs()
	deadline := time.Now().Add(more * 3 * time.Second)
	for runs() < before+more {
		if time.Now().After(deadline) {
			t.Fatalf("the command stopped being run once stderr was blocked: %d runs, then %d", before, runs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	b := e.add("b", nil, nil, "tick")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	b.WaitEvent(logEvCommandStarted, 10*time.Second)
	checkNoOverlap(t, e.ticks)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("ballot a did not exit on SIGTERM with its stderr blocked")
	}
}

// TestDeleteAllWhileLeaderConnected: an operator deletes the whole
// election (deleteall) while its leader runs, connected; a candidate new
// to the election creates the path again at once. It finds no handover
// record and waits W before it starts anything, so the old leader, which
// kills its command on seeing its nodes go, is long done.
func TestDeleteAllWhileLeaderConnected(t *testing.T) {
	t.Parallel()
	e := newElection(t, sharedZK(t))
	a := e.add("a", []string{"--stop-grace-period", "1s"}, nil, "stubborn")
	a.WaitEvent(logEvCommandStarted, 20*time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)

	conn := zkConnect(t, e.zk.Servers(), 2*time.Second)
	deleteAll(t, conn, e.base)
	gone := time.Now()
	b := e.add("b", []string{"--stop-grace-period", "1s"}, nil, "stubborn")
	a.WaitEvent(logEvLeadershipLost, 10*time.Second)
	// a stands again at once: either may lead next; whichever creates the
	// path again finds no handover record and waits.
	ts := waitTenures(t, e.ticks, 2, 20*time.Second)
	gaps := checkNoOverlap(t, e.ticks)
	if !strings.Contains(a.out.String()+b.out.String(), "nobody on record") {
		t.Errorf("the next leader did not wait for a baton nobody recorded")
	}
	t.Logf("RELIABILITY fault=%q fault→new command=%s gap=%s", "deleteall of the election, its leader connected",
		ts[1].first.Sub(gone).Round(time.Millisecond), gaps[0].Round(time.Millisecond))
}

// deleteAll deletes path and everything below it, children first, as
// zkCli's deleteall does; again while a node appears under it meanwhile
// (the leader, seeing its proposal go, stands again at once, and may
// create its new one before the base path's delete), as an operator would
// run deleteall again.
func deleteAll(t *testing.T, conn *zk.Conn, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		children, _, err := conn.Children(path)
		if errors.Is(err, zk.ErrNoNode) {
			return // its owner deleted it meanwhile
		}
		if err != nil {
			t.Fatalf("list %s: %v", path, err)
		}
		for _, c := range children {
			deleteAll(t, conn, path+"/"+c)
		}
		err = conn.Delete(path, -1)
		if err == nil || errors.Is(err, zk.ErrNoNode) {
			return
		}
		if !errors.Is(err, zk.ErrNotEmpty) || time.Now().After(deadline) {
			t.Fatalf("delete %s: %v", path, err)
		}
	}
}

// TestNewElectionWaits: the first leader of an election whose path it
// creates cannot tell it from one deleted under a running leader: it waits
// W for a baton nobody recorded, once, and says so.
func TestNewElectionWaits(t *testing.T) {
	t.Parallel()
	e := newFreshElection(t, sharedZK(t))
	a := e.add("a", nil, nil, "tick")
	a.WaitEvent(logEvCommandStarted, 20*time.Second)
	if !a.Logged("nobody on record") || !a.Logged("wait=1.5s") {
		t.Errorf("a did not wait W (1.5s) for a baton nobody recorded")
	}
	a.Signal(syscall.SIGTERM)
	a.Wait(10 * time.Second)
	b := e.add("b", nil, nil, "tick")
	b.WaitEvent(logEvCommandStarted, 10*time.Second)
	if b.Logged("waiting for the baton") {
		t.Errorf("b waited although a gave the baton back")
	}
	checkNoOverlap(t, e.ticks)
}

// TestLongDemoteHookHoldsTheBaton: a leader's on-demote hook outlasts the
// lease it had (3 s against W = 1.5 s at T = 2 s). Its command is gone, so
// it needs no lease, but its session keeps the baton until the hook ends:
// the next leader's promote hook starts only after it.
func TestLongDemoteHookHoldsTheBaton(t *testing.T) {
	t.Parallel()
	e := newHookElection(t, sharedZK(t))
	flags := []string{"--on-promote", hookCmd(e.events, "promote", 0, 0),
		"--on-demote", hookCmd(e.events, "demote", 3*time.Second, 0), "--hook-timeout", "10s"}
	a := e.add("a", flags, nil, "tick")
	e.leader(10 * time.Second)
	b := e.add("b", flags, nil, "tick")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)

	a.Signal(syscall.SIGTERM)
	demote := waitEvent(t, e.events, "demote", "a", 15*time.Second)
	promote := waitEvent(t, e.events, "promote", "b", 15*time.Second)
	if promote.start.Before(demote.end) {
		t.Errorf("b was promoted %s before a's demote hook ended", demote.end.Sub(promote.start))
	}
	if b.Logged("dropped it without releasing") {
		t.Errorf("a's baton was dropped during its demote hook")
	}
	checkNoOverlap(t, e.ticks)
}
