package main

// What a candidate says about itself in its proposal node, and the
// publisher that keeps it current.

import (
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// proposalData is what a candidate says about itself in its proposal node,
// for `ballot info` and `ballot watch`. Times are the candidate's own clock;
// the *Ms fields are ages at the moment of the write, so a reader can add
// the age of the write (from ZooKeeper's mtime) and need not trust clocks.
type proposalData struct {
	CandidateID      string    `json:"candidateId"`
	Host             string    `json:"host"`
	PID              int       `json:"pid"`
	ProposalTime     time.Time `json:"proposalTime"`
	SessionTimeout   string    `json:"sessionTimeout"`
	SessionTimeoutMs int64     `json:"sessionTimeoutMs"`
	Version          string    `json:"version,omitempty"`
	Mode             string    `json:"mode,omitempty"` // "run once" or "run cron"

	// Updated when the candidate's state changes (publisher).
	State        string         `json:"state,omitempty"` // following, waiting-for-baton, leading, resigning
	WrittenAt    time.Time      `json:"writtenAt,omitempty"`
	FencingToken int64          `json:"fencingToken,omitempty"` // set while leading
	Child        *childStatus   `json:"child,omitempty"`        // the command running now
	LastExit     *exitStatus    `json:"lastExit,omitempty"`     // how the last run ended
	NextRun      *scheduledNext `json:"nextRun,omitempty"`      // run cron: the next scheduled time
	Health       *healthStatus  `json:"health,omitempty"`       // with --health-check
}

// A candidate's states, as its proposal node says.
const (
	stateFollowing       = "following"
	stateWaitingForBaton = "waiting-for-baton" // lowest proposal, the baton not yet free
	stateLeading         = "leading"
	stateResigning       = "resigning"
)

type healthStatus struct {
	Healthy             bool      `json:"healthy"`
	ConsecutiveFailures int       `json:"consecutiveFailures"`
	LastCheck           time.Time `json:"lastCheck"`
	LastCheckAgoMs      int64     `json:"lastCheckAgoMs"`
}

type childStatus struct {
	PID           int       `json:"pid"`
	Since         time.Time `json:"since"`
	RunningForMs  int64     `json:"runningForMs"`
	ScheduledTime string    `json:"scheduledTime,omitempty"`
}

type exitStatus struct {
	Code       int       `json:"code"`
	At         time.Time `json:"at"`
	AgoMs      int64     `json:"agoMs"`
	DurationMs int64     `json:"durationMs"`
}

type scheduledNext struct {
	Time string `json:"time"` // RFC 3339
	InMs int64  `json:"inMs"` // at the moment of the write
}

func (d *proposalData) encode() []byte {
	now := time.Now()
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
		if t, err := time.Parse(time.RFC3339, d.NextRun.Time); err == nil {
			d.NextRun.InMs = t.Sub(now).Milliseconds()
		}
	}
	b, _ := json.Marshal(d)
	return b
}

// publisher keeps the proposal node's data current. It writes when the
// candidate's state changes, never on a timer: whether a candidate lives is
// its session's business (the ephemeral node exists while the session
// does), and an idle fleet must not be its ensemble's busiest writer.
// Changes made within publishFold of each other (elected, then the command
// started) go out in one write, and writes are at least publishGap apart.
type publisher struct {
	c *candidate

	mu     sync.Mutex
	status proposalData

	kick     chan struct{}
	quit     chan struct{}
	quitOnce sync.Once
}

const (
	publishFold = 20 * time.Millisecond
	// publishGap bounds a flapping state (a command that exits at once
	// under rerun, a fast cron schedule) to one write a second per
	// candidate, and keeps a new leader's "leading" within a second.
	publishGap = time.Second
)

func newPublisher(c *candidate, status proposalData) *publisher {
	p := &publisher{c: c, status: status, kick: make(chan struct{}, 1), quit: make(chan struct{})}
	go p.loop()
	return p
}

// update changes what the candidate says about itself.
func (p *publisher) update(f func(*proposalData)) {
	if p == nil {
		return
	}
	p.mu.Lock()
	f(&p.status)
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
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

func (p *publisher) loop() {
	last := time.Now() // the create wrote the first status
	for {
		select {
		case <-p.quit:
			return
		case <-p.c.s.lost:
			return
		case <-p.kick:
		}
		wait := max(publishFold, publishGap-time.Since(last))
		select {
		case <-time.After(wait):
		case <-p.quit:
			return
		case <-p.c.s.lost:
			return
		}
		select {
		case <-p.kick: // folded into this write
		default:
		}
		p.mu.Lock()
		data := p.status.encode()
		p.mu.Unlock()
		_, err := p.c.s.conn.Set(p.c.node, data, -1)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return
		case err != nil:
			// Not written (the connection dropped): try again once it is
			// back, so the node does not keep saying something stale.
			if p.c.s.waitOnline(p.quit) != nil {
				return
			}
			p.update(func(*proposalData) {})
		}
		last = time.Now()
	}
}
