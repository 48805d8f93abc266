package main

import (
	"strconv"
	"strings"
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

// TestHashExpr: H fields (Jenkins' syntax) become values hashed from the
// election's path, within the field's range or the one given, the same
// for the same path; expressions without H are left alone; bad H forms
// are refused naming the field.
func TestHashExpr(t *testing.T) {
	t.Parallel()
	const key = "/ballot/backup"
	valid := []struct {
		expr  string
		check func(segs []string) bool
	}{
		{"H H * * *", func(s []string) bool {
			return s[0] == "0" && inRange(s[1], 0, 59) && inRange(s[2], 0, 23) && s[3] == "*"
		}},
		{"H(0-29) 3 * * *", func(s []string) bool { return inRange(s[1], 0, 29) && s[2] == "3" }},
		{"H/15 * * * *", func(s []string) bool { return stepOf(s[1], 15, 59) }},
		{"H H(8-17)/2 * * 1-5", func(s []string) bool { return inRange(s[1], 0, 59) && stepFrom(s[2], 8, 9, 17, 2) && s[5] == "1-5" }},
		{"H * * * * *", func(s []string) bool { return inRange(s[0], 0, 59) && s[1] == "*" }},
		{"0 0 H * *", func(s []string) bool { return inRange(s[3], 1, 28) }},
		{"0 0 1 H *", func(s []string) bool { return inRange(s[4], 1, 12) }},
		{"0 0 * * H", func(s []string) bool { return inRange(s[5], 0, 6) }},
		{"h 3,H 1 * *", func(s []string) bool {
			p := strings.Split(s[2], ",")
			return inRange(s[1], 0, 59) && p[0] == "3" && inRange(p[1], 0, 23)
		}},
	}
	for _, tc := range valid {
		got, err := hashExpr(tc.expr, key)
		if again, _ := hashExpr(tc.expr, key); err != nil || got != again || !tc.check(strings.Fields(got)) {
			t.Errorf("hashExpr(%q) = %q, %v", tc.expr, got, err)
			continue
		}
		if _, err := parseSchedule(got, "--schedule", time.UTC, time.Now()); err != nil {
			t.Errorf("hashExpr(%q) = %q, which gronx refuses: %v", tc.expr, got, err)
		}
	}
	for _, expr := range []string{"@daily", "@every 1h", "0 3 * * THU", "0 3 * * *"} {
		if got, err := hashExpr(expr, key); err != nil || got != expr {
			t.Errorf("hashExpr(%q) = %q, %v; want it unchanged", expr, got, err)
		}
	}
	if a, _ := hashExpr("H H * * *", "/ballot/a"); a == func() string { b, _ := hashExpr("H H * * *", "/ballot/b"); return b }() {
		t.Logf("two paths hashed to the same time %q (possible, unlikely)", a)
	}
	for _, tc := range []struct{ expr, want string }{
		{"H(30-10) * * * *", "minute field H(30-10)"},
		{"H(0-60) * * * *", "minute field H(0-60)"},
		{"0 H/0 * * *", "hour field H/0"},
		{"0 0 H(1-31) * *", "day-of-month field H(1-31)"},
		{"Hx * * * *", "minute field HX"},
		{"0 0 0 1 1 * H", "year"},
	} {
		if _, err := hashExpr(tc.expr, key); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("hashExpr(%q): %v, want an error naming %q", tc.expr, err, tc.want)
		}
	}
}

func inRange(s string, lo, hi int) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= lo && n <= hi
}

// stepOf: s is "k-hi/n" with k below n.
func stepOf(s string, n, hi int) bool { return stepFrom(s, 0, n-1, hi, n) }

// stepFrom: s is "k-hi/n" with lo <= k <= top.
func stepFrom(s string, lo, top, hi, n int) bool {
	r, step, ok := strings.Cut(s, "/")
	k, end, ok2 := strings.Cut(r, "-")
	return ok && ok2 && inRange(k, lo, top) && end == strconv.Itoa(hi) && step == strconv.Itoa(n)
}
