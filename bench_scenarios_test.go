//go:build bench

package main

// The benchmark's scenarios: each runs its candidates, measures, and
// returns its figures; bench_report_test.go turns them into its section.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ---------------------------------------------------------------------------
// 1. clean handover

type benchHandoverResult struct {
	warmup   int
	gaps     benchDist
	overlaps int               // a command starting before its predecessor's exit
	steps    [][]time.Duration // exit → `command ended` → `resigning` → `elected leader` → next command
	keeper   []time.Duration   // `elected leader` → `command started`
	onCredit int               // handovers the successor started on credit (baton.go)
}

func benchHandover(t *testing.T, b *benchEnv) benchHandoverResult {
	const handovers, warmup = 60, 10
	e := b.election(t, "handover", "2s", "200ms", "--on-child-success", "reelect", "--on-child-error", "reelect")
	for _, id := range []string{"c1", "c2", "c3"} {
		e.add(id)
		time.Sleep(100 * time.Millisecond)
	}
	e.waitStarts(warmup+handovers+2, 3*time.Minute)
	e.stopAll()

	gaps, pairs, overlaps := benchHandovers(benchReadStamps(e.stamps))
	if len(gaps) < warmup+handovers {
		t.Fatalf("only %d handovers recorded", len(gaps))
	}
	gaps, pairs = gaps[warmup:warmup+handovers], pairs[warmup:warmup+handovers]
	r := benchHandoverResult{warmup: warmup, gaps: benchSummarize(gaps), overlaps: overlaps}
	t.Logf("clean handover: %s", r.gaps.row("handover"))
	r.steps, r.keeper = benchHandoverSteps(e, pairs)
	r.onCredit = len(benchLogEvents(e.runs, "baton handed over to us: starting on credit while the take goes out"))
	return r
}

// benchHandovers pairs each EXIT with the next START of another token, and
// counts the STARTs before the previous leader's EXIT (overlaps).
func benchHandovers(ss []benchStamp) (gaps []time.Duration, pairs [][2]benchStamp, overlaps int) {
	for i, s := range ss {
		if s.kind != "EXIT" {
			continue
		}
		for _, n := range ss[i+1:] {
			if n.kind == "START" && n.token != s.token {
				gaps = append(gaps, n.t.Sub(s.t))
				pairs = append(pairs, [2]benchStamp{s, n})
				break
			}
		}
	}
	// a START before the previous leader's EXIT would be an overlap
	var lastExit time.Time
	for _, s := range ss {
		if s.kind == "START" && !lastExit.IsZero() && s.t.Before(lastExit) {
			overlaps++
		}
		if s.kind == "EXIT" {
			lastExit = s.t
		}
	}
	return gaps, pairs, overlaps
}

// benchHandoverSteps: where the time goes, from ballot's logs (JSON:
// nanosecond timestamps).
func benchHandoverSteps(e *benchElection, pairs [][2]benchStamp) (steps [][]time.Duration, keeper []time.Duration) {
	ev := benchLogEvents(e.runs, "command ended", "resigning", "elected leader", "command started")
	steps = make([][]time.Duration, 4)
	for _, p := range pairs {
		exit, start := p[0], p[1]
		ts, ok := benchSteps(ev, exit.t, start.t, []benchStep{{exit.cand, "command ended"}, {exit.cand, "resigning"},
			{start.cand, "elected leader"}})
		if !ok {
			continue
		}
		ts = append([]time.Time{exit.t}, append(ts, start.t)...)
		for i := range steps {
			steps[i] = append(steps[i], ts[i+1].Sub(ts[i]))
		}
		if k, ok := benchSteps(ev, ts[3], start.t.Add(time.Second), []benchStep{{start.cand, "command started"}}); ok {
			keeper = append(keeper, k[0].Sub(ts[3]))
		}
	}
	return steps, keeper
}

// ---------------------------------------------------------------------------
// 2. SIGTERM handover and 3. crash failover

