package main

// A candidate: one proposal in one session, its place in line, and its
// withdrawal.

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// candidate is one proposal in one session.
type candidate struct {
	log      *slog.Logger
	s        *session
	basePath string
	id       string
	node     string // full path of the proposal node
	seq      int64
	priority int // --priority, in the proposal's name
	slots    int // --slots: how many lead at once (1: the recipe), in the proposal's name
	slot     int // the slot this candidate takes or holds: its baton (slots.go)
	// higherSeen: handover records of slots beyond our --slots already
	// waited for (slots.go, checkHigherSlots).
	higherSeen map[string]bool

	token int64 // the proposal's czxid: grows from one leadership to the next
	pub   *publisher

	leading   bool // elected; the demote hook is owed
	published bool // the leader node was written (or is being written)

	baton    batonState    // none, pending, maybe or held (batonstate.go)
	election *electionSeen // the election path's record, as last read
	history  historyState  // the run history, as this leadership knows it (history.go)

	onFollowing func(place int, leader string) // told each new place in line (systemd status)
	onStandby   func()                         // told once, when next in line (a keeper started ahead)
	noCredit    bool                           // on-connection-loss=ignore: no start on credit (its take could end the command)

	lineSeen    atomic.Pointer[[]string] // the election's children as the leader's lease last saw them
	lineChanged chan struct{}            // pinged when lineSeen changes (preempt.go)
	proof       atomic.Int64             // bootTime: send time of the last answered proof in line (standby.go)
	proofRTT    atomic.Int64             // its round trip (ns)
	standbyOnce sync.Once
	standbyEnd  chan struct{} // closed when proofs are no longer needed
	standbyStop sync.Once

	ops     chan func() // leader-node writes, in order (leader.go)
	opsOnce sync.Once

	done     chan struct{} // closed when the candidacy is over
	doneOnce sync.Once
}

