package zookeeper

import (
	"testing"
	"time"

	"ballot/internal/bootclock"
)

// TestWriterGrid: the renewals of a session's elections fall on one grid,
// started by the first to join, so that they share multi-ops; a lone
// lease renews every T/8 from its take, as before.
func TestWriterGrid(t *testing.T) {
	const every = 100 * time.Millisecond
	s := Detached(1, 800*time.Millisecond)
	a, b := s.Writer(), s.Writer()
	a.Join(1000 * bootclock.Time(time.Millisecond))
	for _, tc := range []struct {
		name string
		now  time.Duration
		want time.Duration
	}{
		{"at the take: T/8 later", 1000 * time.Millisecond, 1100 * time.Millisecond},
		{"woken on time", 1100 * time.Millisecond, 1200 * time.Millisecond},
		{"woken late: the next tick, not a whole round later", 1130 * time.Millisecond, 1200 * time.Millisecond},
		{"before the grid", 900 * time.Millisecond, 1000 * time.Millisecond},
	} {
		if got := a.Next(bootclock.Time(tc.now), every); got != bootclock.Time(tc.want) {
			t.Errorf("%s: next at %s, want %s", tc.name, time.Duration(got), tc.want)
		}
	}
	// A second lease joins the first's grid, whenever its take went.
	b.Join(1042 * bootclock.Time(time.Millisecond))
	if got := b.Next(1042*bootclock.Time(time.Millisecond), every); got != bootclock.Time(1100*time.Millisecond) {
		t.Errorf("a second lease renews first at %s, want on the grid at 1.1s", time.Duration(got))
	}
	// Once nobody is on it, the next to join starts it anew.
	a.Leave()
	b.Leave()
	b.Join(2042 * bootclock.Time(time.Millisecond))
	if got := b.Next(2042*bootclock.Time(time.Millisecond), every); got != bootclock.Time(2142*time.Millisecond) {
		t.Errorf("a lone lease after the grid emptied renews at %s, want its own T/8 later", time.Duration(got))
	}
}
