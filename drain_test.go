package main

import (
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

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

// TestDrainEvents: watch says which candidates were drained or undrained
// between two snapshots.
func TestDrainEvents(t *testing.T) {
	snap := func(ids ...string) *electionSnapshot {
		s := &electionSnapshot{exists: true}
		for _, id := range ids {
			s.file(newSnapNode(drainNodeName(id), []byte(`{"candidateId":"`+id+`","by":"ops@h","reason":"r"}`), &zk.Stat{}))
		}
		return s
	}
	for _, tc := range []struct {
		name      string
		prev, cur *electionSnapshot
		want      []string
	}{
		{"none", snap(), snap(), nil},
		{"drained", snap(), snap("a"), []string{evDrained + " a drained by ops@h: r"}},
		{"undrained", snap("a", "b"), snap("b"), []string{evUndrained + " a undrained"}},
		{"unchanged", snap("a"), snap("a"), nil},
	} {
		var got []string
		for _, ev := range drainEvents(tc.prev, tc.cur) {
			got = append(got, ev.Event+" "+ev.Message)
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: events %q, want %q", tc.name, got, tc.want)
		}
	}
}
