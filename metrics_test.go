package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMetricsTransitions: what each call adds to the figures, as the file
// says them: leadership changes count edges, not calls; exits by code; the
// slot only with --slots > 1 and while leading; cron times as Unix seconds;
// skips by reason.
func TestMetricsTransitions(t *testing.T) {
	connected := true
	m := newMetrics(filepath.Join(t.TempDir(), "m.prom"), "/e", "a", func() bool { return connected }, nil)
	prom := func() map[string]float64 { return parseProm(t, m.render()) }
	check := func(step string, want map[string]float64) {
		t.Helper()
		got := prom()
		for k, v := range want {
			if g, ok := got[k]; v < 0 && ok || v >= 0 && (!ok || g != v) {
				t.Errorf("%s: %s = %v (present %v), want %v", step, k, g, ok, v)
			}
		}
	}
	const absent = -1
	check("new", map[string]float64{"ballot_up": 1, "ballot_leader": 0, "ballot_zookeeper_connected": 1, "ballot_leadership_changes_total": 0,
		"ballot_preemptions_total": 0, "ballot_slot": absent, "ballot_cron_last_run_timestamp_seconds": absent, "ballot_lease_renewal_seconds": absent})
	m.Leader(true)
	m.Leader(true)
	m.Slot(3, 2)
	m.CommandRunning(true)
	check("leading", map[string]float64{"ballot_leader": 1, "ballot_leadership_changes_total": 1, "ballot_slot": 2, "ballot_command_running": 1})
	m.CommandExited(0)
	m.CommandExited(143)
	m.CommandExited(143)
	m.Paused(true)
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	m.CronRun(at)
	m.CronSucceeded(at.Add(-time.Minute))
	m.CronSkipped("paused")
	m.CronSkipped("paused")
	m.CronSkipped("still running")
	m.Preempted()
	connected = false
	check("ran", map[string]float64{"ballot_command_running": 0, `ballot_command_exits_total{code="0"}`: 1, `ballot_command_exits_total{code="143"}`: 2,
		"ballot_paused": 1, "ballot_cron_last_run_timestamp_seconds": float64(at.Unix()),
		"ballot_cron_last_success_timestamp_seconds": float64(at.Unix() - 60), `ballot_cron_skipped_total{reason="paused"}`: 2,
		`ballot_cron_skipped_total{reason="still running"}`: 1, "ballot_preemptions_total": 1, "ballot_zookeeper_connected": 0})
	m.Leader(false)
	check("followed", map[string]float64{"ballot_leader": 0, "ballot_leadership_changes_total": 2, "ballot_slot": absent})
	if text := m.render(); strings.Index(text, `code="0"`) > strings.Index(text, `code="143"`) {
		t.Errorf("exit codes not in order:\n%s", text)
	}

	var none *metrics // no --metrics-file: every call is a no-op
	none.Leader(true)
	none.CronSkipped("paused")
	done := make(chan struct{})
	none.loop(nil, done)
	<-done
	if newMetrics("", "/e", "a", nil, nil) != nil {
		t.Error("metrics without a file")
	}
}

// TestMetricsLease: the renewal round trips and the time left come from
// the current lease; the largest round trip outlives the leadership.
func TestMetricsLease(t *testing.T) {
	clk := &testClock{boot: bootTime(time.Hour), wall: time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)}
	l := testLease(2*time.Second, 0, clk, true)
	l.latency, l.maxLat = 30*time.Millisecond, 80*time.Millisecond
	current := l
	m := newMetrics(filepath.Join(t.TempDir(), "m.prom"), "/e", "a", nil, func() *lease { return current })
	got := parseProm(t, m.render())
	if got["ballot_lease_renewal_seconds"] != 0.03 || got["ballot_lease_renewal_max_seconds"] != 0.08 ||
		got["ballot_lease_remaining_seconds"] != l.Left().Round(100*time.Millisecond).Seconds() || l.Left() <= 0 {
		t.Errorf("while leading: %v (lease left %s)", got, l.Left())
	}
	current = nil
	got = parseProm(t, m.render())
	_, renewal := got["ballot_lease_renewal_seconds"]
	_, left := got["ballot_lease_remaining_seconds"]
	if renewal || left || got["ballot_lease_renewal_max_seconds"] != 0.08 {
		t.Errorf("after leading: %v", got)
	}
}

// TestMetricsFileReplaced: the file is replaced whole, by a rename (a
// reader holding the old one reads it whole), readable by node_exporter,
// rewritten only when its content changed, no temporary file left; on
// stop it says ballot_up 0 and nothing leads or runs.
func TestMetricsFileReplaced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.prom")
	m := newMetrics(path, "/e", "a", func() bool { return true }, nil)
	m.Leader(true)
	m.write()
	old, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if fi, err := old.Stat(); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	m.CommandRunning(true)
	m.write()
	if b, _ := os.ReadFile(path); string(b) != m.render() {
		t.Fatalf("the file says:\n%s\nwant:\n%s", b, m.render())
	}
	was := make([]byte, 1<<16)
	n, _ := old.Read(was)
	if got := parseProm(t, string(was[:n])); got["ballot_command_running"] != 0 || got["ballot_leader"] != 1 {
		t.Errorf("the replaced file changed under its reader: %v", got)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	m.write()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("rewritten with nothing changed: %v", err)
	}

	stop, done := make(chan struct{}), make(chan struct{})
	go m.loop(stop, done)
	m.Paused(true)
	close(stop)
	<-done
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := parseProm(t, string(b))
	if got["ballot_up"] != 0 || got["ballot_leader"] != 0 || got["ballot_command_running"] != 0 || got["ballot_paused"] != 0 || got["ballot_zookeeper_connected"] != 0 {
		t.Errorf("after stop: %v", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
