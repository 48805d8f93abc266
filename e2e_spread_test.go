package main

// --spread: each run starts the election's offset after its scheduled
// time, and a missed run is late (catch-up, --starting-deadline) from
// that start, not from its scheduled time.

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// spreadFor is a --spread whose offset for base lies in [lo, hi]: the
// offset is a hash of the path, so a test picks the spread to fit.
func spreadFor(t *testing.T, base string, lo, hi time.Duration) (spread, offset time.Duration) {
	t.Helper()
	for s := hi + time.Second; s < 10*time.Minute; s += time.Second {
		if o := spreadOffset(base, s); o >= lo && o <= hi {
			return s, o
		}
	}
	t.Fatalf("no --spread gives %s an offset in [%s, %s]", base, lo, hi)
	return 0, 0
}

// firstTick is when the first run's command started, from its tick file.
//
// The test command records its run before its first tick, so a run seen
// recorded may not have ticked yet: wait for the tick (the bound only ends
// a failing wait).
func firstTick(t *testing.T, file string) time.Time {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if at, ok := readFirstTick(file); ok {
			return at
		}
		if time.Now().After(deadline) {
			t.Fatalf("no tick in %s", file)
		}
	}
}

// readFirstTick: the first complete line's time (see fileLines: a line
// still being written is not read).
func readFirstTick(file string) (time.Time, bool) {
	data, err := os.ReadFile(file)
	if err != nil {
		return time.Time{}, false
	}
	if first, _, complete := strings.Cut(string(data), "\n"); complete {
		if fs := strings.Fields(first); len(fs) == 3 {
			if ns, err := strconv.ParseInt(fs[2], 10, 64); err == nil {
				return time.Unix(0, ns), true
			}
		}
	}
	return time.Time{}, false
}

// TestCronSpreadHostDeathCatchUp: with --spread the first run keeps its
// scheduled time (BALLOT_SCHEDULED_TIME) and starts O after it (O, the
// election's offset, is in [7 s, 9 s]). Then the leader's host dies 3T/4
// before a later run's start S + O; the successor leads about T after it
// (as in TestCronHostDeathCatchUp), T = 2 s. --starting-deadline is 3T:
// counted from the start, the run is ~T late and runs (once, by the
// successor, with its scheduled time S); counted from S it would be
// O + T >= 4.5T late and skipped. The schedule's step N = 5T leaves more
// than the failover between a start and the next time.
func TestCronSpreadHostDeathCatchUp(t *testing.T) {
	t.Parallel()
	const (
		T = 2 * time.Second
		N = 5 * T
	)
	c := sharedZK(t)
	e := newCronElection(t, c)
	spread, offset := spreadFor(t, e.base, 7*time.Second, 9*time.Second)
	flags := []string{"--on-child-success", "rerun", "--spread", spread.String(), "--starting-deadline", (3 * T).String()}
	a := e.add("a", "*/10 * * * * *", "10ms", flags...)
	e.waitRuns(1, N+offset+10*time.Second) // recorded: the election is not new
	first := e.checkOnce()[0]
	if first.Second()%10 != 0 {
		t.Errorf("BALLOT_SCHEDULED_TIME %s: want the schedule's own time, not the start", first)
	}
	if started := firstTick(t, e.ticks); started.Before(first.Add(offset)) {
		t.Errorf("the run of %s started at %s, before its start %s (offset %s)", first.Format(time.TimeOnly),
			started.Format("15:04:05.000"), first.Add(offset).Format(time.TimeOnly), offset)
	}
	b := e.add("b", "*/10 * * * * *", "10ms", flags...)
	b.WaitEvent(logEvFollowing, 10*time.Second)
	s := first.Add(N)
	for time.Until(s.Add(offset)) < 3*T/4+200*time.Millisecond {
		s = s.Add(N)
	}
	time.Sleep(time.Until(s.Add(offset - 3*T/4)))
	before := len(e.readRuns())
	killHost(a)
	a.Wait(5 * time.Second)

	ev := b.WaitEvent(logEvMissedRun, N)
	runs := e.waitRuns(before+1, T) // the command's own line, just after
	times := e.checkOnce()
	var ranS int
	for i, ts := range times {
		if ts.Equal(s) {
			ranS++
			if runs[i].candidate != "b" {
				t.Errorf("%s ran by %s, want the successor b", s, runs[i].candidate)
			}
		}
	}
	if ranS != 1 {
		t.Errorf("the missed time %s ran %d times, want once; runs %v", s.Format(time.TimeOnly), ranS, runs)
	}
	if late, err := time.ParseDuration(ev["late_by"]); err != nil || late >= offset {
		t.Errorf("missed run late_by %q: want it counted from the start %s, less than the offset %s", ev["late_by"], s.Add(offset).Format(time.TimeOnly), offset)
	}
	t.Logf("offset %s (--spread %s); the time missed by the host's death ran %s after its start", offset, spread, ev["late_by"])
	if b.Logged("missed by more than") {
		t.Errorf("b skipped the missed time:\n%s", b.out.String())
	}
}

// TestCronSpreadInfo: info shows the next run's scheduled time and, with
// --spread, its start; the same offset on every candidate.
func TestCronSpreadInfo(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newCronElection(t, c)
	const yearly = "0 0 1 1 *" // never due while the test runs
	a := e.add("a", yearly, "10ms", "--spread", "24h")
	e.leader(10 * time.Second)
	offset := spreadOffset(e.base, 24*time.Hour)
	var nr *infoNextRun
	for deadline := time.Now().Add(10 * time.Second); nr == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if inf, _ := infoJSON(t, c.Servers(), e.base); inf.Leader != nil {
			nr = inf.Leader.NextRun
		}
	}
	if nr == nil {
		t.Fatalf("info shows no next run:\n%s", a.out.String())
	}
	nominal, err1 := time.Parse(time.RFC3339, nr.Time)
	start, err2 := time.Parse(time.RFC3339, nr.StartsAt)
	if err1 != nil || err2 != nil || nominal.Month() != time.January || nominal.Day() != 1 || !start.Equal(nominal.Add(offset)) {
		t.Errorf("info's next run %+v: want 1 January and its start %s after it", nr, offset)
	}
	if in := time.Duration(nr.InMs) * time.Millisecond; in < time.Until(start)-time.Minute {
		t.Errorf("info's next run is in %s, want until its start %s", in, start)
	}
	out, code := reader(t, c.ConnString(), e.base, "info")
	if want := nr.Time + " +" + offset.String() + " spread"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("info's summary lacks %q (exit %d):\n%s", want, code, out)
	}
}

// TestCronHashedSchedule: an H field (here the seconds of H/5) becomes
// the value hashed from the election's path: every run's scheduled time
// has those seconds, the same as hashExpr computes here.
func TestCronHashedSchedule(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newCronElection(t, c)
	expr, err := hashExpr("H/5 * * * * *", e.base)
	if err != nil {
		t.Fatal(err)
	}
	k, _, _ := strings.Cut(strings.Fields(expr)[0], "-")
	e.add("a", "H/5 * * * * *", "10ms", "--on-child-success", "rerun")
	// Two runs come within 10 s of the election; the bound only ends a
	// failing wait, so it leaves a loaded machine's slow start room (in
	// one suite run ballot's first line came 12 s after its start).
	e.waitRuns(2, time.Minute)
	for _, ts := range e.checkOnce() {
		if strconv.Itoa(ts.Second()%5) != k {
			t.Errorf("a run at %s: want the seconds %s modulo 5 (%s)", ts.Format(time.TimeOnly), k, expr)
		}
	}
}
