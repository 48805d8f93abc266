package main

// Slots (--slots N): at most N commands at once for one election. Each
// slot k is a baton and a handover record of its own (slot 0's are the
// election's "baton" and "handover"; slot k's are "baton-k" and
// "handover-k"), taken, renewed and given back exactly as the one baton is
// (baton.go, lease.go), so every guarantee of a leader holds per slot: the
// lease, the keeper, the wait for a dropped baton. Only whose turn it is
// differs: the first N proposals in line may take a slot, the first that
// is free; nobody is named in a release (no handover on credit), and the
// first candidate past the N watches all of them, so a released slot wakes
// that one candidate.
//
// N is in every proposal's name: candidates that disagree on N see it in
// one listing, and the one that joined later refuses to stand (it may not
// count on N being what it thinks). Ballots older than slots take only
// slot 0: one that joins later is one more contender for a slot, never an
// N+1st holder; one already in line reads as --slots 1, and later --slots
// candidates refuse.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/zookeeper"
)

// maxSlots bounds --slots: each slot costs a baton, a record, and one
// watch of the first waiter.
const maxSlots = 100

// slotName is the node name of slot k's baton, handover record or leader
// node: name itself for slot 0 (the names of an election without slots).
func slotName(name string, k int) string {
	if k == 0 {
		return name
	}
	return name + "-" + strconv.Itoa(k)
}

// slotsTag is the part of a proposal's name that carries --slots n.
func slotsTag(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf("%s%d-", slotsMark, n)
}

