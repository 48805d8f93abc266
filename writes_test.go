package main

// One session serving several elections sends their renewals due at one
// tick in one multi-op, and one election's missing baton does not take
// the others' renewals down (internal/zookeeper/writes.go), against a
// real ZooKeeper.

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/bootclock"
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
// still renew, together, in one resend.
func TestSessionWritesShareOneMulti(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	acc, err := loadZKAccess(&Settings{ZooKeeperServers: zkc.Servers(), ZooKeeperACL: aclOpen})
	if err != nil {
		t.Fatal(err)
	}
	s, err := zookeeper.DialSession(slog.New(slog.NewTextHandler(io.Discard, nil)), acc, 2*time.Second, 5*time.Second, nil)
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

	// round renews every election once, all on the grid first: the round
	// is complete, and sent, when the last of them writes.
	round := func() ([][]zk.MultiResponse, []error) {
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

	res, errs := round()
	for i := range bases {
		if errs[i] != nil || len(res[i]) != 2 || res[i][1].Stat == nil {
			t.Fatalf("election %d: renewal %v, %+v", i, errs[i], res[i])
		}
		if st := res[i][1].Stat; st.EphemeralOwner != s.ID() || st.Version != 1 {
			t.Errorf("election %d: its answer shows baton owner 0x%x version %d, want 0x%x version 1", i, st.EphemeralOwner, st.Version, s.ID())
		}
		if res[i][1].Stat.Mzxid != res[0][1].Stat.Mzxid {
			t.Errorf("election %d renewed in transaction 0x%x, election 0 in 0x%x: want one multi-op", i, res[i][1].Stat.Mzxid, res[0][1].Stat.Mzxid)
		}
	}

	if err := s.Conn.Delete(bases[1]+"/"+batonName, -1); err != nil {
		t.Fatal(err)
	}
	res, errs = round()
	if !errors.Is(errs[1], zk.ErrNoNode) || len(res[1]) != 2 || res[1][0].Error != nil || !errors.Is(res[1][1].Error, zk.ErrNoNode) {
		t.Errorf("the election without a baton was answered %v, %+v; want its set failed with no node, as alone", errs[1], res[1])
	}
	for _, i := range []int{0, 2} {
		if errs[i] != nil || len(res[i]) != 2 || res[i][1].Stat == nil {
			t.Fatalf("election %d: its renewal failed with another election's baton: %v, %+v", i, errs[i], res[i])
		}
		if st := res[i][1].Stat; st.EphemeralOwner != s.ID() || st.Version != 2 {
			t.Errorf("election %d: baton owner 0x%x version %d after the round, want 0x%x version 2", i, st.EphemeralOwner, st.Version, s.ID())
		}
	}
	if res[0][1].Stat != nil && res[2][1].Stat != nil && res[0][1].Stat.Mzxid != res[2][1].Stat.Mzxid {
		t.Errorf("the resend without the failed election took two transactions (0x%x, 0x%x), want one", res[0][1].Stat.Mzxid, res[2][1].Stat.Mzxid)
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

// TestWriterGrid: the renewals of a session's elections fall on one grid,
// started by the first to join, so that they share multi-ops; a lone
// lease renews every T/8 from its take, as before.
func TestWriterGrid(t *testing.T) {
	const every = 100 * time.Millisecond
	s := zookeeper.Detached(1, 800*time.Millisecond)
	a, b := s.Writer(), s.Writer()
	a.Join(1000 * bootclock.Time(time.Millisecond))
	for _, tc := range []struct {
		name string
		now  time.Duration
		want time.Duration
	}{
		{"at the take: T/8 later", 1000 * time.Millisecond, 1100 * time.Millisecond},
		{"woken on time", 1100 * time.Millisecond, 1200 * time.Millisecond},
		{"woken late: the next tick, not a whole round later", 1130 * time.Millisecond, 1200 * time.Millisecond},
		{"before the grid", 900 * time.Millisecond, 1000 * time.Millisecond},
	} {
		if got := a.Next(bootclock.Time(tc.now), every); got != bootclock.Time(tc.want) {
			t.Errorf("%s: next at %s, want %s", tc.name, time.Duration(got), tc.want)
		}
	}
	// A second lease joins the first's grid, whenever its take went.
	b.Join(1042 * bootclock.Time(time.Millisecond))
	if got := b.Next(1042*bootclock.Time(time.Millisecond), every); got != bootclock.Time(1100*time.Millisecond) {
		t.Errorf("a second lease renews first at %s, want on the grid at 1.1s", time.Duration(got))
	}
	// Once nobody is on it, the next to join starts it anew.
	a.Leave()
	b.Leave()
	b.Join(2042 * bootclock.Time(time.Millisecond))
	if got := b.Next(2042*bootclock.Time(time.Millisecond), every); got != bootclock.Time(2142*time.Millisecond) {
		t.Errorf("a lone lease after the grid emptied renews at %s, want its own T/8 later", time.Duration(got))
	}
}
