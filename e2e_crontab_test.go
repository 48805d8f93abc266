package main

// run crontab end to end: many jobs in one process, each its own
// election, on one session (crontabrun.go).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/keeper"
)

// crontabTest is a crontab file and its jobs' elections under base.
type crontabTest struct {
	t    *testing.T
	zk   *zkCluster
	base string
	dir  string
	file string
}

func newCrontab(t *testing.T, c *zkCluster) *crontabTest {
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	dir := t.TempDir()
	return &crontabTest{t: t, zk: c, base: "/ballot/test/" + name, dir: dir, file: filepath.Join(dir, "crontab")}
}

// runs is the file job's runs append to: "scheduled-time token candidate".
func (ct *crontabTest) runs(job string) string { return filepath.Join(ct.dir, "runs-"+job) }

// line is a job whose command records each run and lasts runFor.
func (ct *crontabTest) line(job, schedule, runFor string, opts ...string) string {
	return strings.Join(append(append([]string{job, schedule}, opts...), selfExe(), ct.runs(job), runFor), " ")
}

// ticks is the file job's commands tick into (lineTicking).
func (ct *crontabTest) ticks(job string) string { return filepath.Join(ct.dir, "ticks-"+job) }

// lineTicking is line with its command ticking meanwhile (TICK_FILE), so
// that two runs at once would show.
func (ct *crontabTest) lineTicking(job, schedule, runFor string) string {
	return strings.Join([]string{job, schedule, "TICK_FILE=" + ct.ticks(job), selfExe(), ct.runs(job), runFor}, " ")
}

// write makes the crontab file of lines, its jobs' elections seeded (a
// first leader need not wait out a last holder's baton).
func (ct *crontabTest) write(lines ...string) {
	ct.t.Helper()
	for _, l := range lines {
		seedElection(ct.t, ct.zk.Servers(), ct.base+"/"+strings.Fields(l)[0])
	}
	if err := os.WriteFile(ct.file, []byte("# jobs\n"+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		ct.t.Fatal(err)
	}
}

// start runs ballot run crontab on the file as candidate id.
func (ct *crontabTest) start(id string, flags ...string) *ballotProc {
	ct.t.Helper()
	return ct.startVia(ct.zk.ConnString(), id, flags...)
}

// startVia is start with ZooKeeper at servers (a proxy).
func (ct *crontabTest) startVia(servers, id string, flags ...string) *ballotProc {
	ct.t.Helper()
	return ct.startEnv(servers, nil, id, flags...)
}

// startEnv is startVia with more environment.
func (ct *crontabTest) startEnv(servers string, extra []string, id string, flags ...string) *ballotProc {
	ct.t.Helper()
	env := ballotEnv(ct.t, append([]string{"BALLOT_TEST_CHILD=run"}, extra...)...)
	args := []string{"--zookeeper-servers", servers, "--zookeeper-base-path", ct.base,
		"--zookeeper-session-timeout", "2s", "run", "crontab", "--candidate-id", id}
	// These tests exercise a job handed over between its runs: each run its
	// own leadership and fencing token, which is how their tick files tell
	// runs apart. run crontab's own default keeps a job between runs
	// (rerun): TestCrontabKeepsItsJobsBetweenRuns.
	if !slices.ContainsFunc(flags, func(f string) bool { return strings.HasPrefix(f, "--on-child-success") }) {
		args = append(args, "--on-child-success", "reelect")
	}
	args = append(append(args, flags...), ct.file)
	return startBallot(ct.t, id, env, args...)
}

// jobRuns are job's runs so far.
func (ct *crontabTest) jobRuns(job string) []cronRun {
	e := &cronElection{election: &election{t: ct.t}, runs: ct.runs(job)}
	return e.readRuns()
}

// waitJobRuns waits until job has run n times.
func (ct *crontabTest) waitJobRuns(job string, n int, timeout time.Duration) []cronRun {
	ct.t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		if rs := ct.jobRuns(job); len(rs) >= n {
			return rs
		}
		if time.Now().After(deadline) {
			ct.t.Fatalf("job %s: %d runs within %s, want %d", job, len(ct.jobRuns(job)), timeout, n)
		}
	}
}

// checkOnce fails if one of job's scheduled times ran twice.
func (ct *crontabTest) checkOnce(job string) {
	ct.t.Helper()
	seen := map[string]string{}
	for _, r := range ct.jobRuns(job) {
		if by, dup := seen[r.scheduled]; dup {
			ct.t.Errorf("job %s: scheduled time %s ran twice (by %s and %s)", job, r.scheduled, by, r.candidate)
		}
		seen[r.scheduled] = r.candidate
	}
}

// proposals are the proposals of job's election: name → its owner session.
func (ct *crontabTest) proposals(conn *zk.Conn, job string) map[string]int64 {
	ct.t.Helper()
	base := ct.base + "/" + job
	children, _, err := conn.Children(base)
	if err != nil {
		ct.t.Fatalf("children %s: %v", base, err)
	}
	out := map[string]int64{}
	for _, p := range sortedProposals(children) {
		if _, st, err := conn.Exists(base + "/" + p); err == nil && st != nil {
			out[p] = st.EphemeralOwner
		}
	}
	return out
}

