package main

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestJobsListRows: each column of a job's line, and the line within 80
// columns whatever the names.
func TestJobsListRows(t *testing.T) {
	now := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) *int64 { v := d.Milliseconds(); return &v }
	code := func(c int) *int { return &c }
	leader := func(id string) *infoCandidate { return &infoCandidate{ID: id, Czxid: 7, FencingToken: 7} }
	ended := func(how string, exit *int, ago time.Duration) *historyItem {
		return &historyItem{historyEntry: historyEntry{Kind: historyCron, Ended: how, ExitCode: exit}, State: "ended", EndedAgoMs: ms(ago)}
	}
	next := func(at time.Time) *infoNextRun {
		return &infoNextRun{Time: at.Format(time.RFC3339), InMs: at.Sub(now).Milliseconds()}
	}
	long := strings.Repeat("x", 60)
	tests := []struct {
		name               string
		j                  jobEntry
		leader, last, next string
	}{
		{"nobody leads, never ran", jobEntry{Job: "backup"}, "-", "-", "-"},
		{"ok, next today", jobEntry{Job: "backup", Leader: leader("db1"), Last: ended(endExited, code(0), 3*time.Hour+50*time.Minute),
			NextRun: next(now.Add(4 * time.Hour))}, "db1", "ok 3h ago", "in 4h (07:00)"},
		{"failed, next in seconds", jobEntry{Job: "rotate", Leader: leader("db2"), Last: ended(endExited, code(1), 5*time.Minute+20*time.Second),
			NextRun: next(now.Add(4 * time.Second))}, "db2", "exit 1 5m ago", "in 4s (03:00:04)"},
		{"part of a second away rounds up", jobEntry{Job: "j", Leader: leader("a"),
			NextRun: &infoNextRun{Time: now.Add(time.Second).Format(time.RFC3339), InMs: 300}}, "a", "-", "in 1s (03:00:01)"},
		{"skipped, next another day", jobEntry{Job: "report", Leader: leader("a"), Last: ended(endSkipped, nil, 26*time.Hour),
			NextRun: next(now.Add(48 * time.Hour))}, "a", "skipped 1d ago", "in 2d (Sat 03:00)"},
		{"next weeks away", jobEntry{Job: "report", Leader: leader("a"), NextRun: next(now.Add(20 * 24 * time.Hour))}, "a", "-", "in 20d (Dec 16)"},
		{"next next year", jobEntry{Job: "report", Leader: leader("a"), NextRun: next(now.AddDate(0, 2, 0))}, "a", "-", "in 61d (2027-01-26)"},
		{"overdue", jobEntry{Job: "j", Leader: leader("a"), NextRun: &infoNextRun{Time: now.Add(-90 * time.Second).Format(time.RFC3339), InMs: -90000}},
			"a", "-", "overdue 1m (02:58:30)"},
		{"spread: the start", jobEntry{Job: "j", Leader: leader("a"), NextRun: &infoNextRun{Time: now.Add(time.Hour).Format(time.RFC3339),
			StartsAt: now.Add(time.Hour + 7*time.Minute).Format(time.RFC3339), InMs: (67 * time.Minute).Milliseconds()}}, "a", "-", "in 1h (04:07)"},
		{"running", jobEntry{Job: "j", Leader: leader("a"), Last: &historyItem{State: "running", mtime: now.Add(-2 * time.Minute).UnixMilli()}},
			"a", "running 2m", "-"},
		{"unfinished", jobEntry{Job: "j", Last: &historyItem{State: "unfinished", mtime: now.Add(-2 * time.Hour).UnixMilli()}},
			"-", "unfinished 2h ago", "-"},
		{"lost, timed out", jobEntry{Job: "j", Leader: leader("a"), Last: ended(endTimedOut, code(143), 10*time.Second)}, "a", "timed out 10s ago", "-"},
		{"leadership lost", jobEntry{Job: "j", Leader: leader("a"), Last: ended(endLeadershipLost, nil, 0)}, "a", "lost 0s ago", "-"},
		{"unreadable entry", jobEntry{Job: "j", Leader: leader("a"), Last: &historyItem{ParseError: "bad"}}, "a", "unreadable", "-"},
		{"paused: no next", jobEntry{Job: "j", Leader: leader("a"), Marks: []string{markPaused}, Paused: &pauseRecord{},
			NextRun: next(now.Add(time.Hour))}, "a [paused]", "-", "paused"},
		{"paused, nobody leads", jobEntry{Job: "j", Marks: []string{markPaused}, Paused: &pauseRecord{}}, "- [paused]", "-", "-"},
		{"long id cut for its mark", jobEntry{Job: "j", Leader: leader("db1.example.com"), Marks: []string{markStepping}},
			"db1.e… [step-down]", "-", "-"},
		{"long id cut", jobEntry{Job: long, Leader: leader(long), Last: ended(endExited, code(127), 59*time.Minute),
			NextRun: next(now.Add(23*time.Hour + 59*time.Minute + 59*time.Second))}, "xxxxxxxxxxxxxxxxx…", "exit 127 59m ago", "in 23h (Fri 02:59)"},
		{"unreadable leader", jobEntry{Job: "j", Leader: &infoCandidate{}}, "(unreadable)", "-", "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := [3]string{jobLeaderText(tt.j), jobLastText(tt.j.Last, now), jobNextText(tt.j, now, time.UTC)}
			if want := [3]string{tt.leader, tt.last, tt.next}; got != want {
				t.Errorf("leader, last, next = %q, want %q", got, want)
			}
			line := jobLine(tt.j, now, time.UTC)
			if n := utf8.RuneCountInString(line); n > summaryWidth {
				t.Errorf("%d columns: %q", n, line)
			}
			if !strings.HasPrefix(line, clip(tt.j.Job, jobsColJob)) {
				t.Errorf("the line does not start with the job: %q", line)
			}
			if want := fitNext(tt.next); !strings.HasSuffix(line, want) || strings.HasSuffix(line, "…") {
				t.Errorf("the line does not end with the next run %q, whole: %q", want, line)
			}
		})
	}
}

