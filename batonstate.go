package main

// The candidate's baton state: one value, each transition in one place.

// batonHold is where a candidate stands with its baton.
type batonHold int

const (
	batonNone    batonHold = iota // no baton of ours exists
	batonPending                  // handed over to us: the take goes out while the command starts on credit (lease.go)
	batonMaybe                    // a take's answer was lost: a baton of ours may exist
	batonHeld                     // took the baton and has not given it back
)

var batonHoldNames = [...]string{"none", "pending", "maybe", "held"}

func (h batonHold) String() string { return batonHoldNames[h] }

// batonState is the candidate's baton: whether it holds one, in which
// slot, and the handover record's version after its take, which a
// release must match.
//
// While a handover's take is pending it is written by the lease's take
// (lease.go, takeHandedBaton); readers wait for l.taken first.
type batonState struct {
	hold    batonHold
	slot    int   // held or maybe: the slot of that baton
	version int32 // held: the handover record's version after our take
}

// held: took the baton and has not given it back; a release is owed.
func (b batonState) held() bool { return b.hold == batonHeld }

// maybe: a take's answer was lost, so a baton of ours may exist that
// nothing runs under; leaving the election must end the session, or that
// baton would stall it.
func (b batonState) maybe() bool { return b.hold == batonMaybe }

// lostSlot is the slot of a take whose answer was lost, -1 if none: a
// scan looks at it first (slots.go).
func (b batonState) lostSlot() int {
	if b.hold == batonMaybe {
		return b.slot
	}
	return -1
}

// sendingOnCredit: a handover's take is about to go out, the command
// starting meanwhile.
func (b *batonState) sendingOnCredit() {
	if b.hold == batonNone {
		b.hold = batonPending
	}
}

// took: a take was answered, or found applied after its answer was lost.
func (b *batonState) took(slot int, version int32) {
	*b = batonState{hold: batonHeld, slot: slot, version: version}
}

// answerLost: a take's answer was lost (a reconnect); it may have been
// applied.
func (b *batonState) answerLost(slot int) {
	*b = batonState{hold: batonMaybe, slot: slot}
}

// ownGone: a baton of ours from a take whose answer was lost was deleted.
func (b *batonState) ownGone() {
	if b.hold == batonMaybe {
		*b = batonState{}
	}
}

// takeFailed: a pending take failed without being applied. One whose
// answer was lost stays maybe.
func (b *batonState) takeFailed() {
	if b.hold == batonPending {
		*b = batonState{}
	}
}

// givenBack: the baton was released, or went with its session.
func (b *batonState) givenBack() {
	if b.hold == batonHeld {
		*b = batonState{}
	}
}