// TestCrontabRunsEveryJob: three every-2-seconds jobs in two ballot
// processes: each job runs, and no job's scheduled time runs twice across
// both; each process stands in every job's election; a SIGTERM stops
// each process, exit 0.
func TestCrontabRunsEveryJob(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	jobs := []string{"alpha", "beta", "gamma"}
	var lines []string
	for _, j := range jobs {
		lines = append(lines, ct.line(j, "@every 2s", "0.3s"))
	}
	ct.write(lines...)
	a := ct.start("a")
	b := ct.start("b")
	a.WaitEvent(logEvStarting, 10*time.Second, "jobs", "3")
	conn := zkConnect(t, zkc.Servers(), 5*time.Second)
	defer conn.Close()
	for _, j := range jobs {
		// Both processes in line: 2 proposals in each job's election.
		for deadline := time.Now().Add(20 * time.Second); len(ct.proposals(conn, j)) < 2; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("job %s: proposals %v, want one of each process", j, ct.proposals(conn, j))
			}
		}
	}
	// Five times each: 10 s of schedule at 2 s.
	for _, j := range jobs {
		ct.waitJobRuns(j, 5, 40*time.Second)
	}
	stopCleanly(t, a, b)
	for _, j := range jobs {
		ct.checkOnce(j)
		by := map[string]int{}
		for _, r := range ct.jobRuns(j) {
			by[r.candidate]++
		}
		t.Logf("job %s: runs by candidate %v", j, by)
	}
}

// TestCrontabOneSession: one process, four jobs: every job's proposal is
// owned by one session; the server counts one session for the process.
func TestCrontabOneSession(t *testing.T) {
	t.Parallel()
	zkc := startZK(t, 1) // its sessions counted: a server of its own
	ct := newCrontab(t, zkc)
	jobs := []string{"one", "two", "three", "four"}
	var lines []string
	for _, j := range jobs {
		lines = append(lines, ct.line(j, "0 0 1 1 *", "0"))
	}
	ct.write(lines...)
	before := zkSessions(t, zkc)
	a := ct.start("a")
	conn := zkConnect(t, zkc.Servers(), 5*time.Second)
	defer conn.Close()
	owners := map[int64]bool{}
	for _, j := range jobs {
		for deadline := time.Now().Add(20 * time.Second); len(ct.proposals(conn, j)) < 1; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("job %s: no proposal", j)
			}
		}
		for _, owner := range ct.proposals(conn, j) {
			owners[owner] = true
		}
	}
	if len(owners) != 1 {
		t.Errorf("the jobs' proposals are owned by %d sessions, want 1: %v", len(owners), owners)
	}
	// The test's own connection is one more session than before ballot.
	if n := zkSessions(t, zkc) - before; n != 2 {
		t.Errorf("%d new sessions on the server with ballot and the test's reader, want 2 (one for ballot)", n)
	}
	a.Signal(syscall.SIGTERM)
	if code := a.Wait(20 * time.Second); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}

// awaitNoWrites waits until the server's zxid has not moved for quiet
// (the last proposals, proofs and leader nodes in), failing after within:
// a process that never stops writing is the failure, not a hang.
func awaitNoWrites(t *testing.T, zkc *zkCluster, quiet, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for z := restZxid(t, zkc); ; {
		time.Sleep(quiet)
		z2 := restZxid(t, zkc)
		if z2 == z {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ZooKeeper still written to after %s (zxid %#x → %#x in the last %s)", within, z, z2, quiet)
		}
		z = z2
	}
}

// stopCleanly stops each ballot with SIGTERM, in order: each exits 0.
func stopCleanly(t *testing.T, ps ...*ballotProc) {
	t.Helper()
	for _, p := range ps {
		p.Signal(syscall.SIGTERM)
		if code := p.Wait(20 * time.Second); code != 0 {
			t.Errorf("ballot %s: exit %d after SIGTERM, want 0", p.name, code)
		}
	}
}

// zkSessions counts the sessions the server holds (its "cons" lists one
// line per connection; "srvr" does not say): from mntr's
// zk_num_alive_connections.
func zkSessions(t *testing.T, c *zkCluster) int {
	t.Helper()
	s, err := zkFourLetterWord(c.Servers()[0], "mntr", 5*time.Second)
	if err != nil {
		t.Fatalf("mntr: %v", err)
	}
	for _, l := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(l, "zk_num_alive_connections"); ok {
			var n int
			fmt.Sscan(strings.TrimSpace(v), &n)
			return n
		}
	}
	t.Fatalf("mntr: no zk_num_alive_connections in %q", s)
	return 0
}

