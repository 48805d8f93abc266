package main

// --metrics-file: a Prometheus text-format file for node_exporter's
// textfile collector, kept up to date by the candidate. It is written to a
// temporary file and renamed, so a reader never sees half of it; it is
// rewritten on every change and refreshed every few seconds (for the
// connection state), but only when its content changed; on exit it says
// ballot_up 0. run crontab writes one file for all of its jobs: each
// metric family once, with every job's samples (node_exporter refuses a
// file that repeats a family), one writer for the process.

import (
	"maps"
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

// metrics: one election's figures, in a file of its own (run once, run
// cron) or in run crontab's file with the other jobs'.
type metrics struct {
	file     *metricsFile
	election string // the file's samples are in its order
	labels   string // election="…",candidate="…"

	mu             sync.Mutex
	up             bool
	leader         bool
	commandRunning bool
	paused         bool
	slots, slot    int // --slots, and the slot held while leader: set by a slot's holding only (0: no slots)
	metricsCounts
	connected func() bool
	lease     func() *lease // the current leadership's, nil when not leading
}

// metricsCounts: the counters and times, which a crontab's changed job
// carries over to its runner of the new settings, as one process would.
type metricsCounts struct {
	leadershipChanges int
	preemptions       int
	exits             map[int]int
	cronLastRun       time.Time
	cronLastSuccess   time.Time
	cronSkipped       map[string]int
	hookFailures      map[string]int // by hook: on-run-end
	pingFailures      int            // --ping-url pings given up or dropped
	rerunLimit        map[string]int // --rerun-limit reached, by outcome
	sitsOutUntil      time.Time      // --rerun-limit handed over: sitting out until then
	largestRenewal    time.Duration  // since ballot started
}

func (c metricsCounts) clone() metricsCounts {
	c.exits, c.cronSkipped, c.hookFailures, c.rerunLimit = maps.Clone(c.exits), maps.Clone(c.cronSkipped), maps.Clone(c.hookFailures), maps.Clone(c.rerunLimit)
	return c
}

// metricsFile is the file and its one writer.
type metricsFile struct {
	path string
	// shared: run crontab's; its jobs' figures join it as each runner
	// starts and leave it as the crontab says (join, down, retain).
	shared bool

	mu        sync.Mutex
	elections []*metrics // by election path
	written   uint64     // the sum of the text last written, if wrote
	wrote     bool
	buf       metricFamilies // write's

	kick chan struct{}
}

func newMetrics(path, election, candidate string, connected func() bool, lease func() *lease) *metrics {
	if path == "" {
		return nil
	}
	f := &metricsFile{path: path, kick: make(chan struct{}, 1)}
	m := f.member(election, candidate, connected, lease)
	m.up = true
	f.elections = []*metrics{m}
	return m
}

// newMetricsFile is run crontab's file, nil without --metrics-file.
func newMetricsFile(path string) *metricsFile {
	if path == "" {
		return nil
	}
	return &metricsFile{path: path, shared: true, kick: make(chan struct{}, 1)}
}

// member is one election's figures, not in the file until it joins.
func (f *metricsFile) member(election, candidate string, connected func() bool, lease func() *lease) *metrics {
	if f == nil {
		return nil
	}
	return &metrics{file: f, election: election, connected: connected, lease: lease,
		labels:        "election=" + strconv.Quote(election) + ",candidate=" + strconv.Quote(candidate),
		metricsCounts: metricsCounts{exits: map[int]int{}, cronSkipped: map[string]int{}, hookFailures: map[string]int{}, rerunLimit: map[string]int{}}}
}

// update changes the figures and has the file rewritten.
func (m *metrics) update(f func(m *metrics)) {
	if m == nil {
		return
	}
	m.mu.Lock()
	f(m)
	m.mu.Unlock()
	m.file.changed()
}

func (f *metricsFile) changed() {
	select {
	case f.kick <- struct{}{}:
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

// setDown: the figures of an election no longer run: ballot_up 0, and
// nothing leads, runs or is connected. m.mu held.
func (m *metrics) setDown() {
	m.up, m.leader, m.commandRunning, m.paused = false, false, false, false
	m.connected, m.lease = nil, nil
}

// start has a runner's figures written as its run starts: by its own
// file's loop until stop, or (a job of run crontab) by joining the
// process's file, whose one loop writes every job's.
func (m *metrics) start(stop <-chan struct{}, done chan<- struct{}) {
	if m != nil && m.file.shared {
		m.file.join(m)
		close(done)
		return
	}
	go m.loop(stop, done)
}

// loop writes the file of one election (run once, run cron).
func (m *metrics) loop(stop <-chan struct{}, done chan<- struct{}) {
	if m == nil || m.file.shared {
		close(done)
		return
	}
	m.file.loop(stop, done)
}

// loop writes the file on every change and every metricsRefresh, until
// stop; then it writes ballot_up 0 for every election in it.
func (f *metricsFile) loop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	if f == nil {
		return
	}
	t := time.NewTicker(metricsRefresh)
	defer t.Stop()
	for {
		f.write()
		select {
		case <-f.kick:
		case <-t.C:
		case <-stop:
			f.mu.Lock()
			for _, m := range f.elections {
				m.mu.Lock()
				m.setDown()
				m.mu.Unlock()
			}
			f.mu.Unlock()
			f.write()
			return
		}
	}
}

// join puts m in the file, in place of its election's figures there, if
// any (a changed job's runner of the old settings, which has ended; or
// the job's runner that ended by itself): their counters carry over.
func (f *metricsFile) join(m *metrics) {
	f.mu.Lock()
	i := 0
	for i < len(f.elections) && f.elections[i].election < m.election {
		i++
	}
	if i == len(f.elections) || f.elections[i].election != m.election {
		f.elections = append(f.elections, nil)
		copy(f.elections[i+1:], f.elections[i:])
	} else if old := f.elections[i]; old != m {
		old.mu.Lock()
		counts := old.metricsCounts.clone() // a late update of the old one's stays its own
		old.mu.Unlock()
		m.mu.Lock()
		m.metricsCounts = counts
		m.mu.Unlock()
	}
	f.elections[i] = m
	f.mu.Unlock()
	m.update(func(m *metrics) { m.up = true })
}

// down: m's runner has ended and no runner of its election is left to
// join: the figures the file holds for that election (m's, or those of
// the runner before it, should m have failed to start) say ballot_up 0.
func (f *metricsFile) down(m *metrics) {
	if f == nil || m == nil {
		return
	}
	f.mu.Lock()
	for _, e := range f.elections {
		if e.election == m.election {
			e.mu.Lock()
			e.setDown()
			e.mu.Unlock()
		}
	}
	f.mu.Unlock()
	f.changed()
}

// retain drops the figures of the elections not in keep (a job a reload
// removed, once its runner has ended).
func (f *metricsFile) retain(keep map[string]bool) {
	if f == nil {
		return
	}
	f.mu.Lock()
	kept := f.elections[:0]
	for _, m := range f.elections {
		if keep[m.election] {
			kept = append(kept, m)
		}
	}
	clear(f.elections[len(kept):])
	f.elections = kept
	f.mu.Unlock()
	f.changed()
}

// A metric family: its # HELP and # TYPE once, then its samples of each
// election in turn. Every election names the same families in the same
// order, so the i-th of each is the same family.
type metricFamilies struct {
	heads  []string
	bodies [][]byte
	i      int // the family the current election is at
}

// family starts the next family; shown: its header is written even
// without samples (ballot_slot only with --slots).
func (w *metricFamilies) family(name, help, kind string, shown bool) {
	w.i++
	if w.i >= len(w.heads) {
		w.heads = append(w.heads, "")
		w.bodies = append(w.bodies, nil)
	}
	if shown && w.heads[w.i] == "" {
		w.heads[w.i] = "# HELP " + name + " " + help + "\n# TYPE " + name + " " + kind + "\n"
	}
}

// sample adds name{labels,extra} value to the current family.
func (w *metricFamilies) sample(name, labels, extra, value string) {
	b := append(append(append(w.bodies[w.i], name...), '{'), labels...)
	if extra != "" {
		b = append(append(b, ','), extra...)
	}
	w.bodies[w.i] = append(append(append(b, "} "...), value...), '\n')
}

func (w *metricFamilies) String() string {
	var b strings.Builder
	for i, h := range w.heads {
		b.WriteString(h)
		b.Write(w.bodies[i])
	}
	return b.String()
}

// render is the file's text with this election alone in it.
func (m *metrics) render() string {
	w := &metricFamilies{}
	m.describe(w)
	return w.String()
}

// render is the file's text: every election's, each family once.
func (f *metricsFile) render() string {
	w := &metricFamilies{}
	f.describe(w)
	return w.String()
}

func (f *metricsFile) describe(w *metricFamilies) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range w.heads {
		w.heads[i], w.bodies[i] = "", w.bodies[i][:0]
	}
	for _, m := range f.elections {
		m.describe(w)
	}
}

// sum is the text's FNV-1a hash: a change told without keeping a copy
// (a crontab's text is large: 200 jobs, some 180 KB).
func (w *metricFamilies) sum() uint64 {
	x := uint64(14695981039346656037)
	for i, h := range w.heads {
		x = fnv1a(x, h)
		x = fnv1a(x, w.bodies[i])
	}
	return x
}

func fnv1a[T string | []byte](x uint64, s T) uint64 {
	for i := 0; i < len(s); i++ {
		x ^= uint64(s[i])
		x *= 1099511628211
	}
	return x
}

// describe adds m's samples to each family.
func (m *metrics) describe(w *metricFamilies) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w.i = -1
	gauge := func(name, help string, v bool) {
		n := 0
		if v {
			n = 1
		}
		w.family(name, help, "gauge", true)
		w.sample(name, m.labels, "", strconv.Itoa(n))
	}
	gauge("ballot_up", "1 while ballot runs; 0 once it has exited", m.up)
	gauge("ballot_leader", "1 while this candidate leads the election", m.leader)
	gauge("ballot_command_running", "1 while this candidate's command runs", m.commandRunning)
	gauge("ballot_zookeeper_connected", "1 while the ZooKeeper session is connected", m.connected != nil && m.connected())
	gauge("ballot_paused", "1 while this candidate leads a paused election (ballot pause)", m.paused)
	w.family("ballot_slot", "The slot this candidate holds (--slots), while it leads", "gauge", m.slots != 0)
	if m.slots != 0 && m.leader {
		w.sample("ballot_slot", m.labels, "", strconv.Itoa(m.slot))
	}
	counter := func(name, help string, n int) {
		w.family(name, help, "counter", true)
		w.sample(name, m.labels, "", strconv.Itoa(n))
	}
	counter("ballot_leadership_changes_total", "Times this candidate became leader or stopped leading", m.leadershipChanges)
	counter("ballot_preemptions_total", "Times this candidate, leading, handed over to a candidate of higher --priority", m.preemptions)
	w.family("ballot_command_exits_total", "Command exits, by exit code (128+N: signal N)", "counter", true)
	codes := make([]int, 0, len(m.exits))
	for c := range m.exits {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	for _, c := range codes {
		w.sample("ballot_command_exits_total", m.labels, `code="`+strconv.Itoa(c)+`"`, strconv.Itoa(m.exits[c]))
	}
	seconds := func(name, help string, d time.Duration, ok bool) {
		w.family(name, help, "gauge", true)
		if ok {
			w.sample(name, m.labels, "", strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
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
		w.family(name, help, "gauge", true)
		if !t.IsZero() {
			w.sample(name, m.labels, "", strconv.FormatInt(t.Unix(), 10))
		}
	}
	stamp("ballot_cron_last_run_timestamp_seconds", "Scheduled time of the last run cron run started by this candidate", m.cronLastRun)
	stamp("ballot_cron_last_success_timestamp_seconds", "Scheduled time of the last run cron run of this candidate that exited 0", m.cronLastSuccess)
	// A counter with one more label, its values in a stable order.
	byLabel := func(name, help, label string, counts map[string]int) {
		w.family(name, help, "counter", true)
		keys := make([]string, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sortStrings(keys)
		for _, k := range keys {
			w.sample(name, m.labels, label+"="+strconv.Quote(k), strconv.Itoa(counts[k]))
		}
	}
	byLabel("ballot_cron_skipped_total", "Scheduled times this candidate skipped as leader, by reason", "reason", m.cronSkipped)
	stamp("ballot_sitting_out_until_timestamp_seconds", "--rerun-limit handed the leadership over: until then no leader that reaches its limit hands over to this candidate", m.sitsOutUntil)
	byLabel("ballot_rerun_limit_reached_total", "--rerun-limit reached, by outcome: handed-over, restarted-here (nobody ready to take over)", "outcome", m.rerunLimit)
	byLabel("ballot_hook_failures_total", "Hooks that failed, timed out or could not be executed, by hook (on-run-end)", "hook", m.hookFailures)
	counter("ballot_ping_failures_total", "--ping-url pings given up after their tries, or dropped", m.pingFailures)
}

// write replaces the file when its content changed.
func (m *metrics) write() { m.file.write() }

// write replaces the file, through a temporary file renamed over it, when
// its content changed. Only the loop writes: it renders into the same
// buffers each time (a crontab's text made anew every metricsRefresh
// would be garbage enough to grow the heap), and the text goes out family
// by family, never whole in memory.
func (f *metricsFile) write() {
	w := &f.buf
	f.describe(w)
	sum := w.sum()
	if f.wrote && sum == f.written {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.path), "."+filepath.Base(f.path)+".tmp-")
	if err != nil {
		return
	}
	for i, h := range w.heads {
		if _, err = tmp.WriteString(h); err == nil {
			_, err = tmp.Write(w.bodies[i])
		}
		if err != nil {
			break
		}
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		_ = os.Chmod(tmp.Name(), 0o644)
		err = os.Rename(tmp.Name(), f.path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return
	}
	f.written, f.wrote = sum, true
}
