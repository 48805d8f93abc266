package main

import "testing"

// TestDrainNodeName: any candidate id is one node beside the proposals,
// never read as a proposal.
func TestDrainNodeName(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"db1", "drain-db1"},
		{"a/b", "drain-a%2Fb"},
		{"50%", "drain-50%25"},
		{".", "drain-."},
		{"x-proposal-0000000001", "drain-x-%70roposal-0000000001"},
	} {
		got := drainNodeName(tc.id)
		if got != tc.want || isProposal(got) {
			t.Errorf("drainNodeName(%q) = %q (a proposal: %v), want %q", tc.id, got, isProposal(got), tc.want)
		}
	}
}