// proposalSlots is the --slots a proposal's name carries: 1 when it
// carries none.
func proposalSlots(name string) int {
	i := strings.LastIndex(name, proposalPrefix)
	if i < 0 {
		return 1
	}
	tag := name[:i]
	j := strings.Index(tag, "-"+slotsMark)
	if j < 0 {
		return 1
	}
	rest := tag[j+1+len(slotsMark):]
	k := strings.IndexByte(rest, '-')
	if k < 0 {
		return 1
	}
	n, err := strconv.Atoi(rest[:k])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// slotOf is the slot k > 0 whose node of kind base ("baton", ...) name is.
func slotOf(name, base string) (int, bool) {
	rest, ok := strings.CutPrefix(name, base+"-")
	if !ok {
		return 0, false
	}
	k, err := strconv.Atoi(rest)
	return k, err == nil && k > 0 && strconv.Itoa(k) == rest
}

// slotFile files n into m if it is a slot k > 0's node of kind base.
func slotFile(n *snapNode, base string, m *map[int]*snapNode) bool {
	k, ok := slotOf(n.name, base)
	if !ok {
		return false
	}
	if *m == nil {
		*m = map[int]*snapNode{}
	}
	(*m)[k] = n
	return true
}

// slotCount is the election's --slots as its proposals' names and slot
// nodes say: 1 without slots.
func (s *electionSnapshot) slotCount() int {
	n := 1
	for _, p := range s.proposals {
		n = max(n, proposalSlots(p.name))
	}
	for _, m := range []map[int]*snapNode{s.slotBatons, s.slotHandovers} {
		for k := range m {
			n = max(n, k+1)
		}
	}
	return n
}

// slotHolding is the holding of an election with --slots N > 1: one of
// N batons, taken by the first N in line, handed to nobody by name.
type slotHolding struct{ c *candidate }

func (sh slotHolding) takeTurn(stop <-chan struct{}) (leaseStart, error) { return sh.c.takeSlot(stop) }

// successor: a plain release, whoever is next takes the slot.
func (slotHolding) successor() handTo { return handTo{} }

// leaveNote: a slot's successor reads no note; a dropped slot waits W.
func (slotHolding) leaveNote(int32) (bool, error) { return false, nil }

// othersAhead: N are ahead of us.
func (sh slotHolding) othersAhead(line []string) bool {
	c := sh.c
	return slices.Index(line, c.node[len(c.basePath)+1:]) >= c.slots
}

func (slotHolding) handsOver() bool { return false }

func (sh slotHolding) logged() []any { return []any{"slot", sh.c.slot, "slots", sh.c.slots} }

func (sh slotHolding) slotShown() (slots, slot int, shown bool) { return sh.c.slots, sh.c.slot, true }

// slotsMismatchError: a proposal that joined before ours says another N.
type slotsMismatchError struct {
	ours, theirs int
	proposal     string
}

func (e *slotsMismatchError) Error() string {
	return fmt.Sprintf("--slots %d: the election runs with --slots %d (proposal %s, which joined earlier, says so); every candidate of an election must give the same --slots",
		e.ours, e.theirs, e.proposal)
}

// checkSlots refuses a line where a proposal older than ours says another
// --slots: whoever joined later gives way, so two that disagree never both
// stand.
func (c *candidate) checkSlots(line []string) error {
	for _, n := range line {
		seq, _ := proposalSeq(n)
		if k := proposalSlots(n); k != c.slots && seq < c.seq {
			return &slotsMismatchError{ours: c.slots, theirs: k, proposal: c.basePath + "/" + n}
		}
	}
	return nil
}

// awaitTurn is awaitLeadership with --slots N > 1: it returns once this
// proposal is among the first N in line. The first candidate past them
// watches all N (a released slot wakes it alone); the others watch their
// predecessor, and list the line again when its state changes (it became
// a holder: we may be first past the N now).
func (sh slotHolding) awaitTurn(stop <-chan struct{}) error {
	c := sh.c
	following := ""
	w := &slotWatches{c: c, armed: map[string]bool{}, woke: make(chan struct{}, 1), quit: make(chan struct{})}
	defer close(w.quit)
	for {
		if c.s.IsLost() {
			return errSessionLost
		}
		line, me, err := c.placeInLine(stop)
		if err != nil {
			return err
		}
		if line == nil {
			continue // listed nothing to act on: list again
		}
		switch {
		case me < 0:
			return errProposalGone
		case me < c.slots:
			if c.s.IsLost() || !c.s.Connected() {
				continue
			}
			return nil
		}
		watched := line[me-1 : me]
		if me == c.slots {
			watched = line[:me] // first past the N: every holder's proposal
		}
		if err := w.watch(watched); err != nil {
			if err := c.retryAfter(err, stop); err != nil {
				return err
			}
			continue
		}
		// What changed between the listing and the watches is in no
		// event: list again if the line did.
		again, _, err := c.s.Conn.Children(c.basePath)
		if err == nil && !slices.Equal(sortedProposals(again), line) {
			continue
		}
		if at := fmt.Sprintf("%s %d", line[me-1], me); following != at {
			c.log.Info("following", logEvFollowing.attr(), "proposal", c.node, "place_in_line", me+1, "predecessor", c.basePath+"/"+line[me-1], "slots", c.slots)
			following = at
			if c.tell.following != nil {
				c.tell.following(me+1, c.basePath+"/"+line[0])
			}
		}
		select {
		case <-w.woke:
		case <-c.s.Lost():
			return errSessionLost
		case <-stop:
			return errStopped
		}
	}
}

// slotWatches are a follower's watches on proposals ahead of it, each kept
// until it fires (go-zookeeper keeps a channel per call until the node's
// watch fires: re-arming a quiet holder's every round would pile them up).
type slotWatches struct {
	c     *candidate
	mu    sync.Mutex
	armed map[string]bool
	woke  chan struct{} // pinged when any fires
	quit  chan struct{}
}

func (w *slotWatches) watch(names []string) error {
	for _, n := range names {
		w.mu.Lock()
		armed := w.armed[n]
		w.mu.Unlock()
		if armed {
			continue
		}
		ok, ev, err := w.c.s.WatchNode(w.c.basePath + "/" + n)
		if err != nil {
			return err
		}
		if !ok {
			ping(w.woke)
			continue
		}
		w.mu.Lock()
		w.armed[n] = true
		w.mu.Unlock()
		go func() {
			select {
			case <-ev:
				w.mu.Lock()
				delete(w.armed, n)
				w.mu.Unlock()
				ping(w.woke)
			case <-w.quit:
			}
		}()
	}
	return nil
}

// checkHigherSlots refuses to stand while a slot beyond our N is held (the
// election ran with a larger --slots, and its holder may still run), and
// waits out the lease of one dropped there, as for any dropped baton: a
// smaller N never looks at those slots again.
func (c *candidate) checkHigherSlots(children []string, stop <-chan struct{}) (again bool, err error) {
	for _, n := range children {
		if k, ok := slotOf(n, batonName); ok && k >= c.slots {
			return false, &slotsMismatchError{ours: c.slots, theirs: k + 1, proposal: c.basePath + "/" + n + " (a slot's baton, still held)"}
		}
	}
	for _, n := range children {
		k, ok := slotOf(n, handoverName)
		if !ok || k < c.slots || c.line.higherSlots[n] {
			continue
		}
		raw, _, err := c.s.Conn.Get(c.basePath + "/" + n)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return true, c.retryAfter(err, stop)
		}
		if h := parseHandover(raw); err == nil && h.parsed && h.rec.State != handoverReleased {
			// No baton there (listed above): dropped, its holder's lease may
			// still run. Counted from now, after the listing.
			wait := h.rec.holderWait(c.s.Timeout())
			c.log.Info("a slot of a larger --slots was dropped by its holder: waiting until anything it may still run has been stopped by its own lease",
				logEvBatonWait.attr(), "slot", k, "wait", wait.Round(time.Millisecond))
			if err := c.waitForSlot(nil, bootNow()+bootTime(wait), stop); err != nil {
				return false, err
			}
		}
		if c.line.higherSlots == nil {
			c.line.higherSlots = map[string]bool{}
		}
		c.line.higherSlots[n] = true
	}
	return false, nil
}

