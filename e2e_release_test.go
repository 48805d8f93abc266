package main

// Fast, fenced failovers on the release path (issue 37): a leader whose
// proposal an operator deleted leaves a note once its command is gone, and
// the successor takes at once instead of waiting W; a leader resumed past
// its lease gives the baton back on the session that still holds it
// instead of leaving that session to expire.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// TestResumedLeaderReleasesOnItsSession: the leader's ballot is stopped
// past its lease and resumed before ZooKeeper can expire its session:
// SIGSTOP to ballot alone (its keeper kills the command at the lease's
// kill time), or to ballot, its keeper and the command together (a VM
// pause: the keeper's alarm kills the command first thing on resume). It
// must give the baton back on that session and close it, so that the
// successor takes at once, not after the session's expiry and W.
//
// The stop's length, from T = 8 s (tickTime 500 ms allows up to 10 s):
// renewals go out every T/8 and each touches the session, so the last
// touch before the stop is at most T/8 before it and ZooKeeper expires the
// session no earlier than stop + 7T/8 (7 s). The command must be dead by
// the last renewal's send + W − T/16 ≤ stop + 11T/16 (5.5 s). ballot is
// resumed at stop + 25T/32 (6.25 s): T/10 from either end.
func TestResumedLeaderReleasesOnItsSession(t *testing.T) {
	// Serial: a resumed ballot has T/10 (0.8 s) to give its baton back
	// before the session can expire, a time load could eat. Its two
	// subtests (own elections, nothing else running) go together.
	const T = 8 * time.Second
	c := startZKWith(t, zkOptions{TickTime: 500 * time.Millisecond})
	for _, whole := range []bool{false, true} {
		name := map[bool]string{false: "ballot alone", true: "ballot keeper and command"}[whole]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newElection(t, c)
			flags := []string{"--zookeeper-session-timeout", T.String()}
			a := e.add("a", flags, nil, "tick")
			e.leader(20 * time.Second)
			b := e.add("b", flags, nil, "tick")
			b.WaitEvent(logEvStandingBy, 20*time.Second)
			waitTenures(t, e.ticks, 1, 10*time.Second)
			cpid := commandPid(t, a)
			keeper := parentPid(cpid)
			signal := func(sig syscall.Signal) {
				a.Signal(sig)
				if whole {
					_ = syscall.Kill(keeper, sig)
					_ = syscall.Kill(-cpid, sig)
				}
			}

			signal(syscall.SIGSTOP)
			stopped := time.Now()
			defer signal(syscall.SIGCONT)
			for !whole && processAlive(cpid) {
				if time.Since(stopped) > T {
					t.Fatalf("the keeper did not kill the stopped ballot's command within T")
				}
				time.Sleep(5 * time.Millisecond)
			}
			if d := T*25/32 - time.Since(stopped); d > 0 {
				time.Sleep(d)
			}
			if b.Logged("command started") {
				t.Fatalf("b started while a was stopped, %s after the stop: a's session expired sooner than derived", time.Since(stopped))
			}
			signal(syscall.SIGCONT)
			resumed := time.Now()
			b.WaitEvent(logEvCommandStarted, 2*T)
			a.WaitEvent(logEvRejoining, T)
			t.Logf("ballot resumed %s after the stop; b's command started %s after the resume",
				resumed.Sub(stopped).Round(time.Millisecond), time.Since(resumed).Round(time.Millisecond))

			if !a.Logged("baton given back") {
				t.Errorf("a did not give the baton back on its session:\n%s", a.out.String())
			}
			if b.Logged("dropped it without releasing") {
				t.Errorf("b waited for a dropped baton: a left its session to expire\n%s", b.out.String())
			}
			waitTenures(t, e.ticks, 2, 10*time.Second)
			gaps := checkNoOverlap(t, e.ticks)
			e.checkTokensGrow()
			report(t, name+" SIGSTOPped past its lease, resumed before its session expired", gaps, overlapOf(t, e.ticks))
		})
	}
}

