package main

// --metrics-file: a Prometheus text-format file for node_exporter's
// textfile collector, kept up to date by the candidate. It is written to a
// temporary file and renamed, so a reader never sees half of it; it is
// rewritten on every change and refreshed every few seconds (for the
// connection state), but only when its content changed; on exit it says
// ballot_up 0.

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// metricsRefresh bounds how stale ballot_zookeeper_connected can be.
const metricsRefresh = 5 * time.Second

type metrics struct {
	path   string
	labels string // election="…",candidate="…"

	mu                sync.Mutex
	up                bool
	leader            bool
	commandRunning    bool
	leadershipChanges int
	preemptions       int
	slots, slot       int // --slots, and the slot held while leader: set by a slot's holding only (0: no slots)
	exits             map[int]int
	cronLastRun       time.Time
	cronLastSuccess   time.Time
	cronSkipped       map[string]int
	hookFailures      map[string]int // by hook: on-run-end
	pingFailures      int            // --ping-url pings given up or dropped
	rerunLimit        map[string]int // --rerun-limit reached, by outcome
	sitsOutUntil      time.Time      // --rerun-limit handed over: sitting out until then
	paused            bool
	written           string
	connected         func() bool
	lease             func() *lease // the current leadership's, nil when not leading
	largestRenewal    time.Duration // since ballot started

	kick chan struct{}
}

func newMetrics(path, election, candidate string, connected func() bool, lease func() *lease) *metrics {
	if path == "" {
		return nil
	}
	m := &metrics{path: path, up: true, exits: map[int]int{}, cronSkipped: map[string]int{}, hookFailures: map[string]int{}, rerunLimit: map[string]int{}, connected: connected, lease: lease,
		labels: fmt.Sprintf(`election=%s,candidate=%s`, strconv.Quote(election), strconv.Quote(candidate)),
		kick:   make(chan struct{}, 1)}
	return m
}

// update changes the figures and has the file rewritten.
func (m *metrics) update(f func(m *metrics)) {
	if m == nil {
		return
	}
	m.mu.Lock()
	f(m)
	m.mu.Unlock()
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

func (m *metrics) Leader(on bool) {
	m.update(func(m *metrics) {
		if m.leader != on {
			m.leadershipChanges++
		}
		m.leader = on
	})
}
func (m *metrics) CommandRunning(on bool) { m.update(func(m *metrics) { m.commandRunning = on }) }
func (m *metrics) CommandExited(code int) {
	m.update(func(m *metrics) { m.commandRunning = false; m.exits[code]++ })
}
func (m *metrics) Paused(on bool) { m.update(func(m *metrics) { m.paused = on }) }
func (m *metrics) Preempted()     { m.update(func(m *metrics) { m.preemptions++ }) }
func (m *metrics) Slot(n, k int)  { m.update(func(m *metrics) { m.slots, m.slot = n, k }) }
func (m *metrics) CronRun(scheduled time.Time) {
	m.update(func(m *metrics) { m.cronLastRun = scheduled })
}
func (m *metrics) CronSucceeded(scheduled time.Time) {
	m.update(func(m *metrics) { m.cronLastSuccess = scheduled })
}
func (m *metrics) CronSkipped(reason string) { m.update(func(m *metrics) { m.cronSkipped[reason]++ }) }
func (m *metrics) HookFailed(hook string)    { m.update(func(m *metrics) { m.hookFailures[hook]++ }) }
func (m *metrics) PingFailed()               { m.update(func(m *metrics) { m.pingFailures++ }) }
func (m *metrics) RerunLimit(outcome string, sitsOutUntil time.Time) {
	m.update(func(m *metrics) {
		m.rerunLimit[outcome]++
		if !sitsOutUntil.IsZero() {
			m.sitsOutUntil = sitsOutUntil
		}
	})
}

// loop writes the file on every change and every metricsRefresh, until
// stop; then it writes ballot_up 0.
func (m *metrics) loop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	if m == nil {
		return
	}
	t := time.NewTicker(metricsRefresh)
	defer t.Stop()
	for {
		m.write()
		select {
		case <-m.kick:
		case <-t.C:
		case <-stop:
			m.mu.Lock()
			m.up, m.leader, m.commandRunning, m.paused = false, false, false, false
			m.connected = func() bool { return false }
			m.lease = func() *lease { return nil }
			m.mu.Unlock()
			m.write()
			return
		}
	}
}