// TestCrontabReload: SIGHUP with a line added, one removed, one changed
// and one untouched. The added job runs; the removed one's run going on
// ends by itself (not stopped), then it leaves its election; the changed
// one stands again (a new proposal) and runs; the untouched one keeps its
// proposal throughout.
func TestCrontabReload(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	// A leader resigns after each run (run cron's default): only a job
	// that does not run in the test keeps its proposal.
	keep := ct.line("keep", "0 0 1 1 *", "0")
	ct.write(keep,
		ct.line("gone", "@every 2s", "3s"), // in a run most of the time
		ct.line("change", "@every 2s", "0"))
	a := ct.start("a")
	conn := zkConnect(t, zkc.Servers(), 5*time.Second)
	defer conn.Close()
	ct.waitJobRuns("change", 1, 20*time.Second)
	keepBefore := ct.proposals(conn, "keep")
	changeBefore := ct.proposals(conn, "change")
	// The removed job in a run: started, not ended (it lasts 3 s).
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		started := len(a.Events(logEvCommandStarted, "job", "gone"))
		if started > 0 && started > len(a.Events(logEvCommandEnded, "job", "gone")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("job gone never ran")
		}
	}
	ended := len(a.Events(logEvCommandEnded, "job", "gone"))
	ct.write(keep,
		ct.line("change", "@every 2s", "0.1s"), // its command changed
		ct.line("added", "@every 2s", "0"))
	a.Signal(syscall.SIGHUP)
	ev := a.WaitEvent(logEvReloaded, 10*time.Second)
	if ev["joined"] != "added" || ev["left"] != "gone" || ev["changed"] != "change" || ev["unchanged"] != "1" {
		t.Errorf("reloaded: %v; want joined=added left=gone changed=change unchanged=1", ev)
	}
	if len(a.Events(logEvCommandEnded, "job", "gone")) == ended && len(ct.proposals(conn, "gone")) != 1 {
		t.Errorf("job gone left its election while its run went on: proposals %v", ct.proposals(conn, "gone"))
	}
	ct.waitJobRuns("added", 1, 20*time.Second)
	// The removed job's run ends by itself, exit 0, then it withdraws.
	a.WaitEvent(logEvCommandEnded, 10*time.Second, "job", "gone", "exit_code", "0")
	if st := a.Events(logEvCommandStopped, "job", "gone"); len(st) > 0 {
		t.Errorf("the removed job's run was stopped: %v; want it run to its end", st)
	}
	for deadline := time.Now().Add(10 * time.Second); len(ct.proposals(conn, "gone")) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("job gone still in its election: %v", ct.proposals(conn, "gone"))
		}
	}
	// The changed job stood again, and runs with its new line.
	n := len(ct.jobRuns("change"))
	ct.waitJobRuns("change", n+1, 20*time.Second)
	changeAfter := ct.proposals(conn, "change")
	for p := range changeAfter {
		if _, same := changeBefore[p]; same {
			t.Errorf("job change kept its proposal %s; want a new one with its new settings", p)
		}
	}
	if keepAfter := ct.proposals(conn, "keep"); fmt.Sprint(keepAfter) != fmt.Sprint(keepBefore) {
		t.Errorf("the untouched job's proposals changed: %v, then %v", keepBefore, keepAfter)
	}
	// A bad file: one line naming it, the jobs go on.
	if err := os.WriteFile(ct.file, []byte("bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.Signal(syscall.SIGHUP)
	a.WaitEvent(logEvReloadRefused, 10*time.Second, "level", "ERROR")
	n = len(ct.jobRuns("added"))
	ct.waitJobRuns("added", n+1, 20*time.Second)
	if keepAfter := ct.proposals(conn, "keep"); fmt.Sprint(keepAfter) != fmt.Sprint(keepBefore) {
		t.Errorf("the untouched job's proposals changed: %v, then %v", keepBefore, keepAfter)
	}
	a.Signal(syscall.SIGTERM)
	if code := a.Wait(20 * time.Second); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
	for _, j := range []string{"keep", "change", "added", "gone"} {
		ct.checkOnce(j)
	}
}

// TestCrontabJobShareElectionWithRunCron: a run cron process with
// --zookeeper-base-path <base>/<job> and a crontab process with that job
// stand in one election: both propose there, and each scheduled time
// runs once.
func TestCrontabJobShareElectionWithRunCron(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	ct.write(ct.line("shared", "@every 2s", "0.3s"))
	a := ct.start("tab")
	env := ballotEnv(t, "BALLOT_TEST_CHILD=run")
	b := startBallot(t, "cron", env, "--zookeeper-servers", zkc.ConnString(), "--zookeeper-base-path", ct.base+"/shared",
		"--zookeeper-session-timeout", "2s", "run", "cron", "--candidate-id", "cron", "--schedule", "@every 2s",
		"--", "/bin/sh", "-c", selfExe()+" "+ct.runs("shared")+" 0.3s")
	conn := zkConnect(t, zkc.Servers(), 5*time.Second)
	defer conn.Close()
	for deadline := time.Now().Add(20 * time.Second); len(ct.proposals(conn, "shared")) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("proposals %v, want the crontab's and run cron's", ct.proposals(conn, "shared"))
		}
	}
	// Both lead in turn (a leader resigns after each run): runs by each.
	for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		by := map[string]int{}
		for _, r := range ct.jobRuns("shared") {
			by[r.candidate]++
		}
		if by["tab"] > 0 && by["cron"] > 0 && by["tab"]+by["cron"] >= 5 {
			t.Logf("runs by candidate: %v", by)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs by candidate %v; want both, 5 in all", by)
		}
	}
	a.Signal(syscall.SIGTERM)
	if code := a.Wait(20 * time.Second); code != 0 {
		t.Errorf("ballot %s: exit %d after SIGTERM, want 0", a.name, code)
	}
	// run cron stopped during a run exits with the run's code (143).
	b.Signal(syscall.SIGTERM)
	if code := b.Wait(20 * time.Second); code != 0 && code != 128+int(syscall.SIGTERM) {
		t.Errorf("ballot %s: exit %d after SIGTERM, want 0 or 143", b.name, code)
	}
	ct.checkOnce("shared")
}

