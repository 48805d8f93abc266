package main

// Jobs an operator can trust: a --once-key claim whose answer is lost
// still runs the job (once), pruning keeps unfinished keys, run once's
// --timeout and --wait-timeout.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// onceCandidateVia is onceCandidate reaching ZooKeeper through servers.
func onceCandidateVia(t *testing.T, servers []string, base, id, key string, flags []string, child ...string) *ballotProc {
	t.Helper()
	return onceCandidateEnv(t, nil, servers, base, id, key, flags, child...)
}

func onceCandidateEnv(t *testing.T, env, servers []string, base, id, key string, flags []string, child ...string) *ballotProc {
	t.Helper()
	env = append(ballotEnv(t, "BALLOT_TEST_CHILD="+child[0]), env...)
	args := runArgs(servers, base, id, append([]string{"--once-key", key}, flags...)...)
	args = append(append(args, "--", selfExe()), child[1:]...)
	return startBallot(t, id, env, args...)
}

// zkReconnectRace: go-zookeeper v1.0.4 reads Conn.lastZxid in
// sendSetWatches while the new connection's recvLoop writes it (upstream:
// samuel/go-zookeeper#178, #260; go-zookeeper/zk#35, unmerged). A client
// cut off and reconnecting at once with requests in flight hits it now and
// then. Such a ballot runs with GORACE exitcode=0, and checkRaces fails
// the test on any other race.
var zkReconnectRace = []string{"GORACE=atexit_sleep_ms=0 exitcode=0 " + os.Getenv("GORACE")}

// checkRaces fails the test if out reports a data race other than
// zkReconnectRace's.
func checkRaces(t *testing.T, out string) {
	t.Helper()
	for _, report := range strings.Split(out, "WARNING: DATA RACE")[1:] {
		report, _, _ = strings.Cut(report, "==================")
		if !strings.Contains(report, "zk.(*Conn).sendSetWatches") || !strings.Contains(report, "zk.(*Conn).recvLoop") {
			t.Errorf("a data race:\n%s", report)
		}
	}
}

// isOnceClaim: a chunk of requests (length, xid, opcode, ...) one of which
// is a multi-op (opcode 14) writing a once key.
func isOnceClaim(b []byte) bool {
	for len(b) >= 12 {
		n := int(binary.BigEndian.Uint32(b))
		req := b[4:min(len(b), 4+n)]
		if len(req) >= 8 && binary.BigEndian.Uint32(req[4:8]) == 14 && bytes.Contains(req, []byte("/"+onceDirName+"/")) {
			return true
		}
		b = b[4+len(req):]
	}
	return false
}

// onceFinished reads KEY's record: whether it is finished.
func onceFinished(t *testing.T, c *zkCluster, base, key string) bool {
	t.Helper()
	conn := zkConnect(t, c.Servers(), 2*time.Second)
	defer conn.Close()
	b, _, err := conn.Get(oncePath(base, key))
	if err != nil {
		t.Fatalf("read the record of %s: %v", key, err)
	}
	var rec onceRecord
	_ = json.Unmarshal(b, &rec)
	return rec.FinishedAt != nil
}

// TestOnceClaimAnswerLost: the claim of a key is sent and its answer is
// lost. Whether the claim landed or not, and even when the session is
// lost with the answer, the job runs, once, and its key ends finished.
func TestOnceClaimAnswerLost(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	cases := []struct {
		name string
		// cut: what happens to the claim's request (p: the runner's proxy)
		cut  func(p *tcpProxy) tapAction
		log  string // the runner says so
		heal bool   // the cut is a blackhole: heal it once the session expired
	}{
		{"landed", func(p *tcpProxy) tapAction { return tapAction{ResetClient: true} },
			"only the answer was lost", false},
		{"not landed", func(p *tcpProxy) tapAction { return tapAction{Drop: true, ResetClient: true} },
			"command started", false},
		// The answer is lost for longer than the session: the session
		// expires while the claim stands, unanswered.
		{"session lost", func(p *tcpProxy) tapAction { return tapAction{Then: func() { p.Blackhole(true) }} },
			"cleared the once key's record", true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := fmt.Sprintf("/ballot/test/claim-lost-%d", i)
			seedElection(t, c.Servers(), base)
			runs := filepath.Join(t.TempDir(), "runs")
			p := newTCPProxy(t, c.Servers())
			var cut atomic.Bool
			p.SetClientTap(func(b []byte) tapAction {
				if isOnceClaim(b) && cut.CompareAndSwap(false, true) {
					return tc.cut(p)
				}
				return tapAction{}
			})
			r := onceCandidateEnv(t, zkReconnectRace, []string{p.Addr()}, base, "r", "k", nil, "run", runs, "10ms")
			defer func() { checkRaces(t, r.out.String()) }()
			if tc.heal {
				// Heal once the session is gone: its proposal deleted.
				waitNoProposals(t, c, base, &cut)
				p.Blackhole(false)
			}
			if code := r.Wait(30 * time.Second); code != 0 {
				t.Fatalf("the runner exited %d, want 0 (the job run)", code)
			}
			if !cut.Load() {
				t.Fatal("the claim was never seen on the wire")
			}
			if n := onceRuns(t, runs); n != 1 || !r.Logged(tc.log) || !onceFinished(t, c, base, "k") {
				t.Errorf("%d runs (want 1), logged %q: %v, key finished: %v", n, tc.log, r.Logged(tc.log), onceFinished(t, c, base, "k"))
			}
			if es := historyEntries(t, c, base); len(es) != 1 || es[0].Key != "k" || es[0].Ended != endExited {
				t.Errorf("the run history holds %+v, want one run: key k, ended exited", es)
			}
		})
	}
}

