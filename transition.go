package main

// A candidate's phase, and the effects of entering each: what systemd's
// status says, the metrics, the proposal's published state, the lease the
// metrics and the watchdog read, and the operator's info line, in one
// place.

import (
	"context"
	rtmetrics "runtime/metrics"
	"time"

	"ballot/internal/slog"
)

// phase is where a candidate is in its life.
type phase string

const (
	phaseJoining   phase = "joining"
	phaseFollowing phase = "following"
	phaseLeading   phase = "leading"
	phasePaused    phase = "leading-paused" // ballot pause: the lead kept, nothing run
	phaseResigning phase = "resigning"
	phaseLost      phase = "leadership-lost"
	phaseUnelected phase = "unelected" // on-election-failure=run-anyway
)

// enter moves to phase p. The info line of each transition tells
// operators, named by its event (events.go: joined, following, elected,
// resigning, leadership-lost, ...); this one, at debug, is the state
// itself: event=phase with the phase as a value.
func (r *runner) enter(p phase) {
	if r.phase != p {
		attrs := []any{logEvPhase.attr(), "phase", string(p), "was", string(r.phase)}
		if p == phaseJoining && r.log.Enabled(context.Background(), slog.LevelDebug) {
			attrs = append(attrs, runtimeAttrs()...)
		}
		r.log.Debug("candidate phase", attrs...)
		r.phase = p
	}
}

// runtimeAttrs are the process's goroutines and heap, logged as each
// candidacy begins (at debug): a ballot that hands over for months shows
// in its logs whether anything grows with its leaderships (issue 37).
// heap_live_bytes is what the last garbage collection kept.
func runtimeAttrs() []any {
	s := []rtmetrics.Sample{{Name: "/sched/goroutines:goroutines"}, {Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"}, {Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(s)
	v := func(i int) uint64 {
		if s[i].Value.Kind() != rtmetrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	return []any{"goroutines", v(0), "heap_inuse_bytes", v(1) + v(2), "heap_live_bytes", v(3)}
}

// change is what a transition's effects need besides the phase entered.
type change struct {
	c *candidate
	l *lease // phaseLeading, elected: the lease just held
	// pause: phasePaused, the pause entered; phaseLeading, the pause left.
	pause *pauseRecord
	// resumed: the pause left by ballot resume (not by the leadership's
	// end, which its own transition tells).
	resumed bool
	reason  string // phaseResigning, phaseLost: why the leadership ends
}

// become enters phase p with the effects of that transition. Within each,
// the order is the one operators and tests rely on; the comments say why
// where it matters. Phases without effects of their own are only entered.
func (r *runner) become(p phase, t change) {
	governor.stir() // every transition: the collector as it was, before its work allocates
	c := t.c
	switch {
	case p == phaseLeading && t.pause != nil:
		// Leaving a pause. Resumed, the line comes first, as on pausing;
		// the metric follows the phase, as it did the pause's.
		if t.resumed {
			r.log.Info("election resumed", logEvResumed.attr())
			r.notify.Status(statusLine("leading", r.set.CandidateID, c.token))
		}
		r.enter(p)
		r.metrics.Paused(false)
	case p == phaseLeading:
		// Elected, the lease held. The lease is stored before the metrics
		// change: the metrics file, written on each change, reads the
		// lease left from it (and the watchdog vouches by it).
		r.enter(p)
		r.lease.Store(t.l)
		// Status and metrics before the line: whoever reads "elected
		// leader" finds them saying so already.
		r.notify.Status(statusLine("leading", r.set.CandidateID, c.token))
		if n, k, shown := c.hold().slotShown(); shown {
			r.metrics.Slot(n, k)
		}
		r.metrics.Leader(true)
		c.demoteOwed = true // the demote hook is owed from here on
		r.log.Info("elected leader", append([]any{logEvElected.attr(), "proposal", c.node, "fencing_token", c.token,
			"lease_left", t.l.Left().Round(time.Millisecond)}, c.hold().logged()...)...)
		c.pub.update(func(d *proposalData) {
			d.State = stateLeading
			d.FencingToken = c.token
			d.Standby = false
		})
	case p == phasePaused:
		// The line first: it names who paused and why, before the status
		// says "paused".
		r.log.Info("election paused: running nothing until resumed (ballot resume)", logEvPaused.attr(), "reason", t.pause.Reason, "by", t.pause.By, "since", t.pause.Since.Format(time.RFC3339))
		r.notify.Status(statusLine("leading, paused: "+t.pause.Reason, r.set.CandidateID, c.token))
		r.metrics.Paused(true)
		r.enter(p)
	case p == phaseResigning:
		r.enter(p)
		r.log.Info("resigning", logEvResigning.attr(), "proposal", c.node, "reason", t.reason)
		// The lease goes before the metrics change, which reads it: the
		// metrics file never shows a lease left on a leader that is not.
		r.lease.Store(nil)
		r.notify.Status("resigning (" + t.reason + ")")
		r.metrics.Leader(false)
		// At once: the next in line proves its place from now on, so that
		// the release finds it ready (standby.go).
		c.pub.urgent(func(d *proposalData) { d.State = stateResigning })
	case p == phaseLost:
		// The line comes later (rejoining, or exiting): it says what
		// follows, after the demote hook. The lease goes before the
		// metrics change, which reads it. The publisher stops once the
		// baton is given back (lostLeadership).
		r.enter(p)
		r.lease.Store(nil)
		r.notify.Status("leadership lost (" + t.reason + ")")
		r.metrics.Leader(false)
	default:
		r.enter(p)
	}
}
