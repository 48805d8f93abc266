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

// metricsRich is an election's figures with every family holding samples
// (a leader of slot 2 of 3, two exit codes, skips, a hook and a ping
// failure, a rerun limit handed over, a lease of 2 s on a still clock).
func metricsRich(f *metricsFile, election, candidate string) *metrics {
	clk := &testClock{boot: bootTime(time.Hour), wall: time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)}
	l := testLease(2*time.Second, 0, clk, true)
	l.latency, l.maxLat = 30*time.Millisecond, 80*time.Millisecond
	connected, lease := func() bool { return true }, func() *lease { return l }
	var m *metrics
	if f == nil {
		m = newMetrics("/nonexistent/m.prom", election, candidate, connected, lease)
	} else {
		m = f.member(election, candidate, connected, lease)
		f.join(m)
	}
	m.Slot(3, 2)
	m.Leader(true)
	m.CommandExited(0)
	m.CommandExited(143)
	at := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	m.CronRun(at)
	m.CronSucceeded(at.Add(-time.Minute))
	m.CronSkipped("paused")
	m.CronSkipped("overlap")
	m.HookFailed("on-run-end")
	m.PingFailed()
	m.RerunLimit("handed-over", at.Add(time.Hour))
	m.Preempted()
	return m
}

// metricsOneElection is metricsRich's file as ballot wrote it before run
// crontab's file merged elections: one election's file stays byte for
// byte what it was.
const metricsOneElection = `# HELP ballot_up 1 while ballot runs; 0 once it has exited
# TYPE ballot_up gauge
ballot_up{election="/ballot/crontab/backup",candidate="host-1"} 1
# HELP ballot_leader 1 while this candidate leads the election
# TYPE ballot_leader gauge
ballot_leader{election="/ballot/crontab/backup",candidate="host-1"} 1
# HELP ballot_command_running 1 while this candidate's command runs
# TYPE ballot_command_running gauge
ballot_command_running{election="/ballot/crontab/backup",candidate="host-1"} 0
# HELP ballot_zookeeper_connected 1 while the ZooKeeper session is connected
# TYPE ballot_zookeeper_connected gauge
ballot_zookeeper_connected{election="/ballot/crontab/backup",candidate="host-1"} 1
# HELP ballot_paused 1 while this candidate leads a paused election (ballot pause)
# TYPE ballot_paused gauge
ballot_paused{election="/ballot/crontab/backup",candidate="host-1"} 0
# HELP ballot_slot The slot this candidate holds (--slots), while it leads
# TYPE ballot_slot gauge
ballot_slot{election="/ballot/crontab/backup",candidate="host-1"} 2
# HELP ballot_leadership_changes_total Times this candidate became leader or stopped leading
# TYPE ballot_leadership_changes_total counter
ballot_leadership_changes_total{election="/ballot/crontab/backup",candidate="host-1"} 1
# HELP ballot_preemptions_total Times this candidate, leading, handed over to a candidate of higher --priority
# TYPE ballot_preemptions_total counter
ballot_preemptions_total{election="/ballot/crontab/backup",candidate="host-1"} 1
# HELP ballot_command_exits_total Command exits, by exit code (128+N: signal N)
# TYPE ballot_command_exits_total counter
ballot_command_exits_total{election="/ballot/crontab/backup",candidate="host-1",code="0"} 1
ballot_command_exits_total{election="/ballot/crontab/backup",candidate="host-1",code="143"} 1
# HELP ballot_lease_renewal_seconds Round trip of the last lease renewal (a quorum write), while leading
# TYPE ballot_lease_renewal_seconds gauge
ballot_lease_renewal_seconds{election="/ballot/crontab/backup",candidate="host-1"} 0.030
# HELP ballot_lease_renewal_max_seconds The largest lease renewal round trip since ballot started
# TYPE ballot_lease_renewal_max_seconds gauge
ballot_lease_renewal_max_seconds{election="/ballot/crontab/backup",candidate="host-1"} 0.080
# HELP ballot_lease_remaining_seconds While leading: how long the command may still run should no renewal succeed from now on (run cron between runs: 0, the lease lapses while nothing runs)
# TYPE ballot_lease_remaining_seconds gauge
ballot_lease_remaining_seconds{election="/ballot/crontab/backup",candidate="host-1"} 1.400
# HELP ballot_cron_last_run_timestamp_seconds Scheduled time of the last run cron run started by this candidate
# TYPE ballot_cron_last_run_timestamp_seconds gauge
ballot_cron_last_run_timestamp_seconds{election="/ballot/crontab/backup",candidate="host-1"} 1795514400
# HELP ballot_cron_last_success_timestamp_seconds Scheduled time of the last run cron run of this candidate that exited 0
# TYPE ballot_cron_last_success_timestamp_seconds gauge
ballot_cron_last_success_timestamp_seconds{election="/ballot/crontab/backup",candidate="host-1"} 1795514340
# HELP ballot_cron_skipped_total Scheduled times this candidate skipped as leader, by reason
# TYPE ballot_cron_skipped_total counter
ballot_cron_skipped_total{election="/ballot/crontab/backup",candidate="host-1",reason="overlap"} 1
ballot_cron_skipped_total{election="/ballot/crontab/backup",candidate="host-1",reason="paused"} 1
# HELP ballot_sitting_out_until_timestamp_seconds --rerun-limit handed the leadership over: until then no leader that reaches its limit hands over to this candidate
# TYPE ballot_sitting_out_until_timestamp_seconds gauge
ballot_sitting_out_until_timestamp_seconds{election="/ballot/crontab/backup",candidate="host-1"} 1795518000
# HELP ballot_rerun_limit_reached_total --rerun-limit reached, by outcome: handed-over, restarted-here (nobody ready to take over)
# TYPE ballot_rerun_limit_reached_total counter
ballot_rerun_limit_reached_total{election="/ballot/crontab/backup",candidate="host-1",outcome="handed-over"} 1
# HELP ballot_hook_failures_total Hooks that failed, timed out or could not be executed, by hook (on-run-end)
# TYPE ballot_hook_failures_total counter
ballot_hook_failures_total{election="/ballot/crontab/backup",candidate="host-1",hook="on-run-end"} 1
# HELP ballot_ping_failures_total --ping-url pings given up after their tries, or dropped
# TYPE ballot_ping_failures_total counter
ballot_ping_failures_total{election="/ballot/crontab/backup",candidate="host-1"} 1
`

