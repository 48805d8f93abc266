package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
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

// pidSpans are the first and last tick of each process of the tick file,
// with its token: one command run each.
type pidSpan struct {
	token       string
	first, last time.Time
}

func pidSpans(t *testing.T, file string) map[string]*pidSpan {
	t.Helper()
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	spans := map[string]*pidSpan{}
	for _, line := range fileLines(t, file) {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue // a line cut by SIGKILL
		}
		ns, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			continue
		}
		at := time.Unix(0, ns)
		s := spans[f[1]]
		if s == nil {
			s = &pidSpan{token: f[0], first: at, last: at}
			spans[f[1]] = s
		}
		s.first, s.last = minTime(s.first, at), laterOf(s.last, at)
	}
	return spans
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// mostAtOnce is the largest number of runs that ticked at one moment.
func mostAtOnce(spans map[string]*pidSpan) int {
	most := 0
	for _, s := range spans {
		n := 0
		for _, o := range spans {
			if !o.first.After(s.first) && !o.last.Before(s.first) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// TestCronOverlapAllow: --overlap allow. Runs of 2.5 s every second, at
// most 2 at once: S runs; S+1 starts beside it (same token: the same
// leadership, on its host); S+2 finds 2 going and is skipped
// (overlap-limit); every started time is recorded once, and every run's
// end is in the history.
func TestCronOverlapAllow(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newCronElection(t, c)
	a := e.add("a", "* * * * * *", "2500ms", "--overlap", "allow", "--overlap-limit", "2", "--on-child-success", "rerun")
	a.WaitEvent(logEvRunSkipped, 15*time.Second, "skip", "overlap-limit")
	runs := e.waitRuns(3, 15*time.Second)
	times := e.checkOnce()
	if d := times[1].Sub(times[0]); d != time.Second {
		t.Errorf("the run after %s was of %s (%s later), want the next time, beside it", times[0].Format(time.TimeOnly), times[1].Format(time.TimeOnly), d)
	}
	for _, r := range runs {
		if r.candidate != "a" || r.token != runs[0].token {
			t.Errorf("run %v: want every run by a, under its one leadership (token %s)", r, runs[0].token)
		}
	}
	// Each run ticks until it ends: wait for the first two to end.
	waitHistory(t, c, e.base, 10*time.Second, "the ends of the first two runs", func(items []*historyItem) bool {
		for _, s := range times[:2] {
			if h := cronAttempts(items, s); len(h) != 1 || h[0].Ended != endExited || h[0].ExitCode == nil || *h[0].ExitCode != 0 {
				return false
			}
		}
		return true
	})
	spans := pidSpans(t, e.ticks)
	if n := mostAtOnce(spans); n != 2 {
		t.Errorf("at most %d runs ticked at once, want 2 (--overlap-limit 2)", n)
	}
}

// TestCronOverlapAllowLeadershipEnds: every run going under --overlap
// allow ends with the leadership, before the next leader starts anything:
// on a step-down (stopped together, with the grace period), on a lost
// leadership (its proposal deleted: killed at once), and when
// ballot is SIGKILLed (the keepers kill every tree; none ends the session
// while another tree may live, so the next leader waits for its expiry).
func TestCronOverlapAllowLeadershipEnds(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	for _, how := range []string{"step-down", "proposal-deleted", "sigkill"} {
		t.Run(how, func(t *testing.T) {
			e := newCronElection(t, c)
			flags := []string{"--overlap", "allow", "--overlap-limit", "3", "--on-child-success", "rerun", "--stop-grace-period", "1s"}
			a := e.add("a", "* * * * * *", "60s", flags...)
			e.leader(10 * time.Second)
			b := e.add("b", "* * * * * *", "60s", flags...)
			b.WaitEvent(logEvFollowing, 10*time.Second)
			runs := e.waitRuns(2, 10*time.Second)
			// Both of a's runs tick before the leadership ends.
			deadline := time.Now().Add(10 * time.Second)
			for len(pidSpans(t, e.ticks)) < 2 {
				if time.Now().After(deadline) {
					t.Fatalf("two runs did not tick within 10s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			switch how {
			case "step-down":
				if out, code := control(t, e.election, "step-down", "--wait", "15s"); code != 0 {
					t.Fatalf("step-down: exit %d: %s", code, out)
				}
			case "proposal-deleted":
				conn := zkConnect(t, c.Servers(), 2*time.Second)
				if err := conn.Delete(e.base+"/"+e.proposals()[0], -1); err != nil {
					t.Fatalf("delete a's proposal: %v", err)
				}
				conn.Close()
				a.WaitEvent(logEvLeadershipLost, 10*time.Second)
			case "sigkill":
				killed := time.Now()
				a.Signal(syscall.SIGKILL)
				a.Wait(5 * time.Second)
				b.WaitEvent(logEvElected, 15*time.Second)
				// No keeper ended a's session: b waited for its expiry, at
				// least 2T/3 after the kill (T = 2s: the client pings every
				// T/3, so the last touch is at most T/3 before it). A keeper
				// that gave the baton back would have made it milliseconds.
				if d := time.Since(killed); d < 2*(2*time.Second)/3 {
					t.Errorf("b led %s after a's SIGKILL, want its session to expire first (>= 2T/3 = 1.33s)", d)
				}
			}
			all := e.waitRuns(3, 15*time.Second)
			if last := all[len(all)-1]; last.candidate != "b" {
				t.Fatalf("the run after a's leadership: %v, want b's", last)
			}
			e.checkOnce()
			checkNoOverlap(t, e.ticks) // a's runs, all of them, end before b's first
			byToken := map[string]int{}
			for _, s := range pidSpans(t, e.ticks) {
				byToken[s.token]++
			}
			if n := byToken[runs[0].token]; n < 2 {
				t.Errorf("a ran %d commands under its leadership, want 2 or more side by side", n)
			}
			// Every run of a is over in the history: ended (by a, on a
			// step-down), or, after a loss, ended or unfinished (its
			// leader is gone; b records it leadership-lost with its
			// first run's end, a minute away: a fenced end fails once the
			// proposal is gone, and after a SIGKILL nobody writes one).
			waitHistory(t, c, e.base, 10*time.Second, "the ends of a's runs", func(items []*historyItem) bool {
				for _, r := range runs[:2] {
					s, _ := time.Parse(time.RFC3339, r.scheduled)
					h := cronAttempts(items, s)
					if len(h) != 1 || (h[0].Ended == "" && (how == "step-down" || h[0].State != "unfinished")) {
						return false
					}
				}
				return true
			})
		})
	}
}
