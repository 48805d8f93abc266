package main

import (
	"testing"
	"time"
)

// TestParsePause: the pause node pauses the election whatever its data;
// its record is read when it can be.
func TestParsePause(t *testing.T) {
	since := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		raw  []byte
		want *pauseRecord
	}{
		{"no pause node: not paused", nil, nil},
		{"ballot pause's record", []byte(`{"reason":"db migration","by":"ops@h1","since":"2026-11-24T10:00:00Z"}`),
			&pauseRecord{Reason: "db migration", By: "ops@h1", Since: since}},
		{"a node without data pauses", []byte{}, &pauseRecord{Reason: "(unreadable pause record)"}},
		{"a node with garbage pauses", []byte("yes"), &pauseRecord{Reason: "(unreadable pause record)"}},
		{"an empty record pauses", []byte(`{}`), &pauseRecord{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := parsePause(tc.raw)
			switch {
			case (got == nil) != (tc.want == nil):
				t.Fatalf("parsePause = %+v, want %+v", got, tc.want)
			case got != nil && *got != *tc.want:
				t.Fatalf("parsePause = %+v, want %+v", *got, *tc.want)
			}
		})
	}
}

// TestNamesUs: a step-down concerns only the leadership whose proposal
// it names.
func TestNamesUs(t *testing.T) {
	const us = "/ballot/x/proposal-0000000007"
	for _, tc := range []struct {
		name string
		raw  []byte
		want bool
	}{
		{"no step-down node", nil, false},
		{"names our proposal", []byte(`{"proposal":"` + us + `","candidateId":"a"}`), true},
		{"names another proposal", []byte(`{"proposal":"/ballot/x/proposal-0000000008","candidateId":"a"}`), false},
		{"names our candidate id, not our proposal (an earlier leadership of ours)", []byte(`{"proposal":"/ballot/x/proposal-0000000003","candidateId":"a"}`), false},
		{"unreadable", []byte("down!"), false},
		{"no data", []byte{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := namesUs(tc.raw, us); got != tc.want {
				t.Errorf("namesUs = %v, want %v", got, tc.want)
			}
		})
	}
}

// pinged reports whether s.Changed() was pinged, draining it.
func pinged(s *controls) bool {
	select {
	case <-s.Changed():
		return true
	default:
		return false
	}
}

// TestControlsState: a leader's controls ping Changed when the election
// is paused or resumed, a step-down comes or goes, or a preemption is
// decided; pings fold (one is pending at most), and a rewritten pause
// record is no change.
func TestControlsState(t *testing.T) {
	s := &controls{changed: make(chan struct{}, 1)}
	if s.Paused() != nil || s.SteppingDown() || s.PreemptTo() != "" || pinged(s) {
		t.Fatal("new controls: not paused, no step-down, no preemption, no change")
	}
	s.set(nil, false, false, nil)
	if pinged(s) {
		t.Error("nothing changed, yet Changed was pinged")
	}
	p := &pauseRecord{Reason: "maintenance"}
	s.set(p, false, false, nil)
	if s.Paused() != p || !pinged(s) {
		t.Errorf("paused: Paused() = %v, want the record, and a ping", s.Paused())
	}
	s.set(&pauseRecord{Reason: "longer maintenance"}, false, false, nil)
	if pinged(s) {
		t.Error("a rewritten pause record pinged Changed")
	}
	if s.Paused().Reason != "longer maintenance" {
		t.Errorf("Paused() = %+v, want the rewritten record", s.Paused())
	}
	s.set(nil, true, false, nil) // resumed and asked to step down: one ping
	if s.Paused() != nil || !s.SteppingDown() || !pinged(s) {
		t.Error("resumed and stepping down: want not paused, stepping down, a ping")
	}
	if pinged(s) {
		t.Error("two pings pending: they should fold into one")
	}
	s.set(nil, false, false, nil)
	if s.SteppingDown() || !pinged(s) {
		t.Error("the step-down gone: want not stepping down, and a ping")
	}
	s.preempt("/ballot/x/proposal-0000000002")
	if s.PreemptTo() != "/ballot/x/proposal-0000000002" || !pinged(s) {
		t.Errorf("preempting: PreemptTo() = %q, want the successor, and a ping", s.PreemptTo())
	}
}

// TestNoControls: a leadership without controls (nil: never read) is
// neither paused, stepping down nor preempting, and never changes.
func TestNoControls(t *testing.T) {
	var s *controls
	if s.Paused() != nil || s.SteppingDown() || s.PreemptTo() != "" || s.Changed() != nil {
		t.Error("nil controls: want not paused, no step-down, no preemption, no Changed channel")
	}
}
