package main

// Several elections on one session (a crontab's jobs): one election's
// trouble ends that election alone, against a real ZooKeeper.

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// lead makes c the leader at once, as the tests of one session's several
// elections need: the election read, then the baton taken.
func lead(t *testing.T, c *candidate) leaseStart {
	t.Helper()
	if _, err := c.readElection(); err != nil {
		t.Fatal(err)
	}
	start, err := c.takeBaton(nil)
	if err != nil {
		t.Fatal(err)
	}
	return start
}

// TestSharedSessionStuckSupervisionEndsOnlyItsElection: two leases on
// one session; the second's supervision never checks in while its
// command "runs". Past that lease's end it deletes its own baton and
// proposal (lease.endOwn), and nothing else: the session lives, the
// first election's baton is still the session's and its renewals go on,
// answered and vouching.

func TestSharedSessionStuckSupervisionEndsOnlyItsElection(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	root := "/ballot/test/" + t.Name()
	var ps []*inProcess
	for _, e := range []string{"/calm", "/stuck"} {
		seedElection(t, zkc.Servers(), root+e)
		ps = append(ps, newInProcess(t, zkc, root+e))
	}
	s := ps[0].session()
	var cs []*candidate
	var ls []*lease
	for i, p := range ps {
		c := p.join(s, fmt.Sprintf("leader-%d", i))
		start := lead(t, c)
		start.shared = true
		busy := func() bool { return i == 1 } // the second "runs" a command nobody supervises
		l := holdLease(c, start, 0, busy, true)
		t.Cleanup(l.Stop)
		cs, ls = append(cs, c), append(ls, l)
	}
	// Its end is at most W = 3T/4 after its take; the loop notices at its
	// next tick (T/8). 4T is ample on a busy machine and short of nothing.
	T := s.Timeout()
	select {
	case <-ls[1].gone:
	case <-time.After(4 * T):
		t.Fatalf("the stuck lease did not end within 4T (%s)", 4*T)
	}
	conn := zkConnect(t, zkc.Servers(), 2*time.Second)
	defer conn.Close()
	for _, p := range []string{cs[1].node, cs[1].batonPath()} {
		if ok, _, err := conn.Exists(p); err != nil || ok {
			t.Errorf("%s: exists %v (%v); want deleted by the stuck lease", p, ok, err)
		}
	}
	if s.IsLost() {
		t.Fatalf("the shared session was ended (%s); want it kept for the other election", s.LostReason())
	}
	_, st, err := conn.Get(cs[0].batonPath())
	if err != nil || st.EphemeralOwner != s.ID() {
		t.Fatalf("the other election's baton: %v, %+v; want held by the shared session", err, st)
	}
	from := st.Version
	for deadline := time.Now().Add(4 * T); ; time.Sleep(10 * time.Millisecond) {
		_, st, err := conn.Get(cs[0].batonPath())
		if err == nil && st.Version >= from+3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the other election's renewals stopped (baton %+v, %v)", st, err)
		}
	}
	if isClosed(ls[0].gone) || !ls[0].Fresh() {
		t.Errorf("the other election's lease: gone %v (%s), fresh %v; want held and fresh", isClosed(ls[0].gone), ls[0].GoneWhy(), ls[0].Fresh())
	}
}

