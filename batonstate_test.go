package main

import "testing"

// Each transition of the candidate's baton state, from each state.
func TestBatonStateTransitions(t *testing.T) {
	none := batonState{}
	pending := batonState{hold: batonPending}
	maybe := batonState{hold: batonMaybe, slot: 2}
	held := batonState{hold: batonHeld, slot: 1, version: 7}
	tests := []struct {
		name string
		from batonState
		do   func(*batonState)
		want batonState
	}{
		{"a take answered", none, func(b *batonState) { b.took(1, 7) }, held},
		{"a lost take found applied", maybe, func(b *batonState) { b.took(1, 7) }, held},
		{"a handover's take answered", pending, func(b *batonState) { b.took(1, 7) }, held},
		{"a take's answer lost", none, func(b *batonState) { b.answerLost(2) }, maybe},
		{"a handover's take's answer lost", pending, func(b *batonState) { b.answerLost(2) }, maybe},
		{"another take's answer lost", batonState{hold: batonMaybe, slot: 0}, func(b *batonState) { b.answerLost(2) }, maybe},
		{"a handover's take goes out", none, (*batonState).sendingOnCredit, pending},
		{"our lost baton deleted", maybe, (*batonState).ownGone, none},
		{"nothing of ours to delete", held, (*batonState).ownGone, held},
		{"a handover's take failed", pending, (*batonState).takeFailed, none},
		{"a failed take after a lost answer stays maybe", maybe, (*batonState).takeFailed, maybe},
		{"the baton given back", held, (*batonState).givenBack, none},
		{"a release leaves a lost take's baton maybe", maybe, (*batonState).givenBack, maybe},
		{"nothing held to give back", none, (*batonState).givenBack, none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.from
			tt.do(&b)
			if b != tt.want {
				t.Fatalf("from %+v: got %+v, want %+v", tt.from, b, tt.want)
			}
		})
	}
}

// What the rest of the candidate asks of the state: a release is owed only
// when held; the session must end to leave only when maybe; a scan looks
// first at a lost take's slot.
func TestBatonStateQuestions(t *testing.T) {
	tests := []struct {
		b           batonState
		held, maybe bool
		lostSlot    int
	}{
		{batonState{}, false, false, -1},
		{batonState{hold: batonPending}, false, false, -1},
		{batonState{hold: batonMaybe, slot: 3}, false, true, 3},
		{batonState{hold: batonHeld, slot: 3, version: 1}, true, false, -1},
	}
	for _, tt := range tests {
		if tt.b.held() != tt.held || tt.b.maybe() != tt.maybe || tt.b.lostSlot() != tt.lostSlot {
			t.Errorf("%s: held %v maybe %v lostSlot %d, want %v %v %d", tt.b.hold,
				tt.b.held(), tt.b.maybe(), tt.b.lostSlot(), tt.held, tt.maybe, tt.lostSlot)
		}
	}
}
