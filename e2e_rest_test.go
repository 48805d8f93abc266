package main

import (
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// Writes at rest, counted, not timed: every committed transaction
// advances ZooKeeper's zxid (a multi-op that only checks, a next in
// line's proof, included); pings and reads do not. Over a quiet window
// each write is either one change of one node under the election (a
// setData: its version; a create or a delete: its parent's cversion),
// the baton's included (a renewal), or it changes nothing (a proof). So
//
//	zxid advance = changes under the election + proofs
//
// and the baton's version advance is the renewals. The window is 2T, 16
// renewals and 8 proofs before this design; its length decides nothing.

// restCount is one reading: the zxid, and the changes under the election
// (the baton's apart).
type restCount struct {
	zxid    int64
	changes int64 // Σ version + cversion of every node under base but the baton
	baton   int64 // the baton's version
}

var restZxidLine = regexp.MustCompile(`(?m)^Zxid: (0x[0-9a-f]+)`)

func restZxid(t *testing.T, c *zkCluster) int64 {
	t.Helper()
	s, err := zkFourLetterWord(c.Servers()[0], "srvr", 5*time.Second)
	m := restZxidLine.FindStringSubmatch(s)
	if err != nil || m == nil {
		t.Fatalf("srvr: %v %q", err, s)
	}
	v, _ := strconv.ParseInt(strings.TrimPrefix(m[1], "0x"), 16, 64)
	return v
}

// readRest reads a consistent restCount: the zxid before and after the
// walk agree, so that no write fell between the two readings.
func readRest(t *testing.T, c *zkCluster, conn *zk.Conn, base string) restCount {
	t.Helper()
	for {
		z0 := restZxid(t, c)
		r := restCount{zxid: z0}
		var walk func(p string)
		walk = func(p string) {
			children, st, err := conn.Children(p)
			if err != nil {
				t.Fatalf("children %s: %v", p, err)
			}
			if p == base+"/"+batonName {
				r.baton = int64(st.Version)
			} else {
				r.changes += int64(st.Version) + int64(st.Cversion)
			}
			for _, ch := range children {
				walk(p + "/" + ch)
			}
		}
		walk(base)
		if restZxid(t, c) == z0 {
			return r
		}
	}
}

// TestWritesAtRest: a run cron election between runs writes nothing, not
// even its leader's renewals; a run once election at rest writes only
// its leader's renewals: the next in line proves its place only when a
// handover may come (standby.go).
func TestWritesAtRest(t *testing.T) {
	t.Parallel() // counted, not timed, on a server of its own; its two subtests stay in turn: they share its zxid
	zkc := startZK(t, 1)
	window := 4 * time.Second // 2T at the tests' T = 2 s

	t.Run("run cron between runs", func(t *testing.T) {
		e := newCronElection(t, zkc)
		seedElection(t, zkc.Servers(), e.base)
		conn := zkConnect(t, zkc.Servers(), 10*time.Second) // its session's creation comes before the window
		// January 1st only: no run in the window.
		a := e.add("a", "0 0 1 1 *", "0", "--log-level", "debug")
		a.WaitEvent(logEvElected, 10*time.Second)
		b := e.add("b", "0 0 1 1 *", "0")
		b.WaitEvent(logEvStandingBy, 10*time.Second)
		// From here on the leader sends no renewal (none in flight).
		a.WaitEvent(logEvLeaseAtRest, 10*time.Second)
		r0 := readRest(t, zkc, conn, e.base)
		time.Sleep(window)
		r1 := readRest(t, zkc, conn, e.base)
		if d := r1.baton - r0.baton; d != 0 {
			t.Errorf("the cron leader renewed its lease %d times between runs, want 0", d)
		}
		if d := (r1.zxid - r0.zxid) - (r1.changes - r0.changes) - (r1.baton - r0.baton); d != 0 {
			t.Errorf("%d writes that change nothing (the next in line's proofs) between runs, want 0", d)
		}
		t.Logf("between runs, over %s: %d writes in all", window, r1.zxid-r0.zxid)
		for _, p := range []*ballotProc{b, a} {
			p.Signal(syscall.SIGTERM)
			p.Wait(10 * time.Second)
		}
	})

	t.Run("run once at rest", func(t *testing.T) {
		e := newElection(t, zkc)
		conn := zkConnect(t, zkc.Servers(), 10*time.Second)
		a := e.add("a", nil, nil, "tick")
		e.leader(10 * time.Second)
		waitTenures(t, e.ticks, 1, 10*time.Second)
		b := e.add("b", nil, nil, "tick")
		b.WaitEvent(logEvStandingBy, 10*time.Second)
		c := e.add("c", nil, nil, "tick")
		c.WaitEvent(logEvFollowing, 10*time.Second, "place_in_line", "3")
		r0 := readRest(t, zkc, conn, e.base)
		time.Sleep(window)
		r1 := readRest(t, zkc, conn, e.base)
		renewals := r1.baton - r0.baton
		if renewals == 0 {
			t.Errorf("the leader did not renew its lease in %s", window)
		}
		if d := (r1.zxid - r0.zxid) - (r1.changes - r0.changes) - renewals; d != 0 {
			t.Errorf("%d writes that change nothing (proofs in line) at rest, want 0: only the leader's renewals", d)
		}
		t.Logf("at rest, over %s: %d writes in all, %d of them renewals", window, r1.zxid-r0.zxid, renewals)
		checkNoOverlap(t, e.ticks)
		for _, p := range []*ballotProc{c, b, a} {
			p.Signal(syscall.SIGTERM)
			p.Wait(10 * time.Second)
		}
	})
}

// TestCronLeaderCutOffBetweenRunsRunsNothing: a cron leader whose lease
// lapses between runs is cut off from ZooKeeper right after a run (its
// link blackholed; or its ZooKeeper member cut off from its peers, which
// goes on answering its reads and pings for syncLimit × tickTime = 4 s
// while the quorum expires its session after 2 s); the next in line
// leads after T + W and runs the schedule. The cut-off leader cannot take
// its lease again (a take is a write, which only a ZooKeeper leader with
// its quorum commits), so it runs no scheduled time after the cut: never
// two runs at once, never a time twice.
func TestCronLeaderCutOffBetweenRunsRunsNothing(t *testing.T) {
	t.Parallel()
	t.Run("link blackholed", func(t *testing.T) {
		t.Parallel() // each its own ZooKeeper; the margins are T and the schedule's 2 s
		zkc := startZK(t, 1)
		proxy := newTCPProxy(t, zkc.Servers())
		cronCutOff(t, zkc, proxy.Addr(), zkc.ConnString(), func() { proxy.Blackhole(true) }, func() { proxy.Blackhole(false) })
	})
	t.Run("member cut off from its peers", func(t *testing.T) {
		t.Parallel()
		zkc := startEnsemble(t)
		m := aFollower(t, zkc)
		cronCutOff(t, zkc, zkc.Servers()[m], strings.Join(others(zkc, m), ","), func() { zkc.CutOff(m) }, func() { whole(t, zkc) })
	})
}

// cronCutOff runs a (on aServers) and b (on bServers), cuts a off after
// one of its runs, and checks that only b runs from then on.
func cronCutOff(t *testing.T, zkc *zkCluster, aServers, bServers string, cut, heal func()) {
	e := newCronElection(t, zkc)
	seedElection(t, zkc.Servers(), e.base)
	add := func(id, servers string) *ballotProc {
		env := ballotEnv(t, "BALLOT_TEST_CHILD=run", "TICK_FILE="+e.ticks)
		args := []string{"--zookeeper-servers", servers, "--zookeeper-base-path", e.base,
			"--zookeeper-session-timeout", "2s", "run", "cron", "--candidate-id", id, "--schedule", "*/2 * * * * *",
			"--on-child-success", "rerun", "--", selfExe(), e.runs, "100ms"}
		p := startBallot(t, id, env, args...)
		e.cands = append(e.cands, p)
		return p
	}
	a := add("a", aServers)
	a.WaitEvent(logEvElected, 10*time.Second)
	b := add("b", bServers)
	b.WaitEvent(logEvStandingBy, 10*time.Second)
	e.waitRuns(2, 15*time.Second)
	// Right after one of a's runs ends: between runs, its lease lapsing.
	ended := len(a.Events(logEvCommandEnded))
	waitEvents(t, a, logEvCommandEnded, ended+1, 10*time.Second)
	cut()
	since := len(e.readRuns())
	b.WaitEvent(logEvElected, 30*time.Second)
	e.waitRuns(since+2, 15*time.Second)
	heal()
	for _, r := range e.readRuns()[since:] {
		if r.candidate != "b" {
			t.Errorf("%s ran %s after a was cut off", r.candidate, r.scheduled)
		}
	}
	e.checkOnce()
	checkNoOverlap(t, e.ticks)
	for _, p := range []*ballotProc{a, b} {
		p.Signal(syscall.SIGTERM)
		p.Wait(10 * time.Second)
	}
}

// TestPausedCronLeaderRestsItsLease: a paused cron leader skips every
// time, so it takes no lease before one: no renewal while paused (each
// skip is recorded in the history, fenced by the proposal, not the
// lease). The window starts after the second skip: the leader's last
// renewal before the pause is answered by then.
func TestPausedCronLeaderRestsItsLease(t *testing.T) {
	t.Parallel()
	zkc := startZK(t, 1)
	window := 4 * time.Second // 2T at the tests' T = 2 s: 4 scheduled times, each armed T/16 before without the fix
	e := newCronElection(t, zkc)
	conn := zkConnect(t, zkc.Servers(), 10*time.Second)
	a := e.add("a", "* * * * * *", "0", "--on-child-success", "rerun")
	a.WaitEvent(logEvElected, 10*time.Second)
	e.waitRuns(1, 10*time.Second)
	if out, code := control(t, e.election, "pause", "--reason", "maintenance"); code != 0 {
		t.Fatalf("pause: exit %d: %s", code, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(a.Events(logEvRunSkipped, "skip", "paused")) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the paused leader did not skip two times within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	r0 := readRest(t, zkc, conn, e.base)
	time.Sleep(window)
	r1 := readRest(t, zkc, conn, e.base)
	if d := r1.baton - r0.baton; d != 0 {
		t.Errorf("the paused cron leader renewed its lease %d times in %s, want 0", d, window)
	}
	if n := len(a.Events(logEvRunSkipped, "skip", "paused")); n < 4 {
		t.Errorf("%d times skipped as paused, want one a second", n)
	}
	a.Signal(syscall.SIGTERM)
	a.Wait(10 * time.Second)
}
