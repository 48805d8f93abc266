package main

// Handovers in one write (baton.go, "handed over"; standby.go): the next
// in line starts on the credit of its own proof in line while its take
// goes out, and nobody else starts before that credit has run out.

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// TestCleanHandoverStartsOnCredit: the next in line, ready (proved in
// line, a keeper started), starts as soon as it sees the release that
// names it, on that keeper; commands never overlap and fencing tokens
// grow.
func TestCleanHandoverStartsOnCredit(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	// T = 4 s (the harness's largest): a proof every second and a credit
	// of 3 s, so that a handover finds credit even on a machine so busy
	// that a proof is late by half a second (at 2 s, by a quarter).
	slow := []string{"--zookeeper-session-timeout", "4s"}
	// The next in line proves its place only once a handover may come
	// (standby.go): a's stop announces it, and a's command takes T/8 to
	// stop (a service's graceful shutdown), a few round trips for b's
	// proof to be answered before the release.
	a := e.add("a", slow, nil, "slowstop", "500ms")
	e.leader(10 * time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)
	b := e.add("b", append([]string{"--log-level", "debug"}, slow...), nil, "tick")
	b.WaitEvent(logEvStandingBy, 10*time.Second)
	b.WaitEvent(logEvKeeperReady, 10*time.Second)

	a.Signal(syscall.SIGTERM)
	a.Wait(10 * time.Second)
	waitTenures(t, e.ticks, 2, 10*time.Second)
	if !b.Logged("baton handed over to us: starting on credit") {
		t.Errorf("b did not start on credit:\n%s", b.out.String())
	}
	if !b.Logged("the command starts on a keeper started beforehand") {
		t.Errorf("b started a keeper for its command instead of the one it started as next in line:\n%s", b.out.String())
	}
	b.WaitEvent(logEvBatonTaken, 10*time.Second)
	logGaps(t, "handover on credit", checkNoOverlap(t, e.ticks))
	e.checkTokensGrow()
	b.Signal(syscall.SIGTERM)
	b.Wait(10 * time.Second)
}

// TestHandedOverSuccessorGoneOthersWait: a successor named in a release
// may be running on credit; should it leave the line without taking the
// baton, the next candidate — a newcomer, or the old leader standing
// again in the same session — starts only after that credit has run out.
func TestHandedOverSuccessorGoneOthersWait(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	base := "/ballot/test/" + t.Name()
	seedElection(t, zkc.Servers(), base)
	p := newInProcess(t, zkc, base)
	dial, join := p.session, p.join
	leaderSession := dial()
	leader := join(leaderSession, "leader")
	if _, err := leader.readElection(); err != nil {
		t.Fatal(err)
	}
	if _, err := leader.takeBaton(nil); err != nil {
		t.Fatal(err)
	}
	next := join(dial(), "next")
	next.standby.start()
	// A handover may come: as the leader's announcement says (standby.go).
	next.standby.proveWhile(true)
	for next.standby.proof.Load() == 0 {
		time.Sleep(5 * time.Millisecond) // the first proof is sent at once
	}
	if _, err := next.readElection(); err != nil {
		t.Fatal(err)
	}
	children, _, err := leaderSession.Conn.Children(base)
	if err != nil {
		t.Fatal(err)
	}
	leader.line.seen.Store(&children) // as the leader's lease watch sees the line
	if !leader.withdraw() {
		t.Fatal("the leader's release failed")
	}
	h, err := next.readHandover()
	if err != nil {
		t.Fatal(err)
	}
	if h.rec.State != handoverHanded || h.rec.Successor != next.node {
		t.Fatalf("handover record %s, want handed-over to %s", h.raw, next.node)
	}
	start, err := next.takeBaton(nil)
	if err != nil {
		t.Fatal(err)
	}
	if start.pending == nil {
		t.Fatalf("the named successor, with a fresh proof, did not start on credit")
	}
	if w := bootTime(time.Duration(h.rec.BatonWaitMs) * time.Millisecond); start.end > bootTime(next.standby.proof.Load())+w {
		t.Fatalf("credit ends %v after the proof, more than the record's W %v", time.Duration(start.end-bootTime(next.standby.proof.Load())), w)
	}
	next.standby.stop()

	// The successor leaves the line before its take: its command may run
	// until start.end. Nobody may start before.
	again := join(leaderSession, "leader-again") // the old leader's session stands again
	newcomer := join(dial(), "newcomer")
	next.s.Close()
	for _, c := range []*candidate{again, newcomer} {
		// again is the lower proposal: it goes first, then gives the baton
		// back; newcomer then takes it released.
		if c == newcomer {
			if !again.withdraw() {
				t.Fatal("leader-again's release failed")
			}
		}
		if _, err := c.readElection(); err != nil {
			t.Fatal(err)
		}
		if err := c.awaitLeadership(nil); err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		if _, err := c.takeBaton(nil); err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		if now := bootNow(); now < start.end {
			t.Fatalf("%s took the baton %v before the named successor's credit ran out", c.id, time.Duration(start.end-now))
		}
	}
	var rec handoverRecord
	b, _, _ := leaderSession.Conn.Get(base + "/" + handoverName)
	_ = json.Unmarshal(b, &rec)
	if rec.State != handoverTaken || rec.CandidateID != "newcomer" {
		t.Errorf("record %s, want taken by newcomer", b)
	}
}