// TestDeletedProposalFailsOverAtOnce: an operator deletes the leader's
// proposal (with the baton, or the handover record, in the same multi-op,
// as a careless cleanup might). The leader kills its command and, once its
// keeper reports the tree reaped, leaves a note that its leadership ended;
// the successor, finding the baton gone and the record naming that
// proposal, takes at once instead of waiting W. Without a record to name
// the holder (deleted too), a note would prove nothing: the leader writes
// none and the successor waits the W any dropped baton gets. Never two
// commands; no note is left once the successor took.
func TestDeletedProposalFailsOverAtOnce(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	for _, tc := range []struct {
		name       string
		also       []string // deleted with the proposal, in one multi-op
		stopKeeper bool     // the leader's keeper SIGSTOPped first: ballot kills the tree itself
		atOnce     bool
	}{
		{name: "proposal", atOnce: true},
		{name: "proposal and baton", also: []string{batonName}, atOnce: true},
		{name: "proposal and handover record", also: []string{handoverName}},
		{name: "proposal (its keeper stopped)", stopKeeper: true, atOnce: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newElection(t, c)
			a := e.add("a", nil, nil, "tick")
			e.leader(10 * time.Second)
			b := e.add("b", nil, nil, "tick")
			b.WaitEvent(logEvStandingBy, 10*time.Second)
			waitTenures(t, e.ticks, 1, 10*time.Second)
			proposal := e.base + "/" + e.proposals()[0]
			if tc.stopKeeper {
				keeper := parentPid(commandPid(t, a))
				_ = syscall.Kill(keeper, syscall.SIGSTOP)
				defer func() { _ = syscall.Kill(keeper, syscall.SIGCONT) }()
			}

			ops := []any{&zk.DeleteRequest{Path: proposal, Version: -1}}
			for _, n := range tc.also {
				ops = append(ops, &zk.DeleteRequest{Path: e.base + "/" + n, Version: -1})
			}
			conn := zkConnect(t, c.Servers(), 2*time.Second)
			if _, err := conn.Multi(ops...); err != nil {
				t.Fatalf("delete %v: %v", ops, err)
			}
			conn.Close()
			deleted := time.Now()

			b.WaitEvent(logEvCommandStarted, 10*time.Second)
			a.WaitEvent(logEvRejoining, 5*time.Second) // after its release path
			if !tc.atOnce {
				if len(a.Events(logEvReleasedNote)) > 0 {
					t.Errorf("a left a note although the record naming it was deleted")
				}
				b.WaitEvent(logEvBatonWait, time.Second)
				if !b.Logged("the record is missing") || len(b.Events(logEvNoteFound)) > 0 {
					t.Errorf("b did not wait W for a baton whose holder nobody recorded:\n%s", b.out.String())
				}
			} else {
				note := a.WaitEvent(logEvReleasedNote, time.Second)
				if want := releasedPath(e.base, path.Base(proposal)); note["note"] != want {
					t.Errorf("a left the note %q, want %q", note["note"], want)
				}
				// The order of events, not a time: b took the baton on the
				// note, right after finding it, not after a wait of W.
				b.WaitEvent(logEvNoteFound, time.Second, "holder", proposal)
				if seq := eventsIn(b, logEvBatonWait, logEvNoteFound, logEvBatonTaken); !endsWith(seq, logEvNoteFound, logEvBatonTaken) {
					t.Errorf("b did not take the baton on a's note: its events %v", seq)
				}
				if len(tc.also) == 0 && b.Logged("dropped it without releasing") {
					// a's session, and the baton, end after the note is written.
					t.Errorf("b waited for a dropped baton although a's note came first:\n%s", b.out.String())
				}
			}
			ts := waitTenures(t, e.ticks, 2, 10*time.Second)
			gaps := checkNoOverlap(t, e.ticks)
			e.checkTokensGrow()
			t.Logf("RELIABILITY fault=%q fault→new command=%s gap=%s", "the leader's "+tc.name+" deleted by another client",
				ts[1].first.Sub(deleted).Round(time.Millisecond), gaps[0].Round(time.Millisecond))

			// No note is left behind once b's take replaced the record.
			conn = zkConnect(t, c.Servers(), 2*time.Second)
			defer conn.Close()
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				notes, _, err := conn.Children(e.base + "/" + releasedDirName)
				if err != nil && !errors.Is(err, zk.ErrNoNode) {
					t.Fatal(err)
				}
				if len(notes) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("notes left behind after b's take: %v", notes)
				}
			}
		})
	}
}

// eventsIn lists, in order, the events of p's log among evs.
func eventsIn(p *ballotProc, evs ...logEvent) []logEvent {
	out := p.out.String()
	var seq []logEvent
	for _, line := range strings.Split(out[:strings.LastIndexByte(out, '\n')+1], "\n") {
		attrs, ok := parseLogLine(line)
		if !ok {
			continue
		}
		for _, ev := range evs {
			if attrs["event"] == string(ev) {
				seq = append(seq, ev)
			}
		}
	}
	return seq
}

// endsWith reports that seq ends with tail.
func endsWith(seq []logEvent, tail ...logEvent) bool {
	return len(seq) >= len(tail) && slices.Equal(seq[len(seq)-len(tail):], tail)
}

