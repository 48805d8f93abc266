package main

// Preferred leaders (--priority, --preempt-after). A candidate's priority
// is in its proposal's name, so the line orders itself (candidate.go): a
// higher priority goes ahead of everyone but the leader. The leader hands
// over to the first in line when that one has a higher priority than its
// own and has stood in line, ready to lead at once, for --preempt-after:
// through step-down's path (the command's grace period, the demote hook,
// a release that names it), and for run cron only between runs.
//
// Why "stood in line for D" bounds handovers: a candidate that withdraws
// (a failing health check) and stands again has a new proposal, and the
// count starts again; so a flapping candidate causes no handover until it
// has stayed healthy for D, and then one.

import (
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
	"ballot/internal/slog"
)

// maxPriority bounds --priority both ways: plenty of levels, and names
// that stay short.
const maxPriority = 1000

// watchPreemption runs for one leadership, until its context ends: it
// follows the line as the lease's watch sees it, and asks for a handover
// (controls.preempt) once the first other candidate has a higher priority,
// has been in line for after, and says it is ready.
//
// Between looks it keeps no goroutine: it waits through whenFirst, and the
// next look runs on the goroutine the wait's end starts (issue 34: every
// leader of a crontab kept one).
func (r *runner) watchPreemption(c *candidate, l *lease, after time.Duration) {
	w := &preemptWatch{c: c, l: l, after: after, seen: map[string]bootTime{}, timer: time.NewTimer(time.Hour)}
	w.timer.Stop()
	w.look()
}

// preemptWatch is watchPreemption's state from one look to the next.
type preemptWatch struct {
	c        *candidate
	l        *lease
	after    time.Duration
	seen     map[string]bootTime // proposal → when this leader first saw it in line
	counting string              // the candidate whose time is being counted
	ready    <-chan zk.Event     // its data, watched once it is due
	readyFor string
	timer    *time.Timer
}

// look looks at the line once, and asks for the handover or waits for
// the next change.
func (w *preemptWatch) look() {
	c, l := w.c, w.l
	first, line := c.line.firstOther(c.basePath, c.node)
	now := bootNow()
	first, due := preemptionDue(first, line, c.priority, w.seen, now, w.after)
	if first != w.counting {
		w.counting = first
		publishPreempt(c.log, c.s.Conn, c.pub, c.priority, first, due)
	}
	if first != "" && now >= due {
		if w.readyFor != first {
			w.readyFor, w.ready = first, nil
		}
		ok, ev := readyToLead(c.s.Conn, first)
		if ok {
			l.ctl.preempt(first)
			w.end()
			return
		}
		if ev != nil {
			w.ready = ev
		} else {
			w.timer.Reset(c.s.Timeout() / 4) // unreadable now: look again
		}
	} else if first != "" {
		w.timer.Reset(time.Duration(due - now))
	}
	whenFirst(func(i int) {
		switch i {
		case 2:
			w.ready = nil
		case 3: // let go, lost, or undone: nothing to hand over
			w.end()
			return
		}
		w.look()
	}, c.line.changed, w.timer.C, w.ready, l.ended.Done())
}

func (w *preemptWatch) end() {
	w.timer.Stop()
	w.c.pub.update(func(d *proposalData) { d.Preempt = nil })
}

// preemptionDue is watchPreemption's decision at one look at the line
// (its names in line, first the first other than ours): whom this leader,
// of priority ours, counts --preempt-after for, and when that one is due,
// counted from when this leader first saw it in line. seen is updated:
// proposals gone from the line are forgotten (one that stands again starts
// again), a new first is seen now. counting is "" when the first other
// has no higher priority (or there is none); due is then meaningless.
func preemptionDue(first string, line map[string]bool, ours int, seen map[string]bootTime, now bootTime, after time.Duration) (counting string, due bootTime) {
	for n := range seen {
		if !line[n] {
			delete(seen, n)
		}
	}
	if first != "" && proposalPriority(first) > ours {
		if seen[first] == 0 {
			seen[first] = now
		}
	} else {
		first = ""
	}
	return first, seen[first] + bootTime(after)
}

// readyToLead reads a candidate's proposal: ready means it waits in line
// (not resigning), healthy, and proving it is in line (standby.go), so it
// can start at once. ev fires when its data changes (nil if unread).
func readyToLead(conn *zk.Conn, proposal string) (bool, <-chan zk.Event) {
	raw, _, ev, err := conn.GetW(proposal)
	if err != nil {
		return false, nil
	}
	var d proposalData
	if jsonlite.Unmarshal(raw, &d) != nil {
		return false, ev
	}
	waiting := d.State == stateFollowing || d.State == stateWaitingForBaton
	healthy := d.Health == nil || d.Health.Healthy
	return waiting && healthy && d.Standby, ev
}

// publishPreempt says, in the leader's proposal (pub), which preferred
// candidate it will hand over to and when ("" : none); ours is the
// leader's priority.
func publishPreempt(log *slog.Logger, conn *zk.Conn, pub *publisher, ours int, proposal string, due bootTime) {
	if proposal == "" {
		pub.update(func(d *proposalData) { d.Preempt = nil })
		return
	}
	st := &preemptStatus{Proposal: proposal, Priority: proposalPriority(proposal),
		At: time.Now().Add(time.Duration(due - bootNow())).UTC().Truncate(time.Millisecond)}
	if raw, _, err := conn.Get(proposal); err == nil {
		var d proposalData
		if jsonlite.Unmarshal(raw, &d) == nil {
			st.CandidateID = d.CandidateID
		}
	}
	log.Info("a candidate of higher priority is in line: handing over to it once it has stood there ready for --preempt-after",
		logEvPreemptPlanned.attr(), "successor", proposal, "successor_priority", st.Priority, "priority", ours, "at", st.At.Format(time.RFC3339Nano))
	pub.update(func(d *proposalData) { d.Preempt = st })
}
