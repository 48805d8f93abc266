package main

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// TestSessionWritesGiveEachElectionItsOwnAnswer: in a round of renewals
// sent as one multi-op, each election gets the Stat of its own baton
// (czxid) and its owner as ZooKeeper has it — a baton of another session
// in the middle of the round included — in the committed multi and in a
// resend after another election's op failed. A Stat handed to the wrong
// election would let a lease count a renewal that is not its own.
func TestSessionWritesGiveEachElectionItsOwnAnswer(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	acc, err := loadZKAccess(&Settings{ZooKeeperServers: zkc.Servers(), ZooKeeperACL: aclOpen})
	if err != nil {
		t.Fatal(err)
	}
	log := newLogger(io.Discard, "human", slog.LevelInfo)
	s, err := zookeeper.DialSession(log, acc, 2*time.Second, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s2, err := zookeeper.DialSession(log, acc, 2*time.Second, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	root := fmt.Sprintf("/writes-split-%d", time.Now().UnixNano())
	if _, err := s.Conn.Create(root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var bases []string
	czx := map[int]int64{}
	for i := range 4 {
		base := fmt.Sprintf("%s/e%d", root, i)
		bases = append(bases, base)
		if _, err := s.Conn.Create(base, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Conn.Create(base+"/p", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		owner := s
		if i == 1 {
			owner = s2 // foreign baton
		}
		if _, err := owner.Conn.Create(base+"/"+batonName, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		_, st, err := s.Conn.Exists(base + "/" + batonName)
		if err != nil {
			t.Fatal(err)
		}
		czx[i] = st.Czxid
	}
	round := func() ([][]zk.MultiResponse, []error) { return renewRound(s, bases) }
	check := func(tag string, skip map[int]bool) {
		shared := 0
		defer func() { t.Logf("%s: %d of 20 rounds in one transaction", tag, shared) }()
		for n := 0; n < 20; n++ {
			res, errs := round()
			var mz []int64
			for i := range bases {
				if !skip[i] && errs[i] == nil {
					mz = append(mz, res[i][1].Stat.Mzxid)
				}
			}
			same := true
			for _, m := range mz {
				same = same && m == mz[0]
			}
			if same {
				shared++
			}
			for i := range bases {
				if skip[i] {
					continue
				}
				if errs[i] != nil {
					t.Fatalf("%s: election %d err %v", tag, i, errs[i])
				}
				st := res[i][1].Stat
				if st.Czxid != czx[i] {
					t.Fatalf("%s: election %d got the Stat of another baton (czxid %x, want %x)", tag, i, st.Czxid, czx[i])
				}
				want := s.ID()
				if i == 1 {
					want = s2.ID()
				}
				if st.EphemeralOwner != want {
					t.Fatalf("%s: election %d owner %x want %x", tag, i, st.EphemeralOwner, want)
				}
			}
		}
	}
	check("all ok", nil)
	// A failing election ahead of the foreign one (its proposal gone): the
	// others are resent.
	if err := s.Conn.Delete(bases[0]+"/p", -1); err != nil {
		t.Fatal(err)
	}
	check("after resend", map[int]bool{0: true})
	// And one after it.
	if err := s.Conn.Delete(bases[3]+"/"+batonName, -1); err != nil {
		t.Fatal(err)
	}
	check("two failing", map[int]bool{0: true, 3: true})
}
