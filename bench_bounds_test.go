//go:build bench

package main

// 15. Bounds (issue 37): every fault kind of README "Reliability", fault →
// the next command's first output, a few times, against the bound the
// README derives for it. Three candidates on the benchmark's 3-member
// ensemble (tickTime τ = 200 ms), each through a proxy per member (so that
// one client can be cut off), with a command that ignores SIGTERM and
// ticks every 2 ms: a new fencing token's first tick is the next command's
// first output, and the ticks show any overlap, which fails the section.
// BENCH_BOUNDS_T sets the session timeout (default ballot's 5 s),
// BENCH_BOUNDS_REPS the runs per fault (3), BENCH_BOUNDS_ONLY a comma list
// of fault keys.
//
// 16. Random faults (opt-in: BENCH_RANDOM_FAULTS=8m, BENCH_RANDOM_SEED=N,
// BENCH_RANDOM_KEYS a comma list of fault keys to draw from):
// the same faults drawn at random for that long, one after another with a
// random pause (0–T) between, a third of them with a second fault beside
// (a follower stopped, a member paused); the share of time a command ran, every gap
// with its fault and bound, and any overlap (fails the run).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/zookeeper"
)

const (
	// boundsMs stands for the "milliseconds" of a bound: a few round trips
	// and the command's start; the target for a deleted proposal.
	boundsMs    = 100 * time.Millisecond
	boundsGrace = time.Second // --stop-grace-period: the command ignores SIGTERM
)

func benchBoundsT() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("BENCH_BOUNDS_T")); err == nil && d > 0 {
		return d
	}
	return 5 * time.Second
}

func benchBoundsReps() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_BOUNDS_REPS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// ---------------------------------------------------------------------------
// the ticks, read as they grow

type boundsTenure struct {
	token, cand string
	first, last time.Time
}

type boundsTicks struct {
	path string
	off  int64
	rest []byte
	by   map[string]*boundsTenure
	list []*boundsTenure // by first tick
}

func (l *boundsTicks) read() {
	f, err := os.Open(l.path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(l.off, io.SeekStart); err != nil {
		return
	}
	b, _ := io.ReadAll(f)
	l.off += int64(len(b))
	b = append(l.rest, b...)
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		l.rest = b
		return
	}
	l.rest = append([]byte(nil), b[i+1:]...)
	added := false
	for _, line := range strings.Split(string(b[:i]), "\n") {
		fs := strings.Fields(line)
		if len(fs) != 5 || fs[0] != "TICK" {
			continue
		}
		ns, err := strconv.ParseInt(fs[4], 10, 64)
		if err != nil {
			continue
		}
		ts := time.Unix(0, ns)
		tn := l.by[fs[2]]
		if tn == nil {
			tn = &boundsTenure{token: fs[2], cand: fs[1], first: ts, last: ts}
			l.by[fs[2]] = tn
			l.list = append(l.list, tn)
			added = true
		}
		if ts.Before(tn.first) {
			tn.first = ts
		}
		if ts.After(tn.last) {
			tn.last = ts
		}
	}
	if added {
		sort.SliceStable(l.list, func(i, j int) bool { return l.list[i].first.Before(l.list[j].first) })
	}
}

// overlap is the longest time two tenures ran at once.
func (l *boundsTicks) overlap() (time.Duration, string) {
	var worst time.Duration
	var what string
	var prev *boundsTenure
	for _, tn := range l.list {
		if prev != nil && tn.first.Before(prev.last) {
			if o := prev.last.Sub(tn.first); o > worst {
				worst, what = o, fmt.Sprintf("token %s ran until %s, token %s started at %s",
					prev.token, prev.last.Format("15:04:05.000"), tn.token, tn.first.Format("15:04:05.000"))
			}
		}
		if prev == nil || tn.last.After(prev.last) {
			prev = tn
		}
	}
	return worst, what
}

// gaps are the intervals within [from, to] when no command ticked longer
// than min.
func (l *boundsTicks) gaps(from, to time.Time, min time.Duration) [][2]time.Time {
	var out [][2]time.Time
	covered := from
	for _, tn := range l.list {
		if tn.last.Before(covered) {
			continue
		}
		if tn.first.After(covered) {
			end := tn.first
			if end.After(to) {
				end = to
			}
			if end.Sub(covered) > min {
				out = append(out, [2]time.Time{covered, end})
			}
		}
		covered = tn.last
		if !covered.Before(to) {
			break
		}
	}
	if covered.Before(to) && to.Sub(covered) > min {
		out = append(out, [2]time.Time{covered, to})
	}
	return out
}

