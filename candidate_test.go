package main

// Unit tests of a candidate's place in line: the proposal's priority and
// sequence number, parsed from its node name, order the line.

import (
	"reflect"
	"testing"
)

func TestProposalSeq(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  int64
		ok   bool
	}{
		{"_c_0123abcd-proposal-0000000012", 12, true},
		{"proposal-0000000000", 0, true},
		{"_c_x-proposal-2147483647", 2147483647, true},
		{"_c_x-proposal-9999999999", 9999999999, true}, // past int32: ZooKeeper's counter wraps, ours does not fail
		{"_c_proposal-x-proposal-0000000007", 7, true}, // the last "proposal-" counts
		{"_c_x-proposal-000000012", 0, false},          // 9 digits
		{"_c_x-proposal-00000000123", 0, false},        // 11 digits
		{"_c_x-proposal-00000001x2", 0, false},
		{"baton", 0, false},
		{"handover", 0, false},
		{"leader", 0, false},
		{"", 0, false},
	} {
		seq, ok := proposalSeq(tc.name)
		if seq != tc.seq || ok != tc.ok {
			t.Errorf("proposalSeq(%q) = %d, %v; want %d, %v", tc.name, seq, ok, tc.seq, tc.ok)
		}
	}
}

// TestSortedProposals: the line is in sequence order, whatever the random
// prefixes, and holds only proposals.
func TestSortedProposals(t *testing.T) {
	children := []string{"baton", "_c_ff-proposal-0000000010", "leader", "_c_00-proposal-0000000002",
		"handover", "_c_aa-proposal-0000000100", "_c_11-proposal-0000000009"}
	want := []string{"_c_00-proposal-0000000002", "_c_11-proposal-0000000009", "_c_ff-proposal-0000000010", "_c_aa-proposal-0000000100"}
	if got := sortedProposals(children); !reflect.DeepEqual(got, want) {
		t.Errorf("sortedProposals = %v, want %v", got, want)
	}
}

func TestProposalPriority(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int
	}{
		{"_c_0123abcd-proposal-0000000012", 0},
		{"_c_0123abcd-" + priorityTag(5) + "proposal-0000000012", 5},
		{"_c_0123abcd-" + priorityTag(-3) + "proposal-0000000012", -3},
		{"_c_0123abcd-priority+1000-proposal-0000000012", 1000},
		{"_c_0123abcd-priority+x-proposal-0000000012", 0}, // not ours: default
		{"_c_0123abcd-priority+5proposal-0000000012", 0},
		{"priority+5-proposal-0000000012", 0}, // no tag before it
		{"baton", 0},
	} {
		if got := proposalPriority(tc.name); got != tc.want {
			t.Errorf("proposalPriority(%q) = %d, want %d", tc.name, got, tc.want)
		}
	}
	if priorityTag(0) != "" {
		t.Errorf("priority 0 must keep the name older ballots make: tag %q", priorityTag(0))
	}
}

// TestSortedProposalsByPriority: a higher priority goes ahead of any
// sequence number; equal priorities keep the sequence order.
func TestSortedProposalsByPriority(t *testing.T) {
	children := []string{"_c_a-proposal-0000000001", "_c_b-priority+5-proposal-0000000009",
		"_c_c-priority-1-proposal-0000000000", "_c_d-proposal-0000000003", "_c_e-priority+5-proposal-0000000004"}
	want := []string{"_c_e-priority+5-proposal-0000000004", "_c_b-priority+5-proposal-0000000009",
		"_c_a-proposal-0000000001", "_c_d-proposal-0000000003", "_c_c-priority-1-proposal-0000000000"}
	if got := sortedProposals(children); !reflect.DeepEqual(got, want) {
		t.Errorf("sortedProposals = %v, want %v", got, want)
	}
}
