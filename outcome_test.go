package main

import "testing"

// TestOutcomeMeanings: every outcome says, in one row, whether a
// leadership it ends is resigned or lost, the reason operators read, and
// the run history's ending of the run it stopped. The outcomes that never
// end a leadership count as a lost connection, the safe side.
func TestOutcomeMeanings(t *testing.T) {
	lost := func(reason, ending, why string) endMeaning {
		return endMeaning{reason: reason, ending: ending, endingWhy: why}
	}
	stopped := func(reason, why string) endMeaning {
		return endMeaning{resigns: true, reason: reason, ending: endStopped, endingWhy: why}
	}
	want := map[outcome]endMeaning{
		noOutcome:       lost("connection-lost", endLeadershipLost, "connection lost"),
		childEnded:      lost("connection-lost", endLeadershipLost, "connection lost"),
		leaseLost:       lost("connection-lost", endLeadershipLost, "lease lost"),
		sessionLost:     lost("session-expired", endLeadershipLost, "session expired"),
		proposalGone:    lost("proposal-deleted", endLeadershipLost, "proposal deleted"),
		stopRequested:   {resigns: true, exits: true, reason: "stop-requested", ending: endStopped, endingWhy: "ballot was asked to stop"},
		unhealthy:       stopped("unhealthy", "the health check failed"),
		wakeUp:          lost("connection-lost", endLeadershipLost, "connection lost"),
		steppedDown:     stopped("step-down", "step-down"),
		preempted:       stopped("preempted", "handed over to a candidate of higher --priority"),
		paused:          lost("connection-lost", endPaused, "ballot pause"),
		controlsChanged: lost("connection-lost", endLeadershipLost, "connection lost"),
		leaderResigns:   {resigns: true}, // its reason and run's end are the leader's own
	}
	for how := noOutcome; how < outcomes; how++ {
		w, ok := want[how]
		if !ok {
			t.Errorf("outcome %d has no expected meaning here: add its row to this table and to endMeanings", how)
			continue
		}
		if got := how.meaning(); got != w {
			t.Errorf("outcome %d means %+v, want %+v", how, got, w)
		}
		if ending, why := how.ending(); ending != w.ending || why != w.endingWhy {
			t.Errorf("outcome %d: run history ending %q (%q), want %q (%q)", how, ending, why, w.ending, w.endingWhy)
		}
		if how != leaderResigns && w.reason == "" {
			t.Errorf("outcome %d has no reason: a row is missing in endMeanings", how)
		}
	}
	if len(want) != int(outcomes) {
		t.Errorf("%d rows for %d outcomes", len(want), outcomes)
	}
	// Out of range: the safe side, a lost connection.
	if got := outcomes.meaning(); got.resigns || got.reason != "connection-lost" {
		t.Errorf("an unknown outcome means %+v, want a lost connection", got)
	}
}
