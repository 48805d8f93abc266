//go:build bench

package main

// 8. Steady: does a leader keep its command through the hiccups a
// production ensemble has — a member's pause, a slow link, a far-away
// site, a rolling restart — at ballot's default session timeout, and how
// long a stall does it ride through? A renewal is a quorum write sent
// every T/8, and the command is stopped only once nothing has been
// answered for 15T/32 − ρ (README, "The lease"); this measures it.

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	benchSteadyT    = 5 * time.Second       // ballot's default session timeout
	benchSteadyTick = 10 * time.Millisecond // the command's tick: the resolution of "time without a command"
)

// benchSteadySpacing: the pauses of (a) start this far apart.
const benchSteadySpacing = 16 * time.Second

// benchRollingRuns: rolling restarts of the ensemble (each takes 15–30 s).
func benchRollingRuns() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_ROLLING_RUNS")); err == nil && n > 0 {
		return n
	}
	return 4
}

type benchHiccup struct {
	key, name string
	stall     bool // a stall: the leader's log's slow episode is the stall; on a slow link it spans the whole delay
	runs      []benchHiccupRun
}

type benchHiccupRun struct {
	restarts int           // commands started during the run, after the one running at its start
	down     time.Duration // time without a command (between one command's last tick and the next one's first)
	slow     time.Duration // the leader's own log: its longest episode of slow renewals (slow_for)
	rtt      time.Duration // the leader's renewal round trip during the hiccup: the median of its metrics file's samples
	rttMax   time.Duration
	looking  int // members that went LOOKING during the run, by their logs (a ZooKeeper election: 2 or 3)
	losses   int // "connection to ZooKeeper lost" in every candidate's log during the run
	note     string
}

type benchStallStep struct {
	pause     time.Duration
	mode      string        // the paused member's mode before the pause
	rho       time.Duration // the leader's last renewal round trip before the pause
	slow      time.Duration // the leader's log: its episode of slow renewals
	restarted bool
	down      time.Duration
	why       string        // the leader's log, when it stopped the command
	stopAfter time.Duration // from the pause's start to that log line
	looking   int
}

type benchSteadyResult struct {
	negotiated string
	took       time.Duration
	hiccups    []benchHiccup
	stalls     []benchStallStep
	rhoRest    time.Duration // median renewal round trip at rest, before the hiccups
}

// benchSteadyRun is what a hiccup's run did to the election.
type benchSteadyEnv struct {
	marks   []int64 // the members' logs at the current run's start
	t       *testing.T
	b       *benchEnv
	e       *benchElection
	proxies map[string][]*tcpProxy // per candidate, one per member (member order)
	metrics map[string]string      // per candidate, its metrics file
}

func benchSteady(t *testing.T, b *benchEnv) benchSteadyResult {
	t0 := time.Now()
	e := b.election(t, "steady", benchSteadyT.String(), benchSteadyTick.String())
	e.child = "tick"
	s := &benchSteadyEnv{t: t, b: b, e: e, proxies: map[string][]*tcpProxy{}, metrics: map[string]string{}}
	ids := []string{"c1", "c2", "c3"}
	for _, id := range ids {
		for _, srv := range b.zk.Servers() {
			s.proxies[id] = append(s.proxies[id], newTCPProxy(t, []string{srv}))
		}
		s.metrics[id] = filepath.Join(b.dir, "steady-"+id+".prom")
	}
	e.perCand = func(id string) ([]string, []string) {
		var addrs []string
		for _, p := range s.proxies[id] {
			addrs = append(addrs, p.Addr())
		}
		return addrs, []string{"--metrics-file", s.metrics[id]}
	}
	for _, id := range ids {
		e.add(id)
		time.Sleep(100 * time.Millisecond)
	}
	s.waitTicking(30 * time.Second)
	for _, id := range ids {
		if id != s.leader() {
			e.current[id].WaitLog(`"msg":"following"`, 30*time.Second)
		}
	}
	r := benchSteadyResult{negotiated: benchNegotiated(e.current["c1"])}
	r.rhoRest = benchSummarize(s.sampleRTT(s.leader(), 12*time.Second)).med

	a := s.pauses(5)
	bb := s.slowLink(4)
	// A site 250 ms from its ensemble (the README's example), and one at a
	// round trip of T/10.
	c := s.farAway("c", 125*time.Millisecond, 60*time.Second)
	c2 := s.farAway("c′", benchSteadyT/20, 30*time.Second)
	r.stalls = s.stallLadder([]float64{0.30, 0.40, 0.44, 0.46, 0.48, 0.50, 0.55, 0.60, 0.70, 0.80})
	d := s.rolling(benchRollingRuns())
	r.hiccups = []benchHiccup{a, bb, c, c2, d}
	e.stopAll()
	r.took = time.Since(t0)
	t.Logf("steady: %s", r.took.Round(time.Second))
	return r
}