// failover stops the leader with sig reps times, restarting it as a
// follower each time, and returns the times from the signal to the next
// command's first instruction.
func (e *benchElection) failover(sig syscall.Signal, reps int, wait time.Duration) []time.Duration {
	return e.failoverBy(func(p *ballotProc) { p.Signal(sig) }, sig, reps, wait)
}

// hostDies kills ballot, its keeper and its command at the same moment, as
// when the machine dies: nobody is left to end the session.
func hostDies(p *ballotProc) {
	pids := append(descendantsOf(p.Pid()), p.Pid())
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGSTOP) // nothing may act in between
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func (e *benchElection) failoverBy(kill func(*ballotProc), sig syscall.Signal, reps int, wait time.Duration) []time.Duration {
	t := e.t
	ids := []string{"c1", "c2", "c3"}
	for _, id := range ids {
		e.add(id)
		time.Sleep(100 * time.Millisecond)
	}
	n := len(benchStarts(benchReadStamps(e.stamps)))
	if n == 0 {
		n = len(e.waitStarts(1, 30*time.Second))
	}
	for _, id := range ids[1:] {
		e.current[id].WaitLog(`"msg":"following"`, 10*time.Second)
	}
	var out []time.Duration
	for i := 0; i < reps; i++ {
		time.Sleep(300 * time.Millisecond) // settle: every candidate in line
		id, _ := e.leader()
		p := e.current[id]
		t0 := time.Now()
		kill(p)
		st := e.waitStarts(n+1, wait)
		n = len(st)
		next := st[len(st)-1]
		if next.cand == id {
			t.Fatalf("%s: %s led again after %v", e.name, id, sig)
		}
		out = append(out, next.t.Sub(t0))
		code := p.Wait(20 * time.Second)
		if sig == syscall.SIGTERM && code != 0 {
			t.Logf("%s: ballot %s exited %d after SIGTERM", e.name, id, code)
		}
		q := e.add(id) // stand again, at the end of the line
		q.WaitLog(`"msg":"following"`, 10*time.Second)
	}
	e.stopAll()
	return out
}

func benchSigterm(t *testing.T, b *benchEnv) benchDist {
	e := b.election(t, "sigterm", "2s", "wait", "--stop-grace-period", "5s")
	d := benchSummarize(e.failover(syscall.SIGTERM, 25, 15*time.Second))
	t.Logf("SIGTERM handover: %s", d.row("sigterm"))
	return d
}

type benchCrashResult struct {
	negotiated string
	ballot     benchDist // ballot dies, its host lives
	cron       benchDist // a cron leader's ballot dies between runs
	host       benchDist // the host dies
	hostTarget time.Duration
}

func benchCrash(t *testing.T, b *benchEnv) benchCrashResult {
	e := b.election(t, "crash", "1s", "wait")
	var r benchCrashResult
	r.ballot = benchSummarize(e.failover(syscall.SIGKILL, 12, 15*time.Second))
	r.negotiated = benchNegotiated(e.current["c1"])
	host := b.election(t, "host", "1s", "wait")
	r.host = benchSummarize(host.failoverBy(hostDies, syscall.SIGKILL, 8, 15*time.Second))
	r.hostTarget = time.Second + 2*b.zk.TickTime() + batonWait(time.Second)
	r.cron = benchSummarize(benchCronCrash(t, b, 12))
	t.Logf("crash failover (negotiated %s): %s; host dies: %s", r.negotiated, r.ballot.row("crash"), r.host.row("host"))
	return r
}

