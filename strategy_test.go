package main

import "testing"

// TestAfterRunPlan: what on-child-success / on-child-error make of a run
// of the command that ended by itself, for every policy and every way a
// run ends (README, "run once": the policies' table, whose wording names
// the cases).
func TestAfterRunPlan(t *testing.T) {
	runs := []struct {
		name string
		ex   childExit
	}{
		{"exits 0", childExit{Started: true, Code: 0}},
		{"exits 3", childExit{Started: true, Code: 3}},
		{"dies of SIGTERM", childExit{Started: true, Code: 143}},
		{"cannot be executed", childExit{Code: 127, Reason: "not found"}},
		{"outlives --timeout", childExit{Started: true, Code: 125, TimedOut: true}},
	}
	policies := []struct {
		policy childPolicy
		readme string
		// want, from the run's end: nil, the leader keeps the lead.
		want func(ex childExit) *leaderEnd
	}{
		{policyRerun, "stay leader and run the command again", func(childExit) *leaderEnd { return nil }},
		{policyReelect, "resign, stand again at the end of the line, run the command when elected",
			func(ex childExit) *leaderEnd {
				return &leaderEnd{how: leaderResigns, reason: "command-exited", then: verdict{next: standAgain}, ex: ex, backoff: true}
			}},
		{policyExit, "resign and exit with the command's exit code",
			func(ex childExit) *leaderEnd {
				return &leaderEnd{how: leaderResigns, reason: "command-exited", then: verdict{next: exitBallot, code: ex.Code}}
			}},
		{policyIgnore, "stay leader without a command until stopped or until leadership is lost", func(childExit) *leaderEnd { return nil }},
	}
	for _, p := range policies {
		for _, side := range []string{"success", "error"} {
			// The policy on one side, its opposite on the other: the run's
			// end picks the side.
			other := policyRerun
			if p.policy == policyRerun {
				other = policyExit
			}
			set := &Settings{OnChildSuccess: p.policy, OnChildError: other}
			if side == "error" {
				set.OnChildSuccess, set.OnChildError = other, p.policy
			}
			r := &runner{set: set}
			for _, run := range runs {
				if run.ex.Success() != (side == "success") {
					continue
				}
				t.Run("on-child-"+side+" "+string(p.policy)+": "+p.readme+"/command "+run.name, func(t *testing.T) {
					policy := r.policyFor(run.ex)
					if policy != p.policy {
						t.Fatalf("policy %s, want %s", policy, p.policy)
					}
					end, resigns := afterRunPlan(policy, run.ex, "command-exited")
					want := p.want(run.ex)
					switch {
					case want == nil && resigns:
						t.Fatalf("resigns (%+v); the leader should keep the lead", end)
					case want != nil && !resigns:
						t.Fatalf("keeps the lead; want %+v", *want)
					case want != nil && end != *want:
						t.Fatalf("ends the leadership with %+v, want %+v", end, *want)
					}
				})
			}
		}
	}
}

// TestAfterRunPlanOfAFailingPromoteHook: a failing promote hook is a
// command error (README, hooks): its resignation carries its own reason.
func TestAfterRunPlanOfAFailingPromoteHook(t *testing.T) {
	ex := childExit{Started: true, Code: 1}
	end, resigns := afterRunPlan(policyReelect, ex, "promote-failed")
	if !resigns || end.reason != "promote-failed" || end.then.next != standAgain || !end.backoff {
		t.Fatalf("reelect after a failing promote hook: %+v, resigns %v", end, resigns)
	}
	end, resigns = afterRunPlan(policyExit, ex, "promote-failed")
	if !resigns || end.reason != "promote-failed" || end.then != exitWith(1) {
		t.Fatalf("exit after a failing promote hook: %+v, resigns %v", end, resigns)
	}
}