// ---------------------------------------------------------------------------
// the hiccups

// pauses: (a) the member the leader's session is on, SIGSTOPped for 0.3 T.
func (s *benchSteadyEnv) pauses(n int) benchHiccup {
	const pause = 3 * benchSteadyT / 10
	h := benchHiccup{key: "a", stall: true, name: fmt.Sprintf("the ZooKeeper member the leader's session is on SIGSTOPped for 0.3 T (%s), %d times %s apart", benchMs(pause), n, benchSteadySpacing)}
	for i := 0; i < n; i++ {
		next := time.Now().Add(benchSteadySpacing)
		cand := s.leader()
		m := s.memberOf(cand)
		mode := s.b.zk.Mode(m)
		from := s.start()
		s.b.zk.Pause(m)
		time.Sleep(pause)
		s.b.zk.Resume(m)
		s.settle(2 * time.Second)
		run := s.measure(cand, from)
		run.note = fmt.Sprintf("member %d (%s)", m+1, mode)
		h.runs = append(h.runs, run)
		s.t.Logf("steady a%d: member %d (%s) paused %s: %d restarts, %s without a command, leader's renewals slow for %s",
			i+1, m+1, mode, pause, run.restarts, benchMs(run.down), benchMs(run.slow))
		time.Sleep(time.Until(next))
	}
	return h
}

// slowLink: (b) the leader's link delays every byte by 0.15 T each way for
// 2 T.
func (s *benchSteadyEnv) slowLink(n int) benchHiccup {
	const delay, span = 15 * benchSteadyT / 100, 2 * benchSteadyT
	h := benchHiccup{key: "b", name: fmt.Sprintf("the leader's link delays every byte by 0.15 T (%s) each way for 2 T, %d times", benchMs(delay), n)}
	for i := 0; i < n; i++ {
		cand := s.leader()
		from := s.start()
		s.setDelay([]string{cand}, delay)
		rtts := s.sampleRTT(cand, span)
		s.setDelay([]string{cand}, 0)
		s.settle(benchSteadyT)
		run := s.measure(cand, from)
		run.rtt, run.rttMax = benchSummarize(rtts).med, benchSummarize(rtts).max
		h.runs = append(h.runs, run)
		s.t.Logf("steady b%d: %d restarts, %s without a command; renewal round trip %s (max %s, %d samples)",
			i+1, run.restarts, benchMs(run.down), benchMs(run.rtt), benchMs(run.rttMax), len(rtts))
	}
	return h
}

// farAway: (c) every candidate's link delays every byte by delay each way.
func (s *benchSteadyEnv) farAway(key string, delay, span time.Duration) benchHiccup {
	h := benchHiccup{key: key, name: fmt.Sprintf("every candidate's link delays every byte by %s each way (a round trip of %s, T/%.0f) for %s",
		benchMs(delay), benchMs(2*delay), float64(benchSteadyT)/float64(2*delay), span)}
	all := []string{"c1", "c2", "c3"}
	cand := s.leader()
	from := s.start()
	s.setDelay(all, delay)
	rtts := s.sampleRTT(cand, span)
	s.setDelay(all, 0)
	s.settle(2 * time.Second)
	run := s.measure(cand, from)
	run.rtt, run.rttMax = benchSummarize(rtts).med, benchSummarize(rtts).max
	h.runs = append(h.runs, run)
	s.t.Logf("steady %s: %d restarts, %s without a command; renewal round trip %s (max %s, %d samples)", key, run.restarts, benchMs(run.down), benchMs(run.rtt), benchMs(run.rttMax), len(rtts))
	return h
}

// rolling: (d) a rolling restart of the ensemble, the ZooKeeper leader last.
func (s *benchSteadyEnv) rolling(n int) benchHiccup {
	h := benchHiccup{key: "d", stall: true, name: fmt.Sprintf("a rolling restart of the ensemble (SIGTERM, start, wait until whole; the followers first, the ZooKeeper leader last), %d times", n)}
	for i := 0; i < n; i++ {
		cand := s.leader()
		from := s.start()
		order := s.b.zk.RollingRestart()
		took := time.Since(from)
		s.settle(2 * time.Second)
		run := s.measure(cand, from)
		var o []string
		for _, m := range order {
			o = append(o, strconv.Itoa(m+1))
		}
		run.note = fmt.Sprintf("members %s, %s", strings.Join(o, ", "), took.Round(100*time.Millisecond))
		h.runs = append(h.runs, run)
		s.t.Logf("steady d%d: %s: %d restarts, %s without a command, renewals slow for up to %s", i+1, run.note, run.restarts, benchMs(run.down), benchMs(run.slow))
	}
	return h
}

