package main

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

// TestHistoryEndings: how a run ended, from the command's exit (what
// stopped it: TestOutcomeMeanings).
func TestHistoryEndings(t *testing.T) {
	for _, tc := range []struct {
		ex   childExit
		want string
	}{
		{childExit{Started: true, Code: 0}, endExited},
		{childExit{Started: true, Code: 3}, endExited},
		{childExit{Started: true, Code: 137}, endKilled},
		{childExit{Started: false, Code: 127}, endExited},
	} {
		if got := endingOf(tc.ex); got != tc.want {
			t.Errorf("endingOf(%+v) = %s, want %s", tc.ex, got, tc.want)
		}
	}
}

// TestOutcomeZeroIsNothing: an outcome, or a leadership's end, that nobody
// set says that nothing happened, not that the command ended.
func TestOutcomeZeroIsNothing(t *testing.T) {
	var how outcome
	var end leaderEnd
	if how != noOutcome || end.how != noOutcome || how == childEnded {
		t.Errorf("the zero outcome is %d, the zero leaderEnd's %d; want noOutcome (%d), not childEnded (%d)", how, end.how, noOutcome, childEnded)
	}
}
