package main

// Unit tests of a handover's decisions (handover.go): who may take a baton
// handed over, when a named successor may start on credit and how long
// that credit lasts, and when the others revoke a handover. No ZooKeeper:
// the handover is tested end to end in e2e_handover_test.go.

import (
	"testing"
	"time"
)

// handed is a release naming successor, as read from the record.
func handed(successor string, waitMs int64, noCredit bool) *handoverSeen {
	return &handoverSeen{exists: true, parsed: true, raw: []byte("handed to " + successor),
		rec: handoverRecord{State: handoverHanded, Successor: successor, BatonWaitMs: waitMs, NoCredit: noCredit}}
}

// TestHandedToUs: only the proposal a release names treats the baton as
// its own; not another proposal, not the predecessor standing again, not a
// record in another state or unreadable.
func TestHandedToUs(t *testing.T) {
	c := testCandidate(0x22, 2*time.Second) // proposal .../_c_x-proposal-0000000001
	other := c.basePath + "/_c_y-proposal-0000000002"
	for _, tc := range []struct {
		name string
		h    *handoverSeen
		want bool
	}{
		{"named", handed(c.node, 1500, false), true},
		{"named, without credit", handed(c.node, 1500, true), true},
		{"another named", handed(other, 1500, false), false},
		{"nobody named", handed("", 1500, false), false},
		{"taken since", &handoverSeen{exists: true, parsed: true, rec: handoverRecord{State: handoverTaken, Successor: c.node}}, false},
		{"revoked", &handoverSeen{exists: true, parsed: true, rec: handoverRecord{State: handoverRevoked, Successor: c.node}}, false},
		{"released", &handoverSeen{exists: true, parsed: true, rec: handoverRecord{State: handoverReleased}}, false},
		{"unreadable", &handoverSeen{exists: true, raw: []byte("x"), rec: handoverRecord{State: handoverHanded, Successor: c.node}}, false},
		{"no record", &handoverSeen{}, false},
	} {
		if got := c.handedToUs(tc.h); got != tc.want {
			t.Errorf("%s: handedToUs = %v; want %v", tc.name, got, tc.want)
		}
	}
}

// TestNoCreditWithout: a successor starts on credit only when the record
// names it and gives credit, it gives credit itself, it has a proof, knows
// the election's record, and the record has a W; each missing refuses.
func TestNoCreditWithout(t *testing.T) {
	fresh := bootNow()
	for _, tc := range []struct {
		name  string
		setup func(c *candidate, h *handoverSeen) bootTime // the proof
	}{
		{"", func(c *candidate, h *handoverSeen) bootTime { return fresh }}, // all there: the credit's terms decide
		{"ours: on-connection-loss=ignore", func(c *candidate, h *handoverSeen) bootTime { c.standby.noCredit = true; return fresh }},
		{"the record names another", func(c *candidate, h *handoverSeen) bootTime { h.rec.Successor += "x"; return fresh }},
		{"the record gives none (a higher priority ahead of older ones)", func(c *candidate, h *handoverSeen) bootTime { h.rec.NoCredit = true; return fresh }},
		{"no proof in line", func(c *candidate, h *handoverSeen) bootTime { return 0 }},
		{"the election's record unread", func(c *candidate, h *handoverSeen) bootTime { c.election = nil; return fresh }},
		{"no W in the record (an older ballot's)", func(c *candidate, h *handoverSeen) bootTime { h.rec.BatonWaitMs = 0; return fresh }},
	} {
		c := testCandidate(0x22, 2*time.Second)
		c.election = &electionSeen{ours: true}
		h := handed(c.node, 1500, false)
		end, ok := oneBaton{c}.credit(h, tc.setup(c, h))
		if tc.name == "" && end != fresh+bootTime(1500*time.Millisecond) {
			t.Errorf("named, with a proof and W: credit until %d; want the proof's send + W", end)
		}
		if tc.name != "" && (ok || end != 0) {
			t.Errorf("%s: credit until %d, %v; want none", tc.name, end, ok)
		}
	}
}

// TestCreditTerms: credit lasts W from the proof's send, W the smaller of
// ours and the record's (what the others wait should we vanish); it is
// used only with T/8 and a round trip left before the command would be
// asked to stop (T/16 + T/8 before the end).
func TestCreditTerms(t *testing.T) {
	const T = 2 * time.Second // W = 1500 ms; stop asked 375 ms before the end; floor 250 ms
	ms := func(n int64) bootTime { return bootTime(n * int64(time.Millisecond)) }
	const proof = bootTime(1 << 40)
	for _, tc := range []struct {
		name     string
		recordMs int64
		rtt, now bootTime // now after the proof
		end      bootTime // after the proof
		ok       bool
	}{
		{"just proved", 1500, ms(5), ms(5), ms(1500), true},
		{"the record's W shorter than ours", 1000, ms(5), ms(5), ms(1000), true},
		{"the record's W longer than ours", 9000, ms(5), ms(5), ms(1500), true},
		{"just enough left", 1500, ms(5), ms(1500 - 375 - 250 - 5), ms(1500), true},
		{"a nanosecond short", 1500, ms(5), ms(1500-375-250-5) + 1, ms(1500), false},
		{"a slow round trip", 1500, ms(900), ms(5), ms(1500), false},
		{"a proof a standby period old", 1500, ms(5), ms(500), ms(1500), true},
		{"a proof T/2 old", 1500, ms(5), ms(1000), ms(1500), false},
	} {
		end, ok := creditTerms(T, tc.recordMs, proof, tc.rtt, proof+tc.now)
		if end != proof+tc.end || ok != tc.ok {
			t.Errorf("%s: credit until proof+%s, %v; want proof+%s, %v", tc.name, time.Duration(end-proof), ok, time.Duration(tc.end), tc.ok)
		}
	}
}

// TestStandbyProofsKeepCredit: a proof sent every T/4 (standby.go) still
// gives credit at its oldest, with a round trip up to T/16, whatever T.
func TestStandbyProofsKeepCredit(t *testing.T) {
	for _, T := range leaseTimeouts {
		rtt := bootTime(T / 16)
		proof := bootTime(1 << 40)
		now := proof + bootTime(T/standbyProofDiv) + rtt
		if _, ok := creditTerms(T, recordedWaitMs(T), proof, rtt, now); !ok {
			t.Errorf("T=%s: a proof T/%d and a round trip of %s old gives no credit", T, standbyProofDiv, time.Duration(rtt))
		}
	}
}

// TestRevokeAfterW: the others revoke a handover once its successor has
// had W since they first saw the record; a rewritten record (another
// handover) starts the wait again, the same one seen again does not.
func TestRevokeAfterW(t *testing.T) {
	const w = 1500 * time.Millisecond
	var n namedWait
	start := bootTime(1 << 40)
	n.note("handed to b", w, start)
	if n.revokeDue(start) || n.revokeDue(start+bootTime(w)-1) {
		t.Fatalf("revoked before W")
	}
	n.note("handed to b", w, start+bootTime(w)-1) // read again: the same record
	if !n.revokeDue(start + bootTime(w)) {
		t.Fatalf("not revoked once W passed since the record was first seen")
	}
	n.note("handed to c", w, start+bootTime(w)) // another handover
	if n.revokeDue(start+bootTime(2*w)-1) || !n.revokeDue(start+bootTime(2*w)) {
		t.Errorf("a new record's W does not count from its first sight")
	}
}
