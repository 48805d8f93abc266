package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// testGovernor is a governor on a clock the test sets, recording what it
// does to the collector ("pct N", "free") instead of doing it.
func testGovernor(start int) (g *memGovernor, now *time.Duration, did *[]string) {
	now, did = new(time.Duration), &[]string{}
	pct := start
	g = &memGovernor{
		wake: make(chan struct{}, 1),
		now:  func() time.Duration { return *now },
		setPct: func(p int) int {
			old := pct
			pct = p
			return old
		},
		freeMem: func() { *did = append(*did, "free") },
	}
	return g, now, did
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
			{"check", 15, 0, []string{"pct 25", "free"}},
			{"check", 16, 0, nil}, // already resting: nothing again
		}},
		{"looked too early: wait the rest of the quiet period", 100, true, []step{
			{"check", 4, 11, nil},
		}},
		{"activity restarts the quiet period", 100, true, []step{
			{"stir", 10, 0, nil},
			{"check", 15, 10, nil},
			{"check", 25, 0, []string{"pct 25", "free"}},
		}},
		{"activity at rest restores the percent at once, then rests again after quiet", 100, true, []step{
			{"check", 15, 0, []string{"pct 25", "free"}},
			{"stir", 40, 0, []string{"pct 100"}},
			{"stir", 41, 0, nil}, // busy already: nothing to restore
			{"check", 50, 6, nil},
			{"check", 56, 0, []string{"pct 25", "free"}},
		}},
		{"GOGC=50: busy 50, rest 25", 50, true, []step{
			{"check", 15, 0, []string{"pct 25", "free"}},
			{"stir", 20, 0, []string{"pct 50"}},
		}},
		{"GOGC=10: rest keeps 10, still frees", 10, true, []step{
			{"check", 15, 0, []string{"pct 10", "free"}},
			{"stir", 20, 0, []string{"pct 10"}},
		}},
		{"GOGC=off: the governor stays off", -1, false, []step{
			{"stir", 20, 0, nil},
		}},
	}
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, now, did := testGovernor(tc.gogc)
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
	g, now, did := testGovernor(100)
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
