package main

// One session serving several elections sends their renewals due at one
// tick in one multi-op, and one election's missing baton does not take
// the others' renewals down (internal/zookeeper/writes.go), against a
// real ZooKeeper.

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/bootclock"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// renewalOps is a lease's renewal (lease.go) for an election at base.
func renewalOps(base string) []any {
	return []any{&zk.CheckVersionRequest{Path: base + "/p", Version: -1},
		&zk.SetDataRequest{Path: base + "/" + batonName, Data: []byte("renewed"), Version: -1}}
}

// TestSessionWritesShareOneMulti: three elections on one session, each
// with its proposal and its baton. Their renewals of one round commit in
// one transaction (one mzxid for the three batons), each answered with
// its own Stat (its baton, owned by the session: each lease's fence).
// With the second election's baton deleted, the round gives it the
// answer it would have had alone (its set: no node) and the other two
// still renew, together, in one resend; with the third's proposal
// deleted too, each failing election gets its own answer and the first
// still renews.
func TestSessionWritesShareOneMulti(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	acc, err := loadZKAccess(&Settings{ZooKeeperServers: zkc.Servers(), ZooKeeperACL: aclOpen})
	if err != nil {
		t.Fatal(err)
	}
	s, err := zookeeper.DialSession(newLogger(io.Discard, "human", slog.LevelInfo), acc, 2*time.Second, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	root := fmt.Sprintf("/writes-%d", time.Now().UnixNano())
	if _, err := s.Conn.Create(root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var bases []string
	for i := range 3 {
		base := fmt.Sprintf("%s/e%d", root, i)
		bases = append(bases, base)
		if _, err := s.Conn.Create(base, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"p", batonName} {
			if _, err := s.Conn.Create(base+"/"+n, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
		}
	}

	round := func() ([][]zk.MultiResponse, []error) { return renewRound(s, bases) }

	// Every round: each election renewed, its answer showing its own
	// baton owned by the session. Waited for, not required of every
	// round: one round in one transaction (a writer more than T/64 late,
	// on a busy machine, goes alone).
	for deadline := time.Now().Add(10 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatal("the three elections' renewals never went in one multi-op")
		}
		res, errs := round()
		for i := range bases {
			if errs[i] != nil || len(res[i]) != 2 || res[i][1].Stat == nil {
				t.Fatalf("election %d: renewal %v, %+v", i, errs[i], res[i])
			}
			if st := res[i][1].Stat; st.EphemeralOwner != s.ID() {
				t.Fatalf("election %d: its answer shows baton owner 0x%x, want 0x%x", i, st.EphemeralOwner, s.ID())
			}
		}
		if res[0][1].Stat.Mzxid == res[1][1].Stat.Mzxid && res[1][1].Stat.Mzxid == res[2][1].Stat.Mzxid {
			break
		}
	}

	// The second election's baton deleted: every round answers it as
	// alone (its set: no node) and renews the other two; waited for: the
	// two in one resend.
	if err := s.Conn.Delete(bases[1]+"/"+batonName, -1); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatal("the other two elections' renewals never went in one resend")
		}
		res, errs := round()
		if !errors.Is(errs[1], zk.ErrNoNode) || len(res[1]) != 2 || res[1][0].Error != nil || !errors.Is(res[1][1].Error, zk.ErrNoNode) {
			t.Fatalf("the election without a baton was answered %v, %+v; want its set failed with no node, as alone", errs[1], res[1])
		}
		for _, i := range []int{0, 2} {
			if errs[i] != nil || len(res[i]) != 2 || res[i][1].Stat == nil {
				t.Fatalf("election %d: its renewal failed with another election's baton: %v, %+v", i, errs[i], res[i])
			}
			if st := res[i][1].Stat; st.EphemeralOwner != s.ID() {
				t.Fatalf("election %d: baton owner 0x%x, want 0x%x", i, st.EphemeralOwner, s.ID())
			}
		}
		if res[0][1].Stat.Mzxid == res[2][1].Stat.Mzxid {
			break
		}
	}

	// The third election's proposal deleted too: two elections fail the
	// round, each answered as alone (the third's check: no node), and the
	// first still renews.
	if err := s.Conn.Delete(bases[2]+"/p", -1); err != nil {
		t.Fatal(err)
	}
	res, errs := round()
	if !errors.Is(errs[1], zk.ErrNoNode) || len(res[1]) != 2 || !errors.Is(res[1][1].Error, zk.ErrNoNode) {
		t.Errorf("the election without a baton was answered %v, %+v; want its set failed with no node", errs[1], res[1])
	}
	if !errors.Is(errs[2], zk.ErrNoNode) || len(res[2]) != 2 || !errors.Is(res[2][0].Error, zk.ErrNoNode) {
		t.Errorf("the election without a proposal was answered %v, %+v; want its check failed with no node", errs[2], res[2])
	}
	if errs[0] != nil || len(res[0]) != 2 || res[0][1].Stat == nil || res[0][1].Stat.EphemeralOwner != s.ID() {
		t.Errorf("the first election's renewal beside two failing ones: %v, %+v", errs[0], res[0])
	}

	// A writer on the grid that does not write holds the round back only
	// for a moment: the other's renewal is answered.
	idle, busy := s.Writer(), s.Writer()
	now := bootclock.Now()
	idle.Join(now)
	busy.Join(now)
	if _, err := busy.Write(renewalOps(bases[0])...); err != nil {
		t.Errorf("a renewal beside a writer that skipped its tick: %v", err)
	}
	idle.Leave()
	busy.Leave()
}