// watchGone pings woke once the node at path is deleted (or the session's
// watches end); the baton's renewals change its data every T/8, and only
// re-arm the watch.
func (sh slotHolding) watchGone(path string, ev <-chan zk.Event, woke chan struct{}, quit <-chan struct{}) {
	c := sh.c
	for {
		select {
		case e := <-ev:
			if e.Type == zk.EventNodeDataChanged {
				ok, _, next, err := c.s.Conn.ExistsW(path)
				if err == nil && ok {
					ev = next
					continue
				}
			}
			ping(woke)
			return
		case <-quit:
			return
		}
	}
}

// takeSlot is takeBaton with --slots N > 1 (slotHolding): it takes the first slot that
// is free, waiting out a dropped one as takeBaton waits for the one baton.
func (c *candidate) takeSlot(stop <-chan struct{}) (leaseStart, error) {
	drops := make([]droppedWait, c.slots)
	waiting := false
	for {
		if c.s.IsLost() {
			return leaseStart{}, errSessionLost
		}
		quit := make(chan struct{})
		woke := make(chan struct{}, 1)
		var until bootTime
		start, again, err := slotHolding{c}.scanSlots(drops, woke, quit, &until, stop)
		if err != nil || !again && start.end != 0 {
			close(quit)
			return start, err
		}
		if again {
			close(quit)
			select {
			case <-stop:
				return leaseStart{}, errStopped
			default:
			}
			continue
		}
		if !waiting {
			waiting = true
			c.log.Info("waiting for a slot: all are held, or dropped by holders whose commands may still run", logEvBatonWait.attr(), "slots", c.slots)
			c.pub.update(func(d *proposalData) { d.State = stateWaitingForBaton })
		}
		if err := c.waitForSlot(woke, until, stop); err != nil {
			close(quit)
			return leaseStart{}, err
		}
		close(quit)
	}
}