// TestHandedOverTakeFailsWithoutProposal: a successor whose proposal was
// deleted before its take cannot take the baton handed to it.
func TestHandedOverTakeFailsWithoutProposal(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	base := "/ballot/test/" + t.Name()
	seedElection(t, zkc.Servers(), base)
	p := newInProcess(t, zkc, base)
	s := p.session()
	c := p.join(s, "a")
	if _, err := c.readElection(); err != nil {
		t.Fatal(err)
	}
	h, err := c.readHandover()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Conn.Delete(c.node, -1); err != nil {
		t.Fatal(err)
	}
	_, err = oneBaton{c}.takeHandedOver(h, func() bool { return true }, nil)
	var lost *nodeLostError
	if !errors.As(err, &lost) {
		t.Fatalf("take without a proposal: %v, want the proposal lost", err)
	}
	if ok, _, _ := s.Conn.Exists(c.batonPath()); ok {
		t.Errorf("a baton exists")
	}
}

// inProcess is ballot's own election code, run in the test against real
// ZooKeeper: sessions (T = 2 s, closed with the test) and candidates.
type inProcess struct {
	t    *testing.T
	log  *slog.Logger
	acc  *zookeeper.Access
	base string
}

func newInProcess(t *testing.T, zkc *zkCluster, base string) *inProcess {
	t.Helper()
	acc, err := loadZKAccess(&Settings{ZooKeeperServers: zkc.Servers(), ZooKeeperACL: "open"})
	if err != nil {
		t.Fatal(err)
	}
	return &inProcess{t: t, log: newLogger(io.Discard, "human", slog.LevelInfo), acc: acc, base: base}
}

