package main

// Unit tests of a proposal's name as propose makes it: what it says is
// read back by the line's order, and its tag finds it again after a
// create whose answer was lost.

import (
	"strings"
	"testing"
)

// TestProposalTagReadsBack: a proposal named from its tag (as ZooKeeper
// appends the sequence number) says its --slots, --priority and sequence
// number; the defaults leave the name older ballots make.
func TestProposalTagReadsBack(t *testing.T) {
	guid := [16]byte{0x01, 0x23, 0xab, 0xff, 15: 0x7e}
	for _, tc := range []struct {
		slots, priority int
		want            string // the tag
	}{
		{1, 0, "_c_0123abff00000000000000000000007e-"},
		{0, 0, "_c_0123abff00000000000000000000007e-"}, // --slots not given
		{3, 0, "_c_0123abff00000000000000000000007e-slots3-"},
		{1, 5, "_c_0123abff00000000000000000000007e-priority+5-"},
		{1, -5, "_c_0123abff00000000000000000000007e-priority-5-"},
		{maxSlots, maxPriority, "_c_0123abff00000000000000000000007e-slots100-priority+1000-"},
	} {
		tag := proposalTag(guid, tc.slots, tc.priority)
		if tag != tc.want {
			t.Errorf("proposalTag(slots %d, priority %d) = %q; want %q", tc.slots, tc.priority, tag, tc.want)
		}
		name := tag + proposalPrefix + "0000000042"
		if seq, ok := proposalSeq(name); !ok || seq != 42 {
			t.Errorf("proposalSeq(%q) = %d, %v; want 42, true", name, seq, ok)
		}
		if got := proposalPriority(name); got != tc.priority {
			t.Errorf("proposalPriority(%q) = %d; want %d", name, got, tc.priority)
		}
		if got := proposalSlots(name); got != max(tc.slots, 1) {
			t.Errorf("proposalSlots(%q) = %d; want %d", name, got, max(tc.slots, 1))
		}
	}
}

// TestProposalTagIsOurs: the tag of one guid is no prefix of another
// guid's proposal, whatever their --slots and --priority, so findTagged
// finds ours only.
func TestProposalTagIsOurs(t *testing.T) {
	a, b := [16]byte{1}, [16]byte{1, 15: 1}
	for _, slots := range []int{1, 2, 10} {
		for _, p := range []int{0, 1, -1, 10} {
			ours := proposalTag(a, slots, p)
			if !strings.HasPrefix(ours+proposalPrefix+"0000000001", ours) {
				t.Errorf("tag %q does not find its own proposal", ours)
			}
			for _, slots2 := range []int{1, 2, 10} {
				for _, p2 := range []int{0, 1, -1, 10} {
					theirs := proposalTag(b, slots2, p2) + proposalPrefix + "0000000001"
					if strings.HasPrefix(theirs, ours) {
						t.Errorf("tag %q finds another candidate's proposal %q", ours, theirs)
					}
				}
			}
		}
	}
}
