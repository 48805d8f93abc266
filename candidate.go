package main

// A candidate: one proposal in one session, its place in line, and its
// withdrawal.

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// candidate is one election in one session: a proposal, its place in
// line, the baton it takes and holds. Each other concern is a value of
// its own: the proposal's facts (proposal.go), the line as last seen,
// the standby's proofs (standby.go), what it publishes and its leader
// node's writes (publisher.go), the run history (history.go).
type candidate struct {
	log           *slog.Logger
	s             *zookeeper.Session
	w             *zookeeper.Writer // its renewals, through the session, in one multi-op with its other elections' (internal/zookeeper/writes.go)
	proposalFacts                   // basePath, id, node, seq, priority, slots, token (proposal.go)
	slot          int               // the slot this candidate takes or holds: its baton (slots.go)

	line     lineView      // the line as last seen
	standby  *standby      // the next in line's proofs (standby.go)
	baton    batonState    // none, pending, maybe or held (batonstate.go)
	election *electionSeen // the election path's record, as last read
	history  historyState  // the run history, as this leadership knows it (history.go)

	pub        *publisher    // what it publishes about itself (publisher.go)
	lead       leaderNode    // the leader node's writes (publisher.go, leader.go)
	demoteOwed bool          // elected: the on-demote hook is owed (demote clears it as it runs the hook)
	tell       candidateTold // what the runner is told as the candidacy goes

	done *closer // closed when the candidacy is over
}

// holding is what one baton (the recipe) and --slots N (N batons, one
// each for the first N in line: slots.go) do differently. hold chooses it
// from the proposal's --slots, which never changes: the one place that
// tells the two apart.
type holding interface {
	// awaitTurn follows the line until this proposal may take a baton:
	// the first in line, or one of the first N.
	awaitTurn(stop <-chan struct{}) error
	// takeTurn takes the baton, or the first free slot's.
	takeTurn(stop <-chan struct{}) (leaseStart, error)
	// successor is whom a release names: with slots nobody, whoever is
	// next takes the slot.
	successor() handTo
	// leaveNote leaves the note of a proposal gone with its command
	// (release.go); a slot's successor reads none.
	leaveNote(version int32) (written bool, err error)
	// othersAhead (--no-wait): the line, as listed, or a baton held or
	// handed over, keeps this proposal from leading now.
	othersAhead(line []string) bool
	// handsOver: a leadership can be handed to one named successor
	// (preferred leaders, run crontab's spreading); a slot cannot.
	handsOver() bool
	// logged is what the log lines of a take and of an election add.
	logged() []any
	// slotShown is the slot the metrics show while leading (--slots).
	slotShown() (slots, slot int, shown bool)
}

// hold is this candidate's holding: one baton, or one of --slots N. A
// function of the proposal's facts, not a field: it cannot disagree with
// them, and costs no allocation (each holding is one pointer).
func (c *candidate) hold() holding {
	if c.slots > 1 {
		return slotHolding{c}
	}
	return oneBaton{c}
}

// takeBaton waits until the baton (one baton's, or a free slot's) is free
// and takes it, or, handed over to us with credit left, returns the take
// to send (pending) while the command starts.
func (c *candidate) takeBaton(stop <-chan struct{}) (leaseStart, error) {
	return c.hold().takeTurn(stop)
}

// successor is whom a leader's release names (handTo{}: nobody).
func (c *candidate) successor() handTo { return c.hold().successor() }

// leaveReleasedNote writes the note of this candidate's proposal, which is
// gone, with its command (release.go).
func (c *candidate) leaveReleasedNote(version int32) (written bool, err error) {
	return c.hold().leaveNote(version)
}

// lineView is the election's line as this candidate last saw it.
type lineView struct {
	seen    atomic.Pointer[[]string] // the election's children as the leader's lease last saw them
	changed chan struct{}            // pinged when seen changes (preempt.go)
	// higherSlots: handover records of slots beyond our --slots already
	// waited for (slots.go, checkHigherSlots).
	higherSlots map[string]bool
}

