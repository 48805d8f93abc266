package main

// Unit tests of the --on-child-* policies: which one a run's end picks, and
// the rerun policy's back-off: a command that keeps ending at once,
// failing or not, is rerun less and less often, and one that ran a while
// resets it.

import (
	"testing"
	"time"
)

func TestBackoffFor(t *testing.T) {
	quick := childExit{Code: 1, Started: true, Duration: 50 * time.Millisecond}
	r := &runner{}
	var got []time.Duration
	for i := 0; i < 12; i++ {
		got = append(got, r.backoffFor(quick))
	}
	ms := time.Millisecond
	want := []time.Duration{0, 100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 3200 * ms, 6400 * ms, 10 * time.Second, 10 * time.Second, 10 * time.Second, 10 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("quick failure %d waits %s, want %s (all: %v)", i+1, got[i], want[i], got)
		}
	}
	for _, tc := range []struct {
		name   string
		ex     childExit
		resets bool
	}{
		{"a success after more than 10 s", childExit{Code: 0, Started: true, Duration: 11 * time.Second}, true},
		{"a failure after more than 10 s", childExit{Code: 1, Started: true, Duration: 11 * time.Second}, true},
		{"a failure after 1 to 10 s", childExit{Code: 1, Started: true, Duration: 2 * time.Second}, false},
		{"a success after 1 to 10 s", childExit{Code: 0, Started: true, Duration: 2 * time.Second}, false},
	} {
		r := &runner{}
		for i := 0; i < 4; i++ {
			r.backoffFor(quick)
		}
		if d := r.backoffFor(tc.ex); d != 0 {
			t.Errorf("%s: waits %s, want none", tc.name, d)
		}
		next, want := r.backoffFor(quick), 800*ms
		if tc.resets {
			want = 0
		}
		if next != want {
			t.Errorf("after %s, the next quick failure waits %s, want %s", tc.name, next, want)
		}
	}
	// A command that exits 0 at once (one that daemonizes) is backed off
	// as a quick failure is, and the two count together: the first rerun
	// is immediate, then the same growing pause.
	for _, tc := range []struct {
		name string
		runs []childExit
	}{
		{"quick successes", []childExit{{Code: 0, Started: true, Duration: 5 * ms}}},
		{"quick successes and failures, alternating", []childExit{
			{Code: 0, Started: true, Duration: 5 * ms}, {Code: 1, Started: true, Duration: 5 * ms}}},
	} {
		r := &runner{}
		var got []time.Duration
		for i := 0; i < 12; i++ {
			got = append(got, r.backoffFor(tc.runs[i%len(tc.runs)]))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: run %d waits %s, want %s (all: %v)", tc.name, i+1, got[i], want[i], got)
				break
			}
		}
	}
	// A command that could not be executed counts as a quick failure.
	r = &runner{}
	r.backoffFor(childExit{Code: 127})
	if d := r.backoffFor(childExit{Code: 127}); d != 100*ms {
		t.Errorf("a command that cannot be executed, twice: waits %s, want 100ms", d)
	}
}

// TestPolicyFor: a run that succeeded gets on-child-success; one that
// failed, never started or timed out (even with status 0) on-child-error.
func TestPolicyFor(t *testing.T) {
	r := &runner{set: &Settings{OnChildSuccess: policyRerun, OnChildError: policyExit}}
	for _, tc := range []struct {
		name string
		ex   childExit
		want childPolicy
	}{
		{"exit 0", childExit{Started: true, Code: 0}, policyRerun},
		{"exit 1", childExit{Started: true, Code: 1}, policyExit},
		{"killed", childExit{Started: true, Code: 137}, policyExit},
		{"never started", childExit{Code: 127}, policyExit},
		{"timed out with status 0", childExit{Started: true, Code: 0, TimedOut: true}, policyExit},
	} {
		if got := r.policyFor(tc.ex); got != tc.want {
			t.Errorf("%s: policy %s, want %s", tc.name, got, tc.want)
		}
	}
}
