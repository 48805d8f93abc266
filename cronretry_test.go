package main

import (
	"testing"
	"time"
)

// TestRetryDelay: D before attempt 2, doubling, at most 10m or D.
func TestRetryDelay(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		k    int
		want time.Duration
	}{
		{10 * time.Second, 1, 10 * time.Second},
		{10 * time.Second, 2, 20 * time.Second},
		{10 * time.Second, 3, 40 * time.Second},
		{time.Minute, 4, 8 * time.Minute},
		{time.Minute, 5, 10 * time.Minute},
		{time.Minute, 60, 10 * time.Minute},
		{time.Hour, 3, time.Hour},
		{0, 5, 0},
		{time.Nanosecond, 200, 10 * time.Minute},
	} {
		if got := retryDelay(tc.d, tc.k); got != tc.want {
			t.Errorf("retryDelay(%s, %d) = %s, want %s", tc.d, tc.k, got, tc.want)
		}
	}
}