// stallLadder: (e) the leader's member paused for longer and longer, until
// the command restarts.
func (s *benchSteadyEnv) stallLadder(fracs []float64) []benchStallStep {
	var out []benchStallStep
	for _, f := range fracs {
		pause := time.Duration(f * float64(benchSteadyT))
		cand := s.leader()
		m := s.moveOffLeader(cand)
		rho := s.renewalRTT(cand)
		st := benchStallStep{pause: pause, mode: s.b.zk.Mode(m), rho: rho}
		from := s.start()
		s.b.zk.Pause(m)
		time.Sleep(pause)
		s.b.zk.Resume(m)
		s.settle(benchSteadyT)
		run := s.measure(cand, from)
		st.slow, st.down, st.restarted, st.looking = run.slow, run.down, run.restarts > 0, run.looking
		if st.restarted {
			for _, r := range benchLogRecords(s.e.current[cand].out.String(), "") {
				if r.t.After(from) && (strings.HasPrefix(r.msg, "lease running out") || strings.HasPrefix(r.msg, "lease expired") ||
					strings.HasPrefix(r.msg, "ZooKeeper session lost while leading")) {
					st.why, st.stopAfter = r.msg, r.t.Sub(from)
					if i := strings.IndexAny(st.why, ":;"); i > 0 {
						st.why = st.why[:i]
					}
					break
				}
			}
		}
		out = append(out, st)
		s.t.Logf("steady e: member %d (%s) paused %s (%.2f T), ρ %s: renewals slow for %s, restarted %v (%s after %s), %s without a command",
			m+1, st.mode, pause, f, benchMs(rho), benchMs(st.slow), st.restarted, st.why, benchMs(st.stopAfter), benchMs(st.down))
		if st.restarted {
			break
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// helpers

// moveOffLeader moves cand's session off the ZooKeeper leader, if it is
// there (its proxy to that member resets the connection; the client
// reconnects to the next server of its list), so that pausing its member
// is a stall and not also an election among the others. It returns the
// member that holds the session.
func (s *benchSteadyEnv) moveOffLeader(cand string) int {
	m := s.memberOf(cand)
	for try := 0; try < 5 && s.b.zk.Mode(m) == "leader"; try++ {
		s.proxies[cand][m].CloseAll()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			if n := benchMemberOf(s.b.zk, benchSessionOf(s.e.current[cand])); n >= 0 && n != m {
				break
			}
		}
		m = s.memberOf(cand)
		s.settle(benchSteadyT / 2)
	}
	return m
}

func (s *benchSteadyEnv) setDelay(cands []string, d time.Duration) {
	for _, id := range cands {
		for _, p := range s.proxies[id] {
			p.SetDelay(d)
		}
	}
}

// settle waits until the ensemble is whole and a command ticks, then d.
func (s *benchSteadyEnv) settle(d time.Duration) {
	s.b.zk.WaitWhole(60 * time.Second)
	s.waitTicking(60 * time.Second)
	time.Sleep(d)
	s.waitTicking(60 * time.Second)
}

// waitTicking waits until a command has ticked within the last 10 ticks.
func (s *benchSteadyEnv) waitTicking(timeout time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ss := benchReadStamps(s.e.stamps)
		if len(ss) > 0 && time.Since(ss[len(ss)-1].t) < 10*benchSteadyTick {
			return
		}
		if time.Now().After(deadline) {
			var logs []string
			for id, p := range s.e.current {
				logs = append(logs, fmt.Sprintf("--- %s:\n%s", id, benchTail(p.out.String(), 15)))
			}
			sort.Strings(logs)
			s.t.Fatalf("steady: no command has ticked for %s\n%s", timeout, strings.Join(logs, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// leader is the candidate whose command ticked last.
func (s *benchSteadyEnv) leader() string {
	s.waitTicking(60 * time.Second)
	ss := benchReadStamps(s.e.stamps)
	return ss[len(ss)-1].cand
}

// memberOf is the member (index) that holds cand's session: from `cons`,
// else the member cand's proxies have a connection to.
func (s *benchSteadyEnv) memberOf(cand string) int {
	sid := benchSessionOf(s.e.current[cand])
	if m := benchMemberOf(s.b.zk, sid); m >= 0 {
		return m
	}
	for m, p := range s.proxies[cand] {
		if p.Conns() > 0 {
			return m
		}
	}
	s.t.Fatalf("steady: cannot tell which member holds %s's session %s", cand, sid)
	return -1
}

// renewalRTT is cand's last lease renewal round trip, from its metrics
// file (0 if it has none).
func (s *benchSteadyEnv) renewalRTT(cand string) time.Duration {
	b, err := os.ReadFile(s.metrics[cand])
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && strings.HasPrefix(f[0], "ballot_lease_renewal_seconds{") {
			v, _ := strconv.ParseFloat(f[1], 64)
			return time.Duration(v * float64(time.Second))
		}
	}
	return 0
}

// sampleRTT waits d and samples cand's renewal round trip from its
// metrics file meanwhile. The file is refreshed every 5 s (or on a change
// of state), so only samples taken 6 s or more into d count: earlier ones
// may predate it.
func (s *benchSteadyEnv) sampleRTT(cand string, d time.Duration) []time.Duration {
	var out []time.Duration
	t0 := time.Now()
	end := t0.Add(d)
	for {
		next := time.Now().Add(time.Second)
		if next.After(end) {
			time.Sleep(time.Until(end))
			break
		}
		time.Sleep(time.Until(next))
		if time.Since(t0) >= 6*time.Second {
			if r := s.renewalRTT(cand); r > 0 {
				out = append(out, r)
			}
		}
	}
	if r := s.renewalRTT(cand); r > 0 {
		out = append(out, r)
	}
	return out
}

// start marks a run's start.
func (s *benchSteadyEnv) start() time.Time {
	s.marks = benchZKMarks(s.b.zk)
	return time.Now()
}

// measure reads what the run since from did: the commands started, the
// time without one, and the leader's longest unanswered renewal by its
// own log.
func (s *benchSteadyEnv) measure(cand string, from time.Time) benchHiccupRun {
	var run benchHiccupRun
	ts := benchTenures(benchReadStamps(s.e.stamps))
	for i, tn := range ts {
		if tn.first.After(from) {
			run.restarts++
			if i > 0 && tn.first.After(ts[i-1].last) {
				run.down += tn.first.Sub(ts[i-1].last)
			}
		}
	}
	run.looking = benchZKLooking(s.b.zk, s.marks)
	for _, ps := range s.e.runs {
		for _, p := range ps {
			for _, r := range benchLogRecords(p.out.String(), "connection to ZooKeeper lost") {
				if r.t.After(from) {
					run.losses++
				}
			}
		}
	}
	for _, r := range benchLogRecords(s.e.current[cand].out.String(), "lease renewal") {
		if r.t.Before(from) {
			continue
		}
		if d, ok := r.dur("slow_for"); ok {
			run.slow = max(run.slow, d)
		}
		if d, ok := r.dur("unanswered_for"); ok {
			run.slow = max(run.slow, d)
		}
	}
	return run
}

// benchTenure is one command's run: every tick of one pid.
type benchTenure struct {
	cand        string
	pid         int
	first, last time.Time
}

// benchTenures groups ticks by the command's pid, ordered by the first.
func benchTenures(ss []benchStamp) []benchTenure {
	by := map[int]*benchTenure{}
	for _, s := range ss {
		if s.kind != "TICK" {
			continue
		}
		tn := by[s.pid]
		if tn == nil {
			tn = &benchTenure{cand: s.cand, pid: s.pid, first: s.t, last: s.t}
			by[s.pid] = tn
		}
		if s.t.After(tn.last) {
			tn.last = s.t
		}
	}
	out := make([]benchTenure, 0, len(by))
	for _, tn := range by {
		out = append(out, *tn)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].first.Before(out[j].first) })
	return out
}

// ---------------------------------------------------------------------------
// the section

// benchRideThrough is the derived stall a leader rides through: 15T/32 − ρ.
func benchRideThrough(t, rho time.Duration) time.Duration { return 15*t/32 - rho }

func (r benchSteadyResult) section() string {
	var s strings.Builder
	T := benchSteadyT
	s.WriteString("## 8. Steady through hiccups\n\n")
	fmt.Fprintf(&s, "3 candidates at ballot's default `--zookeeper-session-timeout 5s` (negotiated: %s; T below), a command that ticks every %d ms into a file and never exits. "+
		"Each candidate reaches each ZooKeeper member through a proxy of its own (tcpProxy: the delays). "+
		"For each hiccup: *restarts* counts the commands started during it (a new pid in the ticks), *time without a command* sums the gaps between one command's last tick and the next one's first; "+
		"*renewals slow for* is the leader's own log (`lease renewal slow` … `lease renewals are answered again`, its `slow_for`): from the oldest unanswered renewal's send until none is in flight, i.e. the stall as ballot saw it; "+
		"on a slow link renewals overlap, so it spans the whole delay and the *renewal round trip* is shown instead (the median of the leader's metrics file `ballot_lease_renewal_seconds`, sampled every second from 6 s into the delay; the file is refreshed every 5 s). "+
		"*Per run* also counts the connections the candidates lost (their logs) and the members that went LOOKING (the members' own logs: a ZooKeeper election shows as 2 or 3, a member dropped by its peers as 1): the ensemble runs tickTime 200 ms and syncLimit 5, so a member that cannot keep up for 1 s (a slow fsync on this shared machine) is dropped, or its leader loses its quorum, and every client connected to it reconnects. "+
		"The derived bound: a leader rides through 15T/32 − ρ = %s − ρ without answers (ρ: a renewal's round trip; %s at rest, the median of the leader's metrics file). "+
		"The section took %s.\n\n", r.negotiated, benchSteadyTick.Milliseconds(), benchMs(15*T/32), benchMs(r.rhoRest), r.took.Round(time.Second))
	s.WriteString("| hiccup | runs | command restarts | time without a command | renewals slow for, longest | per run |\n|---|---|---|---|---|---|\n")
	for _, h := range r.hiccups {
		var restarts int
		var down, slow time.Duration
		var per []string
		for _, run := range h.runs {
			restarts += run.restarts
			down += run.down
			slow = max(slow, run.slow)
			p := fmt.Sprintf("%d restarts, %d lost connections, %d members LOOKING", run.restarts, run.losses, run.looking)
			if run.note != "" {
				p = run.note + ": " + p
			}
			if run.rtt > 0 {
				p += fmt.Sprintf(", renewal round trip %s (max %s)", benchMs(run.rtt), benchMs(run.rttMax))
			}
			per = append(per, p)
		}
		slowS := "—"
		if h.stall {
			slowS = benchMs(slow)
		}
		fmt.Fprintf(&s, "| (%s) %s | %d | %d | %s | %s | %s |\n", h.key, h.name, len(h.runs), restarts, benchMs(down), slowS, strings.Join(per, "; "))
	}
	s.WriteString("\n")
	s.WriteString("**(e) The longest stall ridden through, measured**: the member the leader's session is on is SIGSTOPped for longer and longer, until the command restarts. " +
		"Before each pause the session is moved off the ZooKeeper leader (if it was there) so the pause is a stall of a follower, not also an election among the others. " +
		"A pause longer than syncLimit × tickTime (1 s) also cuts the member off: its leader drops it, so at SIGCONT it closes its clients' connections and they reconnect to another member; " +
		"the renewals sent to it meanwhile are lost, not late, and the next one goes out at most T/8 after the reconnect.\n\n")
	s.WriteString("| pause | of T | member | ρ before | renewals slow for (leader's log) | derived 15T/32 − ρ | command | time without a command | members LOOKING |\n|---|---|---|---|---|---|---|---|---|\n")
	var rode, broke time.Duration
	for _, st := range r.stalls {
		what := "kept"
		if st.restarted {
			what = "**restarted**"
			if st.why != "" {
				what += fmt.Sprintf(" (`%s` %s after the pause began)", st.why, benchMs(st.stopAfter))
			}
			if broke == 0 {
				broke = st.pause
			}
		} else {
			rode = max(rode, st.pause)
		}
		slow := benchMs(st.slow)
		if st.restarted {
			slow = "— (no answer before the lease ran out)"
		}
		fmt.Fprintf(&s, "| %s | %.2f | %s | %s | %s | %s | %s | %s | %d |\n", benchMs(st.pause), float64(st.pause)/float64(T), st.mode, benchMs(st.rho), slow,
			benchMs(benchRideThrough(T, st.rho)), what, benchMs(st.down), st.looking)
	}
	fmt.Fprintf(&s, "\nLongest pause ridden through: %s (%.2f T); the first that restarted the command: %s; derived 15T/32 − ρ: %s at ρ = %s.\n\n",
		benchMsOrNone(rode), float64(rode)/float64(T), benchMsOrNone(broke), benchMs(benchRideThrough(T, r.rhoRest)), benchMs(r.rhoRest))
	return s.String()
}

func benchMsOrNone(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	return benchMs(d)
}