func (m *metrics) render() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	gauge := func(name, help string, v bool) {
		n := 0
		if v {
			n = 1
		}
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n%s{%s} %d\n", name, help, name, name, m.labels, n)
	}
	gauge("ballot_up", "1 while ballot runs; 0 once it has exited", m.up)
	gauge("ballot_leader", "1 while this candidate leads the election", m.leader)
	gauge("ballot_command_running", "1 while this candidate's command runs", m.commandRunning)
	gauge("ballot_zookeeper_connected", "1 while the ZooKeeper session is connected", m.connected != nil && m.connected())
	gauge("ballot_paused", "1 while this candidate leads a paused election (ballot pause)", m.paused)
	if m.slots != 0 {
		fmt.Fprintf(&b, "# HELP ballot_slot The slot this candidate holds (--slots), while it leads\n# TYPE ballot_slot gauge\n")
		if m.leader {
			fmt.Fprintf(&b, "ballot_slot{%s} %d\n", m.labels, m.slot)
		}
	}
	fmt.Fprintf(&b, "# HELP ballot_leadership_changes_total Times this candidate became leader or stopped leading\n# TYPE ballot_leadership_changes_total counter\nballot_leadership_changes_total{%s} %d\n", m.labels, m.leadershipChanges)
	fmt.Fprintf(&b, "# HELP ballot_preemptions_total Times this candidate, leading, handed over to a candidate of higher --priority\n# TYPE ballot_preemptions_total counter\nballot_preemptions_total{%s} %d\n", m.labels, m.preemptions)
	b.WriteString("# HELP ballot_command_exits_total Command exits, by exit code (128+N: signal N)\n# TYPE ballot_command_exits_total counter\n")
	codes := make([]int, 0, len(m.exits))
	for c := range m.exits {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	for _, c := range codes {
		fmt.Fprintf(&b, "ballot_command_exits_total{%s,code=\"%d\"} %d\n", m.labels, c, m.exits[c])
	}
	seconds := func(name, help string, d time.Duration, ok bool) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
		if ok {
			fmt.Fprintf(&b, "%s{%s} %.3f\n", name, m.labels, d.Seconds())
		}
	}
	var l *lease
	if m.lease != nil {
		l = m.lease()
	}
	var last, largest, left time.Duration
	if l != nil {
		last, largest = l.Renewals()
		left = max(l.Left(), 0)
		m.largestRenewal = max(m.largestRenewal, largest)
	}
	seconds("ballot_lease_renewal_seconds", "Round trip of the last lease renewal (a quorum write), while leading", last, l != nil)
	seconds("ballot_lease_renewal_max_seconds", "The largest lease renewal round trip since ballot started", m.largestRenewal, m.largestRenewal > 0)
	seconds("ballot_lease_remaining_seconds", "While leading: how long the command may still run should no renewal succeed from now on (run cron between runs: 0, the lease lapses while nothing runs)", left.Round(100*time.Millisecond), l != nil)
	stamp := func(name, help string, t time.Time) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
		if !t.IsZero() {
			fmt.Fprintf(&b, "%s{%s} %d\n", name, m.labels, t.Unix())
		}
	}
	stamp("ballot_cron_last_run_timestamp_seconds", "Scheduled time of the last run cron run started by this candidate", m.cronLastRun)
	stamp("ballot_cron_last_success_timestamp_seconds", "Scheduled time of the last run cron run of this candidate that exited 0", m.cronLastSuccess)
	// A counter with one more label, its values in a stable order.
	byLabel := func(name, help, label string, counts map[string]int) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s counter\n", name, help, name)
		keys := make([]string, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sortStrings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s{%s,%s=%s} %d\n", name, m.labels, label, strconv.Quote(k), counts[k])
		}
	}
	byLabel("ballot_cron_skipped_total", "Scheduled times this candidate skipped as leader, by reason", "reason", m.cronSkipped)
	stamp("ballot_sitting_out_until_timestamp_seconds", "--rerun-limit handed the leadership over: until then no leader that reaches its limit hands over to this candidate", m.sitsOutUntil)
	byLabel("ballot_rerun_limit_reached_total", "--rerun-limit reached, by outcome: handed-over, restarted-here (nobody ready to take over)", "outcome", m.rerunLimit)
	byLabel("ballot_hook_failures_total", "Hooks that failed, timed out or could not be executed, by hook (on-run-end)", "hook", m.hookFailures)
	fmt.Fprintf(&b, "# HELP ballot_ping_failures_total --ping-url pings given up after their tries, or dropped\n# TYPE ballot_ping_failures_total counter\nballot_ping_failures_total{%s} %d\n", m.labels, m.pingFailures)
	return b.String()
}

// write replaces the file, through a temporary file renamed over it, when
// its content changed.
func (m *metrics) write() {
	text := m.render()
	if text == m.written {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(m.path), "."+filepath.Base(m.path)+".tmp-")
	if err != nil {
		return
	}
	_, err = tmp.WriteString(text)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		_ = os.Chmod(tmp.Name(), 0o644)
		err = os.Rename(tmp.Name(), m.path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return
	}
	m.written = text
}
