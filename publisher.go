package main

// What a candidate says about itself in its proposal node, and the
// publisher that keeps it current.

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
)

func (d *proposalData) encode() []byte { return d.encodeAt(time.Now()) }

// encodeAt is the node's data as written at now: the ages and the time to
// the next run are relative to the write.
func (d *proposalData) encodeAt(now time.Time) []byte {
	d.WrittenAt = now.UTC()
	if d.Child != nil {
		d.Child.RunningForMs = now.Sub(d.Child.Since).Milliseconds()
	}
	if d.LastExit != nil {
		d.LastExit.AgoMs = now.Sub(d.LastExit.At).Milliseconds()
	}
	if d.Health != nil && !d.Health.LastCheck.IsZero() {
		d.Health.LastCheckAgoMs = now.Sub(d.Health.LastCheck).Milliseconds()
	}
	if d.NextRun != nil {
		at := d.NextRun.Time
		if d.NextRun.StartsAt != "" {
			at = d.NextRun.StartsAt
		}
		if t, err := time.Parse(time.RFC3339, at); err == nil {
			d.NextRun.InMs = t.Sub(now).Milliseconds()
		}
	}
	b, _ := jsonlite.Marshal(d)
	return b
}

// publisher keeps the proposal node's data current. It writes when the
// candidate's state changes, never on a timer: whether a candidate lives is
// its session's business (the ephemeral node exists while the session
// does), and an idle fleet must not be its ensemble's busiest writer.
// Changes made within publishFold of each other (elected, then the command
// started) go out in one write, and writes are at least publishGap apart.
// Its writer goroutine lives only while a change waits to be written: a
// job at rest keeps none (issue 34: a crontab of 200 jobs kept 200).
type publisher struct {
	c *candidate

	mu      sync.Mutex
	status  proposalData
	hurry   bool      // an urgent change waits: write it without folding or spacing
	writing bool      // a writer goroutine is on (it ends once nothing waits)
	done    bool      // the node is gone: nothing more is written
	last    time.Time // the last write, for publishGap (the writer's)

	kick     chan struct{}
	hurried  chan struct{} // pinged by urgent: cut a fold or a gap short
	quit     chan struct{}
	quitOnce sync.Once
}

// leaderNode is the leader node's side of what a candidate publishes:
// its writes, in order, on one worker (leader.go), and whether it is
// written. The worker lives only while an operation is queued: a leader
// between runs keeps none (issue 34).
type leaderNode struct {
	mu        sync.Mutex
	ops       chan func()
	pending   int  // queued, not yet taken by the worker
	working   bool // the worker is on
	published bool // the leader node was written (or is being written)
	// gone: unpublishLeader found the node deleted, or not ours (set by
	// the worker, read by resign); until then resign's withdrawal deletes
	// it with the proposal.
	gone atomic.Bool
	// unanswered: the handover record's data of a fast path whose answer
	// was lost (withdrawWithLeaderNode); it may have landed, which the
	// withdrawal after it tells (retireMulti).
	unanswered [][]byte
}

// queue queues f after the earlier leader-node operations, on their one
// worker, which ends when lost or over closes.
func (n *leaderNode) queue(f func(), lost, over <-chan struct{}) {
	n.mu.Lock()
	if n.ops == nil {
		n.ops = make(chan func(), 16)
	}
	n.pending++ // before the send: the worker waits for it, not ends
	start := !n.working
	n.working = true
	n.mu.Unlock()
	if start {
		go n.work(lost, over)
	}
	select {
	case n.ops <- f:
	case <-lost:
	case <-over:
	}
}

// work runs the queued operations in order, one at a time, and ends once
// none is queued (a queue after that starts it again: never two at once).
func (n *leaderNode) work(lost, over <-chan struct{}) {
	for {
		n.mu.Lock()
		if n.pending == 0 {
			n.working = false
			n.mu.Unlock()
			return
		}
		n.pending--
		n.mu.Unlock()
		select {
		case f := <-n.ops:
			f()
		case <-lost:
			n.stopped()
			return
		case <-over:
			n.stopped()
			return
		}
	}
}