// TestCrontabWritesAtRest: eight daily jobs in one process, two processes
// (each job a leader and a next in line): between runs they write
// nothing at all, counted on the server's zxid over 2T (as
// TestWritesAtRest).
func TestCrontabWritesAtRest(t *testing.T) {
	t.Parallel()
	zkc := startZK(t, 1) // its zxid counted: a server of its own
	ct := newCrontab(t, zkc)
	var lines []string
	for i := range 8 {
		lines = append(lines, ct.line(fmt.Sprintf("job%d", i), "0 0 1 1 *", "0"))
	}
	ct.write(lines...)
	a := ct.start("a", "--log-level", "debug")
	for i := range 8 {
		a.WaitEvent(logEvLeaseAtRest, 20*time.Second, "job", fmt.Sprintf("job%d", i))
	}
	b := ct.start("b")
	conn := zkConnect(t, zkc.Servers(), 5*time.Second)
	defer conn.Close()
	for i := range 8 {
		j := fmt.Sprintf("job%d", i)
		for deadline := time.Now().Add(20 * time.Second); len(ct.proposals(conn, j)) < 2; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("job %s: proposals %v, want both processes'", j, ct.proposals(conn, j))
			}
		}
	}
	b.WaitEvent(logEvStandingBy, 20*time.Second)
	window := 4 * time.Second // 2T at the tests' T = 2 s
	// Settled: no write for T (the last proposals, proofs and leader
	// nodes in), then the window.
	awaitNoWrites(t, zkc, 2*time.Second, time.Minute)
	z0 := restZxid(t, zkc)
	time.Sleep(window)
	if d := restZxid(t, zkc) - z0; d != 0 {
		t.Errorf("%d writes in %s with 8 daily jobs on two processes at rest, want 0", d, window)
	}
	stopCleanly(t, b, a)
}

// TestCrontabSessionLostRejoinsOnOneSession: the process's link to
// ZooKeeper cut until the server expired its session (every job's
// proposal gone), then restored: every job stands again, all on one new
// session, dialed once.
func TestCrontabSessionLostRejoinsOnOneSession(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	jobs := []string{"one", "two", "three"}
	var lines []string
	for _, j := range jobs {
		lines = append(lines, ct.line(j, "0 0 1 1 *", "0"))
	}
	ct.write(lines...)
	proxy := newTCPProxy(t, zkc.Servers())
	a := ct.startVia(proxy.Addr(), "a")
	conn := zkConnect(t, zkc.Servers(), 5*time.Second)
	defer conn.Close()
	owners := func() map[int64]int {
		out := map[int64]int{}
		for _, j := range jobs {
			for _, o := range ct.proposals(conn, j) {
				out[o]++
			}
		}
		return out
	}
	waitOwners := func(not int64) int64 {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			o := owners()
			if len(o) == 1 {
				for id, n := range o {
					if n == len(jobs) && id != not {
						return id
					}
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("proposals by session %v; want one per job, all of one session (not %x)", o, not)
			}
		}
	}
	first := waitOwners(0)
	proxy.Blackhole(true)
	// The server expires the session T after its last ping: the
	// proposals, ephemeral, go with it.
	for deadline := time.Now().Add(30 * time.Second); len(owners()) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the cut-off session's proposals stayed: %v", owners())
		}
	}
	proxy.Blackhole(false)
	second := waitOwners(first)
	if n := strings.Count(a.out.String(), "ZooKeeper session established"); n != 2 {
		t.Errorf("%d sessions established; want 2, the first and one new for every job", n)
	}
	t.Logf("sessions %x, then %x", first, second)
	a.Signal(syscall.SIGTERM)
	if code := a.Wait(20 * time.Second); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}

// leaders counts, per candidate id, the jobs each leads (their leader
// nodes).
func (ct *crontabTest) leaders(conn *zk.Conn, jobs []string) map[string]int {
	ct.t.Helper()
	out := map[string]int{}
	for _, j := range jobs {
		if id := ct.leaderOf(conn, j); id != "" {
			out[id]++
		}
	}
	return out
}

// TestCrontabKeepsItsJobsBetweenRuns: by default (--on-child-success rerun
// for run crontab) a host keeps the jobs it leads from one run to the next:
// once spread, every job's runs are its one leader's, under one fencing
// token, each scheduled time once, and the leaders never move.
func TestCrontabKeepsItsJobsBetweenRuns(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	jobs := []string{"north", "south", "east", "west"}
	var lines []string
	for _, j := range jobs {
		lines = append(lines, ct.line(j, "@every 1s", "0.1s"))
	}
	ct.write(lines...)
	conn := zkConnect(t, zkc.Servers(), 5*time.Second)
	defer conn.Close()
	a := ct.start("a", "--on-child-success=rerun") // as the default, which startEnv would replace
	waitJobsLed(t, ct, conn, jobs, map[string]int{"a": 4})
	// b with run crontab's own default: no --on-child-success at all.
	b := startBallot(t, "b", ballotEnv(t, "BALLOT_TEST_CHILD=run"), "--zookeeper-servers", ct.zk.ConnString(),
		"--zookeeper-base-path", ct.base, "--zookeeper-session-timeout", "2s", "run", "crontab", "--candidate-id", "b", ct.file)
	waitJobsLed(t, ct, conn, jobs, map[string]int{"a": 2, "b": 2})
	handed := len(a.Events(logEvHandedOver)) + len(b.Events(logEvHandedOver)) // the spread's
	leaders := map[string]string{}
	for _, j := range jobs {
		leaders[j] = ct.leaderOf(conn, j)
	}
	// Three runs of every job after the spread, each by its leader.
	spread := time.Now()
	for _, j := range jobs {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			n := 0
			for _, r := range ct.jobRuns(j) {
				if ts, err := time.Parse(time.RFC3339, r.scheduled); err == nil && !ts.Before(spread.Add(time.Second)) {
					if r.candidate != leaders[j] {
						t.Fatalf("job %s ran at %s on %s, its leader is %s", j, r.scheduled, r.candidate, leaders[j])
					}
					n++
				}
			}
			if n >= 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s: %d runs after the spread, want 3", j, n)
			}
		}
	}
	for _, j := range jobs {
		if got := ct.leaderOf(conn, j); got != leaders[j] {
			t.Errorf("job %s's leader moved from %s to %s between runs", j, leaders[j], got)
		}
		ct.checkOnce(j)
		tokens := map[string]bool{}
		for _, r := range ct.jobRuns(j) {
			if ts, err := time.Parse(time.RFC3339, r.scheduled); err == nil && !ts.Before(spread.Add(time.Second)) {
				tokens[r.token] = true
			}
		}
		if len(tokens) != 1 {
			t.Errorf("job %s: runs under %d fencing tokens after the spread, want 1 (one leadership)", j, len(tokens))
		}
	}
	if n := len(a.Events(logEvHandedOver)) + len(b.Events(logEvHandedOver)); n != handed {
		t.Errorf("%d handovers after the spread's %d, want none", n-handed, handed)
	}
	stopCleanly(t, b, a)
}

