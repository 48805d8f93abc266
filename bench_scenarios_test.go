//go:build bench

package main

// The benchmark's scenarios 1 to 4: each runs its candidates, measures,
// and returns its figures; bench_report_test.go turns them into its
// section. From 5 on, a file each (bench_herd_test.go, …).

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"ballot/internal/keeper"
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
	pids := append(keeper.DescendantsOf(p.Pid()), p.Pid())
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