// ---------------------------------------------------------------------------
// the election

type boundsEnv struct {
	t       *testing.T
	b       *benchEnv
	e       *benchElection
	ticks   *boundsTicks
	proxies map[string][]*tcpProxy
	ids     []string
	T, tau  time.Duration
}

func newBoundsEnv(t *testing.T, b *benchEnv, name string) *boundsEnv {
	T := benchBoundsT()
	e := b.election(t, name, T.String(), "2ms", "--stop-grace-period", boundsGrace.String())
	e.child = "stubborn"
	s := &boundsEnv{t: t, b: b, e: e, ticks: &boundsTicks{path: e.stamps, by: map[string]*boundsTenure{}},
		proxies: map[string][]*tcpProxy{}, ids: []string{"c1", "c2", "c3"}, T: T, tau: b.zk.TickTime()}
	for _, id := range s.ids {
		for _, srv := range b.zk.Servers() {
			s.proxies[id] = append(s.proxies[id], newTCPProxy(t, []string{srv}))
		}
	}
	e.perCand = func(id string) ([]string, []string) {
		var addrs []string
		for _, p := range s.proxies[id] {
			addrs = append(addrs, p.Addr())
		}
		return addrs, nil
	}
	for _, id := range s.ids {
		e.add(id)
		time.Sleep(100 * time.Millisecond)
	}
	s.settle()
	return s
}

// latest is the tenure that started last and whether it ticks now.
func (s *boundsEnv) latest() (*boundsTenure, bool) {
	s.ticks.read()
	if len(s.ticks.list) == 0 {
		return nil, false
	}
	tn := s.ticks.list[len(s.ticks.list)-1]
	return tn, time.Since(tn.last) < 100*time.Millisecond
}