// waitJobsLed waits until the jobs' leaders are want (candidate → jobs).
func waitJobsLed(t *testing.T, ct *crontabTest, conn *zk.Conn, jobs []string, want map[string]int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got := ct.leaders(conn, jobs)
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("leaders %v, want %v", got, want)
		}
	}
}

// leaderOf is the candidate id of job's leader node, "" without one.
func (ct *crontabTest) leaderOf(conn *zk.Conn, job string) string {
	ct.t.Helper()
	raw, _, err := conn.Get(ct.base + "/" + job + "/" + leaderName)
	if err != nil {
		return ""
	}
	var rec leaderRecord
	if json.Unmarshal(raw, &rec) != nil {
		return ""
	}
	return rec.CandidateID
}

// TestCrontabLeadershipsSpread: six daily jobs; host a starts alone and
// leads all six; host b starts: a hands three over between runs (none
// runs), each to b, so that each leads its share, ⌈6 ÷ 2⌉ = 3. Then no
// write at rest: the spreading reads only when a line changes.
func TestCrontabLeadershipsSpread(t *testing.T) {
	t.Parallel()
	zkc := startZK(t, 1) // its zxid counted: a server of its own
	ct := newCrontab(t, zkc)
	var jobs, lines []string
	for i := range 6 {
		jobs = append(jobs, fmt.Sprintf("job%d", i))
		lines = append(lines, ct.line(jobs[i], "0 0 1 1 *", "0"))
	}
	ct.write(lines...)
	conn := zkConnect(t, zkc.Servers(), 5*time.Second)
	defer conn.Close()
	a := ct.start("a")
	waitJobsLed(t, ct, conn, jobs, map[string]int{"a": 6})
	b := ct.start("b")
	waitJobsLed(t, ct, conn, jobs, map[string]int{"a": 3, "b": 3})
	if n := len(a.Events(logEvSpreading)); n != 3 {
		t.Errorf("a handed %d jobs over, want 3", n)
	}
	if n := len(b.Events(logEvSpreading)); n != 0 {
		t.Errorf("b handed %d jobs over, want 0", n)
	}
	// Settled (no write for T), then nothing for 2T: no write at rest.
	awaitNoWrites(t, zkc, 2*time.Second, time.Minute)
	z0 := restZxid(t, zkc)
	time.Sleep(4 * time.Second)
	if d := restZxid(t, zkc) - z0; d != 0 {
		t.Errorf("%d writes at rest after spreading, want 0", d)
	}
	if got := ct.leaders(conn, jobs); fmt.Sprint(got) != fmt.Sprint(map[string]int{"a": 3, "b": 3}) {
		t.Errorf("leaders moved at rest: %v", got)
	}
	stopCleanly(t, b, a)
}

// TestCrontabHostKilledFailsOverEveryJob: two processes run three
// every-2-seconds jobs; one is SIGKILLed: the other runs every job from
// then on; no job's scheduled time runs twice across both, and no job's
// runs overlap (its commands' ticks, by fencing token).
func TestCrontabHostKilledFailsOverEveryJob(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	jobs := []string{"alpha", "beta", "gamma"}
	var lines []string
	for _, j := range jobs {
		lines = append(lines, ct.lineTicking(j, "@every 2s", "0.5s"))
	}
	ct.write(lines...)
	a := ct.start("a")
	b := ct.start("b")
	for _, j := range jobs {
		ct.waitJobRuns(j, 2, 30*time.Second)
	}
	a.Signal(syscall.SIGKILL)
	a.Wait(10 * time.Second)
	killed := time.Now()
	// Each job runs again on b: its runs after the kill, all b's. The
	// failover takes at most T (the session's expiry) + W; 3 runs at 2 s
	// are 6 s more.
	for _, j := range jobs {
		for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			after := 0
			for _, r := range ct.jobRuns(j) {
				if ts, err := time.Parse(time.RFC3339, r.scheduled); err == nil && ts.After(killed) && r.candidate == "b" {
					after++
				}
			}
			if after >= 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s: %d runs by b after a was killed, want 3", j, after)
			}
		}
	}
	b.Signal(syscall.SIGTERM)
	b.Wait(20 * time.Second)
	for _, j := range jobs {
		ct.checkOnce(j)
		if n := len(checkNoOverlap(t, ct.ticks(j))) + 1; n < 5 {
			t.Errorf("job %s: %d runs ticked, want 5 or more", j, n)
		}
	}
}

