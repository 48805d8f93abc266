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
// slot 0: they are one more contender for a slot, never an N+1st holder.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
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

// awaitSlot is awaitLeadership with --slots N > 1: it returns once this
// proposal is among the first N in line. The first candidate past them
// watches all N (a released slot wakes it alone); the others watch their
// predecessor, and list the line again when its state changes (it became
// a holder: we may be first past the N now).
func (c *candidate) awaitSlot(stop <-chan struct{}) error {
	following := ""
	for {
		if c.s.isLost() {
			return errSessionLost
		}
		children, _, err := c.s.conn.Children(c.basePath)
		if err != nil {
			if err := c.retryAfter(err, stop); err != nil {
				return err
			}
			continue
		}
		line := sortedProposals(children)
		if err := c.checkSlots(line); err != nil {
			return err
		}
		me := -1
		for i, n := range line {
			if c.basePath+"/"+n == c.node {
				me = i
			}
		}
		switch {
		case me < 0:
			return errProposalGone
		case me < c.slots:
			if c.s.isLost() || !c.s.connected.Load() {
				continue
			}
			return nil
		}
		watched := line[me-1 : me]
		if me == c.slots {
			watched = line[:me] // first past the N: every holder's proposal
		}
		quit := make(chan struct{})
		woke, err := c.watchAny(watched, quit)
		if err != nil {
			close(quit)
			if err := c.retryAfter(err, stop); err != nil {
				return err
			}
			continue
		}
		if at := fmt.Sprintf("%s %d", line[me-1], me); following != at {
			c.log.Info("following", logEvFollowing.attr(), "proposal", c.node, "place_in_line", me+1, "predecessor", c.basePath+"/"+line[me-1], "slots", c.slots)
			following = at
			if c.onFollowing != nil {
				c.onFollowing(me+1, c.basePath+"/"+line[0])
			}
		}
		select {
		case <-woke:
		case <-c.s.lost:
			close(quit)
			return errSessionLost
		case <-stop:
			close(quit)
			return errStopped
		}
		close(quit)
	}
}

// watchAny watches the named children of the election; woke is pinged when
// any of them changes or goes. A watch of ours that fires for the data of
// a node that still exists counts too: the caller lists the line again.
func (c *candidate) watchAny(names []string, quit <-chan struct{}) (<-chan struct{}, error) {
	woke := make(chan struct{}, 1)
	for _, n := range names {
		ok, _, ev, err := c.s.conn.ExistsW(c.basePath + "/" + n)
		if err != nil {
			return nil, err
		}
		if !ok {
			ping(woke)
			continue
		}
		go func() {
			select {
			case <-ev:
				ping(woke)
			case <-quit:
			}
		}()
	}
	return woke, nil
}

// watchGone pings woke once the node at path is deleted (or the session's
// watches end); the baton's renewals change its data every T/8, and only
// re-arm the watch.
func (c *candidate) watchGone(path string, ev <-chan zk.Event, woke chan struct{}, quit <-chan struct{}) {
	for {
		select {
		case e := <-ev:
			if e.Type == zk.EventNodeDataChanged {
				ok, _, next, err := c.s.conn.ExistsW(path)
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

// takeSlot is takeBaton with --slots N > 1: it takes the first slot that
// is free, waiting out a dropped one as takeBaton waits for the one baton.
func (c *candidate) takeSlot(stop <-chan struct{}) (leaseStart, error) {
	drops := make([]droppedWait, c.slots)
	waiting := false
	for {
		if c.s.isLost() {
			return leaseStart{}, errSessionLost
		}
		quit := make(chan struct{})
		woke := make(chan struct{}, 1)
		var until bootTime
		start, again, err := c.scanSlots(drops, woke, quit, &until, stop)
		if err != nil || !again && start.end != 0 {
			close(quit)
			return start, err
		}
		if again {
			close(quit)
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
	case <-c.s.lost:
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
func (c *candidate) scanSlots(drops []droppedWait, woke chan struct{}, quit <-chan struct{}, until *bootTime, stop <-chan struct{}) (start leaseStart, again bool, err error) {
	for k := 0; k < c.slots; k++ {
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
			// Ours, from a take whose answer was lost: nothing runs under
			// it. Give it back, checked against our proposal (waitHeld).
			if _, err := c.s.conn.Multi(&zk.CheckVersionRequest{Path: c.node, Version: -1},
				&zk.DeleteRequest{Path: c.batonPath(), Version: -1}); err == nil {
				c.maybeBaton = false
			}
			return leaseStart{}, true, nil
		}
		if held {
			go c.watchGone(c.batonPath(), ev, woke, quit)
			continue
		}
		go c.watchGone(c.batonPath(), ev, woke, quit) // fires when someone takes it
		dropped, wait, err := c.droppedTake(h)
		if err != nil {
			return leaseStart{}, true, c.retryAfter(err, stop)
		}
		if dropped != "" {
			if drops[k].take != dropped {
				drops[k] = droppedWait{take: dropped, until: bootNow() + bootTime(wait)}
				c.log.Info("slot dropped by a holder that did not give it back; waiting until anything it may still run has been stopped by its own lease",
					logEvBatonWait.attr(), "slot", k, "wait", wait.Round(time.Millisecond))
			}
			if now := bootNow(); now < drops[k].until {
				if *until == 0 || drops[k].until < *until {
					*until = drops[k].until
				}
				if _, _, changed, err := c.s.conn.GetW(c.handoverPath()); err == nil {
					go func() {
						select {
						case <-changed: // its holder gave it back after all
							ping(woke)
						case <-quit:
						}
					}()
				}
				continue
			}
		}
		if c.election == nil {
			if _, err := c.readElection(); err != nil {
				return leaseStart{}, true, c.retryAfter(err, stop)
			}
		}
		sent, res, err := c.take(h)
		if err == nil {
			return leaseStart{end: sent + bootTime(batonWait(c.s.Timeout()))}, false, nil
		}
		switch i := failedOp(res); {
		case i == 0 && errors.Is(res[0].Error, zk.ErrNoNode):
			return leaseStart{}, false, errProposalGone
		case i == 1 && errors.Is(res[1].Error, zk.ErrNodeExists):
			continue // taken by another meanwhile: the next slot
		case i == 2 || i == 3:
			if i == 3 {
				c.election = nil
			}
			return leaseStart{}, true, nil // a record changed: read them again
		case retryable(err) || errors.Is(err, zk.ErrSessionExpired):
			c.maybeBaton = true // found on the next round (held, ours)
			return leaseStart{}, true, c.retryAfter(err, stop)
		}
		return leaseStart{}, false, fmt.Errorf("cannot take slot %d's baton %s: %w", k, c.batonPath(), zkError(err, "create", c.batonPath()))
	}
	return leaseStart{}, false, nil
}
