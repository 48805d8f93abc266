package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ballot/internal/slog"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// testHealth is a health state with no check running: the test records
// the results.
func testHealth(failures int) (*health, *syncBuffer) {
	var log syncBuffer
	r := &runner{set: &Settings{HealthFailures: failures}, log: newLogger(&log, "human", slog.LevelDebug)}
	return &health{r: r, bad: make(chan struct{}), good: make(chan struct{})}, &log
}

// TestHealthTransitions: untested is not healthy; one pass makes a
// candidate healthy; it turns unhealthy only after health-failures fails in
// a row (a pass in between starts the count again), with Bad closed then
// and a fresh Bad once healthy again.
func TestHealthTransitions(t *testing.T) {
	h, log := testHealth(3)
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	if h.Healthy() {
		t.Fatal("healthy before any check")
	}
	h.record(false, at)
	if st := h.status(); st.Healthy || st.ConsecutiveFailures != 1 || !st.LastCheck.Equal(at) {
		t.Fatalf("after a failed first check: %+v", st)
	}
	if strings.Contains(log.String(), string(logEvUnhealthy)) {
		t.Fatalf("a candidate never healthy was reported as turning unhealthy:\n%s", log.String())
	}
	h.record(true, at.Add(time.Second))
	bad := h.Bad()
	if !h.Healthy() || h.status().ConsecutiveFailures != 0 || closed(bad) {
		t.Fatalf("after a pass: %+v, bad closed %v", h.status(), closed(bad))
	}
	for _, ok := range []bool{false, false, true, false, false} {
		h.record(ok, at)
	}
	if !h.Healthy() || closed(bad) {
		t.Fatalf("two fails, a pass, two fails: unhealthy with health-failures 3: %+v", h.status())
	}
	h.record(false, at)
	if h.Healthy() || !closed(bad) {
		t.Fatalf("the third fail in a row: healthy %v, bad closed %v", h.Healthy(), closed(bad))
	}
	if !strings.Contains(log.String(), "consecutive_failures=3") || strings.Count(log.String(), string(logEvUnhealthy)) != 1 {
		t.Fatalf("want one unhealthy event naming 3 failures:\n%s", log.String())
	}
	h.record(false, at) // still unhealthy: no second event
	if n := strings.Count(log.String(), string(logEvUnhealthy)); n != 1 {
		t.Fatalf("%d unhealthy events for one withdrawal", n)
	}
	h.record(true, at)
	if !h.Healthy() || closed(h.Bad()) || h.Bad() == bad {
		t.Fatal("healthy again: Bad must be a fresh, open channel")
	}
}

// TestHealthWaitHealthy: WaitHealthy returns at the pass that makes the
// candidate healthy, false when stopped first, and true at once when there
// is no health check (nil health).
func TestHealthWaitHealthy(t *testing.T) {
	var none *health
	if !none.WaitHealthy(nil) || !none.Healthy() || none.Bad() != nil {
		t.Fatal("without a health check a candidate is always healthy and never turns bad")
	}
	h, _ := testHealth(1)
	stop := make(chan struct{})
	close(stop)
	if h.WaitHealthy(stop) {
		t.Fatal("WaitHealthy said healthy when stopped before any pass")
	}
	got := make(chan bool)
	go func() { got <- h.WaitHealthy(make(chan struct{})) }()
	h.record(false, time.Now())
	h.record(true, time.Now())
	if !<-got {
		t.Fatal("WaitHealthy false after a pass")
	}
	h.record(false, time.Now()) // health-failures 1: unhealthy at once
	go func() { got <- h.WaitHealthy(make(chan struct{})) }()
	h.record(true, time.Now())
	if !<-got {
		t.Fatal("WaitHealthy false after healthy again")
	}
}

// TestHealthLoop: the loop runs the real check command: healthy while it
// passes, unhealthy once it fails, and a check that outlives the health
// timeout counts as a failure.
func TestHealthLoop(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "ok")
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	r := &runner{set: &Settings{HealthCheck: []string{"sh", "-c", `test -e "$0" || exec sleep 60`, flag},
		HealthInterval: time.Millisecond, HealthTimeout: 100 * time.Millisecond, HealthFailures: 2},
		log: newLogger(&log, "human", slog.LevelDebug), stopping: make(chan struct{})}
	defer close(r.stopping)
	h := newHealth(r)
	if !h.WaitHealthy(nil) {
		t.Fatal("never healthy")
	}
	bad := h.Bad()
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	<-bad // the check now hangs until killed at the health timeout
	if !strings.Contains(log.String(), "health check timed out") {
		t.Fatalf("turned unhealthy without a timed-out check:\n%s", log.String())
	}
}