// TestCrontabOneHealthCheck: with --health-check, one check of the host
// gates every job: none stands while it fails; once it passes, every job
// proposes, and the check runs once per interval for all of them.
func TestCrontabOneHealthCheck(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	jobs := []string{"one", "two", "three"}
	var lines []string
	for _, j := range jobs {
		lines = append(lines, ct.line(j, "0 0 1 1 *", "0"))
	}
	ct.write(lines...)
	okFile, countFile := filepath.Join(ct.dir, "ok"), filepath.Join(ct.dir, "checks")
	check := fmt.Sprintf("/bin/sh -c 'echo >> %s; test -f %s'", countFile, okFile)
	a := ct.start("a", "--health-check", check, "--health-interval", "200ms")
	a.WaitEvent(logEvHealthWait, 10*time.Second, "job", "one")
	conn := zkConnect(t, zkc.Servers(), 5*time.Second)
	defer conn.Close()
	for _, j := range jobs {
		if p := ct.proposals(conn, j); len(p) != 0 {
			t.Errorf("job %s proposed while the health check fails: %v", j, p)
		}
	}
	if err := os.WriteFile(okFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		for deadline := time.Now().Add(20 * time.Second); len(ct.proposals(conn, j)) < 1; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("job %s did not propose once the check passed", j)
			}
		}
	}
	// One check per interval for the host, not one per job: at most
	// elapsed ÷ 200ms + 2 checks (a busy machine makes fewer), where one
	// per job would make three times as many.
	count := func() int { b, _ := os.ReadFile(countFile); return strings.Count(string(b), "\n") }
	n0, t0 := count(), time.Now()
	time.Sleep(2 * time.Second)
	d, most := count()-n0, int(time.Since(t0)/(200*time.Millisecond))+2
	if d > most {
		t.Errorf("%d health checks in %s at --health-interval 200ms, want at most %d: one check for all three jobs", d, time.Since(t0).Round(time.Millisecond), most)
	}
	a.Signal(syscall.SIGTERM)
	if code := a.Wait(20 * time.Second); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}

// TestCrontabReaddedJobWaitsForItsOldRunner: a job removed while its run
// goes on, then added again before that run ended: the new runner joins
// only once the old one has left (never two candidates of one process in
// one election on its one session), and the runs never overlap.
func TestCrontabReaddedJobWaitsForItsOldRunner(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	slow := ct.lineTicking("slow", "@every 2s", "3s")
	other := ct.line("other", "0 0 1 1 *", "0")
	ct.write(slow, other)
	a := ct.start("a")
	a.WaitEvent(logEvCommandStarted, 20*time.Second, "job", "slow")
	// The run's own line, which its command writes once it has started:
	// n below must count this run, however slowly the command starts.
	ct.waitJobRuns("slow", 1, 10*time.Second)
	ct.write(other)
	a.Signal(syscall.SIGHUP)
	a.WaitEvent(logEvReloaded, 10*time.Second, "left", "slow")
	joined := len(a.Events(logEvJoined, "job", "slow"))
	ct.write(slow, other)
	a.Signal(syscall.SIGHUP)
	a.WaitEvent(logEvReloaded, 10*time.Second, "joined", "slow")
	if len(a.Events(logEvCommandEnded, "job", "slow")) == 0 && len(a.Events(logEvJoined, "job", "slow")) != joined {
		t.Errorf("the job added again proposed while its old runner's run went on")
	}
	// The old run ends, the old candidate leaves, then the new one joins
	// and runs.
	n := len(ct.jobRuns("slow"))
	ct.waitJobRuns("slow", n+1, 20*time.Second)
	ended := a.WaitEvent(logEvCommandEnded, time.Second, "job", "slow")
	if js := a.Events(logEvJoined, "job", "slow"); len(js) <= joined || js[joined]["time"] < ended["time"] {
		t.Errorf("the job added again joined at %v, before its old run ended at %s", js[joined:], ended["time"])
	}
	a.Signal(syscall.SIGTERM)
	a.Wait(20 * time.Second)
	ct.checkOnce("slow")
	checkNoOverlap(t, ct.ticks("slow"))
}