// proposalSeq extracts the sequence number of a proposal node name, such
// as "_c_<guid>-proposal-0000000012"; ok is false for any other node.
func proposalSeq(name string) (int64, bool) {
	i := strings.LastIndex(name, proposalPrefix)
	if i < 0 {
		return 0, false
	}
	digits := name[i+len(proposalPrefix):]
	if len(digits) != 10 {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	return n, err == nil
}

// proposalPriority is the --priority a proposal's name carries, as in
// "_c_<guid>-priority+5-proposal-0000000012"; 0 when it carries none (the
// default, and every proposal of a ballot older than priorities).
func proposalPriority(name string) int {
	i := strings.LastIndex(name, proposalPrefix)
	if i < 0 {
		return 0
	}
	tag := name[:i] // "_c_<guid>-" or "_c_<guid>-priority+5-"
	j := strings.LastIndex(tag, "-"+priorityMark)
	if j < 0 || !strings.HasSuffix(tag, "-") {
		return 0
	}
	n, err := strconv.Atoi(tag[j+1+len(priorityMark) : len(tag)-1])
	if err != nil {
		return 0
	}
	return n
}

// priorityTag is the part of a proposal's name that carries priority p.
func priorityTag(p int) string {
	if p == 0 {
		return "" // the name older ballots make and read
	}
	return fmt.Sprintf("%s%+d-", priorityMark, p)
}

// sortedProposals returns the proposal node names among children in line
// order: the highest --priority first, then the lowest sequence number.
// With no priorities (all 0) that is the recipe's order, lowest first.
func sortedProposals(children []string) []string {
	type entry struct {
		name     string
		priority int
		seq      int64
	}
	var line []entry
	for _, c := range children {
		if seq, ok := proposalSeq(c); ok {
			line = append(line, entry{c, proposalPriority(c), seq})
		}
	}
	sort.Slice(line, func(i, j int) bool {
		if line[i].priority != line[j].priority {
			return line[i].priority > line[j].priority
		}
		return line[i].seq < line[j].seq
	})
	out := make([]string, len(line))
	for i, e := range line {
		out[i] = e.name
	}
	return out
}

// placeInLine lists the election once, for awaitLeadership and awaitSlot:
// the line, and our place in it (-1: our proposal is gone). A nil line
// with a nil error means list again (a reconnect, or a dropped slot of a
// larger --slots waited out); an error ends the wait (a --slots
// disagreement refuses).
func (c *candidate) placeInLine(stop <-chan struct{}) (line []string, me int, err error) {
	children, _, err := c.s.conn.Children(c.basePath)
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
// across reconnects and watch losses.
func (c *candidate) awaitLeadership(stop <-chan struct{}) error {
	if c.slots > 1 {
		return c.awaitSlot(stop)
	}
	following := ""
	// Third in line: a watch on the lowest, kept across rounds (one per
	// lowest proposal, or the watches would pile up on the server and in
	// the client).
	var lowest string
	var lowestGone <-chan zk.Event
	var named <-chan zk.Event // next in line: the handover record
	for {
		if c.s.isLost() {
			return errSessionLost
		}
		line, me, err := c.placeInLine(stop)
		if err != nil {
			return err
		}
		if line == nil {
			continue // listed nothing to act on: list again
		}
		if me < 0 {
			return errProposalGone
		}
		firstAmongEqual := true // none of a higher priority in line
		for _, n := range line[:me] {
			if proposalPriority(n) > c.priority {
				firstAmongEqual = false
			}
		}
		if me == 0 {
			if c.s.isLost() || !c.s.connected.Load() {
				continue
			}
			return nil
		}
		if me == 1 {
			c.standBy() // next in line: ready to be handed the baton
			// A release may name us though a candidate stands ahead of us
			// now: the old leader, standing again with a higher priority
			// (nobody else may take the baton handed to us, baton.go: we
			// must go and take it, whatever our place). One watch, kept
			// until it fires.
			if named == nil {
				raw, _, w, err := c.s.conn.GetW(c.handoverPath())
				if err == nil && c.handedToUs(parseHandover(raw)) {
					return nil
				}
				named = w
			}
		}
		pred := c.basePath + "/" + line[me-1]
		exists, _, watch, err := c.s.conn.ExistsW(pred)
		if err != nil {
			if err := c.retryAfter(err, stop); err != nil {
				return err
			}
			continue
		}
		if !exists {
			continue
		}
		if me == 2 && lowest != line[0] {
			// Third in line: when the leader hands over we are next, and
			// must be ready (standBy) before the new leader's command ends.
			// Only the third watches the lowest too: no herd.
			lowest, lowestGone = line[0], nil
			ok, _, w, err := c.s.conn.ExistsW(c.basePath + "/" + lowest)
			if err != nil || !ok {
				lowest = ""
				continue // gone already (or unknown): list the line again
			}
			lowestGone = w
		}
		if me != 2 {
			lowest, lowestGone = "", nil
		}
		if at := fmt.Sprintf("%s %d", pred, me); following != at {
			c.log.Info("following", logEvFollowing.attr(), "proposal", c.node, "place_in_line", me+1, "predecessor", pred)
			following = at
			if c.onFollowing != nil {
				c.onFollowing(me+1, c.basePath+"/"+line[0])
			}
		}
	wait:
		select {
		case <-named:
			named = nil
			continue // list the line again and read the record: it may name us
		case ev := <-lowestGone:
			if ev.Type == zk.EventNodeDataChanged {
				// The leader's state changed: watch it again, and wait on.
				if ok, _, w, err := c.s.conn.ExistsW(c.basePath + "/" + lowest); err == nil && ok {
					lowestGone = w
					goto wait
				}
			}
			lowest, lowestGone = "", nil
			continue // list the line again: we may be next
		case ev := <-watch:
			if ev.Type == zk.EventNodeDeleted && me == 1 && c.s.connected.Load() && !c.s.isLost() && firstAmongEqual {
				// The first proposal went and ours was next: sequence
				// numbers only grow, and no priority went ahead of ours,
				// so ours is the first now. No need to list the election
				// again (the baton's take checks that our proposal still
				// exists; a higher priority that joined meanwhile finds
				// the baton handed over to us, baton.go).
				return nil
			}
			if ev.Type == zk.EventNodeDataChanged && me > 1 {
				// The predecessor's state changed, to leading perhaps:
				// those ahead of it are gone, and we may be next in line
				// (standBy). List the line again.
				continue
			}
			if ev.Type == zk.EventNodeDataChanged {
				// The leader's state changed: it still exists, so our
				// place cannot have changed; just watch it again.
				ok, _, w, err := c.s.conn.ExistsW(pred)
				if err == nil && ok {
					watch = w
					goto wait
				}
			}
		case <-c.s.lost:
			return errSessionLost
		case <-stop:
			return errStopped
		}
	}
}

func (c *candidate) retryAfter(err error, stop <-chan struct{}) error {
	switch {
	case retryable(err):
		return c.s.waitOnline(stop)
	case errors.Is(err, zk.ErrSessionExpired):
		c.s.markLost("session expired")
		return errSessionLost
	default:
		// Unexpected (ACLs, a deleted base path): wait a moment, retry.
		c.log.Warn("ZooKeeper request failed; retrying", "error", err)
		select {
		case <-time.After(500 * time.Millisecond):
			return nil
		case <-c.s.lost:
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
	if c.s.isLost() {
		return true // the session, and its nodes, are gone
	}
	ops := append(append(extra, &zk.DeleteRequest{Path: c.node, Version: -1}), c.releaseOps(c.successor())...)
	released, err := c.retireMulti(ops)
	if err != nil || !released || c.baton.maybe() {
		c.log.Warn("cannot delete the proposal or give the baton back; ending the session so they go", "proposal", c.node, "error", err)
		return false
	}
	return true
}

// retire ends the candidacy's helpers (the leader-node worker).
func (c *candidate) retire() {
	c.doneOnce.Do(func() { close(c.done) })
}
