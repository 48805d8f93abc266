package main

// ballot watch's events: what changed between two snapshots of the
// election, and the one line (or JSON object) each is printed as.

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"ballot/internal/jsonlite"
)

// watchCandidate names a candidate in an event.
type watchCandidate struct {
	ID           string `json:"id"` // "" when its data cannot be parsed
	Host         string `json:"host,omitempty"`
	PID          int    `json:"pid,omitempty"`
	ProposalNode string `json:"proposalNode"`
	Sequence     int64  `json:"sequence"`
	Priority     int    `json:"priority,omitempty"`     // --priority
	Position     int    `json:"position,omitempty"`     // place in line when the event was seen; 1 = leader
	FencingToken int64  `json:"fencingToken,omitempty"` // leaders: the czxid of the node
}

// watchEvent is one line of `ballot watch --output json`.
type watchEvent struct {
	Time          time.Time       `json:"time"` // this host's clock, when the change was seen
	Event         string          `json:"event"`
	Message       string          `json:"message"` // the human line, without the time
	Candidate     *watchCandidate `json:"candidate,omitempty"`
	Previous      *watchCandidate `json:"previous,omitempty"` // leaderChanged: the former leader
	Change        string          `json:"change,omitempty"`   // leaderStateChanged: state, commandStarted, commandExited, resigning
	State         string          `json:"state,omitempty"`
	PreviousState string          `json:"previousState,omitempty"`
	PID           int             `json:"pid,omitempty"`      // commandStarted
	ExitCode      *int            `json:"exitCode,omitempty"` // commandExited
	DurationMs    int64           `json:"durationMs,omitempty"`
	Cron          *infoCron       `json:"cron,omitempty"`     // cronRunRecorded
	Baton         *infoBaton      `json:"baton,omitempty"`    // batonTaken, batonReleased, batonDropped
	Election      *infoElection   `json:"election,omitempty"` // snapshot
	Server        string          `json:"server,omitempty"`
	SessionID     string          `json:"sessionId,omitempty"`
}

// Event names.
const (
	evSnapshot       = "snapshot"
	evNoCandidates   = "noCandidates"
	evJoined         = "candidateJoined"
	evLeft           = "candidateLeft"
	evLeaderChanged  = "leaderChanged"
	evLeaderState    = "leaderStateChanged"
	evCronRecorded   = "cronRunRecorded"
	evBatonTaken     = "batonTaken"
	evBatonReleased  = "batonReleased"
	evBatonDropped   = "batonDropped"
	evPaused         = "electionPaused"
	evResumed        = "electionResumed"
	evDrained        = "candidateDrained"
	evUndrained      = "candidateUndrained"
	evConnectionLost = "connectionLost"
	evReconnected    = "reconnected"
	evSessionExpired = "sessionExpired"
)

// ---------------------------------------------------------------------------
// Diffs.

func label(n *snapNode) string {
	if n == nil {
		return "none"
	}
	id := "(unparsable node)"
	if n.data != nil {
		id = n.data.CandidateID
	}
	seq := n.name
	if i := strings.LastIndexByte(seq, '-'); i >= 0 {
		seq = seq[i+1:]
	}
	return fmt.Sprintf("%s (…-%s)", id, seq)
}

func eventCandidate(base string, n *snapNode, position int) *watchCandidate {
	if n == nil {
		return nil
	}
	c := &watchCandidate{ProposalNode: base + "/" + n.name, Sequence: n.seq, Priority: proposalPriority(n.name), Position: position}
	if n.data != nil {
		c.ID, c.Host, c.PID = n.data.CandidateID, n.data.Host, n.data.PID
	}
	if position == 1 {
		c.FencingToken = n.stat.Czxid
	}
	return c
}