// scanOrder is the order of a scan: the slot of a take whose answer was
// lost first, then all from 0.
func (c *candidate) scanOrder() []int {
	order := make([]int, 0, c.slots)
	lost := c.baton.lostSlot()
	if lost >= 0 {
		order = append(order, lost)
	}
	for k := 0; k < c.slots; k++ {
		if k != lost {
			order = append(order, k)
		}
	}
	return order
}

// waitForSlot waits until woke, or until (the end of a wait for a dropped
// baton; 0: none).
func (c *candidate) waitForSlot(woke <-chan struct{}, until bootTime, stop <-chan struct{}) error {
	var timer <-chan time.Time
	if until != 0 {
		t := time.NewTimer(time.Duration(until - bootNow()))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-woke:
	case <-timer:
	case <-c.s.Lost():
		return errSessionLost
	case <-stop:
		return errStopped
	}
	return nil
}

// scanSlots looks at each slot in turn and takes the first that is free.
// again: read them all again at once (a record changed, a reconnect);
// neither again nor a start: none is free, and woke (or until, the end of
// the earliest wait for a dropped baton) says when to look again.
func (sh slotHolding) scanSlots(drops []droppedWait, woke chan struct{}, quit <-chan struct{}, until *bootTime, stop <-chan struct{}) (start leaseStart, again bool, err error) {
	c := sh.c
	for _, k := range c.scanOrder() {
		c.slot = k
		h, err := c.readHandover()
		if err != nil {
			return leaseStart{}, true, c.retryAfter(err, stop)
		}
		held, owner, ev, err := c.batonWatch()
		if err != nil {
			return leaseStart{}, true, c.retryAfter(err, stop)
		}
		if held && owner == c.s.ID() {
			mine, version, err := c.ownBaton()
			if err != nil {
				return leaseStart{}, true, c.retryAfter(err, stop)
			}
			if mine {
				again, err := sh.giveBackLostTake(version, stop)
				return leaseStart{}, again, err
			}
			// Another candidacy's on our session: held, as another's is.
		}
		// Fires when its holder gives it back, or, free, when someone
		// takes it.
		go sh.watchGone(c.batonPath(), ev, woke, quit)
		if held {
			continue
		}
		if k == 0 {
			// A ballot older than slots, among higher priorities, may have
			// handed slot 0 over to a named successor (baton.go).
			var named namedWait
			announced := ""
			if waited, err := waitForNamed(c, h, &named, &announced, stop); err != nil || waited {
				return leaseStart{}, true, err
			}
		}
		waiting, err := sh.slotDropped(k, h, &drops[k], woke, quit, until)
		if err != nil {
			return leaseStart{}, true, c.retryAfter(err, stop)
		}
		if waiting {
			continue
		}
		start, next, again, err := sh.trySlot(k, h, stop)
		if next {
			continue // taken by another meanwhile: the next slot
		}
		return start, again, err
	}
	return leaseStart{}, false, nil
}

// giveBackLostTake gives back a slot's baton our session holds: ours, from
// a take whose answer was lost, nothing runs under it. Checked against our
// proposal (waitHeld).
func (sh slotHolding) giveBackLostTake(version int32, stop <-chan struct{}) (again bool, err error) {
	c := sh.c
	res, err := c.s.Conn.Multi(&zk.CheckVersionRequest{Path: c.node, Version: -1},
		&zk.DeleteRequest{Path: c.batonPath(), Version: version})
	switch {
	case err == nil:
		c.baton.ownGone()
	case failedOp(res) == 0 && errors.Is(res[0].Error, zk.ErrNoNode):
		return false, errProposalGone // the session ends, and the baton with it
	default:
		return true, c.retryAfter(err, stop)
	}
	return true, nil
}