// TestCrontabKillFailsOverEveryJob: two jobs of one crontab run long
// commands on host a, host b stands in both elections; a is SIGKILLed.
// Its keepers kill both jobs' commands and give both batons back
// (internal/keeper/keepershare.go): every tick of a's commands comes
// before any of b's, and b takes each baton given back, never one
// dropped (a dropped baton costs the session's expiry, T, and W more):
// each job fails over without waiting for the session.
func TestCrontabKillFailsOverEveryJob(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	jobs := []string{"left", "right"}
	var lines []string
	for _, j := range jobs {
		lines = append(lines, ct.line(j, "@every 1s", "60s"))
	}
	ct.write(lines...)
	ticks := func(host string) string { return filepath.Join(ct.dir, "ticks-"+host) }
	start := func(id string) *ballotProc {
		env := ballotEnv(t, "BALLOT_TEST_CHILD=run", "TICK_FILE="+ticks(id))
		return startBallot(t, id, env, "--zookeeper-servers", zkc.ConnString(), "--zookeeper-base-path", ct.base,
			"--zookeeper-session-timeout", "2s", "run", "crontab", "--candidate-id", id, ct.file)
	}
	a := start("a")
	for _, j := range jobs {
		ct.waitJobRuns(j, 1, 30*time.Second)
	}
	b := start("b")
	conn := zkConnect(t, zkc.Servers(), 5*time.Second)
	defer conn.Close()
	for _, j := range jobs {
		for deadline := time.Now().Add(30 * time.Second); len(ct.proposals(conn, j)) < 2; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("job %s: proposals %v, want a's and b's", j, ct.proposals(conn, j))
			}
		}
	}
	b.WaitEvent(logEvStandingBy, 30*time.Second) // a handover may come: a run goes
	killed := time.Now()
	a.Signal(syscall.SIGKILL)
	a.Wait(10 * time.Second)
	byToken := map[string]string{} // a run's fencing token → its job
	for _, j := range jobs {
		rs := ct.waitJobRuns(j, 2, 30*time.Second)
		if rs[len(rs)-1].candidate != "b" {
			t.Fatalf("job %s: runs %+v, want b's last", j, rs)
		}
		for _, r := range rs {
			byToken[r.token] = j
		}
	}
	// b's first ticks: each job's command started on b.
	var bTenures []*tenure
	for deadline := time.Now().Add(30 * time.Second); len(bTenures) < len(jobs); time.Sleep(20 * time.Millisecond) {
		bTenures = readTenures(t, ticks("b"))
		if time.Now().After(deadline) {
			t.Fatalf("b's commands ticked for %d jobs, want %d", len(bTenures), len(jobs))
		}
	}
	aTenures := readTenures(t, ticks("a"))
	if len(aTenures) != len(jobs) {
		t.Fatalf("a's commands: %d tenures, want one per job", len(aTenures))
	}
	var aLast time.Time
	for _, tn := range aTenures {
		aLast = later(aLast, tn.last)
	}
	for _, tn := range bTenures {
		if !aLast.After(tn.first) {
			t.Logf("job %s: b's command started %s after the kill (%s after a's last tick)", byToken[tn.token],
				tn.first.Sub(killed).Round(time.Millisecond), tn.first.Sub(aLast).Round(time.Millisecond))
			continue
		}
		t.Errorf("job %s: b's command ticked at %s, a's commands still at %s: two hosts' commands at once",
			byToken[tn.token], tn.first.Format(time.RFC3339Nano), aLast.Format(time.RFC3339Nano))
	}
	for _, j := range jobs {
		if e := b.Events(logEvBatonWait, "job", j); len(e) > 0 {
			t.Errorf("job %s: b waited for a baton a dropped (%v), not given back by a's keeper", j, e)
		}
	}
	if b.Logged("dropped it") {
		t.Errorf("b waited for a dropped baton:\n%s", b.out.String())
	}
	for _, j := range jobs {
		e := b.Events(logEvBatonTaken, "job", j)
		if len(e) == 0 {
			t.Fatalf("job %s: b never took the baton", j)
		}
		at, _ := time.Parse("2006-01-02T15:04:05.000Z07:00", e[0]["time"])
		t.Logf("job %s: b took the baton %s after the kill (log time, ms; its command then waits for the next scheduled second)",
			j, at.Sub(killed).Round(time.Millisecond))
	}
	b.Signal(syscall.SIGTERM)
	b.Wait(20 * time.Second)
	for _, j := range jobs {
		ct.checkOnce(j)
	}
}

// TestCrontabOneKeeperAtRest: four daily jobs, all led by one process
// and at rest between runs: one keeper for the process (the session's,
// which holds every job's release), not one per job.
func TestCrontabOneKeeperAtRest(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	jobs := []string{"j1", "j2", "j3", "j4"}
	var lines []string
	for _, j := range jobs {
		lines = append(lines, ct.line(j, "0 0 1 1 *", "0"))
	}
	ct.write(lines...)
	a := ct.start("a", "--log-level", "debug")
	for _, j := range jobs {
		a.WaitEvent(logEvKeeperReady, 30*time.Second, "job", j) // at rest, its release held
	}
	var keepers []int
	for _, p := range keeper.DescendantsOf(a.Pid()) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p)); err == nil && strings.HasPrefix(string(b), "ballot-keeper\x00") {
			keepers = append(keepers, p)
		}
	}
	if len(keepers) != 1 {
		t.Errorf("keepers at rest: %v, want the session's one", keepers)
	}
	a.Signal(syscall.SIGTERM)
	if code := a.Wait(20 * time.Second); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}

// TestCrontabRemovedJobRunIsNotReplaced: a removed job with --overlap
// replace: its run going on is not replaced (stopped) when its next time
// falls due, as a removed job starts nothing more; it runs to its end,
// then the job leaves.
func TestCrontabRemovedJobRunIsNotReplaced(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	other := ct.line("other", "0 0 1 1 *", "0")
	ct.write(ct.line("gone", "@every 2s", "5s", "--overlap", "replace"), other)
	a := ct.start("a")
	a.WaitEvent(logEvCommandStarted, 20*time.Second, "job", "gone")
	ct.write(other)
	a.Signal(syscall.SIGHUP)
	a.WaitEvent(logEvReloaded, 10*time.Second, "left", "gone")
	stopped := len(a.Events(logEvCommandStopped, "job", "gone"))
	// Past at least two due times (5 s of run at 2 s), it ends by itself.
	a.WaitEvent(logEvCommandEnded, 20*time.Second, "job", "gone", "exit_code", "0")
	if st := a.Events(logEvCommandStopped, "job", "gone"); len(st) != stopped {
		t.Errorf("the removed job's run was stopped after the reload: %v", st[stopped:])
	}
	conn := zkConnect(t, zkc.Servers(), 5*time.Second)
	defer conn.Close()
	for deadline := time.Now().Add(10 * time.Second); len(ct.proposals(conn, "gone")) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("job gone still in its election: %v", ct.proposals(conn, "gone"))
		}
	}
	a.Signal(syscall.SIGTERM)
	if code := a.Wait(20 * time.Second); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
	ct.checkOnce("gone")
}