// TestElectionsShareASessionsRenewals: two elections led by one session
// (ballot's own candidates and leases, in the test): their renewals
// commit together, one transaction per tick for both; when an operator
// deletes one election's baton, that lease ends and the other's renewals
// go on, answered and vouching.
func TestElectionsShareASessionsRenewals(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	root := "/ballot/test/" + t.Name()
	var ps []*inProcess
	for _, e := range []string{"/one", "/two"} {
		seedElection(t, zkc.Servers(), root+e)
		ps = append(ps, newInProcess(t, zkc, root+e))
	}
	s := ps[0].session()
	var cs []*candidate
	var ls []*lease
	for i, p := range ps {
		c := p.join(s, fmt.Sprintf("leader-%d", i))
		start := lead(t, c)
		// Nothing runs under these leases: no supervision to check in.
		l := holdLease(c, start, 0, func() bool { return false }, true)
		t.Cleanup(l.Stop)
		cs, ls = append(cs, c), append(ls, l)
	}
	conn := zkConnect(t, zkc.Servers(), 2*time.Second)
	defer conn.Close()
	baton := func(i int) *zk.Stat {
		t.Helper()
		_, st, err := conn.Get(cs[i].batonPath())
		if err != nil {
			t.Fatalf("baton %d: %v", i, err)
		}
		return st
	}

	// Both renewed since their takes, and read between two ticks (the
	// first baton unchanged around the read of the second): one
	// transaction wrote both. Waited for, not required of every tick: a
	// loop woken more than T/64 late (a busy machine) renews alone.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatal("the two elections' batons were never renewed in one transaction")
		}
		a, b, a2 := baton(0), baton(1), baton(0)
		if a.Version >= 2 && b.Version >= 2 && a.Version == a2.Version && a.Mzxid == b.Mzxid {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	if err := conn.Delete(cs[1].batonPath(), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ls[1].gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the lease whose baton was deleted did not end")
	}
	from := baton(0).Version
	for deadline := time.Now().Add(10 * time.Second); baton(0).Version < from+3; {
		if time.Now().After(deadline) {
			t.Fatal("the other election's renewals stopped after one election lost its baton")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if isClosed(ls[0].gone) || !ls[0].Fresh() {
		t.Errorf("the other election's lease: gone %v (%s), fresh %v; want held and fresh", isClosed(ls[0].gone), ls[0].GoneWhy(), ls[0].Fresh())
	}
}

// renewRound renews every election at bases once, on one session, all on
// the grid first: the round is complete, and sent, when the last of them
// writes.
func renewRound(s *zookeeper.Session, bases []string) ([][]zk.MultiResponse, []error) {
	ws := make([]*zookeeper.Writer, len(bases))
	now := bootclock.Now()
	for i := range ws {
		ws[i] = s.Writer()
		ws[i].Join(now)
	}
	res, errs := make([][]zk.MultiResponse, len(bases)), make([]error, len(bases))
	var wg sync.WaitGroup
	for i, base := range bases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i], errs[i] = ws[i].Write(renewalOps(base)...)
		}()
	}
	wg.Wait()
	for _, w := range ws {
		w.Leave()
	}
	return res, errs
}