// benchCronCrash SIGKILLs a cron leader's ballot between runs, reps times,
// and returns the times from the signal to the next leader's `elected
// leader` (its own log's timestamp): the idle keeper gives the baton back.
func benchCronCrash(t *testing.T, b *benchEnv, reps int) []time.Duration {
	e := b.election(t, "cron-crash", "1s", "wait", "--log-level", "debug")
	e.mode = []string{"run", "cron", "--schedule", "0 0 1 1 *"} // never due
	ids := []string{"c1", "c2", "c3"}
	for _, id := range ids {
		e.add(id)
		time.Sleep(100 * time.Millisecond)
	}
	var out []time.Duration
	for i := 0; i < reps; i++ {
		var leader string
		for leader == "" {
			for _, id := range ids {
				if e.current[id].Logged("a keeper stands by between runs") {
					leader = id
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		for _, id := range ids {
			if id != leader {
				e.current[id].WaitLog(`"msg":"following"`, 10*time.Second)
			}
		}
		time.Sleep(300 * time.Millisecond) // settle: the next in line ready
		p := e.current[leader]
		t0 := time.Now()
		p.Signal(syscall.SIGKILL)
		var next time.Time
		for deadline := time.Now().Add(15 * time.Second); next.IsZero(); time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("cron crash: no new leader 15 s after SIGKILL of %s", leader)
			}
			for _, ev := range benchLogEvents(e.runs, "elected leader") {
				if ev.cand != leader && ev.t.After(t0) {
					next = ev.t
					break
				}
			}
		}
		out = append(out, next.Sub(t0))
		p.Wait(20 * time.Second)
		q := e.add(leader) // stand again, at the end of the line
		q.WaitLog(`"msg":"following"`, 10*time.Second)
	}
	e.stopAll()
	return out
}

// ---------------------------------------------------------------------------
// 4. cold start

type benchColdResult struct {
	gaps     []time.Duration   // ballot start → command's first instruction
	fresh    []time.Duration   // the same on a brand-new election (its path does not exist)
	freshW   time.Duration     // the W the brand-new elections' first leaders said they wait
	totals   []time.Duration   // ballot start → ballot exited
	execs    []time.Duration   // the command alone
	versions []time.Duration   // `ballot version`
	steps    [][]time.Duration // start → each of benchColdMsgs → command
}

var benchColdMsgs = []string{"ballot starting", "ZooKeeper session established", "proposal made", "elected leader"}

func benchCold(t *testing.T, b *benchEnv) benchColdResult {
	const reps = 40
	e := b.election(t, "cold", "2s", "0s", "--on-child-success", "exit")
	var r benchColdResult
	var runs [][2]time.Time // ballot started, command's first instruction
	for i := 0; i < reps; i++ {
		n := len(benchStarts(benchReadStamps(e.stamps)))
		t0 := time.Now()
		p := e.add("solo")
		st := e.waitStarts(n+1, 10*time.Second)
		r.gaps = append(r.gaps, st[len(st)-1].t.Sub(t0))
		runs = append(runs, [2]time.Time{t0, st[len(st)-1].t})
		if code := p.Wait(10 * time.Second); code != 0 {
			t.Fatalf("cold start: ballot exited %d:\n%s", code, p.out.String())
		}
		r.totals = append(r.totals, time.Since(t0))
		time.Sleep(50 * time.Millisecond)
	}
	r.execs, r.versions = benchColdFloor(t, b, reps)
	r.steps = benchColdSteps(e, runs)
	t.Logf("cold start: %s", benchSummarize(r.gaps).row("cold"))
	r.fresh, r.freshW = benchColdFresh(t, b, 6)
	t.Logf("cold start on a brand-new election (W %s): %s", r.freshW, benchSummarize(r.fresh).row("fresh"))
	return r
}

// benchColdFresh: the first start of a brand-new election, whose path
// nobody created yet: its first leader finds no handover record and waits
// W, as for a baton dropped under a running leader (it cannot tell the
// two apart).
func benchColdFresh(t *testing.T, b *benchEnv, reps int) (gaps []time.Duration, w time.Duration) {
	for i := 0; i < reps; i++ {
		e := b.freshElection(t, fmt.Sprintf("cold-new-%d", i), "2s", "0s", "--on-child-success", "exit")
		t0 := time.Now()
		p := e.add("solo")
		st := e.waitStarts(1, 20*time.Second)
		gaps = append(gaps, st[0].t.Sub(t0))
		if code := p.Wait(10 * time.Second); code != 0 {
			t.Fatalf("cold start on a new election: ballot exited %d:\n%s", code, p.out.String())
		}
		if d := benchLogDur(p.out.String(), "waiting for the baton", "wait"); d > 0 {
			w = d
		}
	}
	return gaps, w
}

// benchColdFloor times the command alone, started directly (the floor
// under every figure), and ballot alone: exec to exit of `ballot version`.
func benchColdFloor(t *testing.T, b *benchEnv, reps int) (execs, versions []time.Duration) {
	direct := filepath.Join(b.dir, "direct-stamps")
	for i := 0; i < reps; i++ {
		cmd := exec.Command(b.checker, direct, "0s")
		cmd.Env = b.env("stamp")
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		st := benchStarts(benchReadStamps(direct))
		execs = append(execs, st[len(st)-1].t.Sub(t0))
	}
	for i := 0; i < reps; i++ {
		t0 := time.Now()
		if err := exec.Command(b.bin, "version").Run(); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, time.Since(t0))
	}
	return execs, versions
}

