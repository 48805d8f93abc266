package main

// ballot info's summary: the election at a glance, in 80 columns, before
// the detail (--verbose).

import (
	"fmt"
	"io"
	"path"
	"strings"
	"time"
)

// summaryWidth is the width the summary keeps to.
const summaryWidth = 80

// summaryRow prints one row of the summary: a label, then its text.
type summaryRow func(label, text string)

// writeInfoSummary prints who leads, the line, the baton and the runs.
func writeInfoSummary(w io.Writer, inf *infoElection) {
	row := func(label, text string) {
		fmt.Fprintln(w, clip(fmt.Sprintf("%-9s %s", label, text), summaryWidth))
	}
	row("election", inf.Election)
	if !inf.Exists {
		row("leader", "none: the election does not exist")
		return
	}
	row("leader", summaryLeader(inf))
	if inf.Jobs > 0 {
		row("jobs", countOf(inf.Jobs, "election")+" one level down, none here: ballot jobs lists them")
	}
	writeSummaryLine(row, inf)
	writeSummaryBatons(row, inf)
	writeSummaryRuns(row, inf)
	if n := len(inf.Notes); n > 0 {
		row("notes", fmt.Sprintf("%d (ballot info --verbose shows them)", n))
	}
}

// summaryLeader is the leader row: who, since when, with what token.
func summaryLeader(inf *infoElection) string {
	l := inf.Leader
	if l == nil {
		return "none: no candidate is in line"
	}
	since := fmtMs(l.ProposalAgeMs) + " in line"
	holds := false
	if b := inf.Baton; b != nil && b.State == "held" && b.FencingToken == l.Czxid {
		since, holds = "since "+fmtMs(b.SinceAgoMs)+" ago", true
	}
	state := ""
	// A new leader's own word comes up to a second after its take
	// (publisher.go): holding the baton, it leads.
	if l.State != "" && l.State != stateLeading && !(holds && l.State == stateFollowing) {
		state = ", " + l.State
	}
	return fmt.Sprintf("%s %s, token %d%s", candidateName(l.ID, l.Host), since, l.Czxid, state)
}

// writeSummaryLine prints the candidates in line, one row each.
func writeSummaryLine(row summaryRow, inf *infoElection) {
	prioritized := false
	for _, c := range inf.Candidates {
		prioritized = prioritized || c.Priority != 0
	}
	for i, c := range inf.Candidates {
		label := ""
		if i == 0 {
			label = "line"
		}
		id := c.ID
		if id == "" {
			id = "(unreadable)"
		}
		st := c.State
		if b := inf.Baton; i == 0 && st == stateFollowing && b != nil && b.State == "held" && b.FencingToken == c.Czxid {
			st = stateLeading // its own word lags its take (publisher.go)
		}
		if c.Slot != nil && (st == stateFollowing || st == stateWaitingForBaton) {
			st = stateLeading // holds a slot's baton: as above
		}
		if c.Slot != nil {
			st = fmt.Sprintf("%s, slot %d", st, *c.Slot)
		}
		if c.SitsOutForMs > 0 {
			st += ", sits out " + fmtMs(c.SitsOutForMs) // --rerun-limit
		}
		if prioritized {
			st = fmt.Sprintf("%-9s priority %d", st, c.Priority)
		}
		row(label, fmt.Sprintf("%d  %-16s %-20s %s", c.Position, clip(id, 16), clip(c.Host, 20), orNone(st)))
	}
}