// TestReleasedNoteIsForItsRecordOnly: the note is written only while the
// handover record is still at the version of the writer's take (late, the
// record replaced or deleted, it would be needed by nobody and left
// behind); written twice, it is written; and a successor trusts it only
// for a record that names its proposal, never another's.
func TestReleasedNoteIsForItsRecordOnly(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	other := zkConnect(t, zkc.Servers(), 2*time.Second)
	defer other.Close()
	take := func(t *testing.T, p *inProcess, id string) *candidate {
		t.Helper()
		c := p.join(p.session(), id)
		if _, err := c.takeBaton(nil); err != nil {
			t.Fatal(err)
		}
		if err := other.Delete(c.node, -1); err != nil { // the operator's delete
			t.Fatal(err)
		}
		return c
	}
	exists := func(t *testing.T, path string) bool {
		t.Helper()
		ok, _, err := other.Exists(path)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	t.Run("record still ours", func(t *testing.T) {
		base := "/ballot/test/" + strings.ReplaceAll(t.Name(), "/", "-")
		seedElection(t, zkc.Servers(), base)
		p := newInProcess(t, zkc, base)
		c := take(t, p, "a")
		for i := 0; i < 2; i++ { // written twice: the second finds it
			if ok, err := c.leaveReleasedNote(c.baton.version); !ok || err != nil {
				t.Fatalf("note %d: written %v, %v", i+1, ok, err)
			}
		}
		note := releasedPath(base, path.Base(c.node))
		if !exists(t, note) {
			t.Fatalf("no note at %s", note)
		}

		// A successor trusts it for the record naming a's proposal only.
		s := p.join(p.session(), "s")
		h, err := s.readHandover()
		if err != nil {
			t.Fatal(err)
		}
		if ended, err := s.holderEnded(h, &droppedWait{}); !ended || err != nil {
			t.Errorf("the record names a, whose note exists: ended %v, %v", ended, err)
		}
		h.rec.Proposal = base + "/_c_00000000000000000000000000000000-proposal-0000000099"
		if ended, err := s.holderEnded(h, &droppedWait{}); ended || err != nil {
			t.Errorf("a's note was trusted for another proposal's take: ended %v, %v", ended, err)
		}
		h.rec.State = handoverReleased
		h.rec.Proposal = c.node
		if noteSubject(h) != "" {
			t.Errorf("a released record has a note subject")
		}

		// The next take after a dropped baton clears the notes.
		oneBaton{s}.clearNotes()
		if exists(t, note) {
			t.Errorf("the note outlived clearNotes")
		}
	})

	for _, tc := range []struct {
		name   string
		change func(t *testing.T, c *candidate)
	}{
		{"record replaced by a successor's take", func(t *testing.T, c *candidate) {
			if _, err := other.Set(c.handoverPath(), []byte(`{"state":"taken","candidateId":"b"}`), -1); err != nil {
				t.Fatal(err)
			}
		}},
		{"record deleted", func(t *testing.T, c *candidate) {
			if err := other.Delete(c.handoverPath(), -1); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := "/ballot/test/" + strings.ReplaceAll(t.Name(), "/", "-")
			seedElection(t, zkc.Servers(), base)
			c := take(t, newInProcess(t, zkc, base), "a")
			tc.change(t, c)
			if ok, err := c.leaveReleasedNote(c.baton.version); ok || err != nil {
				t.Errorf("a note for a record no longer a's: written %v, %v", ok, err)
			}
			if exists(t, releasedPath(base, path.Base(c.node))) {
				t.Errorf("the note was written")
			}
		})
	}
}

// TestReleasedNoteWatchedWhileTheBatonIsHeld: the successor of a leader
// whose proposal an operator deleted finds the baton still held (the
// leader stops its command first); it watches for the leader's note
// meanwhile, so that once the baton goes the note is known without a
// read: its creation's event comes before the baton's delete (the note is
// written before the session ends, and ZooKeeper sends a session its
// events in the order of the changes). Once seen, a note stays trusted
// (what it says stays true) even if deleted since, and still only for the
// proposal the record names.
func TestReleasedNoteWatchedWhileTheBatonIsHeld(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	other := zkConnect(t, zkc.Servers(), 2*time.Second)
	defer other.Close()
	base := "/ballot/test/" + t.Name()
	seedElection(t, zkc.Servers(), base)
	p := newInProcess(t, zkc, base)
	leaderSession := p.session()
	a := p.join(leaderSession, "a")
	if _, err := a.takeBaton(nil); err != nil {
		t.Fatal(err)
	}
	s := p.join(p.session(), "s")
	if err := other.Delete(a.node, -1); err != nil { // the operator's delete
		t.Fatal(err)
	}
	h, dropped, wait := droppedTakeOf(t, s)
	var drop droppedWait
	announced := ""
	stop := make(chan struct{})
	defer close(stop)
	type result struct {
		free bool
		err  error
	}
	done := make(chan result, 1)
	go func() {
		free, err := s.waitOutDrop(h, dropped, wait, &drop, &announced, stop)
		done <- result{free, err}
	}()
	// s waits on the held baton, the note's watch armed: one watch on the
	// note (besides the baton's).
	note := releasedPath(base, path.Base(a.node))
	T := leaderSession.Timeout()
	for deadline := time.Now().Add(T); pendingWatchers(t, s.s.Conn, note) != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("s did not watch for a's note within T = %s while a holds the baton", T)
		}
	}
	if ok, err := a.leaveReleasedNote(a.baton.version); !ok || err != nil {
		t.Fatalf("note: written %v, %v", ok, err)
	}
	leaderSession.Close() // the baton goes with a's session
	select {
	case r := <-done:
		if r.free || r.err != nil {
			t.Fatalf("the held wait ended with free %v, %v; want the record read again", r.free, r.err)
		}
	case <-time.After(T):
		t.Fatalf("the baton went with a's session, but s still waits after T = %s", T)
	}
	// Gone since: what the note said stays true, and the event told it.
	if err := other.Delete(note, -1); err != nil {
		t.Fatal(err)
	}
	if ended, err := s.holderEnded(h, &drop); !ended || err != nil {
		t.Errorf("a's note, seen written while a held the baton: ended %v, %v; want trusted", ended, err)
	}
	h.rec.Proposal = base + "/_c_00000000000000000000000000000000-proposal-0000000099"
	if ended, err := s.holderEnded(h, &drop); ended || err != nil {
		t.Errorf("a's note was trusted for another proposal's take: ended %v, %v", ended, err)
	}
}