func (p *inProcess) session() *zookeeper.Session {
	p.t.Helper()
	s, err := zookeeper.DialSession(p.log, p.acc, 2*time.Second, 5*time.Second, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(s.Close)
	return s
}

func (p *inProcess) join(s *zookeeper.Session, id string) *candidate {
	p.t.Helper()
	return p.joinWith(s, id, 0)
}

func (p *inProcess) joinWith(s *zookeeper.Session, id string, priority int) *candidate {
	p.t.Helper()
	return p.joinSlots(s, id, priority, 1)
}

func (p *inProcess) joinSlots(s *zookeeper.Session, id string, priority, slots int) *candidate {
	p.t.Helper()
	c, err := propose(p.log, s, p.base, id, "run once", priority, slots, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	return c
}

// TestHandedOverTakeRereadsTheElectionRecord: a successor read the
// election's record while following, before the first leader recorded its
// W there (a brand-new election); its take on credit, checked against that
// old version, must read it again and take, not end the leadership (and
// restart the command elsewhere).
func TestHandedOverTakeRereadsTheElectionRecord(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newFreshElection(t, c)
	slow := []string{"--zookeeper-session-timeout", "4s"} // as in TestCleanHandoverStartsOnCredit
	a := e.add("a", slow, nil, "slowstop", "500ms")
	a.WaitEvent(logEvBatonWait, 10*time.Second) // no record yet: a waits W
	b := e.add("b", slow, nil, "tick")          // reads the election's record meanwhile
	waitTenures(t, e.ticks, 1, 10*time.Second)
	b.WaitEvent(logEvStandingBy, 10*time.Second)
	a.Signal(syscall.SIGTERM)
	a.Wait(10 * time.Second)
	b.WaitEvent(logEvHandedOver, 10*time.Second)
	for deadline := time.Now().Add(10 * time.Second); !b.Logged("baton taken") && !b.Logged("could not be taken"); {
		if time.Now().After(deadline) {
			t.Fatalf("b's take neither succeeded nor failed:\n%s", b.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !b.Logged("baton taken") || b.Logged("could not be taken") {
		t.Errorf("b's take on credit failed on a stale election record:\n%s", b.out.String())
	}
	checkNoOverlap(t, e.ticks)
	b.Signal(syscall.SIGTERM)
	b.Wait(10 * time.Second)
}

// TestResignationWaitsForTheTreeAndItsOutput: a leader resigns as soon as
// its keeper reports the command's whole tree reaped, without waiting for
// the keeper's own exit; yet a leftover of the command that ignores
// SIGTERM still runs to its end first, everything the tree wrote (more
// than a pipe holds, and a last line without a newline) is logged before
// "command ended", and the next leader starts only after it all.
func TestResignationWaitsForTheTreeAndItsOutput(t *testing.T) {
	c := startZK(t, 1)
	e := newElection(t, c)
	// The command stamps its start and exits at once; a leftover in its
	// process group ignores SIGTERM, waits for the gate (opened once b
	// stands in line behind a, however slowly b starts), writes 2000 lines
	// (~70 KiB), stamps its own end, and ends on a line without a newline.
	gate := filepath.Join(t.TempDir(), "gate")
	script := `stamp() { echo "$BALLOT_FENCING_TOKEN $$ $(date +%s%N)" >> "$TICK_FILE"; }
stamp
( trap '' TERM; while [ ! -e "$GATE" ]; do sleep 0.05; done; i=0
  while [ $i -lt 2000 ]; do echo "leftover line $i of the command's tree"; i=$((i+1)); done
  stamp; printf 'last words, no newline' ) &
exit 0`
	env := ballotEnv(t, "TICK_FILE="+e.ticks, "GATE="+gate)
	// The grace period outlasts b's start (WaitEvent's 10 s): the
	// leftover must end by itself, not by the SIGKILL after it.
	args := func(id string) []string {
		return append(runArgs(c.Servers(), e.base, id, "--on-child-success", "exit", "--stop-grace-period", "20s",
			"--log-format", "json"), "--", "sh", "-c", script)
	}
	a := startBallot(t, "a", env, args("a")...)
	a.WaitEvent(logEvCommandStarted, 10*time.Second)
	b := startBallot(t, "b", env, args("b")...)
	b.WaitEvent(logEvFollowing, 10*time.Second)
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*ballotProc{a, b} {
		if code := p.Wait(20 * time.Second); code != 0 {
			t.Fatalf("exit code %d, want 0:\n%s", code, p.out.String())
		}
	}
	if gaps := checkNoOverlap(t, e.ticks); len(gaps) != 1 {
		t.Errorf("want 2 tenures, got %d", len(gaps)+1)
	}
	lines, ended := 0, false
	for _, l := range strings.Split(a.out.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		msg, _ := m["msg"].(string)
		switch {
		case msg == "command ended":
			ended = true
		case m["stream"] == nil:
		case ended:
			t.Errorf("the command's output logged after \"command ended\": %q", msg)
		case strings.HasPrefix(msg, "leftover line "):
			lines++
		case msg == "last words, no newline":
			lines++
		}
	}
	if lines != 2001 || !ended {
		t.Errorf("logged %d of the tree's 2001 lines before \"command ended\" (ended: %v):\n%s", lines, ended, a.out.String())
	}
}

// TestResignLeavesNoBatonThatMayBeOurs: a successor whose take's answer was
// lost (the baton may be its session's) and that resigns at once must not
// withdraw on the fast path (leader node, proposal, release in one write),
// which gives back only a baton known held: its live session, kept to
// stand again, would hold the baton and stall the election. Both ways of
// withdrawing decline, so resign ends the session and the baton with it.
func TestResignLeavesNoBatonThatMayBeOurs(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	base := "/ballot/test/resign-maybe-baton"
	seedElection(t, zkc.Servers(), base)
	p := newInProcess(t, zkc, base)
	c := p.join(p.session(), "x")
	// The take was applied; its answer was lost.
	if _, err := c.s.Conn.Create(c.batonPath(), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.baton.answerLost(0)
	// The leader node, published (version 0, this session's).
	if _, err := c.s.Conn.Create(c.leaderPath(), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.lead.published = true

	if (&runner{}).withdrawWithLeaderNode(c) {
		t.Fatal("withdrew on the fast path with a baton that may be ours")
	}
	if c.withdraw() {
		t.Error("withdraw confirmed with a baton that may be ours: resign would keep the session, and the baton with it")
	}
}
