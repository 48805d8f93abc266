package main

import (
	"testing"
	"time"
)

// TestRerunLimitWindow: failures leave the window once older than it; the
// pause past the limit with nobody to hand over to doubles from 1 s, at
// most 1 min or the window.
func TestRerunLimitWindow(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	for _, tc := range []struct {
		fs     []time.Time
		window time.Duration
		left   int
	}{
		{nil, time.Minute, 0},
		{[]time.Time{ago(2 * time.Minute), ago(time.Minute), ago(59 * time.Second)}, time.Minute, 1}, // exactly D old: out
		{[]time.Time{ago(30 * time.Second), ago(time.Second)}, time.Minute, 2},
		{[]time.Time{ago(time.Hour)}, time.Minute, 0},
	} {
		if got := recentFailures(tc.fs, now, tc.window); len(got) != tc.left {
			t.Errorf("recentFailures(%v, %s) kept %d, want %d", tc.fs, tc.window, len(got), tc.left)
		}
	}
	for _, tc := range []struct {
		k      int
		window time.Duration
		want   time.Duration
	}{
		{1, 10 * time.Minute, time.Second},
		{2, 10 * time.Minute, 2 * time.Second},
		{6, 10 * time.Minute, 32 * time.Second},
		{7, 10 * time.Minute, time.Minute},
		{40, 10 * time.Minute, time.Minute},
		{3, 3 * time.Second, 3 * time.Second},
	} {
		if got := rerunPause(tc.k, tc.window); got != tc.want {
			t.Errorf("rerunPause(%d, %s) = %s, want %s", tc.k, tc.window, got, tc.want)
		}
	}
}