// diffElection lists the changes from prev to cur, in the order they are
// printed: leaves, joins, the leader, the leader's state, the cron record.
func diffElection(base string, prev, cur *electionSnapshot) []watchEvent {
	var evs []watchEvent
	prevBy := map[string]*snapNode{}
	for _, n := range prev.proposals {
		prevBy[n.name] = n
	}
	curBy := map[string]*snapNode{}
	for _, n := range cur.proposals {
		curBy[n.name] = n
	}
	for _, n := range prev.proposals {
		if curBy[n.name] == nil {
			evs = append(evs, watchEvent{Event: evLeft, Candidate: eventCandidate(base, n, 0),
				Message: "candidate left: " + label(n)})
		}
	}
	for i, n := range cur.proposals {
		if prevBy[n.name] == nil {
			msg := fmt.Sprintf("candidate joined: %s, %s in line", label(n), ordinal(i+1))
			if n.data != nil && n.data.Host != "" {
				msg = fmt.Sprintf("candidate joined: %s on %s, %s in line", label(n), n.data.Host, ordinal(i+1))
			}
			evs = append(evs, watchEvent{Event: evJoined, Candidate: eventCandidate(base, n, i+1), Message: msg})
		}
	}
	pl, cl := prev.lowestProposal(), cur.lowestProposal()
	switch {
	case pl == nil && cl == nil:
	case pl == nil || cl == nil || pl.name != cl.name:
		msg := "leader changed: " + label(pl) + " → " + label(cl)
		if cl == nil {
			msg += " (no candidates)"
		}
		evs = append(evs, watchEvent{Event: evLeaderChanged, Candidate: eventCandidate(base, cl, 1),
			Previous: eventCandidate(base, pl, 0), Message: msg})
		if cl != nil {
			evs = append(evs, leaderStateEvents(base, prevBy[cl.name], cl)...)
		}
	default:
		evs = append(evs, leaderStateEvents(base, pl, cl)...)
	}
	if prev.exists && !cur.exists {
		evs = append(evs, watchEvent{Event: evNoCandidates,
			Message: "no candidates yet: " + base + " was deleted; watching for its creation"})
	}
	if c := cur.cron; c != nil && (prev.cron == nil || prev.cron.stat.Mzxid != c.stat.Mzxid) {
		ci := buildCron(base, c, time.Now())
		msg := "cron run recorded: the record cannot be parsed: " + ci.ParseError
		if ci.ParseError == "" {
			msg = fmt.Sprintf("cron run recorded: scheduled %s, by %s, fencing token %d",
				fmtTime(ci.ScheduledTime), ci.CandidateID, ci.FencingToken)
		}
		ci.RecordedAgoMs = 0
		evs = append(evs, watchEvent{Event: evCronRecorded, Cron: ci, Message: msg})
	}
	evs = append(evs, batonEvents(prev, cur)...)
	switch {
	case cur.pause != nil && prev.pause == nil:
		var p pauseRecord
		_ = jsonlite.Unmarshal(cur.pause.raw, &p)
		evs = append(evs, watchEvent{Event: evPaused, Message: fmt.Sprintf("election paused by %s: %s", orNone(p.By), orNone(p.Reason))})
	case cur.pause == nil && prev.pause != nil && cur.exists:
		evs = append(evs, watchEvent{Event: evResumed, Message: "election resumed"})
	}
	return append(evs, drainEvents(prev, cur)...)
}

// drainEvents: candidates drained or undrained (drain.go).
func drainEvents(prev, cur *electionSnapshot) []watchEvent {
	was := map[string]bool{}
	for _, d := range drainedOf(prev) {
		was[d.CandidateID] = true
	}
	var evs []watchEvent
	for _, d := range drainedOf(cur) {
		if !was[d.CandidateID] {
			evs = append(evs, watchEvent{Event: evDrained, Message: fmt.Sprintf("%s drained by %s: %s", d.label(), orNone(d.By), orNone(d.Reason))})
		}
		delete(was, d.CandidateID)
	}
	if cur.exists {
		for id := range was {
			evs = append(evs, watchEvent{Event: evUndrained, Message: id + " undrained"})
		}
	}
	return evs
}