// historyEntries reads the election's run history, oldest first.
func historyEntries(t *testing.T, c *zkCluster, base string) []historyEntry {
	t.Helper()
	conn := zkConnect(t, c.Servers(), 2*time.Second)
	defer conn.Close()
	names, _, err := conn.Children(historyDir(base))
	if err != nil {
		return nil
	}
	sort.Strings(names)
	var out []historyEntry
	for _, n := range names {
		raw, _, err := conn.Get(historyDir(base) + "/" + n)
		var e historyEntry
		if err == nil && json.Unmarshal(raw, &e) == nil {
			out = append(out, e)
		}
	}
	return out
}

// waitNoProposals waits until the claim was cut, then until the election
// under base has no proposal left: the cut runner's session has expired.
func waitNoProposals(t *testing.T, c *zkCluster, base string, cut *atomic.Bool) {
	t.Helper()
	conn := zkConnect(t, c.Servers(), 2*time.Second)
	defer conn.Close()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if cut.Load() {
			children, _, err := conn.Children(base)
			if err == nil && len(sortedProposals(children)) == 0 {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the runner's session did not expire")
}

// TestOncePruneKeepsUnfinished: past the newest onceKeep keys, finished
// keys are deleted and an unfinished one stays (deleted, it could run
// again).
func TestOncePruneKeepsUnfinished(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	base := "/ballot/test/once-prune"
	seedElection(t, c.Servers(), base)
	conn := zkConnect(t, c.Servers(), 2*time.Second)
	defer conn.Close()
	acl := zk.WorldACL(zk.PermAll)
	if _, err := conn.Create(onceDir(base), nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	record := func(key string, finished bool) {
		rec := onceRecord{Key: key, CandidateID: "old", StartedAt: time.Now().UTC()}
		if finished {
			now, code := time.Now().UTC(), 0
			rec.FinishedAt, rec.ExitCode = &now, &code
		}
		b, _ := json.Marshal(rec)
		if _, err := conn.Create(oncePath(base, key), b, 0, acl); err != nil {
			t.Fatal(err)
		}
	}
	// The oldest: an unfinished key (its runner died), then a finished one.
	record("unfinished", false)
	record("finished-0", true)
	for i := 1; i < onceKeep; i++ {
		record(fmt.Sprintf("finished-%d", i), true)
	}
	r := onceCandidateVia(t, c.Servers(), base, "r", "new", nil, "exit", "0", "10ms")
	if code := r.Wait(15 * time.Second); code != 0 {
		t.Fatalf("the new key's runner exited %d", code)
	}
	exists := func(key string) bool {
		ok, _, err := conn.Exists(oncePath(base, key))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !exists("unfinished") {
		t.Error("pruning deleted an unfinished key: it could run again")
	}
	if exists("finished-0") || !exists("finished-1") || !exists("new") {
		t.Errorf("pruning: the oldest finished key exists %v (want false), the next %v, the new %v (want true)",
			exists("finished-0"), exists("finished-1"), exists("new"))
	}
}

// TestOnceTimeouts: run once --timeout stops a keyed job that hangs (so it
// does not hold its key forever) and records it as timed out;
// --wait-timeout gives up waiting in line with exit 75, like flock -w.
func TestOnceTimeouts(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		base := "/ballot/test/once-timeout"
		seedElection(t, c.Servers(), base)
		ticks := filepath.Join(t.TempDir(), "ticks")
		// The job ignores SIGTERM: SIGKILL after the grace period.
		r := onceCandidateVia(t, c.Servers(), base, "r", "k", []string{"--timeout", "300ms", "--stop-grace-period", "200ms"},
			"stubborn", ticks)
		if code := r.Wait(15 * time.Second); code != 128+9 {
			t.Fatalf("ballot exited %d, want 137 (the job's SIGKILL)", code)
		}
		conn := zkConnect(t, c.Servers(), 2*time.Second)
		defer conn.Close()
		b, _, err := conn.Get(oncePath(base, "k"))
		var rec onceRecord
		if err != nil || json.Unmarshal(b, &rec) != nil || rec.FinishedAt == nil || !rec.TimedOut || rec.ExitCode == nil || *rec.ExitCode != 137 {
			t.Errorf("the key's record: %s (%v), want finished, timed out, exit 137", b, err)
		}
		if !r.Logged("command timed out") || !r.Logged("timed_out=true") {
			t.Error("ballot did not log the timeout")
		}
	})
	t.Run("wait-timeout", func(t *testing.T) {
		t.Parallel()
		e := newElection(t, c)
		a := e.add("a", nil, nil, "tick")
		e.leader(10 * time.Second)
		b := e.add("b", []string{"--wait-timeout", "300ms"}, nil, "tick")
		if code := b.Wait(10 * time.Second); code != exitBusy {
			t.Fatalf("b exited %d, want %d", code, exitBusy)
		}
		if !b.Logged("gave up waiting in line") || len(e.proposals()) != 1 || a.Exited() {
			t.Errorf("after --wait-timeout: proposals %v (want a's only), a exited %v", e.proposals(), a.Exited())
		}
	})
}