// TestReleasedNoteSeenDuringTheDropWaitStaysTrusted: the note written
// while the successor waits W for a dropped baton ends the wait by its
// creation's event; that event, consumed by the wait, is remembered, so
// the note stays trusted even if deleted before the next round reads it
// (design.md: a note seen by its event is trusted).
func TestReleasedNoteSeenDuringTheDropWaitStaysTrusted(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	other := zkConnect(t, zkc.Servers(), 2*time.Second)
	defer other.Close()
	base := "/ballot/test/" + t.Name()
	seedElection(t, zkc.Servers(), base)
	p := newInProcess(t, zkc, base)
	a := p.join(p.session(), "a")
	if _, err := a.takeBaton(nil); err != nil {
		t.Fatal(err)
	}
	s := p.join(p.session(), "s")
	// The operator deletes a's proposal and its baton; a's session lives
	// on to write its note later.
	for _, n := range []string{a.node, a.batonPath()} {
		if err := other.Delete(n, -1); err != nil {
			t.Fatal(err)
		}
	}
	h, dropped, wait := droppedTakeOf(t, s)
	var drop droppedWait
	announced := ""
	stop := make(chan struct{})
	defer close(stop)
	done := make(chan error, 1)
	go func() {
		_, err := s.waitOutDrop(h, dropped, wait, &drop, &announced, stop)
		done <- err
	}()
	// s waits W (3T/4) with the note's watch armed; the note, written
	// at once, ends the wait by its event well before W.
	note := releasedPath(base, path.Base(a.node))
	T := s.s.Timeout()
	for deadline := time.Now().Add(T); pendingWatchers(t, s.s.Conn, note) != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("s did not watch for a's note within T = %s", T)
		}
	}
	if ok, err := a.leaveReleasedNote(a.baton.version); !ok || err != nil {
		t.Fatalf("note: written %v, %v", ok, err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * T):
		t.Fatalf("s still waits after 2T = %s", 2*T)
	}
	if err := other.Delete(note, -1); err != nil {
		t.Fatal(err)
	}
	if ended, err := s.holderEnded(h, &drop); !ended || err != nil {
		t.Errorf("a's note, seen by its event during the wait and deleted since: ended %v, %v; want trusted", ended, err)
	}
}

// droppedTakeOf is the record s reads and the take in it that s sees
// dropped (its holder's proposal deleted), with the wait it owes.
func droppedTakeOf(t *testing.T, s *candidate) (*handoverSeen, string, time.Duration) {
	t.Helper()
	h, err := s.readHandover()
	if err != nil {
		t.Fatal(err)
	}
	dropped, wait, err := s.droppedTake(h)
	if err != nil || dropped == "" {
		t.Fatalf("the holder's take, its proposal deleted, is not a dropped take to %s: %q, %v", s.id, dropped, err)
	}
	return h, dropped, wait
}