// firstOther is the first proposal in line other than ours (node, full
// path), as the lease's watch last saw the line, and the line's names.
func (v *lineView) firstOther(basePath, node string) (first string, line map[string]bool) {
	line = map[string]bool{}
	p := v.seen.Load()
	if p == nil {
		return "", line
	}
	for _, n := range sortedProposals(*p) {
		full := basePath + "/" + n
		line[full] = true
		if first == "" && full != node {
			first = full
		}
	}
	return first, line
}

// othersInOrder is the line as last seen, in order, without node.
func (v *lineView) othersInOrder(basePath, node string) []string {
	p := v.seen.Load()
	if p == nil {
		return nil
	}
	var out []string
	for _, n := range sortedProposals(*p) {
		if full := basePath + "/" + n; full != node {
			out = append(out, full)
		}
	}
	return out
}

// candidateTold is what the runner is told as the candidacy goes; nil:
// nobody.
type candidateTold struct {
	following func(place int, leader string) // each new place in line (systemd status)
	runEnded  func(historyEntry)             // each run's end once, with its output (hooks.go)
	// lineChanged: a leader's line changed (lease.watch): run crontab
	// spreads its leaderships then. It must not block.
	lineChanged func()
}

// placeInLine lists the election once, for awaitLeadership and awaitSlot:
// the line, and our place in it (-1: our proposal is gone). A nil line
// with a nil error means list again (a reconnect, or a dropped slot of a
// larger --slots waited out); an error ends the wait (a --slots
// disagreement refuses).
func (c *candidate) placeInLine(stop <-chan struct{}) (line []string, me int, err error) {
	children, _, err := c.s.Conn.Children(c.basePath)
	if err != nil {
		return nil, -1, c.retryAfter(err, stop)
	}
	if again, err := c.checkHigherSlots(children, stop); err != nil || again {
		return nil, -1, err
	}
	line = sortedProposals(children)
	if err := c.checkSlots(line); err != nil {
		return nil, -1, err
	}
	me = -1
	for i, n := range line {
		if c.basePath+"/"+n == c.node {
			me = i
		}
	}
	return line, me, nil
}

// awaitLeadership is the follower state: it returns once this proposal is
// the first in line (the baton comes next: baton.go). It keeps its place in line
// across reconnects and watch losses. Each round lists the line, watches
// what may move us up (the predecessor; next in line, the handover record
// too; third in line, the leader too) and waits until one of them changes.
func (c *candidate) awaitLeadership(stop <-chan struct{}) error {
	return c.hold().awaitTurn(stop)
}

// awaitTurn is awaitLeadership with one baton: first in line.
func (b oneBaton) awaitTurn(stop <-chan struct{}) error {
	c := b.c
	f := &followWatches{c: c}
	for {
		if c.s.IsLost() {
			return errSessionLost
		}
		line, me, err := c.placeInLine(stop)
		switch {
		case err != nil:
			return err
		case line == nil:
			continue // listed nothing to act on: list again
		case me < 0:
			return errProposalGone
		case me == 0:
			if c.s.IsLost() || !c.s.Connected() {
				continue
			}
			return nil
		}
		if me == 1 {
			c.standby.start() // next in line: ready to be handed the baton
			if f.namesUs() {
				return nil
			}
		} else {
			c.standby.proveWhile(false) // further back: no handover comes to us
		}
		pred, watch, err := f.watchAhead(line, me, stop)
		if err != nil {
			return err
		}
		if watch == nil {
			continue // gone already, or a request retried: list the line again
		}
		f.announce(line, me, pred)
		first, err := f.wait(pred, watch, me, firstAmongEqual(line[:me], c.priority), stop)
		governor.stir() // a watch fired: a take may follow (a failover's burst)
		if err != nil || first {
			return err
		}
	}
}