// benchColdSteps: where a cold start's time goes, from ballot's logs.
func benchColdSteps(e *benchElection, runs [][2]time.Time) [][]time.Duration {
	ev := benchLogEvents(e.runs, benchColdMsgs...)
	steps := make([][]time.Duration, len(benchColdMsgs)+1)
	for _, r := range runs {
		var want []benchStep
		for _, m := range benchColdMsgs {
			want = append(want, benchStep{"solo", m})
		}
		ts, ok := benchSteps(ev, r[0], r[1], want)
		if !ok {
			continue
		}
		ts = append([]time.Time{r[0]}, append(ts, r[1])...)
		for i := range steps {
			steps[i] = append(steps[i], ts[i+1].Sub(ts[i]))
		}
	}
	return steps
}

// ---------------------------------------------------------------------------
// 5. herd

type benchHerdResult struct {
	n                       int
	packets                 []int64 // zk_packets_received in the window after the handover, minus the baseline window
	requests                []int64 // client requests (Σ Δlcxid) after minus before
	oldReq, newReq, restReq []int64 // requests after minus before: old leader, new leader, everyone else
	woken                   []int   // candidates other than the old and new leader that sent 2 or more requests more than in the baseline window
	following               []int   // candidates other than the old leader that logged "following" or "elected leader" after the handover
	gap                     []time.Duration
	sigterm                 []time.Duration // SIGTERM to the leader's ballot → the next command

	// idle, per candidate per minute, before the handovers
	idleWrites, idlePackets, idleRequests float64
	rssMiB, pssMiB                        float64 // all ballots together, idle
}

// benchHerdSizes: 1000 candidates take about 5.5 GiB of RSS (2.3 GiB PSS)
// and a minute to start on a 2-core machine; BENCH_HERD_MAX=100 skips them.
func benchHerdSizes() []int {
	if os.Getenv("BENCH_HERD_MAX") == "100" {
		return []int{10, 100}
	}
	return []int{10, 100, 1000}
}

func benchHerd(t *testing.T, b *benchEnv) []benchHerdResult {
	var results []benchHerdResult
	for _, n := range benchHerdSizes() {
		results = append(results, benchHerdRun(t, b, n, 3))
	}
	return results
}

func benchHerdRun(t *testing.T, b *benchEnv, n, handovers int) benchHerdResult {
	e := b.election(t, fmt.Sprintf("herd%d", n), "4s", "wait")
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("h%03d", i)
	}
	e.add(ids[0])
	e.waitStarts(1, 30*time.Second)
	for i := 1; i < n; i += 10 {
		batch := ids[i:min(i+10, n)]
		for _, id := range batch {
			e.add(id)
		}
		for _, id := range batch {
			e.current[id].WaitLog(`"msg":"following"`, 30*time.Second)
		}
	}
	t.Logf("herd %d: all candidates in line", n)
	time.Sleep(8 * time.Second) // let start-up traffic end
	res := benchHerdResult{n: n}
	benchHerdIdle(t, b, e, &res)
	for h := 0; h < handovers; h++ {
		benchHerdHandover(t, b, e, &res)
	}
	for h := 0; h < handovers; h++ {
		benchHerdSigterm(t, e, &res)
	}
	e.stopAll()
	return res
}

