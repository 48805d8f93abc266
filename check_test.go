package main

// ballot check's verdicts (README, "ballot check"), judged on facts built
// in memory; what check reads from ZooKeeper is covered end to end in
// e2e_history_test.go.

import (
	"strings"
	"testing"
	"time"
)

// TestCheckJudge: check's rules, one fact at a time.
func TestCheckJudge(t *testing.T) {
	now := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *int64 { ms := d.Milliseconds(); return &ms }
	code := func(n int) *int { return &n }
	run := func(ended string, exit *int, endedAgo time.Duration) *historyItem {
		return &historyItem{State: "ended", EndedAgoMs: ago(endedAgo),
			historyEntry: historyEntry{Kind: historyCron, CandidateID: "a", Ended: ended, ExitCode: exit}}
	}
	leader := &infoCandidate{ID: "a", Czxid: 7}
	base := func() *infoElection {
		return &infoElection{Exists: true, ReadAt: now, Leader: leader, Candidates: []infoCandidate{*leader}}
	}
	cases := []struct {
		name     string
		inf      func() *infoElection
		items    []*historyItem
		created  time.Duration // the election's age; 0: unknown
		maxAge   time.Duration
		failCrit bool
		status   int
		neverRun bool
		want     []string
	}{
		{name: "recent success", inf: base, items: []*historyItem{run(endExited, code(0), time.Hour)}, maxAge: 26 * time.Hour,
			status: checkOK, want: []string{"BALLOT OK", "leader a (token 7)", "last run exited 0", "last_success_age=3600s;;93600;0"}},
		{name: "never ran, no max-age", inf: base, neverRun: true},
		{name: "never ran, young election", inf: base, created: time.Hour, maxAge: 26 * time.Hour,
			status: checkOK, want: []string{"no successful run yet"}},
		{name: "never ran, old election", inf: base, created: 27 * time.Hour, maxAge: 26 * time.Hour,
			status: checkCritical, want: []string{"no successful run recorded"}},
		{name: "success too old", inf: base, items: []*historyItem{run(endExited, code(0), 27*time.Hour)}, maxAge: 26 * time.Hour,
			status: checkCritical, want: []string{"no run succeeded for 27h"}},
		{name: "last run failed", inf: base, items: []*historyItem{run(endExited, code(1), time.Hour), run(endExited, code(0), 2*time.Hour)},
			status: checkWarning, want: []string{"BALLOT WARNING", "last run exited 1", "last_exit=1"}},
		{name: "last run failed, fail-critical", inf: base, items: []*historyItem{run(endTimedOut, code(143), time.Hour)}, failCrit: true,
			status: checkCritical, want: []string{"last run timed out 143"}},
		{name: "last run lost", inf: base, items: []*historyItem{run(endLeadershipLost, nil, time.Hour)},
			status: checkWarning, want: []string{"last run leadership lost"}},
		{name: "a run going on is not judged", inf: base,
			items:  []*historyItem{{State: "running", historyEntry: historyEntry{Kind: historyCron}}, run(endExited, code(0), time.Hour)},
			status: checkOK},
		{name: "no leader", inf: func() *infoElection { i := base(); i.Leader, i.Candidates = nil, nil; return i },
			items: []*historyItem{run(endExited, code(0), time.Hour)}, status: checkCritical, want: []string{"no leader", "candidates=0"}},
		{name: "no candidate between once-key runs", inf: func() *infoElection { i := base(); i.Leader, i.Candidates = nil, nil; return i },
			items:  []*historyItem{{State: "ended", EndedAgoMs: ago(time.Hour), historyEntry: historyEntry{Kind: historyOnce, Key: "k", Ended: endExited, ExitCode: code(0)}}},
			status: checkOK, want: []string{"no candidate in line (as between --once-key runs)", "last run key k exited 0"}},
		{name: "paused", inf: func() *infoElection { i := base(); i.Paused = &pauseRecord{Reason: "disks", By: "ops@h"}; return i },
			items: []*historyItem{run(endExited, code(0), time.Hour)}, status: checkWarning, want: []string{"paused by ops@h: disks"}},
		{name: "dropped baton", inf: func() *infoElection {
			i := base()
			i.Baton = &infoBaton{State: "dropped", CandidateID: "z", SuccessorWaitMs: 3750}
			return i
		}, items: []*historyItem{run(endExited, code(0), time.Hour)}, status: checkWarning, want: []string{"a waits on a baton dropped by z (up to 3.8s)"}},
		{name: "a run going on after a failed one: the failed one is judged", inf: base,
			items:  []*historyItem{{State: "running", historyEntry: historyEntry{Kind: historyCron}}, run(endExited, code(1), time.Hour), run(endExited, code(0), 2*time.Hour)},
			status: checkWarning, want: []string{"last run exited 1"}},
		{name: "only a run going on, no max-age", inf: base, items: []*historyItem{{State: "running", historyEntry: historyEntry{Kind: historyCron}}}, neverRun: true},
		{name: "skips and unreadable entries are not runs", inf: base,
			items:  []*historyItem{{State: "ended", historyEntry: historyEntry{Kind: historySkip, Ended: endSkipped}}, {State: "unknown", ParseError: "bad"}, run(endExited, code(1), time.Hour)},
			status: checkWarning, want: []string{"last run exited 1"}},
		{name: "only skips and unreadable entries, no max-age", inf: base,
			items: []*historyItem{{State: "ended", historyEntry: historyEntry{Kind: historySkip, Ended: endSkipped}}, {State: "unknown", ParseError: "bad"}}, neverRun: true},
		{name: "last run killed", inf: base, items: []*historyItem{run(endKilled, code(137), time.Hour)},
			status: checkWarning, want: []string{"last run killed 137"}},
		{name: "last run stopped", inf: base, items: []*historyItem{run(endStopped, code(143), time.Hour)},
			status: checkWarning, want: []string{"last run stopped 143"}},
		{name: "last run failed, success within max-age", inf: base, items: []*historyItem{run(endExited, code(1), time.Hour), run(endExited, code(0), 2*time.Hour)}, maxAge: 26 * time.Hour,
			status: checkWarning, want: []string{"last run exited 1", "last_success_age=7200s;;93600;0"}},
		{name: "only failures, young election", inf: base, items: []*historyItem{run(endExited, code(1), time.Hour)}, created: 2 * time.Hour, maxAge: 26 * time.Hour,
			status: checkWarning, want: []string{"last run exited 1", "no successful run yet; the election is 2h0m old"}},
		{name: "never ran, the election's age unknown", inf: base, maxAge: 26 * time.Hour,
			status: checkCritical, want: []string{"no successful run recorded (--max-age 26h0m0s)"}},
		{name: "no leader after a cron run that followed once-key runs", inf: func() *infoElection { i := base(); i.Leader, i.Candidates = nil, nil; return i },
			items:  []*historyItem{run(endExited, code(0), time.Hour), {State: "ended", EndedAgoMs: ago(2 * time.Hour), historyEntry: historyEntry{Kind: historyOnce, Key: "k", Ended: endExited, ExitCode: code(0)}}},
			status: checkCritical, want: []string{"no leader"}},
		{name: "a held baton is no problem", inf: func() *infoElection { i := base(); i.Baton = &infoBaton{State: "held", CandidateID: "a"}; return i },
			items: []*historyItem{run(endExited, code(0), time.Hour)}, status: checkOK},
		{name: "the worst rule wins", inf: func() *infoElection {
			i := base()
			i.Leader, i.Candidates, i.Paused = nil, nil, &pauseRecord{Reason: "disks", By: "ops@h"}
			return i
		}, items: []*historyItem{run(endExited, code(1), time.Hour)}, status: checkCritical, want: []string{"BALLOT CRITICAL", "no leader", "paused by ops@h", "last run exited 1"}},
		{name: "missing election", inf: func() *infoElection { return &infoElection{ReadAt: now} }, maxAge: time.Hour,
			status: exitUnknown, want: []string{"BALLOT UNKNOWN", "does not exist"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &checkFacts{inf: tc.inf(), items: tc.items}
			if tc.created > 0 {
				f.created = now.Add(-tc.created)
			}
			res, neverRun := judge(&Settings{MaxAge: tc.maxAge, FailCritical: tc.failCrit}, f)
			if neverRun != tc.neverRun {
				t.Fatalf("neverRun %v, want %v", neverRun, tc.neverRun)
			}
			if neverRun {
				return
			}
			line := res.line("/e")
			if res.status != tc.status || strings.Contains(line, "\n") {
				t.Errorf("status %d, want %d: %s", res.status, tc.status, line)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("%q lacks %q", line, w)
				}
			}
		})
	}
}