// writeSummaryBatons prints a handover planned by --preempt-after, the
// baton (or every slot's) and a pause.
func writeSummaryBatons(row summaryRow, inf *infoElection) {
	if l := inf.Leader; l != nil && l.Preempt != nil {
		p := l.Preempt
		row("handover", fmt.Sprintf("to %s (priority %d) at %s, if ready then (--preempt-after)",
			orNone(p.CandidateID), p.Priority, p.At.Local().Format("15:04:05")))
	}
	if len(inf.Slots) > 1 {
		for k, b := range inf.Slots {
			row(fmt.Sprintf("slot %d", k), batonText(b))
		}
	} else if b := inf.Baton; b != nil {
		row("baton", batonText(b))
	}
	if p := inf.Paused; p != nil {
		row("paused", fmt.Sprintf("by %s: %s", orNone(p.By), orNone(p.Reason)))
	}
	if tr := inf.Trigger; tr != nil {
		row("trigger", fmt.Sprintf("a run asked for by %s at %s, not taken yet", orNone(tr.By), tr.At.Local().Format("15:04:05")))
	}
	for _, d := range inf.Drained {
		row("drained", fmt.Sprintf("%s, by %s: %s", d.label(), orNone(d.By), orNone(d.Reason)))
	}
}

// writeSummaryRuns prints the last run and, for run cron, the next.
// spreadOf is how long after its scheduled time the next run starts
// (--spread); ok is false without a spread.
func spreadOf(n *infoNextRun) (time.Duration, bool) {
	t, err1 := time.Parse(time.RFC3339, n.Time)
	s, err2 := time.Parse(time.RFC3339, n.StartsAt)
	if err1 != nil || err2 != nil || !s.After(t) {
		return 0, false
	}
	return s.Sub(t), true
}

func writeSummaryRuns(row summaryRow, inf *infoElection) {
	if r := inf.LastRun; r != nil {
		row("last run", summaryRun(r))
	} else {
		row("last run", "none recorded")
	}
	if l := inf.Leader; l != nil && l.NextRun != nil {
		in := "in " + fmtMs(l.NextRun.InMs)
		if l.NextRun.InMs < 0 {
			in = "overdue by " + fmtMs(-l.NextRun.InMs)
		}
		at := l.NextRun.Time
		if off, ok := spreadOf(l.NextRun); ok {
			at += " +" + off.String() + " spread" // its start, as "in" counts
		}
		row("next run", fmt.Sprintf("%s (%s)", at, in))
	}
}

// summaryRun is a run in one line: what, how it ended, who, when.
func summaryRun(it *historyItem) string {
	var what string
	switch it.Kind {
	case historyCron:
		if it.ScheduledTime != nil {
			what = "cron " + it.ScheduledTime.UTC().Format(time.RFC3339) + " "
		}
	case historyOnce:
		what = "key " + it.Key + " "
	}
	if it.State != "ended" {
		s := what + it.State + " on " + candidateName(it.CandidateID, it.Host)
		if it.StartedAt != nil {
			s += ", started " + it.StartedAt.UTC().Format(time.RFC3339)
		}
		return s
	}
	s := what + strings.ReplaceAll(it.Ended, "-", " ")
	if it.ExitCode != nil && it.Ended != endLeadershipLost {
		s += fmt.Sprintf(" %d", *it.ExitCode)
	}
	s += " on " + candidateName(it.CandidateID, it.Host)
	if it.EndedAgoMs != nil {
		s += " " + fmtMs(*it.EndedAgoMs) + " ago"
	}
	if it.DurationMs != nil {
		s += ", took " + fmtMs(*it.DurationMs)
	}
	return s
}

// clip cuts s to n columns (runes), marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// batonText is a baton's (or a slot's) state in a few words.
func batonText(b *infoBaton) string {
	switch b.State {
	case "held":
		text := "held by " + orNone(b.CandidateID)
		if l := b.Lease; l != nil {
			text += fmt.Sprintf(", renewed %s ago", fmtMs(l.LastRenewalAgoMs))
		}
		return text
	case "dropped":
		return fmt.Sprintf("dropped by %s %s ago: the next leader waits %s", orNone(b.CandidateID), fmtMs(b.SinceAgoMs), fmtMs(b.SuccessorWaitMs))
	case handoverReleased:
		return fmt.Sprintf("given back by %s %s ago", orNone(b.CandidateID), fmtMs(b.SinceAgoMs))
	case handoverHanded:
		return fmt.Sprintf("handed over by %s %s ago to %s", orNone(b.CandidateID), fmtMs(b.SinceAgoMs), path.Base(b.HandedTo))
	}
	return b.State
}