// TestStopReleaseResentOnReconnect: the leader's link to its member goes
// silent just as it is stopped, so the release it sends once its command
// is gone gets no answer; its client drops that connection after its read
// timeout (2T/3) and reconnects to another member well within the
// session's life (T). The same fenced release goes out again there and the
// successor takes at once: the session is not ended with the baton
// dropped unreleased, which would cost the successor W for nothing (the
// random-fault run's "SIGTERM beside a paused member", issue 37).
func TestStopReleaseResentOnReconnect(t *testing.T) {
	t.Parallel()
	// The client drops the silent connection at most 2T/3 after it last
	// heard from it; ZooKeeper expires the session no sooner than T after
	// a's last ping: T/3 (2.7 s) to reconnect and resend, on a busy machine.
	const T = 8 * time.Second
	c := startZKWith(t, zkOptions{N: 3, TickTime: 500 * time.Millisecond})
	// a reaches each of two members through a proxy of its own, so that
	// the one it is connected to can go silent while the other answers.
	p0, p1 := newTCPProxy(t, c.Servers()[:1]), newTCPProxy(t, c.Servers()[1:2])
	e := newElection(t, c)
	flags := []string{"--zookeeper-session-timeout", T.String()}
	a := e.add("a", flags, []string{p0.Addr(), p1.Addr()}, "tick")
	if l := e.leader(30 * time.Second); l != a {
		t.Fatalf("%s leads, want a", l.name)
	}
	b := e.add("b", flags, nil, "tick")
	b.WaitEvent(logEvStandingBy, 30*time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)
	silent := p0
	if p1.Conns() > 0 {
		silent = p1
	}
	silent.Blackhole(true)
	a.Signal(syscall.SIGTERM)
	b.WaitEvent(logEvCommandStarted, 3*T)
	a.Wait(2 * T)
	if !a.Logged("connection to ZooKeeper lost") {
		t.Fatalf("a's connection did not drop: the release was not put to the test\n%s", a.out.String())
	}
	if a.Logged("cannot delete the proposal or give the baton back") {
		t.Errorf("a gave up its release when its connection dropped, instead of sending it again once reconnected:\n%s", a.out.String())
	}
	if b.Logged("dropped it without releasing") {
		t.Errorf("b waited for a dropped baton: a's release was not sent again\n%s", b.out.String())
	}
	waitTenures(t, e.ticks, 2, 10*time.Second)
	checkNoOverlap(t, e.ticks)
	e.checkTokensGrow()
}