// TestMetricsFileMerge: run crontab's one file holds several elections'
// figures: each family once, its samples together, in the order of the
// elections' paths; each election's samples and headers are exactly its
// own file's; one election alone writes the file it always wrote. A job
// joining in place of its runner of old settings carries its counters on;
// down says ballot_up 0 for one job; retain drops a job's series; the
// loop's stop says ballot_up 0 for every job.
func TestMetricsFileMerge(t *testing.T) {
	if got := metricsRich(nil, "/ballot/crontab/backup", "host-1").render(); got != metricsOneElection {
		t.Errorf("one election's file changed:\n%s\nwant:\n%s", got, metricsOneElection)
	}

	path := filepath.Join(t.TempDir(), "m.prom")
	f := newMetricsFile(path)
	zeta := metricsRich(f, "/ballot/crontab/zeta", "host-1")
	alpha := f.member("/ballot/crontab/alpha", "host-1", func() bool { return true }, nil) // no --slots: ballot_slot's only sample is zeta's
	f.join(alpha)
	alpha.CommandExited(1)
	alpha.CronSkipped("missed")
	text := f.render()

	families := checkFamiliesOnce(t, text)
	for _, o := range families {
		if strings.Index(o, "zeta") >= 0 && strings.LastIndex(o, "alpha") > strings.Index(o, "zeta") {
			t.Errorf("samples not in the elections' order: %s", o)
		}
	}
	if _, ok := families["ballot_slot"]; !ok || !strings.Contains(text, `ballot_slot{election="/ballot/crontab/zeta",candidate="host-1"} 2`) {
		t.Errorf("ballot_slot (zeta's --slots 3) missing:\n%s", text)
	}
	// Each election's part of the file is its own file.
	for _, m := range []*metrics{alpha, zeta} {
		own := m.render()
		heads := map[string]bool{}
		for _, line := range strings.Split(own, "\n") {
			heads[line] = strings.HasPrefix(line, "#")
		}
		var mine []string
		for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			if heads[line] || strings.Contains(line, "{"+m.labels) {
				mine = append(mine, line)
			}
		}
		if got := strings.Join(mine, "\n") + "\n"; got != own {
			t.Errorf("%s's part of the file:\n%s\nwant its own file:\n%s", m.election, got, own)
		}
	}
	prom := func(election string) map[string]float64 {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return parseProm(t, filterElection(string(b), election))
	}

	// zeta's settings changed: its new runner joins in the old one's place.
	zeta2 := f.member("/ballot/crontab/zeta", "host-1", func() bool { return true }, nil)
	f.join(zeta2)
	zeta.CommandExited(0) // late, from the old runner: not the file's any more
	f.write()
	if z := prom("/ballot/crontab/zeta"); z["ballot_up"] != 1 || z[`ballot_command_exits_total{code="0"}`] != 1 ||
		z["ballot_leadership_changes_total"] != 1 || z["ballot_cron_last_run_timestamp_seconds"] == 0 || z["ballot_leader"] != 0 {
		t.Errorf("zeta after its change: %v; want its counters carried on, up, not leading", z)
	}
	f.down(zeta2)
	f.write()
	if z, a := prom("/ballot/crontab/zeta"), prom("/ballot/crontab/alpha"); z["ballot_up"] != 0 || a["ballot_up"] != 1 || z["ballot_zookeeper_connected"] != 0 {
		t.Errorf("zeta down: zeta %v, alpha %v", z, a)
	}
	f.retain(map[string]bool{"/ballot/crontab/alpha": true})
	f.write()
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "zeta") {
		t.Errorf("zeta's series left after retain:\n%s", b)
	}
	f.join(zeta2) // added again
	stop, done := make(chan struct{}), make(chan struct{})
	go f.loop(stop, done)
	close(stop)
	<-done
	for _, e := range []string{"/ballot/crontab/alpha", "/ballot/crontab/zeta"} {
		if m := prom(e); m["ballot_up"] != 0 || m["ballot_leader"] != 0 || m["ballot_command_running"] != 0 {
			t.Errorf("%s after stop: %v", e, m)
		}
	}
}

// filterElection is text with only election's samples (and every header).
func filterElection(text, election string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(line, "#") || strings.Contains(line, `{election="`+election+`"`) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// checkFamiliesOnce fails unless every family of a metrics file has one
// # HELP and one # TYPE, its samples right after them; it returns each
// family's samples' elections, in turn ("/e1 /e1 /e2 ").
func checkFamiliesOnce(t *testing.T, text string) map[string]string {
	t.Helper()
	families, heads, last := map[string]string{}, map[string]int{}, ""
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "#" {
			heads[f[1]+" "+f[2]]++
			if f[1] == "TYPE" {
				last = f[2]
				families[last] += ""
			}
			continue
		}
		name, labels, _ := strings.Cut(line, "{")
		if name != last {
			t.Errorf("sample %q away from its family's # TYPE (after %s's)", line, last)
		}
		e, _, _ := strings.Cut(strings.TrimPrefix(labels, `election="`), `"`)
		families[last] += e + " "
	}
	for head, n := range heads {
		if n != 1 {
			t.Errorf("# %s given %d times", head, n)
		}
	}
	for name := range families {
		if heads["HELP "+name] != 1 {
			t.Errorf("family %s without its # HELP", name)
		}
	}
	return families
}
