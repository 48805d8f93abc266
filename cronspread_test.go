package main

import (
	"testing"
	"time"
)

// TestSpreadOffset: --spread's offset is whole seconds in [0, D), the same
// for the same path (every host, every restart), and spreads paths that
// differ only in their last byte.
func TestSpreadOffset(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path   string
		spread time.Duration
	}{
		{"/ballot/backup", 0},
		{"/ballot/backup", 500 * time.Millisecond},
		{"/ballot/backup", time.Second},
		{"/ballot/backup", 90 * time.Second},
		{"/ballot/backup", time.Hour},
		{"/apps/ballot/nightly", 24 * time.Hour},
	} {
		o := spreadOffset(tc.path, tc.spread)
		if o != spreadOffset(tc.path, tc.spread) {
			t.Errorf("%s --spread %s: not deterministic", tc.path, tc.spread)
		}
		if o < 0 || (tc.spread >= time.Second && o >= tc.spread) || (tc.spread < 2*time.Second && o != 0) || o%time.Second != 0 {
			t.Errorf("%s --spread %s: offset %s, want whole seconds in [0, %s)", tc.path, tc.spread, o, tc.spread)
		}
	}
	seen := map[time.Duration]bool{}
	for i := 0; i < 20; i++ {
		seen[spreadOffset("/ballot/job"+string(rune('a'+i)), time.Hour)] = true
	}
	if len(seen) < 15 {
		t.Errorf("20 paths differing in their last byte got only %d offsets in an hour", len(seen))
	}
}

// TestSpreadSchedule: with an offset, the run due at now is the latest
// scheduled time whose start (time + offset) has come, and the next is the
// first after the recorded one whose start is still to come; the scheduled
// times themselves do not move.
func TestSpreadSchedule(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	daily := cronSchedule{expr: "0 0 * * *", loc: time.UTC}
	w := &cronWork{sched: daily, offset: 37*time.Minute + 12*time.Second}
	for _, tc := range []struct {
		now, last          string
		wantLatest, wantNx string
	}{
		// before today's start: yesterday's time is the latest started
		{"2026-01-15T00:37:11Z", "2026-01-14T00:00:00Z", "2026-01-14T00:00:00Z", "2026-01-15T00:00:00Z"},
		// at the start: today's
		{"2026-01-15T00:37:12Z", "2026-01-14T00:00:00Z", "2026-01-15T00:00:00Z", "2026-01-16T00:00:00Z"},
		// after it ran: the next is tomorrow's
		{"2026-01-15T00:37:13Z", "2026-01-15T00:00:00Z", "2026-01-15T00:00:00Z", "2026-01-16T00:00:00Z"},
		// nominal time passed, start not yet: today's is next
		{"2026-01-15T00:10:00Z", "2026-01-14T00:00:00Z", "2026-01-14T00:00:00Z", "2026-01-15T00:00:00Z"},
	} {
		latest, err := w.latestStarted(at(tc.now))
		if err != nil || !latest.Equal(at(tc.wantLatest)) {
			t.Errorf("now %s: latest started %s (%v), want %s", tc.now, latest, err, tc.wantLatest)
		}
		next, err := w.nextStarting(at(tc.now), at(tc.last))
		if err != nil || !next.Equal(at(tc.wantNx)) {
			t.Errorf("now %s, last %s: next %s (%v), want %s", tc.now, tc.last, next, err, tc.wantNx)
		}
		if s := w.startOf(next); !s.After(at(tc.now)) {
			t.Errorf("now %s: next starts %s, not after now", tc.now, s)
		}
	}
}
