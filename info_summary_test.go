package main

import (
	"strings"
	"testing"
)

// TestInfoSummaryLeaderHoldingTheBaton: a new leader's own word (its
// proposal's state) lags its take by up to a second; holding the baton,
// the summary says it leads. A candidate that does not hold it keeps the
// state it wrote.
func TestInfoSummaryLeaderHoldingTheBaton(t *testing.T) {
	for _, tc := range []struct {
		name       string
		batonToken int64
		want, not  []string
	}{
		{"holds the baton", 7, []string{"token 7\n", "bob              vm                   leading"}, []string{"following"}},
		{"waits for the baton", 3, []string{"token 7, following", "bob              vm                   following"}, nil},
	} {
		bob := infoCandidate{Position: 1, ID: "bob", Host: "vm", Czxid: 7, State: stateFollowing}
		inf := &infoElection{Election: "/e", Exists: true, Leader: &bob, Candidates: []infoCandidate{bob},
			Baton: &infoBaton{State: "held", CandidateID: "x", FencingToken: tc.batonToken}}
		var out strings.Builder
		writeInfoSummary(&out, inf)
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: the summary does not say %q:\n%s", tc.name, w, out.String())
			}
		}
		for _, n := range tc.not {
			if strings.Contains(out.String(), n) {
				t.Errorf("%s: the summary says %q:\n%s", tc.name, n, out.String())
			}
		}
	}
}