// TestSharedSessionLeaveOwnTakesOnlyItsNodes: leaveOwn deletes what the
// session's end would of its own election (proposal, baton, leader node)
// and nothing of another election on the same session, nor a baton
// another session holds.
func TestSharedSessionLeaveOwnTakesOnlyItsNodes(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	root := "/ballot/test/" + t.Name()
	var ps []*inProcess
	for _, e := range []string{"/stays", "/leaves", "/other"} {
		seedElection(t, zkc.Servers(), root+e)
		ps = append(ps, newInProcess(t, zkc, root+e))
	}
	s := ps[0].session()
	var cs []*candidate
	for i, p := range ps[:2] {
		c := p.join(s, fmt.Sprintf("leader-%d", i))
		lead(t, c)
		// As publishLeader writes it: naming the proposal it is of.
		if _, err := s.Conn.Create(c.leaderPath(), []byte(`{"proposal":"`+c.node+`"}`), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	// Another session leads the third election; our candidate there is
	// second in line.
	other := ps[2].join(ps[2].session(), "elsewhere")
	lead(t, other)
	behind := ps[2].join(s, "behind")

	for _, c := range []*candidate{cs[1], behind} {
		if err := leaveOwn(c); err != nil {
			t.Fatalf("leaveOwn %s: %v", c.basePath, err)
		}
	}
	conn := zkConnect(t, zkc.Servers(), 2*time.Second)
	defer conn.Close()
	exists := func(p string) bool {
		t.Helper()
		ok, _, err := conn.Exists(p)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, p := range []string{cs[1].node, cs[1].batonPath(), cs[1].leaderPath(), behind.node} {
		if exists(p) {
			t.Errorf("%s: still there; want deleted by leaveOwn", p)
		}
	}
	for _, p := range []string{cs[0].node, cs[0].batonPath(), cs[0].leaderPath(), other.node, other.batonPath()} {
		if !exists(p) {
			t.Errorf("%s: deleted; want untouched (another election, or another session's)", p)
		}
	}
	if s.IsLost() {
		t.Errorf("the shared session ended: %s", s.LostReason())
	}
}

// TestSharedSessionStuckLeaseGivesBackBatonOfDeletedProposal: a stuck
// lease on a shared session whose proposal an operator deleted still
// gives back its baton past the lease's end (lease.endOwn), as the
// session's end would: otherwise the baton stays held while the session
// lives (the other jobs keep it) and every successor waits for ever.
func TestSharedSessionStuckLeaseGivesBackBatonOfDeletedProposal(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	root := "/ballot/test/" + t.Name()
	seedElection(t, zkc.Servers(), root)
	p := newInProcess(t, zkc, root)
	s := p.session()
	c := p.join(s, "stuck")
	start := lead(t, c)
	start.shared = true
	l := holdLease(c, start, 0, func() bool { return true }, true)
	t.Cleanup(l.Stop)
	conn := zkConnect(t, zkc.Servers(), 2*time.Second)
	defer conn.Close()
	if err := conn.Delete(c.node, -1); err != nil {
		t.Fatal(err)
	}
	// The lease's hard end is at most W = 3T/4 after the take, noticed at
	// the loop's next tick (T/8): 4T is ample on a busy machine.
	T := s.Timeout()
	for deadline := time.Now().Add(4 * T); ; time.Sleep(10 * time.Millisecond) {
		ok, _, err := conn.Exists(c.batonPath())
		if err == nil && !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the baton of the stuck lease whose proposal is gone is still there after 4T (%s): %v, %v", 4*T, ok, err)
		}
	}
	if s.IsLost() {
		t.Fatalf("the shared session was ended (%s); want it kept", s.LostReason())
	}
}

// TestSharedSessionCandidaciesOfOneElectionKeepEachOthersBaton: two
// candidacies of one election on one session (a crontab's job added again
// while its removed runner still ends its run). The second must not read
// the first's baton, leader node or take record as its own: a session's
// node is a candidacy's only if it names that candidacy's proposal. Its
// lost-take recovery (waitHeld), its take's wait (droppedTake) and its
// leaving (leaveOwn) leave the first's nodes alone.
func TestSharedSessionCandidaciesOfOneElectionKeepEachOthersBaton(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	root := "/ballot/test/" + t.Name()
	seedElection(t, zkc.Servers(), root)
	p := newInProcess(t, zkc, root)
	s := p.session()
	first := p.join(s, "first")
	lead(t, first)
	if _, err := s.Conn.Create(first.leaderPath(), []byte(`{"proposal":"`+first.node+`"}`), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	second := p.join(s, "second")
	if _, err := second.readElection(); err != nil {
		t.Fatal(err)
	}
	h, err := second.readHandover()
	if err != nil {
		t.Fatal(err)
	}
	if dropped, _, err := second.droppedTake(h); err != nil || dropped == "" {
		t.Errorf("droppedTake of the first's take record: %q, %v; want it read as another's take", dropped, err)
	}
	stopped := make(chan struct{})
	close(stopped) // it waits for the baton's end: stopped at once
	announced := ""
	_ = second.waitHeld(&announced, stopped)
	if err := leaveOwn(second); err != nil {
		t.Fatal(err)
	}
	conn := zkConnect(t, zkc.Servers(), 2*time.Second)
	defer conn.Close()
	for _, n := range []string{first.batonPath(), first.leaderPath(), first.node} {
		if ok, _, err := conn.Exists(n); err != nil || !ok {
			t.Errorf("%s: exists %v (%v); want the first candidacy's, untouched", n, ok, err)
		}
	}
	if ok, _, err := conn.Exists(second.node); err != nil || ok {
		t.Errorf("%s: exists %v (%v); want deleted by leaveOwn", second.node, ok, err)
	}
}

// A lone delete fenced by an absent handover record: a take that makes
// the record between the read and the delete fails the multi, so a
// successor's baton made again at the version ours had is left alone
// (a multi queued across an expiry is sent on go-zookeeper's replacement
// session, which owns nothing, so only the fence stands in its way).
func TestRecordFenceOfAnAbsentRecord(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	base := "/ballot/test/" + t.Name()
	seedElection(t, zkc.Servers(), base)
	p := newInProcess(t, zkc, base)
	c := p.join(p.session(), "fenced")
	conn := zkConnect(t, zkc.Servers(), 2*time.Second)
	defer conn.Close()
	if err := conn.Delete(c.handoverPath(), -1); err != nil {
		t.Fatal(err)
	}
	recOK, rec, err := c.s.Conn.Exists(c.handoverPath())
	if err != nil || recOK {
		t.Fatalf("the record should be absent: %v %v", recOK, err)
	}
	// A successor's baton, at version 0, and its take's record.
	if _, err := conn.Create(c.batonPath(), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create(c.handoverPath(), []byte(`{"state":"taken"}`), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	ops := append([]any{&zk.DeleteRequest{Path: c.batonPath(), Version: 0}}, recordFence(c, c.handoverPath(), recOK, rec)...)
	if _, err := c.s.Conn.Multi(ops...); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("the fenced delete: want NodeExists, got %v", err)
	}
	if ok, _, _ := conn.Exists(c.batonPath()); !ok {
		t.Fatal("the successor's baton was deleted")
	}
	// With no take meanwhile the fence changes nothing and lets the delete through.
	if err := conn.Delete(c.handoverPath(), -1); err != nil {
		t.Fatal(err)
	}
	ops = append([]any{&zk.DeleteRequest{Path: c.batonPath(), Version: 0}}, recordFence(c, c.handoverPath(), false, nil)...)
	if _, err := c.s.Conn.Multi(ops...); err != nil {
		t.Fatalf("unfenced by any take: %v", err)
	}
	if ok, _, _ := conn.Exists(c.handoverPath()); ok {
		t.Fatal("the fence left a record behind")
	}
}
