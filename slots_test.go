package main

// Unit tests of --slots' pure parts: N in a proposal's name, slot k's node
// names, the order of a scan for a free slot, and who refuses whom when
// candidates disagree on N.

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestSlotsTagRoundTrip: every N a candidate may give is read back from
// its proposal's name, beside any priority; 1 when the name has no tag.
func TestSlotsTagRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1} {
		if tag := slotsTag(n); tag != "" {
			t.Errorf("slotsTag(%d) = %q; want none (the names of an election without slots)", n, tag)
		}
	}
	for n := 1; n <= maxSlots; n++ {
		for _, p := range []int{0, 5, -maxPriority, maxPriority} {
			name := "_c_0123abcd-" + slotsTag(n) + priorityTag(p) + proposalPrefix + "0000000012"
			if got := proposalSlots(name); got != n {
				t.Fatalf("proposalSlots(%q) = %d; want %d", name, got, n)
			}
			if got := proposalPriority(name); got != p {
				t.Fatalf("proposalPriority(%q) = %d; want %d: the slots tag hides the priority", name, got, p)
			}
			if seq, ok := proposalSeq(name); !ok || seq != 12 {
				t.Fatalf("proposalSeq(%q) = %d, %v; want 12, true", name, seq, ok)
			}
		}
	}
}

func TestProposalSlots(t *testing.T) {
	for _, tc := range []struct {
		name string
		want int
	}{
		{"_c_ab-slots3-proposal-0000000001", 3},
		{"_c_ab-slots100-priority-7-proposal-0000000001", 100},
		{"_c_ab-proposal-0000000001", 1},            // a ballot older than slots, or --slots 1
		{"_c_ab-priority+5-proposal-0000000001", 1}, // a priority is no N
		{"_c_ab-slots0-proposal-0000000001", 1},     // not an N a candidate gives
		{"_c_ab-slots-2-proposal-0000000001", 1},    // nor this
		{"_c_ab-slotsx-proposal-0000000001", 1},
		{"_c_ab-slots3proposal-0000000001", 1}, // no "-" after N
		{"baton-3", 1},                         // not a proposal
		{"slots3-proposal-0000000001", 1},      // the tag follows "-"
		{"", 1},
	} {
		if got := proposalSlots(tc.name); got != tc.want {
			t.Errorf("proposalSlots(%q) = %d; want %d", tc.name, got, tc.want)
		}
	}
}

// TestSlotNames: slot 0's nodes have the names of an election without
// slots; slot k's are read back as k, and nothing else is a slot's node.
func TestSlotNames(t *testing.T) {
	for _, base := range []string{batonName, handoverName, leaderName, cronName} {
		if got := slotName(base, 0); got != base {
			t.Errorf("slotName(%q, 0) = %q; want %q", base, got, base)
		}
		if k, ok := slotOf(base, base); ok {
			t.Errorf("slotOf(%q, %q) = %d, true; want slot 0's name not to read as a slot k > 0", base, base, k)
		}
		for k := 1; k < maxSlots; k++ {
			name := slotName(base, k)
			if name != fmt.Sprintf("%s-%d", base, k) {
				t.Fatalf("slotName(%q, %d) = %q", base, k, name)
			}
			if got, ok := slotOf(name, base); !ok || got != k {
				t.Fatalf("slotOf(%q, %q) = %d, %v; want %d, true", name, base, got, ok, k)
			}
		}
	}
	for _, tc := range []struct{ name, base string }{
		{"baton-0", batonName},  // slot 0 has no suffix
		{"baton-01", batonName}, // one spelling per slot
		{"baton-+1", batonName},
		{"baton--1", batonName},
		{"baton-x", batonName},
		{"baton-", batonName},
		{"handover-2", batonName}, // another kind
		{"baton-2", handoverName},
		{"_c_ab-slots2-proposal-0000000001", batonName},
	} {
		if k, ok := slotOf(tc.name, tc.base); ok {
			t.Errorf("slotOf(%q, %q) = %d, true; want no slot", tc.name, tc.base, k)
		}
	}
}

// TestScanOrder: a take whose answer was lost is looked at first (it may
// be ours, held by nobody's command); otherwise slots from 0.
func TestScanOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		slots int
		baton batonState
		want  []int
	}{
		{"one slot", 1, batonState{}, []int{0}},
		{"no baton of ours", 3, batonState{}, []int{0, 1, 2}},
		{"a lost take's slot first", 3, batonState{hold: batonMaybe, slot: 2}, []int{2, 0, 1}},
		{"a lost take in slot 0", 3, batonState{hold: batonMaybe, slot: 0}, []int{0, 1, 2}},
		{"a held baton is no lost take", 3, batonState{hold: batonHeld, slot: 2}, []int{0, 1, 2}},
		{"a pending one neither", 3, batonState{hold: batonPending, slot: 1}, []int{0, 1, 2}},
	} {
		c := &candidate{proposalFacts: proposalFacts{slots: tc.slots}, baton: tc.baton}
		if got := c.scanOrder(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: scanOrder() = %v; want %v", tc.name, got, tc.want)
		}
	}
}

