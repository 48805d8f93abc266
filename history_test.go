package main

import "testing"

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
