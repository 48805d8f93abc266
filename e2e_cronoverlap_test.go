package main

import (
	"strings"
	"testing"
	"time"
)

// TestCronOverlapQueue: --overlap queue. Runs of 2.5 s every second: S
// runs (started up to 1 s late); S+1 is queued, then S+2 takes its place
// (S+1 skipped: at most one waits), and so on; the time last queued
// starts when S ends, never beside it.
func TestCronOverlapQueue(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newCronElection(t, c)
	a := e.add("a", "* * * * * *", "2500ms", "--overlap", "queue", "--on-child-success", "rerun")
	e.waitRuns(2, 20*time.Second)
	times := e.checkOnce()
	if d := times[1].Sub(times[0]); d < 2*time.Second {
		t.Errorf("the run after %s was of %s (%s later), want the latest time queued while it ran, 2s later or more",
			times[0].Format(time.TimeOnly), times[1].Format(time.TimeOnly), d)
	}
	a.WaitEvent(logEvRunQueued, time.Second, "scheduled_time", times[1].Format(time.RFC3339))
	a.WaitEvent(logEvRunSkipped, time.Second, "skip", "overlap", "scheduled_time", times[1].Add(-time.Second).Format(time.RFC3339))
	checkNoOverlap(t, e.ticks)
}

// TestCronOverlapReplace: --overlap replace. A run of 30 s every 2 s: at
// S+2 the run of S is stopped (SIGTERM; the test child ends at once) and
// S+2 starts; the history records S as stopped, replaced.
func TestCronOverlapReplace(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newCronElection(t, c)
	a := e.add("a", "*/2 * * * * *", "30s", "--overlap", "replace", "--stop-grace-period", "1s")
	e.waitRuns(2, 20*time.Second)
	times := e.checkOnce()
	if d := times[1].Sub(times[0]); d != 2*time.Second {
		t.Errorf("the run after %s was of %s (%s later), want the next time, 2s later", times[0].Format(time.TimeOnly), times[1].Format(time.TimeOnly), d)
	}
	a.WaitEvent(logEvCommandStopped, time.Second, "reason", "overlap-replace")
	items := waitHistory(t, c, e.base, 5*time.Second, "the replaced run's end", func(items []*historyItem) bool {
		h := cronAttempts(items, times[0])
		return len(h) == 1 && h[0].Ended != ""
	})
	if h := cronAttempts(items, times[0])[0]; h.Ended != endStopped || !strings.Contains(h.Reason, "replaced") {
		t.Errorf("the replaced run's history: ended %q, reason %q", h.Ended, h.Reason)
	}
	checkNoOverlap(t, e.ticks)
}