// slotDropped reports whether slot k (free) was dropped by a holder whose
// lease may still run; waiting, it brings until forward to the end of that
// wait if it is the earliest, and pings woke if the record changes.
func (sh slotHolding) slotDropped(k int, h *handoverSeen, drop *droppedWait, woke chan struct{}, quit <-chan struct{}, until *bootTime) (waiting bool, err error) {
	c := sh.c
	dropped, wait, err := c.droppedTake(h)
	if err != nil || dropped == "" {
		return false, err
	}
	if drop.take != dropped {
		*drop = droppedWait{take: dropped, until: bootNow() + bootTime(wait)}
		c.log.Info("slot dropped by a holder that did not give it back; waiting until anything it may still run has been stopped by its own lease",
			logEvBatonWait.attr(), "slot", k, "wait", wait.Round(time.Millisecond))
	}
	if bootNow() >= drop.until {
		return false, nil
	}
	*until = earliestEnd(*until, drop.until)
	if _, _, changed, err := c.s.Conn.GetW(c.handoverPath()); err == nil {
		go func() {
			select {
			case <-changed: // its holder gave it back after all
				ping(woke)
			case <-quit:
			}
		}()
	}
	return true, nil
}

// earliestEnd is the earlier of two ends of waits, 0 being none.
func earliestEnd(until, end bootTime) bootTime {
	if until == 0 || end < until {
		return end
	}
	return until
}

// trySlot sends slot k's take (free, the wait for a dropped baton over).
// next: another took it meanwhile, look at the next slot; again: read
// them all again.
func (sh slotHolding) trySlot(k int, h *handoverSeen, stop <-chan struct{}) (start leaseStart, next, again bool, err error) {
	c := sh.c
	if c.election == nil {
		if _, err := c.readElection(); err != nil {
			return leaseStart{}, false, true, c.retryAfter(err, stop)
		}
	}
	sent, res, err := c.take(h)
	if err == nil {
		return leaseStart{end: sent + bootTime(batonWait(c.s.Timeout()))}, false, false, nil
	}
	switch slotTakeFailed(res, err) {
	case slotProposalGone:
		return leaseStart{}, false, false, errProposalGone
	case slotTakenMeanwhile:
		return leaseStart{}, true, false, nil
	case slotElectionChanged:
		c.election = nil
		return leaseStart{}, false, true, nil // read it again
	case slotRecordChanged:
		return leaseStart{}, false, true, nil // read them again
	case slotAnswerLost:
		// Found on the next round, that slot first (held, ours), before
		// we take another and leave it held by nobody's command.
		c.baton.answerLost(k)
		return leaseStart{}, false, true, c.retryAfter(err, stop)
	}
	return leaseStart{}, false, false, fmt.Errorf("cannot take slot %d's baton %s: %w", k, c.batonPath(), zookeeper.Error(err, "create", c.batonPath()))
}

// slotTakeFailure is what a slot's failed take means.
type slotTakeFailure int

const (
	slotTakeError       slotTakeFailure = iota // none of the below: the wait ends
	slotProposalGone                           // our proposal is gone
	slotTakenMeanwhile                         // another took the slot: the next one
	slotRecordChanged                          // its handover record changed: read them again
	slotElectionChanged                        // the election's record changed: read it again too
	slotAnswerLost                             // the take may have been applied
)

// slotTakeFailed reads a slot's failed take (the multi-op of take: check
// our proposal, create the baton, write the record, record our W).
func slotTakeFailed(res []zk.MultiResponse, err error) slotTakeFailure {
	switch i := failedOp(res); {
	case i == 0 && errors.Is(res[0].Error, zk.ErrNoNode):
		return slotProposalGone
	case i == 1 && errors.Is(res[1].Error, zk.ErrNodeExists):
		return slotTakenMeanwhile
	case i == 2:
		return slotRecordChanged
	case i == 3:
		return slotElectionChanged
	case zookeeper.Retryable(err) || errors.Is(err, zk.ErrSessionExpired):
		return slotAnswerLost
	}
	return slotTakeError
}