// TestCheckLinesAsInTheREADME: the README's example lines, from the same
// facts: problems first, then what is well, then the perfdata.
func TestCheckLinesAsInTheREADME(t *testing.T) {
	run := func(ended time.Time, exit int, agoS int64, tookMs int64, by string) *historyItem {
		agoMs := agoS * 1000
		return &historyItem{State: "ended", EndedAgoMs: &agoMs, historyEntry: historyEntry{Kind: historyCron, ScheduledTime: &ended,
			CandidateID: by, Host: "vm", Ended: endExited, ExitCode: &exit, DurationMs: &tookMs}}
	}
	at := func(s string) time.Time { tm, _ := time.Parse(time.RFC3339, s); return tm }
	bob := &infoCandidate{Position: 1, ID: "bob", Host: "vm", Czxid: 235}
	alice := &infoCandidate{Position: 1, ID: "alice", Host: "vm", Czxid: 233}
	for _, tc := range []struct {
		name   string
		base   string
		maxAge time.Duration
		inf    infoElection
		items  []*historyItem
		want   string
	}{
		{"ok", "/ballot/nightly", 26 * time.Hour,
			infoElection{Exists: true, Leader: bob, Candidates: []infoCandidate{*bob}},
			[]*historyItem{run(at("2026-11-24T04:46:10Z"), 0, 2, 1008, "bob")},
			"BALLOT OK - /ballot/nightly: leader bob@vm (token 235); last run cron 2026-11-24T04:46:10Z exited 0 on bob@vm 2s ago, took 1s | candidates=1;;;0 last_duration=1.008s;;;0 last_exit=0 last_success_age=2s;;93600;0"},
		{"after a failed run", "/ballot/nightly", 26 * time.Hour,
			infoElection{Exists: true, Leader: bob, Candidates: []infoCandidate{*bob}},
			[]*historyItem{run(at("2026-11-24T04:46:05Z"), 1, 2, 1007, "bob"), run(at("2026-11-24T04:46:00Z"), 0, 7, 1008, "bob")},
			"BALLOT WARNING - /ballot/nightly: last run cron 2026-11-24T04:46:05Z exited 1 on bob@vm 2s ago, took 1s; leader bob@vm (token 235) | candidates=1;;;0 last_duration=1.007s;;;0 last_exit=1 last_success_age=7s;;93600;0"},
		{"during ballot pause", "/ballot/nightly", time.Hour,
			infoElection{Exists: true, Leader: alice, Candidates: []infoCandidate{*alice, *bob}, Paused: &pauseRecord{By: "root@vm", Reason: "disk swap"}},
			[]*historyItem{run(at("2026-11-24T04:45:35Z"), 0, 11, 1008, "alice")},
			"BALLOT WARNING - /ballot/nightly: paused by root@vm: disk swap; leader alice@vm (token 233); last run cron 2026-11-24T04:45:35Z exited 0 on alice@vm 11s ago, took 1s | candidates=2;;;0 last_duration=1.008s;;;0 last_exit=0 last_success_age=11s;;3600;0"},
		{"missing election", "/ballot/nothing", 26 * time.Hour, infoElection{}, nil,
			"BALLOT UNKNOWN - /ballot/nothing: the election does not exist (no candidate has ever run with this --zookeeper-base-path)"},
	} {
		inf := tc.inf
		inf.ReadAt = time.Date(2026, 11, 24, 4, 46, 12, 0, time.UTC)
		res, _ := judge(&Settings{MaxAge: tc.maxAge}, &checkFacts{inf: &inf, items: tc.items})
		if got := res.line(tc.base); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}