// TestResentReleaseFindsTheFirstLanded: a leader's withdrawal — its
// proposal's delete and the baton's release in one multi-op — goes out, and
// its connection drops with the answer; the same ops go out again once the
// session has reconnected (retireMulti). When the first had landed, the
// resend finds our proposal gone: that is told apart from someone else
// deleting it, so the withdrawal is confirmed (no session ended for
// nothing) only when nothing of ours is left. Cases (first: what the proxy
// does to the first attempt):
//   - landed: the resend finds the record as our release wrote it;
//   - landed, a successor took before the resend: the record moved past
//     our take and the baton is the successor's;
//   - not landed: the resend lands, as before;
//   - not landed, our proposal deleted by another (an operator) before the
//     resend: the baton is still ours, so the withdrawal is not confirmed
//     and the caller ends the session, as before.
//
// And the same with resign's fast path as the first attempt (leader node,
// proposal and release in one multi-op; withdrawWithLeaderNode), which is
// not sent again but followed by withdraw's own multi-op.
//
// The resend waits in the proxy until the case's preparation is done; the
// session (T = 4 s, the longest the shared server allows) reconnects at
// once through the same proxy.
func TestResentReleaseFindsTheFirstLanded(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	cases := []struct {
		name     string
		fast     bool // the first attempt is resign's fast path (the leader node too)
		lands    bool // the first attempt reaches ZooKeeper (its answer is lost either way)
		take     bool // the successor takes before the resend
		delete   bool // another deletes our proposal before the resend
		want     bool // withdraw confirmed
		proof    string
		batonOwn bool // the baton is still ours afterwards
	}{
		{"landed", false, true, false, false, true, "proof=record", false},
		{"landed successor took", false, true, true, false, true, "proof=successor", false},
		{"not landed", false, false, false, false, true, "", false},
		{"not landed proposal deleted", false, false, false, true, false, "", true},
		// The fast path's answer lost: resign withdraws after it.
		{"fast path landed", true, true, false, false, true, "proof=record", false},
		{"fast path landed successor took", true, true, true, false, true, "proof=successor", false},
		{"fast path not landed", true, false, false, false, true, "", false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := fmt.Sprintf("/ballot/test/resent-release-%d", i)
			seedElection(t, zkc.Servers(), base)
			direct := newInProcess(t, zkc, base)
			p := newTCPProxy(t, zkc.Servers())
			acc, err := loadZKAccess(&Settings{ZooKeeperServers: []string{p.Addr()}, ZooKeeperACL: "open"})
			if err != nil {
				t.Fatal(err)
			}
			var logs syncBuffer
			log := newLogger(&logs, "human", slog.LevelInfo)
			s, err := zookeeper.DialSession(direct.log, acc, 4*time.Second, 5*time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			a, err := propose(log, s, base, "a", "run once", 0, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.readElection(); err != nil {
				t.Fatal(err)
			}
			if _, err := a.takeBaton(nil); err != nil {
				t.Fatal(err)
			}
			b := direct.join(direct.session(), "b")
			if tc.fast {
				publishedLeaderNode(t, a)
			}

			conn := zkConnect(t, zkc.Servers(), 2*time.Second)
			defer conn.Close()
			var seen atomic.Int32
			sent, resend := make(chan struct{}), make(chan struct{})
			p.SetClientTap(func(req []byte) tapAction {
				if !isMultiOn(req, a.node) {
					return tapAction{}
				}
				if seen.Add(1) == 1 {
					defer close(sent)
					if !tc.lands {
						return tapAction{Drop: true, ResetClient: true}
					}
					_, _, landed, _ := conn.ExistsW(a.node) // its delete is the landing
					return landAnswerLost(p, landed)
				}
				<-resend
				return tapAction{}
			})
			done := make(chan bool, 1)
			go func() {
				if r := (&runner{}); tc.fast {
					if r.withdrawWithLeaderNode(a) {
						done <- true
						return
					}
					r.unpublishLeader(a) // as resign goes on
					a.lead.flush(a.s.Timeout()/2, a.s.Lost(), a.done.C)
				}
				done <- a.withdraw()
			}()
			<-sent
			if ok, _, ev, err := conn.ExistsW(a.node); err != nil {
				t.Fatal(err)
			} else if ok && tc.lands {
				<-ev // the first attempt landed: our proposal went with it
			}
			if tc.take {
				if _, err := b.readElection(); err != nil {
					t.Fatal(err)
				}
				if _, err := b.takeBaton(nil); err != nil {
					t.Fatal(err)
				}
			}
			if tc.delete {
				if err := conn.Delete(a.node, -1); err != nil {
					t.Fatal(err)
				}
			}
			close(resend)
			var got bool
			select {
			case got = <-done:
			case <-time.After(4 * time.Second): // T: the resend waits for the reconnect at most that
				t.Fatalf("withdraw still going T after the resend was let through:\n%s", logs.String())
			}
			if seen.Load() < 2 {
				t.Fatalf("the withdrawal was not sent again (%d attempts)", seen.Load())
			}
			if got != tc.want {
				t.Errorf("withdraw confirmed %v, want %v:\n%s", got, tc.want, logs.String())
			}
			switch l := logs.String(); {
			case tc.proof != "" && !(strings.Contains(l, "already withdrawn") && strings.Contains(l, tc.proof)):
				t.Errorf("want the withdrawal logged as already done with %q:\n%s", tc.proof, l)
			case tc.proof == "" && strings.Contains(l, "already withdrawn"):
				t.Errorf("a withdrawal the resend made, or one that failed, logged as already done:\n%s", l)
			}
			raw, st, err := conn.Get(a.batonPath())
			own := err == nil && st.EphemeralOwner == a.s.ID() && namesProposal(raw, a.node)
			if own != tc.batonOwn {
				t.Errorf("the baton is a's: %v, want %v (%v)", own, tc.batonOwn, err)
			}
			if tc.take && (err != nil || !namesProposal(raw, b.node)) {
				t.Errorf("the successor's baton is gone: %v", err)
			}
			if ok, _, err := conn.Exists(a.leaderPath()); tc.fast && (ok || err != nil) {
				t.Errorf("a's leader node stays: %v", err)
			}
		})
	}
}

// landAnswerLost is a tap's action for a request that must land and lose
// its answer: its client hears nothing more from the moment it is
// forwarded, and is reset once landed fires (a watch on what the request
// changes, set before it went out). Reset at once instead, the client
// could reconnect before the server read the request, which would then
// never be served. If landed never fires (the request failed), the reset
// comes after 10 s, and the test fails on what it waits for.
func landAnswerLost(p *tcpProxy, landed <-chan zk.Event) tapAction {
	return tapAction{Mute: true, Then: func() {
		select {
		case <-landed:
		case <-time.After(10 * time.Second):
		}
		p.ResetClientSides()
	}}
}

// isMultiOn reports whether b holds a multi-op (opcode 14) naming node.
func isMultiOn(b []byte, node string) bool {
	for len(b) >= 12 {
		n := int(binary.BigEndian.Uint32(b))
		req := b[4:min(len(b), 4+n)]
		if len(req) >= 8 && binary.BigEndian.Uint32(req[4:8]) == 14 && bytes.Contains(req, []byte(node)) {
			return true
		}
		b = b[4+len(req):]
	}
	return false
}

// TestLandedProof: what a resend that found our proposal gone reads, and
// whether that proves nothing of ours is left (earlierLanded).
func TestLandedProof(t *testing.T) {
	ours, released := []byte(`{"state":"released","proposal":"/e/a"}`), []byte(`{"state":"released","proposal":"/e/a","successor":""}`)
	take, taken := []byte(`{"state":"taken","proposal":"/e/a"}`), []byte(`{"state":"taken","proposal":"/e/b"}`)
	again := []byte(`{"state":"released","proposal":"/e/b"}`)
	sent := [][]byte{ours, released}
	for _, tc := range []struct {
		name string
		seen retireSeen
		want string
	}{
		{"no baton held", retireSeen{}, "proposal"},
		{"the record as our release wrote it", retireSeen{held: true, take: 3, rec: ours, recVersion: 4, recOK: true}, "record"},
		{"as our pruned resend wrote it", retireSeen{held: true, take: 3, rec: released, recVersion: 4, recOK: true}, "record"},
		{"a successor took since", retireSeen{held: true, take: 3, rec: taken, recVersion: 5, recOK: true}, "successor"},
		{"a successor took and released since", retireSeen{held: true, take: 3, rec: again, recVersion: 6, recOK: true}, "successor"},
		// Not proof: the caller ends the session, as after any deletion.
		{"the record still at our take, the baton ours", retireSeen{held: true, take: 3, rec: take, recVersion: 3, recOK: true, batonOurs: true}, ""},
		{"the record still at our take, the baton gone", retireSeen{held: true, take: 3, rec: take, recVersion: 3, recOK: true}, ""},
		{"a take since, yet the baton ours", retireSeen{held: true, take: 3, rec: taken, recVersion: 4, recOK: true, batonOurs: true}, ""},
		{"the record gone", retireSeen{held: true, take: 3}, ""},
		{"the record made again, lower", retireSeen{held: true, take: 3, rec: taken, recVersion: 0, recOK: true}, ""},
	} {
		if got := landedProof(tc.seen, sent); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestStopReleaseLandedAnswerLost: the real binary's way to the resend
// (TestStopReleaseResentOnReconnect's, with the answer lost but the release
// landed): a is stopped, its release reaches ZooKeeper, its answer is held
// back by the proxy, which resets a's connection once the release has
// landed (landAnswerLost). b takes at once (the release named it);
// a reconnects through the same proxy, sends the release again and finds
// its proposal gone: it must say the withdrawal was already done, not warn
// that it cannot release and end its session. T = 4 s leaves a's immediate
// reconnect the whole session's life.
func TestStopReleaseLandedAnswerLost(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	p := newTCPProxy(t, c.Servers())
	watch := zkConnect(t, c.Servers(), 2*time.Second)
	defer watch.Close()
	var cut atomic.Bool
	p.SetClientTap(func(req []byte) tapAction {
		if isRelease(req) && cut.CompareAndSwap(false, true) {
			_, _, landed, _ := watch.GetW(e.base + "/" + handoverName) // the release rewrites it
			return landAnswerLost(p, landed)
		}
		return tapAction{}
	})
	flags := []string{"--zookeeper-session-timeout", "4s"}
	env := ballotEnv(t, append([]string{"BALLOT_TEST_CHILD=tick", "TICK_FILE=" + e.ticks}, zkReconnectRace...)...)
	a := startBallot(t, "a", env, append(runArgs([]string{p.Addr()}, e.base, "a", flags...), "--", selfExe(), e.ticks)...)
	e.cands = append(e.cands, a)
	defer func() { checkRaces(t, a.out.String()) }()
	if l := e.leader(30 * time.Second); l != a {
		t.Fatalf("%s leads, want a", l.name)
	}
	b := e.add("b", flags, nil, "tick")
	b.WaitEvent(logEvStandingBy, 30*time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)
	a.Signal(syscall.SIGTERM)
	b.WaitEvent(logEvCommandStarted, 30*time.Second)
	a.Wait(30 * time.Second)
	if !cut.Load() {
		t.Fatalf("a's release was never seen on the wire:\n%s", a.out.String())
	}
	if a.Logged("cannot delete the proposal or give the baton back") || !a.Logged("already withdrawn") {
		t.Errorf("a's landed release, its answer lost, not told apart from a failure:\n%s", a.out.String())
	}
	if b.Logged("dropped it without releasing") {
		t.Errorf("b waited for a dropped baton:\n%s", b.out.String())
	}
	waitTenures(t, e.ticks, 2, 10*time.Second)
	checkNoOverlap(t, e.ticks)
	e.checkTokensGrow()
}

// isRelease reports whether b holds a multi-op (opcode 14) giving a baton
// back: the handover record released or handed over.
func isRelease(b []byte) bool {
	for len(b) >= 12 {
		n := int(binary.BigEndian.Uint32(b))
		req := b[4:min(len(b), 4+n)]
		if len(req) >= 8 && binary.BigEndian.Uint32(req[4:8]) == 14 &&
			(bytes.Contains(req, []byte(`"state":"released"`)) || bytes.Contains(req, []byte(`"state":"handed-over"`))) {
			return true
		}
		b = b[4+len(req):]
	}
	return false
}

// TestCrontabLandedReleaseKeepsTheSession: in run crontab every job stands
// on one session. Job north hands its leadership back after each run
// (reelect) and its release's answer is lost with the shared connection
// (the proxy holds the answer back and resets the connection once the
// release has landed: landAnswerLost). The release
// had landed: north must say so, not warn that it cannot release, and
// the session stays the one it was, with job south's leadership on it
// untouched (same proposal, same fencing token); north runs on.
func TestCrontabLandedReleaseKeepsTheSession(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	ct.write(ct.line("north", "@every 1s", "0.1s"), ct.line("south", "0 0 1 1 *", "0"))
	proxy := newTCPProxy(t, zkc.Servers())
	watch := zkConnect(t, zkc.Servers(), 2*time.Second)
	defer watch.Close()
	var cut atomic.Bool
	proxy.SetClientTap(func(req []byte) tapAction {
		if isRelease(req) && bytes.Contains(req, []byte("/north/")) && cut.CompareAndSwap(false, true) {
			_, _, landed, _ := watch.GetW(ct.base + "/north/" + handoverName) // the release rewrites it
			return landAnswerLost(proxy, landed)
		}
		return tapAction{}
	})
	a := ct.startEnv(proxy.Addr(), zkReconnectRace, "a")
	defer func() { checkRaces(t, a.out.String()) }()
	conn := zkConnect(t, zkc.Servers(), 5*time.Second)
	defer conn.Close()
	waitJobsLed(t, ct, conn, []string{"north", "south"}, map[string]int{"a": 2})
	south := func() leaderRecord {
		t.Helper()
		raw, _, err := conn.Get(ct.base + "/south/" + leaderName)
		var rec leaderRecord
		if err != nil || json.Unmarshal(raw, &rec) != nil {
			t.Fatalf("south's leader node: %v", err)
		}
		return rec
	}
	before := south()
	a.WaitLog("already withdrawn", 30*time.Second)
	if !cut.Load() {
		t.Fatal("north's release was never seen on the wire")
	}
	n := len(ct.jobRuns("north"))
	ct.waitJobRuns("north", n+2, 30*time.Second)
	if after := south(); after.Proposal != before.Proposal || after.FencingToken != before.FencingToken {
		t.Errorf("south's leadership changed: %+v, was %+v", after, before)
	}
	if a.Logged("cannot delete") {
		t.Errorf("north's landed release, its answer lost, taken for a failure:\n%s", a.out.String())
	}
	if n := strings.Count(a.out.String(), "ZooKeeper session established"); n != 1 {
		t.Errorf("%d sessions established, want 1:\n%s", n, a.out.String())
	}
	ct.checkOnce("north")
	a.Signal(syscall.SIGTERM)
	a.Wait(20 * time.Second)
}

// TestResignDeletesTheLeaderNodeTheUnpublishLeft: resign waits T/2 for
// its unpublish; when that has not been seen to end (late behind a
// reconnect, its read failed, or dropped as the candidacy retires), the
// withdrawal deletes the leader node with the proposal, so a leadership
// that ends on a session kept (a crontab's, a rejoin) leaves no leader node
// naming it. The case the review found: the unpublish's read answered
// before the withdrawal, its fenced delete after it (refused: our
// proposal is gone).
func TestResignDeletesTheLeaderNodeTheUnpublishLeft(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	for i, tc := range []struct {
		name      string
		unpublish string // what the unpublish did before the withdrawal: "none", "read" (its delete after), "done"
	}{
		{"the unpublish never ran", "none"},
		{"the unpublish read, its delete after the withdrawal", "read"},
		{"the unpublish done", "done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := fmt.Sprintf("/ballot/test/resign-leader-node-%d", i)
			seedElection(t, zkc.Servers(), base)
			p := newInProcess(t, zkc, base)
			a := p.join(p.session(), "a")
			if _, err := a.readElection(); err != nil {
				t.Fatal(err)
			}
			if _, err := a.takeBaton(nil); err != nil {
				t.Fatal(err)
			}
			publishedLeaderNode(t, a)
			var raw []byte
			var stat *zk.Stat
			switch tc.unpublish {
			case "read":
				var err error
				if raw, stat, err = a.s.Conn.Get(a.leaderPath()); err != nil {
					t.Fatal(err)
				}
			case "done":
				(&runner{}).unpublishLeader(a)
				a.lead.flush(a.s.Timeout(), a.s.Lost(), a.done.C)
				if !a.lead.gone.Load() {
					t.Fatal("the unpublish ended without marking the node gone")
				}
			}
			if !a.withdraw(leaderNodeLeft(a, true)...) {
				t.Fatal("the withdrawal was not confirmed")
			}
			if tc.unpublish == "read" {
				if err := unpublishRead(a, raw, stat); !errors.Is(err, zk.ErrNoNode) {
					t.Errorf("the late unpublish's delete: %v, want refused (our proposal is gone)", err)
				}
			}
			if a.s.IsLost() {
				t.Fatal("the session was ended: this test is of a session kept")
			}
			if ok, st, err := a.s.Conn.Exists(a.leaderPath()); err != nil || ok {
				t.Errorf("the leader node of a withdrawn leadership stays on its session (%v, %+v)", err, st)
			}
			if ok, _, err := a.s.Conn.Exists(a.node); err != nil || ok {
				t.Errorf("the proposal stays (%v)", err)
			}
		})
	}
}
