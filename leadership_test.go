package main

import "testing"

// TestPlanEnd: how each way a leadership ends is carried out: resigned in
// order (then stand again, or exit with the last run's code) or lost (the
// session goes; afterLoss decides), and what a step-down, a preemption
// and a once key's run add.
func TestPlanEnd(t *testing.T) {
	ex := childExit{Started: true, Code: 143}
	lost := func(reason string) endPlan { return endPlan{reason: reason} }
	resigned := func(reason string, then verdict) endPlan {
		return endPlan{resigns: true, reason: reason, then: then}
	}
	for _, tc := range []struct {
		name        string
		end         leaderEnd
		onceClaimed bool
		want        endPlan
	}{
		{"a lease run out is lost", endedBy(leaseLost, ex), false, lost("connection-lost")},
		{"an expired session is lost", endedBy(sessionLost, ex), false, lost("session-expired")},
		{"a deleted proposal is lost", endedBy(proposalGone, ex), false, lost("proposal-deleted")},
		{"a once key's run whose lease ran out is lost too", endedBy(leaseLost, ex), true, lost("connection-lost")},
		{"what never ends a leadership counts as a lost connection", endedBy(noOutcome, ex), false, lost("connection-lost")},
		{"a stop signal resigns and exits with the command's code", endedBy(stopRequested, ex), false,
			resigned("stop-requested", exitWith(143))},
		{"a failing health check resigns and stands again", endedBy(unhealthy, ex), false, resigned("unhealthy", rejoin())},
		{"a preemption resigns, counted, and stands again", endedBy(preempted, ex), false,
			endPlan{resigns: true, reason: "preempted", then: rejoin(), preempted: true}},
		{"a step-down resigns, stands again, then clears the request", endedBy(steppedDown, ex), false,
			endPlan{resigns: true, reason: "step-down", then: rejoin(), clearStepDown: true}},
		{"a step-down of a once key's run finishes it and exits with its code", endedBy(steppedDown, ex), true,
			endPlan{resigns: true, reason: "step-down", then: exitWith(143), finishOnce: true}},
		{"on-child-* reelect: the leader's own reason, back off, stand again", reelection("command-exited", ex), false,
			endPlan{resigns: true, reason: "command-exited", then: rejoin(), backoff: true}},
		{"on-child-* exit: the leader's own reason and code", resignation("command-exited", exitWith(3)), false,
			resigned("command-exited", exitWith(3))},
		{"a once key run: exit with its code", resignation("command-exited", exitWith(0)), true,
			resigned("command-exited", exitWith(0))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := planEnd(tc.end, tc.onceClaimed); got != tc.want {
				t.Errorf("planEnd = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestAfterLoss: after a lost leadership, a stop signal exits (with the
// last run's code), then on-connection-loss=exit exits 125, then a once
// key's run cut short exits 125 (its key stays started, unfinished);
// otherwise ballot stands again (README, on-connection-loss).
func TestAfterLoss(t *testing.T) {
	for _, tc := range []struct {
		name        string
		stopping    bool
		onLoss      lossPolicy
		onceClaimed bool
		want        afterLossStep
	}{
		{"reelect: stand again", false, lossReelect, false, lossRejoins},
		{"ignore: stand again once the session expired", false, lossIgnore, false, lossRejoins},
		{"exit: exit 125", false, lossExit, false, lossExitsByPolicy},
		{"exit, during a once key's run", false, lossExit, true, lossExitsByPolicy},
		{"a once key's run lost under reelect: exit 125", false, lossReelect, true, lossExitsOnceRun},
		{"a once key's run lost under ignore: exit 125", false, lossIgnore, true, lossExitsOnceRun},
		{"a stop signal meanwhile wins over reelect", true, lossReelect, false, lossExitsOnStop},
		{"a stop signal meanwhile wins over exit", true, lossExit, true, lossExitsOnStop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := afterLoss(tc.stopping, tc.onLoss, tc.onceClaimed); got != tc.want {
				t.Errorf("afterLoss = %d, want %d", got, tc.want)
			}
		})
	}
}
