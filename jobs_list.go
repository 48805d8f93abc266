package main

// ballot jobs' list: one line a job in 80 columns, like systemctl
// list-timers, sorted by name (a job keeps its line from one look to the
// next, and is found where the crontab's order would not put it), and a
// footer that shows how the leaderships spread over the hosts.

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// The columns' widths in runes, two spaces between them: 80 in all.
const (
	jobsColJob    = 20
	jobsColLeader = 18
	jobsColLast   = 18
	jobsColNext   = 18 // "in 23h (Fri 02:59)" whole
)

// writeJobs prints the list, or one line saying there is none.
func writeJobs(w io.Writer, jobs []jobEntry, base string, exists, own bool, now time.Time) {
	if len(jobs) == 0 {
		switch {
		case !exists:
			fmt.Fprintf(w, "no jobs: %s does not exist\n", base)
		case own:
			fmt.Fprintf(w, "no jobs under %s: it is an election itself (ballot info shows it)\n", base)
		default:
			fmt.Fprintf(w, "no jobs: no election under %s\n", base)
		}
		return
	}
	fmt.Fprintln(w, jobsRow("JOB", "LEADER", "LAST", "NEXT"))
	for _, j := range jobs {
		fmt.Fprintln(w, jobLine(j, now, time.Local))
	}
	for _, l := range jobsFooter(jobs) {
		fmt.Fprintln(w, l)
	}
}

func jobsRow(job, leader, last, next string) string {
	return strings.TrimRight(fmt.Sprintf("%-*s  %-*s  %-*s  %s", jobsColJob, clip(job, jobsColJob),
		jobsColLeader, clip(leader, jobsColLeader), jobsColLast, clip(last, jobsColLast), clip(next, jobsColNext)), " ")
}

// jobLine is a job's line; loc is the zone its next run is shown in.
func jobLine(j jobEntry, now time.Time, loc *time.Location) string {
	return jobsRow(j.Job, jobLeaderText(j), jobLastText(j.Last, now), fitNext(jobNextText(j, now, loc)))
}

// fitNext keeps the next run's text whole in its column: without its
// clock when both do not fit ("overdue 1m (02:58:30)"), never cut.
func fitNext(next string) string {
	if utf8.RuneCountInString(next) > jobsColNext {
		if in, _, ok := strings.Cut(next, " ("); ok {
			return in
		}
	}
	return next
}

// jobLeaderText is the leader's candidate id, "-" when nobody leads, and
// the marks: the id is cut so that they show.
func jobLeaderText(j jobEntry) string {
	id := "-"
	if l := j.Leader; l != nil {
		id = l.ID
		if id == "" {
			id = "(unreadable)" // its proposal's data does not parse
		}
	}
	if len(j.Marks) == 0 {
		return clip(id, jobsColLeader)
	}
	marks := " [" + strings.ReplaceAll(strings.Join(j.Marks, ","), markStepping, "step-down") + "]"
	return clip(clip(id, max(jobsColLeader-len(marks), 2))+marks, jobsColLeader)
}

// jobLastText is the newest history entry: how it ended and when.
func jobLastText(it *historyItem, now time.Time) string {
	switch {
	case it == nil:
		return "-"
	case it.ParseError != "":
		return "unreadable"
	case it.State == "running":
		return "running " + shortAge(ageMs(now, it.mtime))
	case it.State == "unfinished":
		return "unfinished " + shortAge(ageMs(now, it.mtime)) + " ago" // its leader went mid-run
	}
	var what string
	switch it.Ended {
	case endExited:
		what = "ok"
		if it.ExitCode != nil && *it.ExitCode != 0 {
			what = fmt.Sprintf("exit %d", *it.ExitCode)
		}
	case endLeadershipLost:
		what = "lost"
	default:
		what = strings.ReplaceAll(it.Ended, "-", " ") // killed, timed out, paused, stopped, skipped
	}
	if it.EndedAgoMs != nil {
		what += " " + shortAge(*it.EndedAgoMs) + " ago"
	}
	return what
}

// jobNextText is when the next run starts: in how long, and at what time
// in loc (the day too when it is not today).
func jobNextText(j jobEntry, now time.Time, loc *time.Location) string {
	n := j.NextRun
	switch {
	case n == nil:
		return "-"
	case j.Paused != nil:
		return "paused" // its times are skipped until ballot resume
	}
	at := n.Time
	if n.StartsAt != "" {
		at = n.StartsAt // --spread: InMs counts to the start
	}
	in := "in " + shortAge((n.InMs+999)/1000*1000)
	if n.InMs < 0 {
		in = "overdue " + shortAge(-n.InMs)
	}
	t, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return in
	}
	t, today := t.In(loc), now.In(loc)
	y, m, d := t.Date()
	ty, tm, td := today.Date()
	var clock string
	switch {
	case y == ty && m == tm && d == td && t.Second() != 0:
		clock = t.Format("15:04:05")
	case y == ty && m == tm && d == td:
		clock = t.Format("15:04")
	case t.After(today) && t.Sub(today) < 6*24*time.Hour:
		clock = t.Format("Mon 15:04")
	case y == ty:
		clock = t.Format("Jan 2")
	default:
		clock = t.Format("2006-01-02")
	}
	return in + " (" + clock + ")"
}

// shortAge is a duration in its largest whole unit: 45s, 5m, 3h, 2d.
func shortAge(ms int64) string {
	s := max(ms, 0) / 1000
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm", s/60)
	case s < 86400:
		return fmt.Sprintf("%dh", s/3600)
	}
	return fmt.Sprintf("%dd", s/86400)
}

// jobsFooter is the count of jobs, of the hosts standing (a candidate id
// in line in any job: ballot's name for a host) and how many leaderships
// each holds, wrapped at 80 columns.
func jobsFooter(jobs []jobEntry) []string {
	leads := map[string]int{}
	nobody, paused := 0, 0
	for _, j := range jobs {
		for _, c := range j.Candidates {
			if c.ID != "" {
				leads[c.ID] += 0
			}
		}
		switch {
		case j.Leader == nil:
			nobody++
		case j.Leader.ID != "":
			leads[j.Leader.ID]++
		}
		if j.Paused != nil {
			paused++
		}
	}
	head := countOf(len(jobs), "job") + ", " + countOf(len(leads), "host") + " standing"
	if nobody > 0 {
		head += fmt.Sprintf(", %d led by nobody", nobody)
	}
	if paused > 0 {
		head += fmt.Sprintf(", %d paused", paused)
	}
	if len(leads) == 0 {
		return []string{head}
	}
	ids := make([]string, 0, len(leads))
	for id := range leads {
		ids = append(ids, id)
	}
	sortStrings(ids)
	lines, line := []string{}, head+"; leaderships:"
	for i, id := range ids {
		word := fmt.Sprintf(" %s %d", clip(id, 40), leads[id])
		if i < len(ids)-1 {
			word += ","
		}
		if len([]rune(line+word)) > summaryWidth {
			lines, line = append(lines, line), " "
		}
		line += word
	}
	return append(lines, line)
}

// countOf is "1 job", "3 jobs".
func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
