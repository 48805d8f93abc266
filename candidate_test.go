package main

// Unit tests of a candidate's place in line: the proposal's priority and
// sequence number, parsed from its node name, order the line.

import (
	"reflect"
	"testing"

	"github.com/go-zookeeper/zk"
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

// TestFirstAmongEqual: ours is first among equals unless a proposal ahead
// of it has a higher priority (an equal or lower one went ahead by age).
func TestFirstAmongEqual(t *testing.T) {
	p := func(priority int) string { return "_c_ab-" + priorityTag(priority) + "proposal-0000000001" }
	for _, tc := range []struct {
		name     string
		ahead    []string
		priority int
		want     bool
	}{
		{"nobody ahead", nil, 0, true},
		{"older, same priority", []string{p(0), p(0)}, 0, true},
		{"older, lower priority", []string{p(-2)}, 0, true},
		{"a higher priority ahead", []string{p(0), p(1)}, 0, false},
		{"ours the highest", []string{p(5), p(3)}, 5, true},
		{"a negative priority behind a default", []string{p(0)}, -1, false},
	} {
		if got := firstAmongEqual(tc.ahead, tc.priority); got != tc.want {
			t.Errorf("%s: firstAmongEqual = %v; want %v", tc.name, got, tc.want)
		}
	}
}

// TestPredecessorChanged: a follower takes the first place without listing
// the line only when the proposal ahead of it went, it was second, it is
// online, and no higher priority stood ahead; a leader's state change is
// only watched again; anything else lists the line again.
func TestPredecessorChanged(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ev     zk.EventType
		me     int
		online bool
		first  bool // firstAmongEqual
		want   predecessorStep
	}{
		{"second, the first went", zk.EventNodeDeleted, 1, true, true, predecessorWent},
		{"second, offline", zk.EventNodeDeleted, 1, false, true, listLineAgain},
		{"second, behind a higher priority", zk.EventNodeDeleted, 1, true, false, listLineAgain},
		{"third, its predecessor went", zk.EventNodeDeleted, 2, true, true, listLineAgain},
		{"second, the leader's state changed", zk.EventNodeDataChanged, 1, true, true, predecessorStays},
		{"second, offline, the leader's state changed", zk.EventNodeDataChanged, 1, false, false, predecessorStays},
		{"third, its predecessor's state changed", zk.EventNodeDataChanged, 2, true, true, listLineAgain},
		{"the watch ended (a reconnect)", zk.EventNotWatching, 1, true, true, listLineAgain},
		{"a session event", zk.EventSession, 1, true, true, listLineAgain},
	} {
		asked := false
		online := func() bool { asked = true; return tc.online }
		if got := predecessorChanged(tc.ev, tc.me, online, tc.first); got != tc.want {
			t.Errorf("%s: predecessorChanged = %v; want %v", tc.name, got, tc.want)
		}
		if asked && (tc.ev != zk.EventNodeDeleted || tc.me != 1) {
			t.Errorf("%s: asked whether the session is online, which only a deletion ahead of the second decides", tc.name)
		}
	}
}
