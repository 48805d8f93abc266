package main

import (
	"encoding/json"
	"testing"
)

// TestHandoverMayCome: what in the leader's proposal data makes its next
// in line prove its place (standby.go); at rest, nothing.
func TestHandoverMayCome(t *testing.T) {
	const us = "/e/_c_x-proposal-0000000002"
	enc := func(d proposalData) []byte {
		d.CandidateID = "leader"
		b, _ := json.Marshal(d)
		return b
	}
	for _, c := range []struct {
		name string
		raw  []byte
		want bool
	}{
		{"leading, its command running", enc(proposalData{State: stateLeading, Child: &childStatus{PID: 1}}), false},
		{"run cron between runs", enc(proposalData{State: stateLeading, NextRun: &scheduledNext{Time: "2026-01-01T03:00:00Z"}}), false},
		{"healthy", enc(proposalData{State: stateLeading, Health: &healthStatus{Healthy: true}}), false},
		{"preempting to another", enc(proposalData{State: stateLeading, Preempt: &preemptStatus{Proposal: "/e/other"}}), false},
		{"announced: a stop, a step-down, a cron run", enc(proposalData{State: stateLeading, HandoverMayCome: true}), true},
		{"resigning", enc(proposalData{State: stateResigning}), true},
		{"health check failing", enc(proposalData{State: stateLeading, Health: &healthStatus{Healthy: true, ConsecutiveFailures: 1}}), true},
		{"unhealthy", enc(proposalData{State: stateLeading, Health: &healthStatus{}}), true},
		{"preempting to us", enc(proposalData{State: stateLeading, Preempt: &preemptStatus{Proposal: us}}), true},
		{"no data (another tool)", nil, true},
		{"not ballot's data", []byte("x"), true},
	} {
		if got := handoverMayCome(c.raw, us); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
