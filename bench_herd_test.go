//go:build bench

package main

// 5. Herd: with n candidates in line, what a handover costs the ensemble
// and who wakes up for it (only the next in line should), and what the
// idle line costs before it.

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