// benchHerdSigterm: SIGTERM to the leader's ballot, which stops its
// command, resigns and exits; the time to the next command. The stopped
// candidate stands again, at the end of the line.
func benchHerdSigterm(t *testing.T, e *benchElection, res *benchHerdResult) {
	time.Sleep(time.Second) // the next in line ready (its proof, its keeper)
	old, _ := e.leader()
	starts := len(benchStarts(benchReadStamps(e.stamps)))
	t0 := time.Now()
	e.current[old].Signal(syscall.SIGTERM)
	st := e.waitStarts(starts+1, 10*time.Second)
	res.sigterm = append(res.sigterm, st[len(st)-1].t.Sub(t0))
	e.current[old].Wait(20 * time.Second)
	e.add(old).WaitLog(`"msg":"following"`, 30*time.Second)
	t.Logf("herd %d SIGTERM handover: next command after %s", res.n, benchMs(res.sigterm[len(res.sigterm)-1]))
}

// benchHerdIdle: what a settled election costs the ensemble.
func benchHerdIdle(t *testing.T, b *benchEnv, e *benchElection, res *benchHerdResult) {
	const idle = 30 * time.Second
	z0, p0, c0 := benchZxid(b.zk), benchPackets(b.zk), benchCons(b.zk)
	time.Sleep(idle)
	z1, p1, c1 := benchZxid(b.zk), benchPackets(b.zk), benchCons(b.zk)
	var reqs int64
	for sid, after := range c1 {
		reqs += after.lcxid - c0[sid].lcxid
	}
	perMin := float64(time.Minute) / float64(idle) / float64(res.n)
	res.idleWrites, res.idlePackets, res.idleRequests = float64(z1-z0)*perMin, float64(p1-p0)*perMin, float64(reqs)*perMin
	var rss, pss int64
	for _, p := range e.current {
		r, q := benchRSS(p.Pid())
		rss, pss = rss+r, pss+q
	}
	res.rssMiB, res.pssMiB = float64(rss)/1024, float64(pss)/1024
	t.Logf("herd %d idle: %.2f writes, %.1f packets, %.2f requests per candidate per minute; ballots %.0f MiB RSS, %.0f MiB PSS",
		res.n, res.idleWrites, res.idlePackets, res.idleRequests, res.rssMiB, res.pssMiB)
}

// benchHerdHandover: SIGUSR1 to the leader's ballot, and what the ensemble
// and the candidates did in a window from it against one before it.
func benchHerdHandover(t *testing.T, b *benchEnv, e *benchElection, res *benchHerdResult) {
	const w = 4 * time.Second
	h := len(res.gap)
	old, _ := e.leader()
	logged := map[string]int{}
	for id, p := range e.current {
		logged[id] = benchFollowedOrLed(p)
	}
	starts := len(benchStarts(benchReadStamps(e.stamps)))
	// two windows of the same length: [tp0, tp1) quiet, [tp1, tp2) with the handover
	p0, c0 := benchPackets(b.zk), benchCons(b.zk)
	tp0 := time.Now()
	time.Sleep(w)
	p1, c1 := benchPackets(b.zk), benchCons(b.zk)
	tp1 := time.Now()
	t0 := time.Now()
	e.current[old].Signal(syscall.SIGUSR1)
	st := e.waitStarts(starts+1, 10*time.Second)
	next := st[len(st)-1]
	res.gap = append(res.gap, next.t.Sub(t0))
	time.Sleep(time.Until(tp1.Add(tp1.Sub(tp0))))
	p2, c2 := benchPackets(b.zk), benchCons(b.zk)
	res.packets = append(res.packets, (p2-p1)-(p1-p0))

	total, oldR, newR, rest, woken := benchHerdRequests(benchSessions(e), [3]map[string]benchConn{c0, c1, c2}, old, next.cand)
	res.requests = append(res.requests, total)
	res.oldReq = append(res.oldReq, oldR)
	res.newReq = append(res.newReq, newR)
	res.restReq = append(res.restReq, rest)
	res.woken = append(res.woken, woken)
	fol := 0
	for id, p := range e.current {
		if id != old && benchFollowedOrLed(p) > logged[id] {
			fol++
		}
	}
	res.following = append(res.following, fol)
	t.Logf("herd %d handover %d: next command after %s, packets %d, requests %d (old %d new %d rest %d), woken %d, logged %d",
		res.n, h+1, benchMs(res.gap[h]), res.packets[h], total, oldR, newR, rest, woken, fol)
}