// firstAmongEqual: none of the proposals ahead of ours has a higher
// priority than ours.
func firstAmongEqual(ahead []string, priority int) bool {
	for _, n := range ahead {
		if proposalPriority(n) > priority {
			return false
		}
	}
	return true
}

// followWatches is what a follower keeps across rounds of
// awaitLeadership: the place it last announced, and the watches it keeps
// until they fire (the predecessor's is set anew each round).
type followWatches struct {
	c         *candidate
	following string // the predecessor and place last announced
	// Third in line: a watch on the lowest, kept across rounds (one per
	// lowest proposal, or the watches would pile up on the server and in
	// the client).
	lowest     string
	lowestGone <-chan zk.Event
	named      <-chan zk.Event // next in line: the handover record
}

// namesUs reads the handover record, next in line, and reports whether it
// hands the baton to us.
func (f *followWatches) namesUs() bool {
	c := f.c
	// A release may name us though a candidate stands ahead of us
	// now: the old leader, standing again with a higher priority
	// (nobody else may take the baton handed to us, baton.go: we
	// must go and take it, whatever our place). One watch, kept
	// until it fires.
	if f.named == nil {
		raw, _, w, err := c.s.Conn.GetW(c.handoverPath())
		if err == nil && c.handedToUs(parseHandover(raw)) {
			return true
		}
		f.named = w
	}
	return false
}

// watchAhead watches our predecessor in line (and, third in line, the
// lowest too). A nil watch with a nil error means list the line again.
func (f *followWatches) watchAhead(line []string, me int, stop <-chan struct{}) (pred string, watch <-chan zk.Event, err error) {
	c := f.c
	pred = c.basePath + "/" + line[me-1]
	exists, watch, err := f.watchPredecessor(pred, me)
	if err != nil {
		return pred, nil, c.retryAfter(err, stop)
	}
	if !exists {
		return pred, nil, nil
	}
	if me == 2 && f.lowest != line[0] {
		// Third in line: when the leader hands over we are next, and
		// must be ready (standBy) before the new leader's command ends.
		// Only the third watches the lowest too: no herd.
		f.lowest, f.lowestGone = line[0], nil
		ok, w, err := c.s.WatchNode(c.basePath + "/" + f.lowest)
		if err != nil || !ok {
			f.lowest = ""
			return pred, nil, nil // gone already (or unknown): list the line again
		}
		f.lowestGone = w
	}
	if me != 2 {
		f.lowest, f.lowestGone = "", nil
	}
	return pred, watch, nil
}

// watchPredecessor watches pred (exists, and its data): next in line,
// it reads the leader's data too, and proves its place while that says a
// handover may come (standby.go).
func (f *followWatches) watchPredecessor(pred string, me int) (exists bool, watch <-chan zk.Event, err error) {
	c := f.c
	if me != 1 {
		return c.s.WatchNode(pred)
	}
	raw, _, watch, err := c.s.Conn.GetW(pred)
	if errors.Is(err, zk.ErrNoNode) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, err
	}
	c.standby.proveWhile(handoverMayCome(raw, c.node))
	return true, watch, nil
}

// announce logs our place in line when it changed.
func (f *followWatches) announce(line []string, me int, pred string) {
	c := f.c
	if at := fmt.Sprintf("%s %d", pred, me); f.following != at {
		c.log.Info("following", logEvFollowing.attr(), "proposal", c.node, "place_in_line", me+1, "predecessor", pred)
		f.following = at
		if c.tell.following != nil {
			c.tell.following(me+1, c.basePath+"/"+line[0])
		}
	}
}

