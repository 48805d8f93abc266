package main

// The ZooKeeper leader-election recipe, as ballot uses it:
//
//   - a session is one zk.Conn; once it is known to be lost (expired, or the
//     client silently replaced it) it is closed and never used again;
//   - a candidate makes one ephemeral-sequential proposal in a session; the
//     lowest sequence number leads; every other candidate watches only its
//     predecessor, so a handover wakes one candidate, not all of them;
//   - a leader holds a lease: the send time of the last request the server
//     answered, plus the negotiated session timeout. The server cannot expire
//     the session before the lease ends, so nobody else can lead before
//     then; the leader's command must be gone before it ends.

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

var (
	errSessionLost  = errors.New("ZooKeeper session lost")
	errProposalGone = errors.New("proposal node is gone")
	errStopped      = errors.New("stopped")
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

	holdsBaton      bool  // took the baton and has not given it back
	maybeBaton      bool  // a take's answer was lost: a baton of ours may exist
	handoverVersion int32 // the handover record's version after our take
	createdElection bool  // this candidate created the election path

	onFollowing func(place int, leader string) // told each new place in line (systemd status)

	ops     chan func() // leader-node writes, in order (leader.go)
	opsOnce sync.Once

	done     chan struct{} // closed when the candidacy is over
	doneOnce sync.Once
}

const proposalPrefix = "proposal-"

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

// propose creates this candidate's proposal node. The create is protected by
// a random id in the node name: when the answer is lost with the connection,
// the node may exist anyway, and is found again instead of made twice.
func propose(log *slog.Logger, s *session, basePath, candidateID, mode string, stop <-chan struct{}) (*candidate, error) {
	host, _ := os.Hostname()
	status := proposalData{
		CandidateID:      candidateID,
		Host:             host,
		PID:              os.Getpid(),
		ProposalTime:     time.Now().UTC(),
		SessionTimeout:   s.Timeout().String(),
		SessionTimeoutMs: s.Timeout().Milliseconds(),
		Version:          version,
		Mode:             mode,
		State:            stateFollowing,
	}
	data := status.encode()
	var guid [16]byte
	_, _ = rand.Read(guid[:])
	tag := "_c_" + hex.EncodeToString(guid[:]) + "-"
	var node string
	created := false // this candidate created the election path: nobody led on it before
	for node == "" {
		if s.isLost() {
			return nil, errSessionLost
		}
		p, err := s.conn.Create(basePath+"/"+tag+proposalPrefix, data, zk.FlagEphemeral|zk.FlagSequence, s.acl)
		switch {
		case err == nil:
			node = p
		case errors.Is(err, zk.ErrNoNode):
			if dir := path.Dir(basePath); dir != "/" {
				if err := createParents(s.conn, dir, s.acl); err != nil && !retryable(err) {
					return nil, fmt.Errorf("cannot create the election path %s: %w", basePath, err)
				}
			}
			_, err := s.conn.Create(basePath, nil, 0, s.acl)
			switch {
			case err == nil:
				created = true
			case errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrInvalidACL):
				return nil, zkError(err, "create", basePath)
			case !errors.Is(err, zk.ErrNodeExists) && !retryable(err):
				return nil, fmt.Errorf("cannot create the election path %s: %w", basePath, err)
			}
		case retryable(err):
			// The create may have happened: never create again before a
			// listing has shown our tag absent, or this session would hold
			// two proposals, the lower one led by nobody.
			found, err := findTagged(s, basePath, tag, stop)
			if err != nil {
				return nil, err
			}
			node = found
		case errors.Is(err, zk.ErrSessionExpired):
			return nil, errSessionLost
		case errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrInvalidACL):
			return nil, zkError(err, "create a proposal under", basePath)
		default:
			return nil, fmt.Errorf("cannot create a proposal under %s: %w", basePath, err)
		}
	}
	c := &candidate{log: log, s: s, basePath: basePath, id: candidateID, node: node, createdElection: created, done: make(chan struct{})}
	c.seq, _ = proposalSeq(node[strings.LastIndexByte(node, '/')+1:])
	for {
		ok, stat, err := s.conn.Exists(node)
		if err == nil && !ok {
			return nil, errProposalGone
		}
		if err == nil {
			c.token = stat.Czxid
			break
		}
		if !retryable(err) {
			return nil, err
		}
		if err := s.waitOnline(stop); err != nil {
			return nil, err
		}
	}
	log.Info("proposal made", "proposal", node, "fencing_token", c.token)
	c.pub = newPublisher(c, status)
	return c, nil
}

// findTagged lists the election until the listing succeeds and returns our
// tagged proposal, "" if the create did not happen. Should there be two,
// the lower is kept and the other deleted.
func findTagged(s *session, basePath, tag string, stop <-chan struct{}) (string, error) {
	for {
		if err := s.waitOnline(stop); err != nil {
			return "", err
		}
		children, _, err := s.conn.Children(basePath)
		if err != nil {
			if retryable(err) {
				continue
			}
			if errors.Is(err, zk.ErrSessionExpired) {
				return "", errSessionLost
			}
			return "", err
		}
		var mine []string
		for _, c := range sortedProposals(children) {
			if strings.HasPrefix(c, tag) {
				mine = append(mine, c)
			}
		}
		if len(mine) == 0 {
			return "", nil
		}
		for _, extra := range mine[1:] {
			_ = s.conn.Delete(basePath+"/"+extra, -1)
		}
		return basePath + "/" + mine[0], nil
	}
}

// awaitLeadership is the follower state: it returns once this proposal is
// the lowest (the baton comes next: baton.go). It keeps its place in line
// across reconnects and watch losses.
func (c *candidate) awaitLeadership(stop <-chan struct{}) error {
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
		if following != pred {
			c.log.Info("following", "proposal", c.node, "place_in_line", me+1, "predecessor", pred)
			following = pred
			if c.onFollowing != nil {
				c.onFollowing(me+1, c.basePath+"/"+line[0])
			}
		}
	wait:
		select {
		case ev := <-watch:
			if ev.Type == zk.EventNodeDeleted && me == 1 && c.s.connected.Load() && !c.s.isLost() {
				// The lowest proposal went and ours was next: sequence
				// numbers only grow, so ours is the lowest now. No need to
				// list the election again (the baton's take checks that
				// our proposal still exists).
				return nil
			}
			if ev.Type == zk.EventNodeDataChanged {
				// The predecessor's state changed: it still exists, so
				// our place cannot have changed; just watch it again.
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
	ops := append(append(extra, &zk.DeleteRequest{Path: c.node, Version: -1}), c.releaseOps()...)
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