// TestCheckSlots: of two candidates that disagree on --slots, the one that
// joined later (the higher sequence number) refuses to stand, so they
// never both stand; one that joined after us is its own to refuse.
func TestCheckSlots(t *testing.T) {
	prop := func(slots, seq int) string {
		return fmt.Sprintf("_c_ab-%sproposal-%010d", slotsTag(slots), seq)
	}
	for _, tc := range []struct {
		name   string
		slots  int // ours; our proposal's sequence number is 5
		line   []string
		theirs int // 0: we stand
		refuse string
	}{
		{"all agree", 2, []string{prop(2, 1), prop(2, 5), prop(2, 9)}, 0, ""},
		{"alone", 3, []string{prop(3, 5)}, 0, ""},
		{"an earlier one says more", 2, []string{prop(3, 1), prop(2, 5)}, 3, prop(3, 1)},
		{"an earlier one says fewer", 3, []string{prop(2, 4), prop(3, 5)}, 2, prop(2, 4)},
		{"an earlier one without slots", 2, []string{prop(1, 1), prop(2, 5)}, 1, prop(1, 1)},
		{"without slots, an earlier one with", 1, []string{prop(2, 1), prop(1, 5)}, 2, prop(2, 1)},
		{"a later one disagreeing gives way", 2, []string{prop(2, 5), prop(3, 6), prop(1, 7)}, 0, ""},
		{"the first earlier disagreement is named", 2, []string{prop(2, 0), prop(4, 2), prop(3, 3), prop(2, 5)}, 4, prop(4, 2)},
	} {
		c := &candidate{proposalFacts: proposalFacts{basePath: "/e", slots: tc.slots, seq: 5}}
		err := c.checkSlots(tc.line)
		var mis *slotsMismatchError
		switch {
		case tc.theirs == 0 && err != nil:
			t.Errorf("%s: checkSlots = %v; want to stand", tc.name, err)
		case tc.theirs != 0 && !errors.As(err, &mis):
			t.Errorf("%s: checkSlots = %v; want a slotsMismatchError", tc.name, err)
		case tc.theirs != 0 && (mis.ours != tc.slots || mis.theirs != tc.theirs || mis.proposal != "/e/"+tc.refuse):
			t.Errorf("%s: checkSlots = %+v; want ours %d, theirs %d, proposal /e/%s", tc.name, *mis, tc.slots, tc.theirs, tc.refuse)
		}
	}
}

// failedMulti is a multi-op of n operations as go-zookeeper answers it
// when operation i fails with e: those before it are rolled back without
// an error, those after it fail as not run, and the call returns e.
func failedMulti(n, i int, e error) ([]zk.MultiResponse, error) {
	res := make([]zk.MultiResponse, n)
	for j := i + 1; j < n; j++ {
		res[j].Error = fmt.Errorf("unknown error: %d", -2) // ZooKeeper's runtime inconsistency: not run
	}
	res[i].Error = e
	return res, e
}

// TestSlotTakeFailed: what a slot's failed take means, by the operation
// that failed (check our proposal, create the baton, write the record,
// record our W) or by a failure of the call itself.
func TestSlotTakeFailed(t *testing.T) {
	for _, tc := range []struct {
		name string
		n, i int // the multi's operations, the one that failed (-1: the call itself)
		err  error
		want slotTakeFailure
	}{
		{"our proposal is gone", 3, 0, zk.ErrNoNode, slotProposalGone},
		{"another took the slot", 3, 1, zk.ErrNodeExists, slotTakenMeanwhile},
		{"another took the slot, W recorded too", 4, 1, zk.ErrNodeExists, slotTakenMeanwhile},
		{"the record changed", 3, 2, zk.ErrBadVersion, slotRecordChanged},
		{"the record appeared", 3, 2, zk.ErrNodeExists, slotRecordChanged},
		{"the record went", 3, 2, zk.ErrNoNode, slotRecordChanged},
		{"the election's record changed", 4, 3, zk.ErrBadVersion, slotElectionChanged},
		{"the connection dropped", 0, -1, zk.ErrConnectionClosed, slotAnswerLost},
		{"the session moved", 0, -1, zk.ErrSessionMoved, slotAnswerLost},
		{"the session expired", 0, -1, zk.ErrSessionExpired, slotAnswerLost},
		{"not allowed to create the baton", 3, 1, zk.ErrNoAuth, slotTakeError},
		{"our proposal, another failure", 3, 0, zk.ErrNoAuth, slotTakeError},
		{"the call refused", 0, -1, zk.ErrNoAuth, slotTakeError},
	} {
		res, err := []zk.MultiResponse(nil), tc.err
		if tc.i >= 0 {
			res, err = failedMulti(tc.n, tc.i, tc.err)
		}
		if got := slotTakeFailed(res, err); got != tc.want {
			t.Errorf("%s: slotTakeFailed = %d; want %d", tc.name, got, tc.want)
		}
	}
}

// TestEarliestEnd: the scan looks again at the end of the earliest wait
// for a dropped slot; 0 is no wait yet.
func TestEarliestEnd(t *testing.T) {
	for _, tc := range []struct{ until, end, want bootTime }{
		{0, 5, 5},
		{7, 5, 5},
		{5, 7, 5},
		{5, 5, 5},
	} {
		if got := earliestEnd(tc.until, tc.end); got != tc.want {
			t.Errorf("earliestEnd(%d, %d) = %d; want %d", tc.until, tc.end, got, tc.want)
		}
	}
}