// TestCrontabSystemdNotify: READY once every job has made its proposal
// (each job's own joined line before it), the watchdog fed while every
// job vouches, STOPPING on SIGTERM.
func TestCrontabSystemdNotify(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	jobs := []string{"one", "two", "three"}
	var lines []string
	for _, j := range jobs {
		lines = append(lines, ct.line(j, "0 0 1 1 *", "0"))
	}
	ct.write(lines...)
	sock, l := listenNotify(t)
	a := ct.startEnv(zkc.ConnString(), []string{"NOTIFY_SOCKET=" + sock, "WATCHDOG_USEC=400000"}, "a")
	ready := l.wait(t, "READY=1")
	seen := time.Now() // READY was sent before this
	for _, j := range jobs {
		// Each job's joined line is stamped before its proposal is told
		// to the process (log lines reach the output later: waited for).
		ev := a.WaitEvent(logEvJoined, 10*time.Second, "job", j)
		if at, err := time.Parse(time.RFC3339Nano, ev["time"]); err != nil || at.After(seen.Add(time.Millisecond)) {
			t.Errorf("READY before job %s made its proposal (at %s): %v", j, ev["time"], err)
		}
	}
	if w := l.wait(t, "WATCHDOG=1"); w < 0 {
		t.Error("the watchdog was not fed")
	}
	a.Signal(syscall.SIGTERM)
	if stop := l.wait(t, "STOPPING=1"); stop < ready {
		t.Errorf("STOPPING (%d) before READY (%d)", stop, ready)
	}
	if code := a.Wait(20 * time.Second); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}

// TestCrontabMemoryAtRest: a crontab host quiet for restQuiet(T) lowers
// the collector's percent (memory-at-rest, gc_percent=25), and the first
// activity after it, here a run asked for by ballot trigger, puts the
// process's own percent back (memory-busy, gc_percent=100) before the
// run's command starts; once the run is over and the host quiet again, it
// rests again. Waits for each event; no timing is asserted.
func TestCrontabMemoryAtRest(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	ct.write(ct.line("j1", "0 0 1 1 *", "0"), ct.line("j2", "0 0 1 1 *", "0"))
	a := ct.start("a", "--log-level", "debug")
	// restQuiet(2s) is its floor, 10 s, from the last transition.
	rest := a.WaitEvent(logEvMemoryAtRest, 60*time.Second, "gc_percent", "25")
	if rest["quiet"] != "10s" {
		t.Errorf("memory-at-rest quiet=%q, want 10s (restQuiet of T = 2s)", rest["quiet"])
	}
	for _, j := range []string{"j1", "j2"} {
		a.WaitEvent(logEvElected, 5*time.Second, "job", j) // both led before it rested
	}
	cmd := exec.Command(ballotBin, "--zookeeper-servers", zkc.ConnString(), "--zookeeper-base-path", ct.base+"/j1",
		"--zookeeper-session-timeout", "2s", "trigger")
	cmd.Env = ballotEnv(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("trigger: %v: %s", err, out)
	}
	a.WaitEvent(logEvCommandStarted, 30*time.Second, "job", "j1")
	a.WaitEvent(logEvMemoryBusy, 5*time.Second, "gc_percent", "100")
	out := a.out.String()
	if busy, started := strings.Index(out, `event=memory-busy`), strings.Index(out, `event=command-started`); busy < 0 || started < busy {
		t.Errorf("memory-busy at %d, command-started at %d: the percent must be back before the run starts", busy, started)
	}
	// Rests again after the run (its end and the reelection are activity).
	deadline := time.Now().Add(60 * time.Second)
	for len(a.Events(logEvMemoryAtRest)) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no second memory-at-rest after the triggered run")
		}
		time.Sleep(50 * time.Millisecond)
	}
	stopCleanly(t, a)
}

// TestCrontabKilledAtRestGivesTheBatonsBack: two yearly jobs on two
// hosts, spread one each, then quiet; a host SIGKILLed once at rest gives
// its job's baton back all the same (its session's keeper, at rest too:
// its collector off and its pages dropped, internal/keeper/keeperrest.go),
// and the other host takes it without waiting for a dropped baton. Ballot
// rests (memory-at-rest) restQuiet(2s) = 10 s after its last activity,
// which its last order to the keeper is (child.tell); the keeper rests 5 s
// after reading that order (internal/keeper's restQuiet): by ballot's rest
// both rest, unless the keeper read the order more than 5 s late. The
// keeper's rest itself is TestIdleKeeperRests's.
func TestCrontabKilledAtRestGivesTheBatonsBack(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	ct := newCrontab(t, zkc)
	ct.write(ct.line("j1", "0 0 1 1 *", "0"), ct.line("j2", "0 0 1 1 *", "0"))
	a := ct.start("a", "--log-level", "debug")
	// a leads both before b stands: the spread may hand b one, never
	// both, so a leads at least one at rest (b first in both lines would
	// leave a nothing to give back).
	for _, j := range []string{"j1", "j2"} {
		a.WaitEvent(logEvElected, 30*time.Second, "job", j)
	}
	b := ct.start("b")
	a.WaitEvent(logEvMemoryAtRest, 90*time.Second, "gc_percent", "25")
	conn := zkConnect(t, zkc.Servers(), 5*time.Second)
	defer conn.Close()
	var aLeads []string
	for _, j := range []string{"j1", "j2"} {
		data, _, err := conn.Get(ct.base + "/" + j + "/" + leaderName)
		var rec leaderRecord
		if err == nil && json.Unmarshal(data, &rec) == nil && rec.CandidateID == "a" {
			aLeads = append(aLeads, j)
		}
	}
	if len(aLeads) == 0 {
		t.Fatalf("a leads no job at rest: nothing to give back")
	}
	a.Signal(syscall.SIGKILL)
	a.Wait(10 * time.Second)
	for _, j := range aLeads {
		b.WaitEvent(logEvBatonTaken, 20*time.Second, "job", j)
		if e := b.Events(logEvBatonWait, "job", j); len(e) > 0 {
			t.Errorf("job %s: b waited for a baton a dropped (%v), not given back by a's keeper at rest", j, e)
		}
	}
	stopCleanly(t, b)
}