// settle waits until a command ticks and every candidate stands (one
// proposal each), every restarted candidate again in line.
func (s *boundsEnv) settle() {
	s.t.Helper()
	deadline := time.Now().Add(2*s.T + 60*time.Second)
	for {
		for _, id := range s.ids {
			if s.e.current[id].Exited() {
				s.e.add(id)
			}
		}
		_, ticking := s.latest()
		children, _, err := s.b.conn.Children(s.e.base)
		if ticking && err == nil && len(sortedProposals(children)) == len(s.ids) {
			time.Sleep(500 * time.Millisecond) // every candidate in line, its watches set
			if _, ticking := s.latest(); ticking {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("bounds: the election did not settle: ticking %v, proposals %v (%v)", ticking, children, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// next waits up to within for a command started at or after at under a
// token other than prev; nil if none came.
func (s *boundsEnv) next(prev string, at time.Time, within time.Duration) *boundsTenure {
	for deadline := time.Now().Add(within); ; time.Sleep(2 * time.Millisecond) {
		s.ticks.read()
		for _, tn := range s.ticks.list {
			if tn.token != prev && !tn.first.Before(at.Add(-time.Millisecond)) {
				return tn
			}
		}
		if time.Now().After(deadline) {
			return nil
		}
	}
}

// leaderProposal is the proposal node of the baton's holder.
func (s *boundsEnv) leaderProposal() string {
	s.t.Helper()
	for try := 0; try < 50; try++ {
		_, bst, err := s.b.conn.Exists(s.e.base + "/" + batonName)
		children, _, cerr := s.b.conn.Children(s.e.base)
		if err == nil && cerr == nil && bst != nil {
			for _, n := range sortedProposals(children) {
				if _, st, err := s.b.conn.Exists(s.e.base + "/" + n); err == nil && st != nil && st.EphemeralOwner == bst.EphemeralOwner {
					return s.e.base + "/" + n
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("bounds: no proposal holds the baton")
	return ""
}

func (s *boundsEnv) delete(path string) time.Time {
	s.t.Helper()
	for try := 0; ; try++ {
		at := time.Now()
		err := s.b.conn.Delete(path, -1)
		if err == nil || errors.Is(err, zk.ErrNoNode) && try > 0 {
			return at
		}
		if !zookeeper.Retryable(err) || try > 20 {
			s.t.Fatalf("bounds: delete %s: %v", path, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// keeperOf is ballot's keeper: its child.
func keeperOf(p *ballotProc) int {
	for _, pid := range descendants(p.Pid()) {
		if parentPid(pid) == p.Pid() {
			return pid
		}
	}
	return 0
}

// memberOf is the member holding cand's session.
func (s *boundsEnv) memberOf(id string) int {
	if m := benchMemberOf(s.b.zk, benchSessionOf(s.e.current[id])); m >= 0 {
		return m
	}
	for m, p := range s.proxies[id] {
		if p.Conns() > 0 {
			return m
		}
	}
	return 0
}

// ---------------------------------------------------------------------------
// the faults

type boundsFault struct {
	key, name string
	formula   string                           // the README's bound
	bound     func(s *boundsEnv) time.Duration // 0: nothing may fail (no new command within 2T)
	// inject makes the fault on candidate id (the leader, but for the
	// random run's anyCand faults) and returns the moment measured from and
	// what to do once the next command runs (or the watch ends).
	inject func(s *boundsEnv, id string) (at time.Time, after func())
}

// anyCand: a fault of one candidate's processes; on a follower nothing may
// fail.
func (f boundsFault) anyCand() bool {
	switch f.key {
	case "sigterm", "sigkill", "host", "cut", "stop-short", "stop-resume", "stop-stay", "keeper-stop":
		return true
	}
	return false
}

func (s *boundsEnv) expiry() time.Duration {
	return s.T + 3*s.tau/2 + batonWait(s.T) + boundsMs
}

func boundsFaults() []boundsFault {
	ms := func(*boundsEnv) time.Duration { return boundsMs }
	exp := func(s *boundsEnv) time.Duration { return s.expiry() }
	none := func(*boundsEnv) time.Duration { return 0 }
	expF := "`T + 3τ/2 + W` + ms"
	return []boundsFault{
		{"sigterm", "ballot SIGTERMed (the command ignores it)", "`g` + ms", func(*boundsEnv) time.Duration { return boundsGrace + boundsMs },
			func(s *boundsEnv, id string) (time.Time, func()) {
				p := s.e.current[id]
				at := time.Now()
				p.Signal(syscall.SIGTERM)
				return at, func() { p.Wait(30 * time.Second) }
			}},
		{"sigkill", "ballot SIGKILLed, its host alive", "ms", ms,
			func(s *boundsEnv, id string) (time.Time, func()) {
				p := s.e.current[id]
				at := time.Now()
				p.Signal(syscall.SIGKILL)
				return at, func() { p.Wait(30 * time.Second) }
			}},
		{"host", "the host dies (ballot, keeper and command SIGKILLed at once)", expF, exp,
			func(s *boundsEnv, id string) (time.Time, func()) {
				p := s.e.current[id]
				at := time.Now()
				hostDies(p)
				return at, func() { p.Wait(30 * time.Second) }
			}},
		{"cut", "the leader cut off from ZooKeeper (every link blackholed)", expF, exp,
			func(s *boundsEnv, id string) (time.Time, func()) {
				at := time.Now()
				for _, px := range s.proxies[id] {
					px.Blackhole(true)
				}
				return at, func() {
					for _, px := range s.proxies[id] {
						px.Blackhole(false)
					}
				}
			}},
		{"stop-short", "ballot SIGSTOPped for T/4", "none", none,
			func(s *boundsEnv, id string) (time.Time, func()) {
				p := s.e.current[id]
				at := time.Now()
				p.Signal(syscall.SIGSTOP)
				time.Sleep(s.T / 4)
				p.Signal(syscall.SIGCONT)
				return at, func() {}
			}},
		{"stop-resume", "ballot SIGSTOPped past its lease, resumed at 25T/32 (from the resume)", "ms after the resume", ms,
			func(s *boundsEnv, id string) (time.Time, func()) {
				p := s.e.current[id]
				p.Signal(syscall.SIGSTOP)
				// after the keeper's latest kill (11T/16), before the
				// session's earliest expiry (7T/8): as TestResumedLeaderReleasesOnItsSession
				time.Sleep(25 * s.T / 32)
				at := time.Now()
				p.Signal(syscall.SIGCONT)
				return at, func() {}
			}},
		{"stop-stay", "ballot SIGSTOPped past its lease, not resumed", expF, exp,
			func(s *boundsEnv, id string) (time.Time, func()) {
				p := s.e.current[id]
				at := time.Now()
				p.Signal(syscall.SIGSTOP)
				return at, func() { p.Signal(syscall.SIGKILL); p.Wait(30 * time.Second) }
			}},
		{"keeper-stop", "the keeper alone SIGSTOPped for 2T", "none", none,
			func(s *boundsEnv, id string) (time.Time, func()) {
				k := keeperOf(s.e.current[id])
				at := time.Now()
				if k <= 0 { // a follower without a keeper; never kill(0)
					return at, func() {}
				}
				_ = syscall.Kill(k, syscall.SIGSTOP)
				return at, func() { _ = syscall.Kill(k, syscall.SIGCONT) }
			}},
		{"keeper-delete", "the keeper SIGSTOPped, then the proposal deleted", "250 ms + ms", func(*boundsEnv) time.Duration { return 250*time.Millisecond + boundsMs },
			func(s *boundsEnv, id string) (time.Time, func()) {
				k := keeperOf(s.e.current[id])
				prop := s.leaderProposal()
				if k <= 0 {
					s.t.Fatalf("bounds: the leader %s has no keeper", id)
				}
				_ = syscall.Kill(k, syscall.SIGSTOP)
				time.Sleep(50 * time.Millisecond)
				at := s.delete(prop)
				return at, func() { _ = syscall.Kill(k, syscall.SIGCONT) }
			}},
		{"proposal", "the leader's proposal deleted", "ms", ms,
			func(s *boundsEnv, id string) (time.Time, func()) {
				return s.delete(s.leaderProposal()), func() {}
			}},
		{"baton", "the baton deleted", "ms", ms,
			func(s *boundsEnv, id string) (time.Time, func()) {
				return s.delete(s.e.base + "/" + batonName), func() {}
			}},
		{"member-restart", "the leader's ZooKeeper member restarted (SIGTERM, start)", "none", none,
			func(s *boundsEnv, id string) (time.Time, func()) {
				m := s.memberOf(id)
				at := time.Now()
				s.b.zk.Restart(m)
				return at, func() {}
			}},
		{"member-pause", "the leader's ZooKeeper member SIGSTOPped for 0.3T", "none", none,
			func(s *boundsEnv, id string) (time.Time, func()) {
				m := s.memberOf(id)
				at := time.Now()
				s.b.zk.Pause(m)
				time.Sleep(3 * s.T / 10)
				s.b.zk.Resume(m)
				return at, func() {}
			}},
		{"zkleader-restart", "the ZooKeeper leader member restarted", "none", none,
			func(s *boundsEnv, id string) (time.Time, func()) {
				l := s.b.zk.Leader()
				at := time.Now()
				s.b.zk.Restart(l)
				return at, func() {}
			}},
	}
}

type boundsResult struct {
	f      boundsFault
	bound  time.Duration
	ds     []time.Duration // fault → next command; for "none", only the failures
	runs   int
	misses int // over the bound, or no command within the wait
}

// once makes fault f on the current leader and measures it.
func (s *boundsEnv) once(f boundsFault) (d time.Duration, failedOver bool, at time.Time) {
	s.t.Helper()
	s.settle()
	cur, _ := s.latest()
	return s.onceOn(f, cur, cur.cand, f.bound(s))
}

// onceOn makes fault f on candidate id while cur runs, bound its bound (0:
// nothing may fail).
func (s *boundsEnv) onceOn(f boundsFault, cur *boundsTenure, id string, bound time.Duration) (d time.Duration, failedOver bool, at time.Time) {
	s.t.Helper()
	at, after := f.inject(s, id)
	within := 2 * s.T
	if bound > 0 {
		within = 2*bound + 10*time.Second
	}
	nx := s.next(cur.token, at, within)
	after()
	if nx == nil {
		if bound > 0 {
			s.t.Errorf("bounds: %s: no command within %v", f.key, within)
			return within, true, at
		}
		return 0, false, at
	}
	d = nx.first.Sub(at)
	if bound == 0 || d > bound {
		// what each took its time over: their logs around the fault
		for _, c := range s.ids {
			s.t.Logf("bounds: %s over its bound (%v > %v); %s's log:\n%s", f.key, d.Round(time.Millisecond), bound, c, benchTail(s.e.current[c].out.String(), 25))
		}
	}
	return d, true, at
}

func benchBounds(t *testing.T, b *benchEnv) string {
	s := newBoundsEnv(t, b, "bounds")
	only := map[string]bool{}
	for _, k := range strings.Split(os.Getenv("BENCH_BOUNDS_ONLY"), ",") {
		if k != "" {
			only[k] = true
		}
	}
	reps := benchBoundsReps()
	var out []boundsResult
	for _, f := range boundsFaults() {
		if len(only) > 0 && !only[f.key] {
			continue
		}
		r := boundsResult{f: f, bound: f.bound(s)}
		for i := 0; i < reps; i++ {
			d, failed, _ := s.once(f)
			r.runs++
			if failed {
				r.ds = append(r.ds, d)
				if r.bound == 0 || d > r.bound {
					r.misses++
				}
			}
			t.Logf("bounds: %s run %d: failed over %v in %v (bound %v)", f.key, i+1, failed, d.Round(time.Millisecond), r.bound)
		}
		out = append(out, r)
	}
	s.settle()
	if o, what := s.ticks.overlap(); o > 0 {
		t.Errorf("bounds: two commands at once for %v: %s", o, what)
	}
	s.e.stopAll()
	sec := benchBoundsSection(s, out)
	t.Logf("bounds:\n%s", sec)
	return sec
}

func benchBoundsSection(s *boundsEnv, rs []boundsResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## 15. Every fault against its bound\n\n")
	fmt.Fprintf(&b, "`go test -tags bench -run '^TestBench$/bounds$' -count=1 -v .` (issue 37). Three candidates, `T = %s` (`W = %s`), "+
		"the ensemble's `τ = %s`; each through a proxy per member; the command ignores SIGTERM (`--stop-grace-period %s` = `g`) and ticks every 2 ms. "+
		"Fault → the next command's first tick, %d runs a fault, each on the leader of the moment. The bounds are README \"Reliability\"'s, "+
		"with `ms` = %s for their \"milliseconds\" (a few round trips and the command's start). \"none\": nothing may fail; a new command within 2T is a miss. "+
		"No two commands ever ran at once (the section fails otherwise).\n\n",
		s.T, batonWait(s.T), s.tau, boundsGrace, benchBoundsReps(), boundsMs)
	b.WriteString("| fault | bound | here | runs | min | median | max | verdict |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		here := "none"
		if r.bound > 0 {
			here = benchMs(r.bound)
		}
		if len(r.ds) == 0 {
			fmt.Fprintf(&b, "| %s | %s | %s | %d | — | — | — | %s |\n", r.f.name, r.f.formula, here, r.runs, benchVerdict(r.misses == 0))
			continue
		}
		d := benchSummarize(r.ds)
		fmt.Fprintf(&b, "| %s | %s | %s | %d (%d failed over) | %s | %s | %s | %s |\n", r.f.name, r.f.formula, here, r.runs, len(r.ds),
			benchMs(d.min), benchMs(d.med), benchMs(d.max), benchVerdict(r.misses == 0))
	}
	b.WriteString("\n")
	return b.String()
}

// ---------------------------------------------------------------------------
// 16. random faults

type randomGap struct {
	from, to time.Time
	fault    string
	bound    time.Duration
}

func benchRandomFaults(t *testing.T, b *benchEnv) string {
	spec := os.Getenv("BENCH_RANDOM_FAULTS")
	if spec == "" {
		return "## 16. Random faults\n\nNot run: opt-in, `BENCH_RANDOM_FAULTS=8m` (and `BENCH_RANDOM_SEED=N`).\n\n"
	}
	dur, err := time.ParseDuration(spec)
	if err != nil {
		t.Fatalf("BENCH_RANDOM_FAULTS=%q: %v", spec, err)
	}
	seed := time.Now().UnixNano()
	if v, err := strconv.ParseInt(os.Getenv("BENCH_RANDOM_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewSource(seed))
	s := newBoundsEnv(t, b, "random")
	var faults []boundsFault
	only := os.Getenv("BENCH_RANDOM_KEYS") // a comma list: draw from these faults only
	for _, f := range boundsFaults() {
		if only == "" || strings.Contains(","+only+",", ","+f.key+",") {
			faults = append(faults, f)
		}
	}
	type done struct {
		key        string
		at, healed time.Time
		bound      time.Duration
	}
	var log []done
	start := time.Now()
	count := map[string]int{}
	for time.Since(start) < dur {
		f := faults[rng.Intn(len(faults))]
		s.settle()
		// A second fault at once, a third of the time, on something other
		// than the leader: a follower stopped T/4, or a member paused 0.3T
		// (not beside a member's restart: the harness does one at a time).
		key, extra := f.key, time.Duration(0)
		var wg sync.WaitGroup
		if rng.Intn(3) == 0 {
			delay := time.Duration(rng.Int63n(int64(s.T / 2)))
			cur, _ := s.latest()
			var followers []*ballotProc
			for _, id := range s.ids {
				if id != cur.cand {
					followers = append(followers, s.e.current[id])
				}
			}
			if strings.HasPrefix(f.key, "member-") || strings.HasPrefix(f.key, "zkleader-") || rng.Intn(2) == 0 {
				p := followers[rng.Intn(len(followers))]
				key, extra = key+" + a follower stopped T/4", s.T/4
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(delay)
					p.Signal(syscall.SIGSTOP)
					time.Sleep(s.T / 4)
					p.Signal(syscall.SIGCONT)
				}()
			} else {
				m := rng.Intn(s.b.zk.Size())
				key, extra = key+fmt.Sprintf(" + member %d paused 0.3T", m), 3*s.T/10
				wg.Add(1)
				go func() {
					defer wg.Done()
					time.Sleep(delay)
					s.b.zk.Pause(m)
					time.Sleep(3 * s.T / 10)
					s.b.zk.Resume(m)
				}()
			}
		}
		cur, _ := s.latest()
		id, bound := cur.cand, f.bound(s)
		if f.anyCand() {
			// any of the three, as faults come: a follower's costs nothing
			if id = s.ids[rng.Intn(len(s.ids))]; id != cur.cand {
				key, bound = key+" (a follower)", 0
			}
		}
		d, failed, at := s.onceOn(f, cur, id, bound)
		wg.Wait()
		count[f.key]++
		t.Logf("random: %s at +%v: failed over %v in %v", key, at.Sub(start).Round(time.Second), failed, d.Round(time.Millisecond))
		if f.key == "stop-resume" && bound > 0 {
			bound += 25 * s.T / 32 // its bound counts from the resume; a gap from the stop
		}
		if bound > 0 {
			bound += extra // the second fault may hold up the successor as long as it lasts
		}
		log = append(log, done{key: key, at: at, healed: time.Now(), bound: bound})
		time.Sleep(time.Duration(rng.Int63n(int64(s.T))))
	}
	s.settle()
	end := time.Now()
	s.ticks.read()
	overlap, what := s.ticks.overlap()
	if overlap > 0 {
		t.Errorf("random: two commands at once for %v: %s", overlap, what)
	}
	var down time.Duration
	var gaps []randomGap
	for _, g := range s.ticks.gaps(start, end, 20*time.Millisecond) {
		down += g[1].Sub(g[0])
		rg := randomGap{from: g[0], to: g[1], fault: "?"}
		// the fault made last before the gap ended
		for _, l := range log {
			if !l.at.After(g[1]) {
				rg.fault, rg.bound = l.key, l.bound
			}
		}
		gaps = append(gaps, rg)
	}
	total := end.Sub(start)
	s.e.stopAll()
	var w strings.Builder
	fmt.Fprintf(&w, "## 16. Random faults\n\n`BENCH_RANDOM_FAULTS=%s BENCH_RANDOM_SEED=%d go test -tags bench -run '^TestBench$/random$' -count=1 -v -timeout 0 .`: "+
		"the faults of section 15 drawn at random, a random pause of 0–T between, a third of them with a second beside (a follower stopped T/4 or a member paused 0.3T; its length added to the bound); `T = %s`, 3 candidates, the command ignores SIGTERM.\n\n",
		spec, seed, s.T)
	var keys []string
	for k := range count {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var faultList []string
	for _, k := range keys {
		faultList = append(faultList, fmt.Sprintf("%s ×%d", k, count[k]))
	}
	fmt.Fprintf(&w, "%d faults in %s (%s). A command ran **%.1f %%** of the time (target ≥ 95 %%); %s without one; overlap %s.\n\n",
		len(log), total.Round(time.Second), strings.Join(faultList, ", "), 100*float64(total-down)/float64(total), down.Round(time.Millisecond), overlap)
	w.WriteString("| gap | fault | bound | verdict |\n|---|---|---|---|\n")
	for _, g := range gaps {
		b := "none"
		if g.bound > 0 {
			b = benchMs(g.bound)
		}
		ok := g.bound > 0 && g.to.Sub(g.from) <= g.bound
		fmt.Fprintf(&w, "| %s | %s | %s | %s |\n", benchMs(g.to.Sub(g.from)), g.fault, b, benchVerdict(ok))
	}
	w.WriteString("\n")
	t.Logf("random:\n%s", w.String())
	return w.String()
}
