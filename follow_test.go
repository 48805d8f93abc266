package main

// Unit tests of leaving the line: the cause a follower's context carries,
// and which one wins when two fire.

import (
	"context"
	"errors"
	"testing"
	"time"
)

// followContext: --wait-timeout and a stop signal each end the line with
// their own cause.
func TestFollowContextCause(t *testing.T) {
	t.Run("wait-timeout", func(t *testing.T) {
		r := &runner{set: &Settings{WaitTimeout: time.Millisecond}, stopping: make(chan struct{})}
		line, release := r.followContext(nil)
		defer release()
		<-line.Done()
		if why := r.whyStandDown(line); !errors.Is(why, errWaitTimedOut) {
			t.Fatalf("left the line because %v, want %v", why, errWaitTimedOut)
		}
	})
	t.Run("stop signal", func(t *testing.T) {
		r := &runner{set: &Settings{}, stopping: make(chan struct{})}
		line, release := r.followContext(nil)
		defer release()
		close(r.stopping)
		<-line.Done()
		if why := r.whyStandDown(line); !errors.Is(why, errStopSignal) {
			t.Fatalf("left the line because %v, want %v", why, errStopSignal)
		}
	})
}

// whyStandDown: a stop signal wins over --wait-timeout and the health
// check that fired first, not over the once key run by another.
func TestWhyStandDown(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause error
		stop  bool
		want  error
	}{
		{"wait-timeout", errWaitTimedOut, false, errWaitTimedOut},
		{"unhealthy", errUnhealthy, false, errUnhealthy},
		{"once key run", errOnceKeyRun, false, errOnceKeyRun},
		{"stop signal", errStopSignal, true, errStopSignal},
		{"stop after wait-timeout", errWaitTimedOut, true, errStopSignal},
		{"stop after unhealthy", errUnhealthy, true, errStopSignal},
		{"once key run, then stop", errOnceKeyRun, true, errOnceKeyRun},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &runner{stopping: make(chan struct{})}
			if tc.stop {
				close(r.stopping)
			}
			line, cancel := context.WithCancelCause(context.Background())
			cancel(tc.cause)
			if why := r.whyStandDown(line); !errors.Is(why, tc.want) {
				t.Fatalf("cause %v, stop %v: %v, want %v", tc.cause, tc.stop, why, tc.want)
			}
		})
	}
}
