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
	token    int64 // the proposal's czxid: grows from one leadership to the next
	pub      *publisher

	leading   bool // elected; the demote hook is owed
	published bool // the leader node was written (or is being written)

	holdsBaton      bool          // took the baton and has not given it back
	maybeBaton      bool          // a take's answer was lost: a baton of ours may exist
	handoverVersion int32         // the handover record's version after our take
	election        *electionSeen // the election path's record, as last read
	history         historyState  // the run history, as this leadership knows it (history.go)

	onFollowing func(place int, leader string) // told each new place in line (systemd status)
	onStandby   func()                         // told once, when next in line (a keeper started ahead)
	noCredit    bool                           // on-connection-loss=ignore: no start on credit (its take could end the command)

	lineSeen    atomic.Pointer[[]string] // the election's children as the leader's lease last saw them
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

// sortedProposals returns the proposal node names among children, lowest
// sequence first.
func sortedProposals(children []string) []string {
	var out []string
	for _, c := range children {
		if _, ok := proposalSeq(c); ok {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := proposalSeq(out[i])
		b, _ := proposalSeq(out[j])
		return a < b
	})
	return out
}

// awaitLeadership is the follower state: it returns once this proposal is
// the lowest (the baton comes next: baton.go). It keeps its place in line
// across reconnects and watch losses.
func (c *candidate) awaitLeadership(stop <-chan struct{}) error {
	following := ""
	// Third in line: a watch on the lowest, kept across rounds (one per
	// lowest proposal, or the watches would pile up on the server and in
	// the client).
	var lowest string
	var lowestGone <-chan zk.Event
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
		me := -1
		for i, n := range line {
			if c.basePath+"/"+n == c.node {
				me = i
			}
		}
		if me < 0 {
			return errProposalGone
		}
		if me == 0 {
			if c.s.isLost() || !c.s.connected.Load() {
				continue
			}
			return nil
		}
		if me == 1 {
			c.standBy() // next in line: ready to be handed the baton
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
			if ev.Type == zk.EventNodeDeleted && me == 1 && c.s.connected.Load() && !c.s.isLost() {
				// The lowest proposal went and ours was next: sequence
				// numbers only grow, so ours is the lowest now. No need to
				// list the election again (the baton's take checks that
				// our proposal still exists).
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
	if err != nil || !released || c.maybeBaton {
		c.log.Warn("cannot delete the proposal or give the baton back; ending the session so they go", "proposal", c.node, "error", err)
		return false
	}
	return true
}

// retire ends the candidacy's helpers (the leader-node worker).
func (c *candidate) retire() {
	c.doneOnce.Do(func() { close(c.done) })
}
