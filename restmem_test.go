package main

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// testGovernor is a governor on a clock the test sets, recording what it
// does to the collector ("pct N", "free", "drop", "watch") instead of
// doing it; collect runs what waits for a collection.
func testGovernor(start int) (g *memGovernor, now *time.Duration, did *[]string, collect func()) {
	now, did = new(time.Duration), &[]string{}
	pct := start
	var gcWaiters []func()
	g = &memGovernor{
		wake: make(chan struct{}, 1),
		now:  func() time.Duration { return *now },
		setPct: func(p int) int {
			old := pct
			pct = p
			return old
		},
		freeMem:   func() { *did = append(*did, "free") },
		dropPages: func() { *did = append(*did, "drop") },
		afterGC: func(f func()) {
			*did = append(*did, "watch")
			gcWaiters = append(gcWaiters, f)
		},
	}
	// A collection: what waited for one runs.
	collect = func() {
		fs := gcWaiters
		gcWaiters = nil
		for _, f := range fs {
			f()
		}
	}
	return g, now, did, collect
}

// TestMemGovernorDecisions: the governor's decisions as a function of
// its events, each step at a time on its clock. quiet is 15 s (T = 5 s).
// A step is "stir@S" (activity at S seconds) or "check@S" (the loop
// looks at S seconds), with what the governor did and, for a check, the
// wait it asked for (0: resting until stirred).
func TestMemGovernorDecisions(t *testing.T) {
	type step struct {
		op   string
		at   float64
		wait float64  // check only, seconds
		did  []string // percent changes and frees, in order
	}
	cases := []struct {
		name    string
		gogc    int // the process's percent at start
		started bool
		steps   []step
	}{
		{"quiet from the start: rest at 15 s, once", 100, true, []step{
			{"check", 15, 0, []string{"pct 25", "free", "drop", "watch"}},
			{"check", 16, 0, nil}, // already resting: nothing again
		}},
		{"looked too early: wait the rest of the quiet period", 100, true, []step{
			{"check", 4, 11, nil},
		}},
		{"activity restarts the quiet period", 100, true, []step{
			{"stir", 10, 0, nil},
			{"check", 15, 10, nil},
			{"check", 25, 0, []string{"pct 25", "free", "drop", "watch"}},
		}},
		{"activity at rest restores the percent at once, then rests again after quiet", 100, true, []step{
			{"check", 15, 0, []string{"pct 25", "free", "drop", "watch"}},
			{"stir", 40, 0, []string{"pct 100"}},
			{"stir", 41, 0, nil}, // busy already: nothing to restore
			{"check", 50, 6, nil},
			{"check", 56, 0, []string{"pct 25", "free", "drop", "watch"}},
		}},
		{"GOGC=50: busy 50, rest 25", 50, true, []step{
			{"check", 15, 0, []string{"pct 25", "free", "drop", "watch"}},
			{"stir", 20, 0, []string{"pct 50"}},
		}},
		{"GOGC=10: rest keeps 10, still frees", 10, true, []step{
			{"check", 15, 0, []string{"pct 10", "free", "drop", "watch"}},
			{"stir", 20, 0, []string{"pct 10"}},
		}},
		{"a collection at rest drops the pages again and watches on; busy, the watch ends", 100, true, []step{
			{"check", 15, 0, []string{"pct 25", "free", "drop", "watch"}},
			{"gc", 30, 0, []string{"drop", "watch"}},
			{"gc", 150, 0, []string{"drop", "watch"}},
			{"stir", 160, 0, []string{"pct 100"}},
			{"gc", 170, 0, nil},
		}},
		{"a watch of an earlier rest ends: one drop a collection", 100, true, []step{
			{"check", 15, 0, []string{"pct 25", "free", "drop", "watch"}},
			{"stir", 20, 0, []string{"pct 100"}},
			{"check", 35, 0, []string{"pct 25", "free", "drop", "watch"}},
			{"gc", 40, 0, []string{"drop", "watch"}},
		}},
		{"GOGC=off: the governor stays off", -1, false, []step{
			{"stir", 20, 0, nil},
		}},
	}
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, now, did, collect := testGovernor(tc.gogc)
			pct := g.setPct
			g.setPct = func(p int) int {
				old := pct(p)
				if p != 100 || old != tc.gogc { // start's read of the percent is not a change
					*did = append(*did, fmt.Sprintf("pct %d", p))
				}
				return old
			}
			if got := g.start(15*time.Second, nil); got != tc.started {
				t.Fatalf("start: %v, want %v", got, tc.started)
			}
			*did = nil
			for _, s := range tc.steps {
				*now = sec(s.at)
				var wait time.Duration
				switch s.op {
				case "stir":
					g.stir()
				case "check":
					wait = g.check()
				case "gc":
					collect()
				}
				if got, want := strings.Join(*did, ", "), strings.Join(s.did, ", "); got != want || wait != sec(s.wait) {
					t.Fatalf("%s@%v: did %q and wait %v, want %q and %v", s.op, s.at, got, wait, want, sec(s.wait))
				}
				*did = nil
			}
		})
	}
}

// TestMemGovernorStirWhileResting: the race the governor's order closes.
// An activity recorded after check decided to rest but before it set
// the rest percent must not leave the process at rest: check reads the
// last activity only after it marked itself resting, and stir reads
// resting only after it recorded the activity.
func TestMemGovernorStirWhileResting(t *testing.T) {
	g, now, did, _ := testGovernor(100)
	g.start(15*time.Second, nil)
	*did = nil
	*now = 20 * time.Second
	// The activity lands between check's mark and its read of last: as if
	// stir ran there (its store first, then its read of resting, which
	// it finds false as check has not marked yet in this order).
	g.last.Store(int64(*now))
	if w := g.check(); w != 15*time.Second {
		t.Fatalf("check after a fresh activity: wait %v, want 15s (no rest)", w)
	}
	if len(*did) != 0 {
		t.Fatalf("rested despite the activity: %v", *did)
	}
	if g.resting.Load() {
		t.Fatal("left marked resting")
	}
}

// TestAfterNextGCRunsAfterACollection: the watch of collections at rest
// hears of one (the runtime's finalizer of a sentinel).
func TestAfterNextGCRunsAfterACollection(t *testing.T) {
	ran := make(chan struct{})
	afterNextGC(func() { close(ran) })
	runtime.GC()
	select {
	case <-ran:
	case <-time.After(10 * time.Second): // the finalizer runs at once; this only bounds a failure
		t.Fatal("not run after a collection")
	}
}
