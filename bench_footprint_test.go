//go:build bench

package main

// 6. Footprint: five candidates left idle for a minute: what each process
// costs (RSS, PSS, CPU), leader and followers apart, and what the ensemble
// sees of them (writes, packets, requests).

import (
	"sort"
	"testing"
	"time"
)

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