// batonEvents: the baton taken, given back, or dropped (baton.go).
func batonEvents(prev, cur *electionSnapshot) []watchEvent {
	pb, cb := prev.baton, cur.baton
	switch {
	case cb != nil && (pb == nil || pb.stat.Czxid != cb.stat.Czxid):
		b := buildBaton(&electionSnapshot{baton: cb, proposals: cur.proposals}, time.Now())
		return []watchEvent{{Event: evBatonTaken, Baton: b,
			Message: fmt.Sprintf("baton taken by %s (proposal %s, fencing token %d)", orNone(b.CandidateID), b.Proposal, b.FencingToken)}}
	case pb != nil && cb == nil:
		b := buildBaton(&electionSnapshot{handover: cur.handover}, time.Now())
		if b == nil || b.State == "held" {
			return nil
		}
		switch b.State {
		case handoverReleased:
			return []watchEvent{{Event: evBatonReleased, Baton: b,
				Message: fmt.Sprintf("baton given back by %s: its command is gone", orNone(b.CandidateID))}}
		case handoverHanded:
			return []watchEvent{{Event: evBatonReleased, Baton: b,
				Message: fmt.Sprintf("baton given back by %s and handed over to %s: its command is gone", orNone(b.CandidateID), b.HandedTo)}}
		}
		return []watchEvent{{Event: evBatonDropped, Baton: b,
			Message: fmt.Sprintf("baton dropped by %s without being given back (its session ended, or someone deleted it): the next leader waits %s",
				orNone(b.CandidateID), fmtMs(b.SuccessorWaitMs))}}
	}
	return nil
}

// leaderStateEvents compares what the leader says now (cur) with what it
// said before (old, nil when it was not seen before).
func leaderStateEvents(base string, old, cur *snapNode) []watchEvent {
	if cur.data == nil {
		return nil
	}
	var o proposalData
	seen := old != nil && old.data != nil
	if seen {
		o = *old.data
	}
	n := cur.data
	who := "leader " + label(cur)
	c := eventCandidate(base, cur, 1)
	var evs []watchEvent
	if n.State != o.State && n.State != "" && n.State != "resigning" && !(o.State == "" && n.State == "following") {
		evs = append(evs, watchEvent{Event: evLeaderState, Change: "state", Candidate: c, State: n.State, PreviousState: o.State,
			Message: fmt.Sprintf("%s state: %s → %s", who, orNone(o.State), n.State)})
	}
	if e := n.LastExit; e != nil && seen && (o.LastExit == nil || !o.LastExit.At.Equal(e.At) || o.LastExit.Code != e.Code) {
		code := e.Code
		evs = append(evs, watchEvent{Event: evLeaderState, Change: "commandExited", Candidate: c, ExitCode: &code, DurationMs: e.DurationMs,
			Message: fmt.Sprintf("%s: command exited with status %d after %s", who, e.Code, fmtMs(e.DurationMs))})
	}
	if ch := n.Child; ch != nil && (o.Child == nil || o.Child.PID != ch.PID) {
		evs = append(evs, watchEvent{Event: evLeaderState, Change: "commandStarted", Candidate: c, PID: ch.PID,
			Message: fmt.Sprintf("%s: command started, pid %d", who, ch.PID)})
	}
	if p := n.Preempt; p != nil && (o.Preempt == nil || o.Preempt.Proposal != p.Proposal) {
		evs = append(evs, watchEvent{Event: evLeaderState, Change: "handoverPlanned", Candidate: c,
			Message: fmt.Sprintf("%s hands over to %s (priority %d) at %s, if it is ready then (--preempt-after)",
				who, orNone(p.CandidateID), p.Priority, p.At.Local().Format(time.RFC3339))})
	}
	if n.State == "resigning" && o.State != "resigning" {
		evs = append(evs, watchEvent{Event: evLeaderState, Change: "resigning", Candidate: c, State: n.State, PreviousState: o.State,
			Message: who + " is resigning"})
	}
	return evs
}

// ---------------------------------------------------------------------------
// Output.

// linePrinter writes queued text from one goroutine, so that the ZooKeeper
// event callback never waits for stdout.
type linePrinter struct {
	w      io.Writer
	mu     sync.Mutex
	queue  []string
	closed bool
	kick   chan struct{}
	done   chan struct{}
}

func newLinePrinter(w io.Writer) *linePrinter {
	p := &linePrinter{w: w, kick: make(chan struct{}, 1), done: make(chan struct{})}
	go p.loop()
	return p
}

func (p *linePrinter) Print(s string) {
	p.mu.Lock()
	p.queue = append(p.queue, s)
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *linePrinter) loop() {
	defer close(p.done)
	for {
		p.mu.Lock()
		q, closed := p.queue, p.closed
		p.queue = nil
		p.mu.Unlock()
		for _, s := range q {
			_, _ = io.WriteString(p.w, s)
		}
		if len(q) == 0 {
			if closed {
				return
			}
			<-p.kick
		}
	}
}

// Close writes out what is queued.
func (p *linePrinter) Close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
	<-p.done
}
