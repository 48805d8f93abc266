package main

// Unit tests of a snapshot's reading of the election, on snapshots built
// in memory: its --slots, which slot a proposal's session holds, and the
// order info and watch show the line in.

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/go-zookeeper/zk"
)

// snapProposal is a proposal node of session owner in a snapshot.
func snapProposal(priority, slots int, seq int64, owner int64) *snapNode {
	return &snapNode{
		name: fmt.Sprintf("_c_ab-%s%sproposal-%010d", slotsTag(slots), priorityTag(priority), seq),
		seq:  seq, stat: zk.Stat{EphemeralOwner: owner},
	}
}

// snapBaton is a baton node held by session owner.
func snapBaton(name string, owner int64) *snapNode {
	return &snapNode{name: name, stat: zk.Stat{EphemeralOwner: owner}}
}

func TestSnapshotSlotCount(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    electionSnapshot
		want int
	}{
		{"empty", electionSnapshot{}, 1},
		{"no slots", electionSnapshot{proposals: []*snapNode{snapProposal(0, 1, 1, 10)}}, 1},
		{"from the names", electionSnapshot{proposals: []*snapNode{snapProposal(0, 3, 1, 10), snapProposal(5, 3, 2, 11)}}, 3},
		{"the largest name wins", electionSnapshot{proposals: []*snapNode{snapProposal(0, 2, 1, 10), snapProposal(0, 4, 2, 11)}}, 4},
		{"a held slot beyond the names", electionSnapshot{
			proposals:  []*snapNode{snapProposal(0, 2, 1, 10)},
			slotBatons: map[int]*snapNode{4: snapBaton("baton-4", 10)}}, 5},
		{"a handover record beyond them", electionSnapshot{
			proposals:     []*snapNode{snapProposal(0, 2, 1, 10)},
			slotHandovers: map[int]*snapNode{2: {name: "handover-2"}}}, 3},
		{"slot nodes left with no proposal", electionSnapshot{slotBatons: map[int]*snapNode{1: snapBaton("baton-1", 10)}}, 2},
	} {
		if got := tc.s.slotCount(); got != tc.want {
			t.Errorf("%s: slotCount() = %d; want %d", tc.name, got, tc.want)
		}
	}
}

func TestSnapshotHolderSlot(t *testing.T) {
	s := &electionSnapshot{
		baton:      snapBaton(batonName, 10),
		slotBatons: map[int]*snapNode{1: snapBaton("baton-1", 20), 3: snapBaton("baton-3", 30)}, // slot 2 free
	}
	for _, tc := range []struct {
		name string
		n    *snapNode
		slot int
		ok   bool
	}{
		{"slot 0's holder", snapProposal(0, 4, 1, 10), 0, true},
		{"slot 1's", snapProposal(0, 4, 2, 20), 1, true},
		{"slot 3's, past a free slot", snapProposal(0, 4, 3, 30), 3, true},
		{"a waiter", snapProposal(0, 4, 4, 40), 0, false},
		{"a node of no session", snapProposal(0, 4, 5, 0), 0, false},
		{"none", nil, 0, false},
	} {
		if slot, ok := s.holderSlot(tc.n); slot != tc.slot || ok != tc.ok {
			t.Errorf("%s: holderSlot = %d, %v; want %d, %v", tc.name, slot, ok, tc.slot, tc.ok)
		}
	}
	free := &electionSnapshot{baton: snapBaton(batonName, 0)}
	if slot, ok := free.holderSlot(snapProposal(0, 1, 1, 0)); ok {
		t.Errorf("holderSlot matched a node of no session to a baton of none: slot %d", slot)
	}
}

// TestSortSnapshotHolders: holders go first, in slot order, though a
// higher priority waits in line; then the line: the highest priority
// first, then the lowest sequence number; other nodes by name.
func TestSortSnapshotHolders(t *testing.T) {
	var (
		hold0  = snapProposal(0, 3, 7, 10)  // holds slot 0
		hold2  = snapProposal(0, 3, 2, 20)  // holds slot 2
		hold1  = snapProposal(-1, 3, 9, 30) // holds slot 1, lowest priority
		high   = snapProposal(5, 3, 8, 40)  // waits to preempt
		early  = snapProposal(0, 3, 1, 50)
		late   = snapProposal(0, 3, 11, 60)
		lowest = snapProposal(-2, 3, 3, 70)
	)
	for _, tc := range []struct {
		name string
		s    electionSnapshot
		want []*snapNode
	}{
		{"no baton: the line's order", electionSnapshot{
			proposals: []*snapNode{late, lowest, early, high}},
			[]*snapNode{high, early, late, lowest}},
		{"the leader first, ahead of a higher priority", electionSnapshot{
			proposals: []*snapNode{late, hold0, early, high},
			baton:     snapBaton(batonName, 10)},
			[]*snapNode{hold0, high, early, late}},
		{"holders in slot order, then the line", electionSnapshot{
			proposals:  []*snapNode{lowest, late, hold2, early, hold1, high, hold0},
			baton:      snapBaton(batonName, 10),
			slotBatons: map[int]*snapNode{1: snapBaton("baton-1", 30), 2: snapBaton("baton-2", 20)}},
			[]*snapNode{hold0, hold1, hold2, high, early, late, lowest}},
		{"slot 0 free: the other holders still first", electionSnapshot{
			proposals:  []*snapNode{early, hold2, high},
			slotBatons: map[int]*snapNode{2: snapBaton("baton-2", 20)}},
			[]*snapNode{hold2, high, early}},
	} {
		s := tc.s
		s.others = []*snapNode{{name: "leader"}, {name: "cron"}, {name: "baton-9"}}
		sortSnapshot(&s)
		if !reflect.DeepEqual(s.proposals, tc.want) {
			t.Errorf("%s: order %v; want %v", tc.name, snapNames(s.proposals), snapNames(tc.want))
		}
		if got := snapNames(s.others); !reflect.DeepEqual(got, []string{"baton-9", "cron", "leader"}) {
			t.Errorf("%s: others %v; want by name", tc.name, got)
		}
	}
}

func snapNames(ns []*snapNode) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.name)
	}
	return out
}