// wait waits until a watch fires. first: ours is the first proposal now
// (the predecessor went); otherwise list the line again.
func (f *followWatches) wait(pred string, watch <-chan zk.Event, me int, firstAmongEqual bool, stop <-chan struct{}) (first bool, err error) {
	c := f.c
	for {
		select {
		case <-f.named:
			f.named = nil
			return false, nil // list the line again and read the record: it may name us
		case ev := <-f.lowestGone:
			if ev.Type == zk.EventNodeDataChanged {
				// The leader's state changed: watch it again, and wait on.
				if ok, w, err := c.s.WatchNode(c.basePath + "/" + f.lowest); err == nil && ok {
					f.lowestGone = w
					continue
				}
			}
			f.lowest, f.lowestGone = "", nil
			return false, nil // list the line again: we may be next
		case ev := <-watch:
			switch predecessorChanged(ev.Type, me, func() bool { return c.s.Connected() && !c.s.IsLost() }, firstAmongEqual) {
			case predecessorWent:
				return true, nil
			case predecessorStays:
				ok, w, err := f.watchPredecessor(pred, me)
				if err == nil && ok {
					watch = w
					continue
				}
			}
			return false, nil
		case <-c.s.Lost():
			return false, errSessionLost
		case <-stop:
			return false, errStopped
		}
	}
}

// predecessorStep is what a follower does when its predecessor's watch
// fires.
type predecessorStep int

const (
	listLineAgain    predecessorStep = iota // list the line again
	predecessorWent                         // ours is the first proposal now
	predecessorStays                        // the leader's state changed: watch it again
)

// predecessorChanged decides on an event of our predecessor's watch, me
// being our place in line (0: the first), online whether the session is
// connected and not lost (asked only when it matters).
func predecessorChanged(ev zk.EventType, me int, online func() bool, firstAmongEqual bool) predecessorStep {
	if ev == zk.EventNodeDeleted && me == 1 && online() && firstAmongEqual {
		// The first proposal went and ours was next: sequence
		// numbers only grow, and no priority went ahead of ours,
		// so ours is the first now. No need to list the election
		// again (the baton's take checks that our proposal still
		// exists; a higher priority that joined meanwhile finds
		// the baton handed over to us, baton.go).
		return predecessorWent
	}
	if ev == zk.EventNodeDataChanged && me > 1 {
		// The predecessor's state changed, to leading perhaps:
		// those ahead of it are gone, and we may be next in line
		// (standBy). List the line again.
		return listLineAgain
	}
	if ev == zk.EventNodeDataChanged {
		// The leader's state changed: it still exists, so our
		// place cannot have changed; just watch it again.
		return predecessorStays
	}
	return listLineAgain
}

func (c *candidate) retryAfter(err error, stop <-chan struct{}) error {
	switch {
	case zookeeper.Retryable(err):
		return c.s.WaitOnline(stop)
	case errors.Is(err, zk.ErrSessionExpired):
		c.s.MarkLost("session expired")
		return errSessionLost
	default:
		// Unexpected (ACLs, a deleted base path): wait a moment, retry.
		c.log.Warn("ZooKeeper request failed; retrying", "error", err)
		select {
		case <-time.After(500 * time.Millisecond):
			return nil
		case <-c.s.Lost():
			return errSessionLost
		case <-stop:
			return errStopped
		}
	}
}

// withdraw deletes the proposal, and gives the baton back if this
// candidate holds it, in one multi-op, so the next candidate can lead at
// once. It reports whether that is confirmed; when it is not (the
// connection dropped, or the baton could not be released), the caller
// must end the session, or the proposal would stay in line, led by nobody,
// or the baton held, for as long as the session lives.
func (c *candidate) withdraw(extra ...any) bool {
	c.pub.stop()
	c.retire()
	if c.s.IsLost() {
		return true // the session, and its nodes, are gone
	}
	ops := append(append(extra, &zk.DeleteRequest{Path: c.node, Version: -1}), releaseOps(c, c.successor())...)
	released, err := retireMulti(c, ops, c.lead.unanswered)
	if err != nil || !released || c.baton.maybe() {
		c.log.Warn("cannot delete the proposal or give the baton back; ending the session so they go", "proposal", c.node, "error", err)
		return false
	}
	return true
}

// retire ends the candidacy's helpers (the leader-node worker).
func (c *candidate) retire() {
	c.done.Close()
}