// benchHerdRequests: the requests of the window after (c[1] to c[2]) minus
// those of the window before (c[0] to c[1]), in all and by who sent them;
// woken counts the others that sent 2 or more more.
func benchHerdRequests(bySess map[string]string, c [3]map[string]benchConn, old, next string) (total, oldR, newR, rest int64, woken int) {
	for sid, after := range c[2] {
		id, ours := bySess[sid]
		if !ours {
			continue
		}
		before1, before0 := c[1][sid], c[0][sid]
		da := after.lcxid - before1.lcxid
		db := before1.lcxid - before0.lcxid
		total += da - db
		switch id {
		case old:
			oldR += da - db
		case next:
			newR += da - db
		default:
			rest += da - db
			if da-db >= 2 { // a wake-up: read the line, watch the new predecessor
				woken++
			}
		}
	}
	return total, oldR, newR, rest, woken
}

// benchFollowedOrLed counts the times p logged "following" or "elected
// leader".
func benchFollowedOrLed(p *ballotProc) int {
	return strings.Count(p.out.String(), `"msg":"following"`) + strings.Count(p.out.String(), `"msg":"elected leader"`)
}

// benchSessions maps the session id of each running candidate to its id.
func benchSessions(e *benchElection) map[string]string {
	m := map[string]string{}
	for id, p := range e.current {
		m[benchSessionOf(p)] = id
	}
	return m
}

// ---------------------------------------------------------------------------
// 6. footprint

type benchFootprintResult struct {
	negotiated  string
	el          time.Duration // the idle window, measured
	rows        []benchFootRow
	worstRSS    int64 // KiB, of one ballot process
	pairRSS     int64 // KiB, the leader's ballot and keeper together
	pairPSS     int64
	leaderCPU   float64 // % of a core (schedstat)
	pairCPU     float64
	medFollower float64
	n           int   // candidates
	writes      int64 // zxid advance
	packets     int64 // received by the ensemble
	candidates  []benchFootCand
}

type benchFootRow struct {
	name                string
	rss, pss            int64   // KiB
	cpuMs, runMs, share float64 // per minute: utime+stime, schedstat; share of a core in %
}

type benchFootCand struct {
	id, role          string
	requests, packets float64 // per minute
}

// benchFootSnap is what the footprint reads at each end of its window.
type benchFootSnap struct {
	cpu  map[int]int64
	run  map[int]int64
	zxid int64
	cons map[string]benchConn
	pkts int64
}

func benchFootTake(c *zkCluster, pids []int) benchFootSnap {
	s := benchFootSnap{cpu: map[int]int64{}, run: map[int]int64{}, zxid: benchZxid(c), cons: benchCons(c), pkts: benchPackets(c)}
	for _, pid := range pids {
		s.cpu[pid] = benchCPU(pid)
		s.run[pid] = benchRuntime(pid)
	}
	return s
}

func (r *benchFootprintResult) perMin(v int64) float64 {
	return float64(v) * float64(time.Minute) / float64(r.el)
}

