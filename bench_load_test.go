//go:build bench

package main

// 9. Write load: a renewal is a quorum write, sent every T/8, so every
// leader costs the ensemble 8 fsynced transactions per T (96 a minute at
// the default 5 s). This measures what that is: the writes per leader, the
// ensemble's load with many idle elections (one leader each), and that
// followers still write nothing.

import (
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchLoadWindow: each measurement's idle window.
const benchLoadWindow = 30 * time.Second

type benchLoadRow struct {
	name               string
	leaders, followers int
	el                 time.Duration
	writes             int64     // zxid advance; -1 if the epoch changed (a ZooKeeper election) during the window
	packets, requests  int64     // zk_packets_received over the members; client requests (Σ Δlcxid, pings excluded)
	follReqs           int64     // of which the followers'
	memberCPU          []float64 // % of a core per member (utime+stime of the JVM)
	ballotCPU          float64   // % of a core: every leader's ballot and keeper, and every follower's ballot
	zkLeader           int       // the member that led the ensemble at the window's end
	losses             int       // "connection to ZooKeeper lost" in the ballots' logs during the window
	looking            int       // members that went LOOKING during the window, by their logs
}

func (r benchLoadRow) perSec(v int64) float64 { return float64(v) / r.el.Seconds() }

func (r benchLoadRow) cpuSum() float64 {
	var s float64
	for _, c := range r.memberCPU {
		s += c
	}
	return s
}

type benchLoadResult struct {
	rows     []benchLoadRow
	baseline benchLoadRow
}

func benchLoad(t *testing.T, b *benchEnv) benchLoadResult {
	var r benchLoadResult
	r.baseline = benchLoadMeasure(t, b, "nothing (the ensemble alone: the baseline)", nil, nil)
	r.rows = append(r.rows, r.baseline)

	// One leader, then the same election with 9 followers.
	e := b.election(t, "writes-one", "", "wait")
	e.add("l")
	e.waitStarts(1, 30*time.Second)
	time.Sleep(2 * time.Second)
	r.rows = append(r.rows, benchLoadMeasure(t, b, "1 leader", []*benchElection{e}, nil))
	var fol []string
	for i := 1; i <= 9; i++ {
		id := fmt.Sprintf("f%d", i)
		e.add(id)
		fol = append(fol, id)
	}
	for _, id := range fol {
		e.current[id].WaitLog(`"msg":"following"`, 30*time.Second)
	}
	time.Sleep(2 * time.Second)
	r.rows = append(r.rows, benchLoadMeasure(t, b, "1 leader + 9 followers (one election)", []*benchElection{e}, fol))
	e.stopAll()

	// Many idle elections, one leader each.
	var es []*benchElection
	for _, n := range []int{10, 100} {
		for len(es) < n {
			batch := es[len(es):len(es)]
			for i := 0; i < 10 && len(es) < n; i++ {
				x := b.election(t, fmt.Sprintf("writes-%03d", len(es)), "", "wait")
				x.add("l")
				es = append(es, x)
				batch = append(batch, x)
			}
			for _, x := range batch {
				x.waitStarts(1, 60*time.Second)
			}
			time.Sleep(300 * time.Millisecond) // a start is a burst of writes: spread them
		}
		time.Sleep(3 * time.Second)
		r.rows = append(r.rows, benchLoadMeasure(t, b, fmt.Sprintf("%d leaders (%d elections)", n, n), es, nil))
	}
	for _, x := range es { // all at once, then wait for each
		for _, p := range x.current {
			p.Signal(syscall.SIGTERM)
		}
	}
	for _, x := range es {
		x.stopAll()
	}
	return r
}

// benchLoadMeasure measures an idle window with the elections es running;
// followers names the candidates that are followers (in every election).
func benchLoadMeasure(t *testing.T, b *benchEnv, name string, es []*benchElection, followers []string) benchLoadRow {
	row := benchLoadRow{name: name}
	isFol := map[string]bool{}
	for _, f := range followers {
		isFol[f] = true
	}
	var pids []int // every ballot, and every leader's keeper
	follSess := map[string]bool{}
	for _, e := range es {
		for id, p := range e.current {
			pids = append(pids, p.Pid())
			if isFol[id] {
				row.followers++
				follSess[benchSessionOf(p)] = true
			} else {
				row.leaders++
			}
		}
		for _, st := range benchStarts(benchReadStamps(e.stamps)) {
			if k := parentPid(st.pid); k > 0 {
				pids = append(pids, k)
			}
		}
	}
	zpids := benchZKPids(b.zk)
	cpu0 := func(ps []int) []int64 {
		out := make([]int64, len(ps))
		for i, p := range ps {
			if p > 0 {
				out[i] = benchCPU(p)
			}
		}
		return out
	}
	marks := benchZKMarks(b.zk)
	z0, p0, c0 := benchZxid(b.zk), benchPackets(b.zk), benchCons(b.zk)
	m0, bl0 := cpu0(zpids), cpu0(pids)
	t0 := time.Now()
	time.Sleep(benchLoadWindow)
	z1, p1, c1 := benchZxid(b.zk), benchPackets(b.zk), benchCons(b.zk)
	m1, bl1 := cpu0(zpids), cpu0(pids)
	row.el = time.Since(t0)
	row.zkLeader = b.zk.Leader()
	row.looking = benchZKLooking(b.zk, marks)
	for _, e := range es {
		for _, p := range e.current {
			for _, r := range benchLogRecords(p.out.String(), "connection to ZooKeeper lost") {
				if r.t.After(t0) {
					row.losses++
				}
			}
		}
	}
	row.writes = z1 - z0
	if z1>>32 != z0>>32 {
		row.writes = -1
	}
	row.packets = p1 - p0
	for sid, after := range c1 {
		if before, ok := c0[sid]; ok {
			row.requests += after.lcxid - before.lcxid
			if follSess[sid] {
				row.follReqs += after.lcxid - before.lcxid
			}
		}
	}
	share := func(ticks int64) float64 { return float64(ticks) * 10 / float64(row.el.Milliseconds()) * 100 }
	for i := range zpids {
		row.memberCPU = append(row.memberCPU, share(m1[i]-m0[i]))
	}
	var bt int64
	for i := range pids {
		bt += bl1[i] - bl0[i]
	}
	row.ballotCPU = share(bt)
	t.Logf("writes: %s: %d writes (%.1f/s), %.1f packets/s, %.1f requests/s (followers %d), members' CPU %.1f%% (%s), ballots %.1f%%, %d connection losses, %d members LOOKING",
		name, row.writes, row.perSec(row.writes), row.perSec(row.packets), row.perSec(row.requests), row.follReqs, row.cpuSum(), benchPcts(row.memberCPU, row.zkLeader), row.ballotCPU, row.losses, row.looking)
	return row
}

// benchPcts: one share per member, the ZooKeeper leader's marked L.
func benchPcts(v []float64, leader int) string {
	var s []string
	for i, x := range v {
		m := ""
		if i == leader {
			m = " L"
		}
		s = append(s, fmt.Sprintf("%.1f%%%s", x, m))
	}
	return strings.Join(s, " / ")
}

func (r benchLoadResult) section() string {
	var s strings.Builder
	s.WriteString("## 9. Write load of the renewals\n\n")
	fmt.Fprintf(&s, "Every renewal is a quorum write (a multi-op: check the proposal, set the baton's data), sent every T/8: 8 per T, **96 a minute per leader at the default T = 5 s** (used here). "+
		"Each row is a %d s idle window on the benchmark's ensemble. *Writes* is the advance of the ensemble's zxid (each write is a transaction every member logs and fsyncs); "+
		"*packets* is `zk_packets_received` over the 3 members (pings included); *requests* counts the clients' requests from `cons` (Σ Δ`lcxid`, pings excluded); "+
		"*members' CPU* is utime+stime of each member's JVM from `/proc/PID/stat`, in %% of one core: their sum (members 1 / 2 / 3, L the ZooKeeper leader); "+
		"*ballots' CPU*: every ballot and every leader's keeper; *connections lost*: `connection to ZooKeeper lost` in the ballots' logs during the window (a member dropped by its peers, a ZooKeeper election), and the members that went LOOKING by their own logs. Each leader is a ballot process with its keeper and its command (the benchmark's checker, waiting).\n\n", int(benchLoadWindow.Seconds()))
	s.WriteString("| running | writes/s | writes per leader per minute | packets/s | requests/s | followers' requests | members' CPU | ballots' CPU | connections lost / members LOOKING |\n|---|---|---|---|---|---|---|---|---|\n")
	base := r.baseline
	perLeaderMin := func(w benchLoadRow) string {
		if w.leaders == 0 || w.writes < 0 {
			return "—"
		}
		return fmt.Sprintf("%.1f", w.perSec(w.writes)*60/float64(w.leaders))
	}
	writes := func(w benchLoadRow) string {
		if w.writes < 0 {
			return "? (a ZooKeeper election in the window)"
		}
		return fmt.Sprintf("%.1f", w.perSec(w.writes))
	}
	for _, w := range r.rows {
		fol := "—"
		if w.followers > 0 {
			fol = fmt.Sprintf("%d in %.0f s (%d followers)", w.follReqs, w.el.Seconds(), w.followers)
		}
		fmt.Fprintf(&s, "| %s | %s | %s | %.1f | %.1f | %s | %.1f%% (%s) | %.2f%% | %d / %d |\n", w.name, writes(w), perLeaderMin(w), w.perSec(w.packets), w.perSec(w.requests), fol,
			w.cpuSum(), benchPcts(w.memberCPU, w.zkLeader), w.ballotCPU, w.losses, w.looking)
	}
	// 1000 leaders, extrapolated from the largest measured row.
	big := r.rows[len(r.rows)-1]
	if big.leaders > 0 && big.writes >= 0 {
		k := 1000 / float64(big.leaders)
		lin := func(v, b float64) float64 { return b + (v-b)*k }
		fmt.Fprintf(&s, "| **1000 leaders, extrapolated** (not measured: 3000 processes on 2 cores; linear from the %d-leader row above the baseline) | %.0f | — | %.0f | %.0f | — | %.0f%% | %.0f%% | — |\n",
			big.leaders, lin(big.perSec(big.writes), base.perSec(base.writes)), lin(big.perSec(big.packets), base.perSec(base.packets)),
			lin(big.perSec(big.requests), base.perSec(base.requests)), lin(big.cpuSum(), base.cpuSum()), big.ballotCPU*k)
		if cpu := lin(big.cpuSum(), base.cpuSum()) + big.ballotCPU*k; cpu > float64(runtime.NumCPU())*100 {
			fmt.Fprintf(&s, "\nThe extrapolated 1000 leaders would need %.0f%% of a core (members and ballots), more than this machine's %d cores: it says what 1000 leaders ask of an ensemble, not that this one could serve them.\n",
				cpu, runtime.NumCPU())
		}
	}
	s.WriteString("\n")
	for _, w := range r.rows {
		if w.followers > 0 {
			var one benchLoadRow
			for _, x := range r.rows {
				if x.leaders == 1 && x.followers == 0 {
					one = x
				}
			}
			fmt.Fprintf(&s, "Followers while idle: %d requests (pings excluded) from %d followers in %.0f s; the election wrote %s times a minute with them, %s with its leader alone.\n\n",
				w.follReqs, w.followers, w.el.Seconds(), writesPerMin(w), writesPerMin(one))
		}
	}
	return s.String()
}

func writesPerMin(w benchLoadRow) string {
	if w.writes < 0 || w.el == 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f", w.perSec(w.writes)*60)
}