// TestJobsListFooter: jobs, hosts standing (a host leading nothing too),
// each host's leaderships, wrapped within 80 columns.
func TestJobsListFooter(t *testing.T) {
	cand := func(ids ...string) []infoCandidate {
		var out []infoCandidate
		for _, id := range ids {
			out = append(out, infoCandidate{ID: id})
		}
		return out
	}
	job := func(lead string, in ...string) jobEntry {
		j := jobEntry{Candidates: cand(in...)}
		if lead != "" {
			j.Leader = &j.Candidates[0]
		}
		return j
	}
	paused := job("", "c")
	paused.Paused = &pauseRecord{}
	tests := []struct {
		name string
		jobs []jobEntry
		want []string
	}{
		{"one", []jobEntry{job("a", "a")}, []string{"1 job, 1 host standing; leaderships: a 1"}},
		{"spread", []jobEntry{job("a", "a", "b"), job("b", "b", "a"), job("a", "a", "b", "c"), paused},
			[]string{"4 jobs, 3 hosts standing, 1 led by nobody, 1 paused; leaderships: a 2, b 1, c 0"}},
		{"nobody stands", []jobEntry{job(""), job("")}, []string{"2 jobs, 0 hosts standing, 2 led by nobody"}},
		{"wrapped", []jobEntry{job("host-number-one.example.com", "host-number-one.example.com", "host-number-two.example.com",
			"host-number-three.example.com")}, []string{
			"1 job, 3 hosts standing; leaderships: host-number-one.example.com 1,",
			"  host-number-three.example.com 0, host-number-two.example.com 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := jobsFooter(tt.jobs)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("footer:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, l := range got {
				if utf8.RuneCountInString(l) > summaryWidth {
					t.Errorf("%d columns: %q", utf8.RuneCountInString(l), l)
				}
			}
		})
	}
}