func benchFootprint(t *testing.T, b *benchEnv) benchFootprintResult {
	e := b.election(t, "footprint", "", "wait") // default session timeout
	ids := []string{"f1", "f2", "f3", "f4", "f5"}
	for _, id := range ids {
		e.add(id)
		time.Sleep(100 * time.Millisecond)
	}
	e.waitStarts(1, 30*time.Second)
	for _, id := range ids[1:] {
		e.current[id].WaitLog(`"msg":"following"`, 30*time.Second)
	}
	r := benchFootprintResult{negotiated: benchNegotiated(e.current["f1"]), n: len(ids)}
	_, lst := e.leader()
	leader := e.current[lst.cand]
	keeper := parentPid(lst.pid)
	time.Sleep(2 * time.Second)

	pids := []int{keeper}
	for _, p := range e.current {
		pids = append(pids, p.Pid())
	}
	const window = 60 * time.Second
	s0 := benchFootTake(b.zk, pids)
	t0 := time.Now()
	time.Sleep(window)
	s1 := benchFootTake(b.zk, pids)
	r.el = time.Since(t0)
	r.processes(s0, s1, e, ids, leader, keeper)
	r.zooKeeper(s0, s1, e, leader)
	e.stopAll()
	return r
}

// processes fills the rows of the processes' memory and CPU.
func (r *benchFootprintResult) processes(s0, s1 benchFootSnap, e *benchElection, ids []string, leader *ballotProc, keeper int) {
	row := func(name string, pids ...int) (int64, float64) {
		var rss, pss, cpu, run int64
		for _, pid := range pids {
			rr, p := benchRSS(pid)
			rss += rr
			pss += p
			cpu += s1.cpu[pid] - s0.cpu[pid]
			run += s1.run[pid] - s0.run[pid]
		}
		cpuMs := r.perMin(cpu) * 10 // ticks of 10 ms
		runMs := r.perMin(run) / 1e6
		share := runMs / 60000 * 100
		r.rows = append(r.rows, benchFootRow{name: name, rss: rss, pss: pss, cpuMs: cpuMs, runMs: runMs, share: share})
		return rss, share
	}
	lb, leaderCPU := row("leader: ballot", leader.Pid())
	row("leader: keeper", keeper)
	r.pairRSS, r.pairCPU = row("leader: ballot + keeper", leader.Pid(), keeper)
	_, lpss := benchRSS(leader.Pid())
	_, kpss := benchRSS(keeper)
	r.pairPSS, r.leaderCPU = lpss+kpss, leaderCPU
	r.worstRSS = max(r.worstRSS, lb)
	var followerCPU []float64
	for _, id := range ids {
		if p := e.current[id]; p != leader {
			rss, c := row("follower "+id+": ballot", p.Pid())
			r.worstRSS = max(r.worstRSS, rss)
			followerCPU = append(followerCPU, c)
		}
	}
	sort.Float64s(followerCPU)
	r.medFollower = followerCPU[(len(followerCPU)-1)/2]
}

// zooKeeper fills the ZooKeeper load, in all and per candidate.
func (r *benchFootprintResult) zooKeeper(s0, s1 benchFootSnap, e *benchElection, leader *ballotProc) {
	sessOf := benchSessions(e)
	r.writes, r.packets = s1.zxid-s0.zxid, s1.pkts-s0.pkts
	var sids []string
	for sid := range sessOf {
		sids = append(sids, sid)
	}
	sort.Slice(sids, func(i, j int) bool { return sessOf[sids[i]] < sessOf[sids[j]] })
	for _, sid := range sids {
		id := sessOf[sid]
		role := "follower"
		if e.current[id] == leader {
			role = "leader"
		}
		r.candidates = append(r.candidates, benchFootCand{id: id, role: role,
			requests: r.perMin(s1.cons[sid].lcxid - s0.cons[sid].lcxid), packets: r.perMin(s1.cons[sid].recved - s0.cons[sid].recved)})
	}
}