// stopped: the worker ends before the queue is empty (the session lost or
// the candidacy over), as one that found nothing queued would.
func (n *leaderNode) stopped() {
	n.mu.Lock()
	n.working = false
	n.mu.Unlock()
}

// flush waits, at most d, for the queued leader-node operations.
func (n *leaderNode) flush(d time.Duration, lost, over <-chan struct{}) {
	done := make(chan struct{})
	n.queue(func() { close(done) }, lost, over)
	select {
	case <-done:
	case <-time.After(d):
	case <-lost:
	}
}

const (
	publishFold = 20 * time.Millisecond
	// publishGap bounds a flapping state (a command that exits at once
	// under rerun, a fast cron schedule) to one write a second per
	// candidate, and keeps a new leader's "leading" within a second.
	publishGap = time.Second
)

func newPublisher(c *candidate, status proposalData) *publisher {
	// The create wrote the first status.
	return &publisher{c: c, status: status, kick: make(chan struct{}, 1), hurried: make(chan struct{}, 1), quit: make(chan struct{}), last: time.Now()}
}

// update changes what the candidate says about itself.
func (p *publisher) update(f func(*proposalData)) {
	if p == nil {
		return
	}
	p.mu.Lock()
	f(&p.status)
	// Kicked under mu: a writer that finds no kick under mu and ends
	// cannot miss this change (it is started again below).
	select {
	case p.kick <- struct{}{}:
	default:
	}
	start := !p.writing && !p.done && p.c != nil // no candidate: a test's, nothing to write to
	p.writing = p.writing || start
	p.mu.Unlock()
	if start {
		go p.loop()
	}
}

// urgent is update for news the next in line must have at once: that a
// handover may come (standby.go), so that it proves its place before the
// release, while the command's grace period runs. It is written without
// the fold and the gap, which bound a flapping state; these announcements
// come at most a few times per leadership, never on a timer.
func (p *publisher) urgent(f func(*proposalData)) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.hurry = true
	p.mu.Unlock()
	p.update(f)
	ping(p.hurried)
}

// delay is how long to wait before writing a change, the last write
// sinceLast ago: none for an urgent one.
func (p *publisher) delay(sinceLast time.Duration) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hurry {
		return 0
	}
	return max(publishFold, publishGap-sinceLast)
}

// stop ends the writes without waiting: a write held up by a lost
// connection must not hold up a resignation, and a late write cannot
// recreate a deleted node.
func (p *publisher) stop() {
	if p == nil {
		return
	}
	p.quitOnce.Do(func() { close(p.quit) })
}

// loop writes the waiting changes, and ends once none waits (or the node
// is gone, the writes stopped or the session lost).
func (p *publisher) loop() {
	for {
		p.mu.Lock()
		select {
		case <-p.kick:
		default:
			p.writing = false // an update after this starts a writer again
			p.mu.Unlock()
			return
		}
		last := p.last
		p.mu.Unlock()
		select {
		case <-p.quit:
			return
		case <-p.c.s.Lost():
			return
		default:
		}
		if wait := p.delay(time.Since(last)); wait > 0 {
			select {
			case <-time.After(wait):
			case <-p.hurried:
			case <-p.quit:
				return
			case <-p.c.s.Lost():
				return
			}
		}
		select {
		case <-p.kick: // folded into this write
		default:
		}
		select {
		case <-p.hurried:
		default:
		}
		p.mu.Lock()
		data := p.status.encode()
		p.hurry = false
		p.mu.Unlock()
		_, err := p.c.s.Conn.Set(p.c.node, data, -1)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			p.mu.Lock()
			p.done = true
			p.mu.Unlock()
			return
		case err != nil:
			// Not written (the connection dropped): try again once it is
			// back, so the node does not keep saying something stale.
			if p.c.s.WaitOnline(p.quit) != nil {
				return
			}
			p.update(func(*proposalData) {})
		}
		p.mu.Lock()
		p.last = time.Now()
		p.mu.Unlock()
	}
}
