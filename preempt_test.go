package main

// Unit tests of preemption's decision (preemptionDue): whom a leader counts
// --preempt-after for, and when that one is due, look after look.

import (
	"fmt"
	"testing"
	"time"
)

func TestPreemptionDue(t *testing.T) {
	const after = 10 * time.Second
	a := bootTime(after)
	name := func(priority int, seq int) string {
		return fmt.Sprintf("/e/_c_aa-%sproposal-%010d", priorityTag(priority), seq)
	}
	ours := name(0, 1)
	type look struct {
		first   string   // the first in line other than ours; "" none
		rest    []string // the others in line behind it
		now     bootTime
		counted string // "" nobody
		due     bootTime
	}
	for _, tc := range []struct {
		name     string
		priority int // this leader's
		looks    []look
	}{
		{"nobody else in line: nobody counted", 0, []look{
			{first: "", now: 100},
		}},
		{"an equal or lower priority is never counted", 0, []look{
			{first: name(0, 2), now: 100},
			{first: name(-3, 2), now: 200},
		}},
		{"a higher priority is due --preempt-after from when this leader first saw it", 0, []look{
			{first: name(5, 2), now: 100, counted: name(5, 2), due: 100 + a},
			{first: name(5, 2), now: 150, counted: name(5, 2), due: 100 + a},
			{first: name(5, 2), now: 100 + a, counted: name(5, 2), due: 100 + a},
		}},
		{"priority is compared with this leader's, not with 0", 5, []look{
			{first: name(5, 2), now: 100},
			{first: name(6, 3), now: 200, counted: name(6, 3), due: 200 + a},
		}},
		{"one that leaves the line and comes back starts again", 0, []look{
			{first: name(5, 2), now: 100, counted: name(5, 2), due: 100 + a},
			{first: "", now: 200},
			{first: name(5, 2), now: 300, counted: name(5, 2), due: 300 + a},
		}},
		{"a withdrawn candidate standing again is a new proposal: counted anew", 0, []look{
			{first: name(5, 2), now: 100, counted: name(5, 2), due: 100 + a},
			{first: name(5, 9), now: 300, counted: name(5, 9), due: 300 + a},
		}},
		{"one that stayed in line behind a higher one keeps its time", 0, []look{
			{first: name(5, 2), now: 100, counted: name(5, 2), due: 100 + a},
			{first: name(7, 3), rest: []string{name(5, 2)}, now: 200, counted: name(7, 3), due: 200 + a},
			{first: name(5, 2), now: 300, counted: name(5, 2), due: 100 + a},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]bootTime{}
			for i, l := range tc.looks {
				line := map[string]bool{ours: true}
				if l.first != "" {
					line[l.first] = true
				}
				for _, n := range l.rest {
					line[n] = true
				}
				counted, due := preemptionDue(l.first, line, tc.priority, seen, l.now, after)
				if counted != l.counted || counted != "" && due != l.due {
					t.Fatalf("look %d at %d: counted %q due %d; want %q due %d", i, l.now, counted, due, l.counted, l.due)
				}
			}
		})
	}
}
