package main

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestLeadershipLossOutcomes: what ends a leadership's context, and the
// errors met while leading, each stand for one outcome; a ballot resumed
// past its lease reports the lease first (checkLease), whatever the cause.
func TestLeadershipLossOutcomes(t *testing.T) {
	cases := []struct {
		name  string
		cause error
		want  outcome
	}{
		{"proposal deleted", &proposalGoneError{(&nodeLostError{"proposal"}).Error()}, proposalGone},
		{"baton deleted", &proposalGoneError{(&nodeLostError{"baton"}).Error()}, proposalGone},
		{"handed-over take failed", &proposalGoneError{"the baton handed over to us could not be taken"}, proposalGone},
		{"our proposal read as gone", errProposalGone, proposalGone},
		{"a node of ours lost, wrapped", fmt.Errorf("renew: %w", &nodeLostError{"baton"}), proposalGone},
		{"session expired", sessionLostCause("session expired"), sessionLost},
		{"session closed", errSessionLost, sessionLost},
		{"session lost, wrapped", fmt.Errorf("claim: %w", errSessionLost), sessionLost},
		{"stopped while waiting on ZooKeeper", errStopped, stopRequested},
		{"stop signal", errStopSignal, stopRequested},
		{"health check failing", errUnhealthy, unhealthy},
		{"stopped and session lost: the stop first, as callers checked it", errors.Join(errSessionLost, errStopped), stopRequested},
		{"lease let go: not while supervising, the safe side", errLeadershipOver, leaseLost},
		{"anything else: the safe side", errors.New("surprise"), leaseLost},
		{"context cancelled without a cause", context.Canceled, leaseLost},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcomeOf(tc.cause); got != tc.want {
				t.Errorf("outcomeOf(%v) = %d, want %d", tc.cause, got, tc.want)
			}
			if got := lossOf(tc.cause, false); got != tc.want {
				t.Errorf("within the lease: lossOf(%v) = %d, want %d", tc.cause, got, tc.want)
			}
			if got := lossOf(tc.cause, true); got != noOutcome {
				t.Errorf("past the lease: lossOf(%v) = %d, want noOutcome (checkLease reports leaseLost first)", tc.cause, got)
			}
		})
	}
	if got := outcomeOf(nil); got != noOutcome {
		t.Errorf("outcomeOf(nil) = %d, want noOutcome", got)
	}
}

// TestLeadershipContextCause: the leadership's context ends with the first
// cause; later ones do not rewrite why it ended.
func TestLeadershipContextCause(t *testing.T) {
	l := testLease(4e9, 0, &testClock{boot: bootTime(3600e9)}, true)
	l.lose((&nodeLostError{"baton"}).Error())
	l.endWith(sessionLostCause("session expired"))
	if got := outcomeOf(context.Cause(l.ended)); got != proposalGone {
		t.Errorf("after the baton went, then the session: %d, want proposalGone", got)
	}
	if got := l.GoneWhy(); got != context.Cause(l.ended).Error() {
		t.Errorf("GoneWhy %q, cause %q: the log line and the kill's reason must agree", got, context.Cause(l.ended))
	}
	if !isClosed(l.gone) {
		t.Error("lose did not close gone: Fresh would still say the lease holds")
	}
}

// TestSupervisionWaitsForNothingBetweenRuns: with nothing running under
// the lease (a cron leader between runs), supervision's wait has no
// check-in timer: only the next run's time wakes it, or nothing at all
// (cost nothing while waiting). With a command or a run beside, it wakes
// by the next check-in, as renewals need.
func TestSupervisionWaitsForNothingBetweenRuns(t *testing.T) {
	const T = 5 * time.Second
	clk := &testClock{boot: bootTime(time.Hour), wall: time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)}
	l := testLease(T, 0, clk, false)
	hour := time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name   string
		s      supervision
		wakes  bool
		within time.Duration // the wake's latest, when it wakes
	}{
		{"between runs, the next in an hour", supervision{l: l, wake: hour}, true, time.Hour},
		{"between runs, no time due", supervision{l: l}, false, 0},
		{"a command runs", supervision{l: l, cmd: &child{}, wake: hour}, true, l.superviseEvery()},
		{"a run beside runs", supervision{l: l, beside: []*child{{}}}, true, l.superviseEvery()},
		{"a command runs, guarded", supervision{l: l, cmd: &child{}, guard: true}, true, l.superviseEvery()},
	} {
		next, wakes := tc.s.waitLimit()
		if wakes != tc.wakes {
			t.Errorf("%s: wakes %v (in %v), want %v", tc.name, wakes, next, tc.wakes)
			continue
		}
		if wakes && (next > tc.within || (tc.within == time.Hour && next < 59*time.Minute)) {
			t.Errorf("%s: wakes in %v, want by %v", tc.name, next, tc.within)
		}
	}
}
