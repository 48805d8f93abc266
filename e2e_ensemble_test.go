package main

// Never two commands on a real ensemble. Three ZooKeeper members whose peer
// links cross proxies of the test's own, with the shape of Debian's
// defaults (tickTime 2 s, syncLimit 5, session 5 s): syncLimit × tickTime
// (8 × 500 ms) twice the session timeout (2 s), so a member cut off from its
// peers keeps answering its clients' reads and pings for 2 s after the
// quorum has expired their sessions.
// The command ignores SIGTERM, as many daemons do. Each scenario runs on a
// fresh election; the commands' own ticks show whether two ever ran at once.

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

const ensembleSession = 2 * time.Second

func startEnsemble(t *testing.T) *zkCluster {
	return startZKWith(t, zkOptions{N: 3, TickTime: 500 * time.Millisecond, SyncLimit: 8, PeerProxies: true})
}

// ensembleElection starts a leading candidate a (connected to aServers, nil
// for all members) and a follower b (connected to bServers), both running a
// command that ignores SIGTERM.
func ensembleElection(t *testing.T, c *zkCluster, aServers, bServers []string, flags ...string) (*election, *ballotProc, *ballotProc) {
	t.Helper()
	e := newElection(t, c)
	flags = append([]string{"--stop-grace-period", "1s"}, flags...)
	a := e.add("a", flags, aServers, "stubborn")
	a.WaitEvent(logEvCommandStarted, 20*time.Second)
	b := e.add("b", flags, bServers, "stubborn")
	b.WaitEvent(logEvFollowing, 20*time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)
	return e, a, b
}

// others lists the client addresses of every member but i.
func others(c *zkCluster, i int) []string {
	var out []string
	for j, s := range c.Servers() {
		if j != i {
			out = append(out, s)
		}
	}
	return out
}

// takeover waits for b's command and checks that the two never overlapped;
// it reports the failover figures.
func takeover(t *testing.T, e *election, b *ballotProc, fault string, faultAt time.Time, within time.Duration) {
	t.Helper()
	b.WaitEvent(logEvCommandStarted, within)
	reportTakeover(t, e, fault, faultAt)
}

// reportTakeover checks, once b's command runs, that two commands never
// ran at once and that tokens grew, and logs the failover figures.
func reportTakeover(t *testing.T, e *election, fault string, faultAt time.Time) {
	t.Helper()
	ts := waitTenures(t, e.ticks, 2, 10*time.Second)
	gaps := checkNoOverlap(t, e.ticks)
	e.checkTokensGrow()
	t.Logf("RELIABILITY ensemble fault=%q fault→new command=%s gap=%s overlap=%s", fault,
		ts[1].first.Sub(faultAt).Round(time.Millisecond), gaps[0].Round(time.Millisecond), overlapOf(t, e.ticks).Round(time.Millisecond))
}

// takeoverFenced waits for both ends of a takeover, the old command (pid
// cpid) gone and b's started, then checks that they never ran at once and
// reports the figures, the whole overlap if any.
func takeoverFenced(t *testing.T, e *election, b *ballotProc, cpid int, fault string, faultAt time.Time, within time.Duration) {
	t.Helper()
	b.WaitEvent(logEvCommandStarted, within)
	for deadline := time.Now().Add(within); processAlive(cpid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the old leader's command still runs %v after the fault", within)
		}
	}
	reportTakeover(t, e, fault, faultAt)
}

// deposedLeader waits for the ensemble to elect a new leader after a fault
// on leader l at faultAt, and fails unless l still reported Mode: leader
// then: the fault under test is a leader deposed before it knows.
func deposedLeader(t *testing.T, c *zkCluster, l int, faultAt time.Time) {
	t.Helper()
	limit := time.Duration(c.opts.SyncLimit) * c.TickTime()
	nl, oldMode := harnessNewLeader(t, c, l, limit)
	if oldMode != "leader" {
		t.Fatalf("member %d was elected, but the old leader %d already reported %q: the old leader was not deposed unknowingly", nl, l, oldMode)
	}
	t.Logf("member %d elected %v after the fault while the deposed leader %d still reported Mode: leader", nl, time.Since(faultAt).Round(time.Millisecond), l)
}

// whole heals every member and waits until all three serve again.
func whole(t *testing.T, c *zkCluster) {
	t.Helper()
	c.HealAll()
	c.WaitReady(40 * time.Second)
	for deadline := time.Now().Add(40 * time.Second); ; {
		n := 0
		for i := 0; i < c.Size(); i++ {
			if m := c.Mode(i); m == "leader" || m == "follower" {
				n++
			}
		}
		if n == c.Size() && c.Leader() >= 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ensemble is not whole again 40s after healing")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func aFollower(t *testing.T, c *zkCluster) int {
	t.Helper()
	for i := 0; i < c.Size(); i++ {
		if c.Mode(i) == "follower" {
			return i
		}
	}
	t.Fatalf("no follower member")
	return -1
}

func deleteNode(t *testing.T, c *zkCluster, path string) {
	t.Helper()
	conn := zkConnect(t, c.Servers(), ensembleSession)
	defer conn.Close()
	if err := conn.Delete(path, -1); err != nil {
		t.Fatalf("delete %s: %v", path, err)
	}
}

// TestEnsembleSafety: faults of ZooKeeper's members under the leader.
// TestEnsembleSafetyCandidates has the faults of the candidates and their
// nodes, on an ensemble of its own: in turn on one ensemble the scenarios
// took 63 s, the suite's longest chain; each half takes about 30 s.
func TestEnsembleSafety(t *testing.T) {
	t.Parallel() // its margins are T and syncLimit × tickTime; the scenarios share the ensemble, so they run in turn
	c := startEnsemble(t)

	// The leader's member is cut off from its peers: it answers the
	// leader's reads and pings for 4 s, the quorum expires the session
	// after 2 s. Three times, at different moments between renewals.
	for i, offset := range []time.Duration{0, 170 * time.Millisecond, 340 * time.Millisecond} {
		t.Run(fmt.Sprintf("leader's member cut off %d", i+1), func(t *testing.T) {
			m := aFollower(t, c)
			e, a, b := ensembleElection(t, c, []string{c.Servers()[m]}, others(c, m))
			time.Sleep(time.Second + offset)
			c.CutOff(m)
			cut := time.Now()
			takeover(t, e, b, "leader's ZooKeeper member cut off from its peers", cut, 30*time.Second)
			if !a.Logged("lease running out") && !a.Logged("lease expired") {
				t.Errorf("a did not say it stopped for a lost lease")
			}
			whole(t, c)
		})
	}

	// The ZooKeeper leader itself is cut off, with the leading candidate's
	// session on it: it answers syncs until it notices it lost its quorum
	// (ZOOKEEPER-1675), and the new quorum counts the session afresh. The
	// successor's wait for the dropped baton covers that.
	t.Run("ZooKeeper leader cut off", func(t *testing.T) {
		l := c.Leader()
		e, a, b := ensembleElection(t, c, []string{c.Servers()[l]}, others(c, l))
		time.Sleep(time.Second)
		c.CutOff(l)
		cut := time.Now()
		takeover(t, e, b, "ZooKeeper leader member cut off, the leader's session on it", cut, 40*time.Second)
		_ = a
		whole(t, c)
	})

	// The ZooKeeper leader is deposed asymmetrically with the leading
	// candidate's session on it: its followers' quorum connections are
	// reset on their side, so they elect a new leader at once, which counts
	// the session afresh and expires it after T; the old leader hears only
	// silence and answers its clients for syncLimit × tickTime (4 s, twice
	// T), without a quorum.
	t.Run("ZooKeeper leader deposed", func(t *testing.T) {
		l := c.Leader()
		e, a, b := ensembleElection(t, c, []string{c.Servers()[l]}, others(c, l))
		cpid := commandPid(t, a)
		time.Sleep(time.Second) // as above: the fault falls between renewals
		c.Depose(l)
		deposed := time.Now()
		deposedLeader(t, c, l, deposed)
		takeoverFenced(t, e, b, cpid, "ZooKeeper leader deposed (its followers reset), the leader's session on it", deposed, 40*time.Second)
		whole(t, c)
	})
}

// TestEnsembleSafetyCandidates: a candidate stopped, its nodes deleted,
// slots, on the ensemble (TestEnsembleSafety has the members' faults).
func TestEnsembleSafetyCandidates(t *testing.T) {
	t.Parallel() // as TestEnsembleSafety: its scenarios share this ensemble and run in turn
	c := startEnsemble(t)

	// ballot alone is stopped (a debugger, kill -STOP, D state); its keeper
	// and command run on. The keeper kills the command when the lease ends.
	t.Run("ballot SIGSTOP", func(t *testing.T) {
		e, a, b := ensembleElection(t, c, nil, nil)
		cpid := commandPid(t, a)
		a.Signal(syscall.SIGSTOP)
		stopped := time.Now()
		defer a.Signal(syscall.SIGCONT)
		takeover(t, e, b, "ballot alone SIGSTOPped for 3x the session timeout", stopped, 20*time.Second)
		if processAlive(cpid) {
			t.Errorf("the stopped ballot's command still runs")
		}
		time.Sleep(3*ensembleSession - time.Since(stopped))
		a.Signal(syscall.SIGCONT)
		a.WaitEvent(logEvLeaseExpired, 10*time.Second)
		a.WaitEvent(logEvFollowing, 20*time.Second)
		checkNoOverlap(t, e.ticks)
	})

	// Ctrl-Z in a terminal: ballot does not stop, so nothing fails; a clean
	// stop afterwards still hands over.
	t.Run("ballot SIGTSTP", func(t *testing.T) {
		e, a, b := ensembleElection(t, c, nil, nil)
		a.Signal(syscall.SIGTSTP)
		a.WaitEvent(logEvSignalIgnored, 5*time.Second, "signal", "SIGTSTP")
		time.Sleep(3 * ensembleSession)
		if b.Logged("command started") {
			t.Fatalf("b took over from a ballot that should not have stopped")
		}
		if n := len(readTenures(t, e.ticks)); n != 1 || !ticking(e.ticks, 100*time.Millisecond) {
			t.Fatalf("a's command stopped during SIGTSTP")
		}
		a.Signal(syscall.SIGTERM)
		takeover(t, e, b, "ballot SIGTSTPped for 3x the session timeout, then SIGTERM", time.Now(), 20*time.Second)
	})

	// An operator deletes the leader's proposal: the next candidate is the
	// lowest at once, but waits for the baton, which the old leader holds
	// until its command is gone; it then leaves its note, and the next
	// candidate takes at once on it, without waiting W.
	t.Run("proposal deleted", func(t *testing.T) {
		e, a, b := ensembleElection(t, c, nil, nil)
		proposal := e.base + "/" + e.proposals()[0]
		deleteNode(t, c, proposal)
		deleted := time.Now()
		takeover(t, e, b, "the leader's proposal deleted by another client", deleted, 20*time.Second)
		a.WaitEvent(logEvLeadershipLost, 5*time.Second)
		a.WaitEvent(logEvReleasedNote, 5*time.Second)
		b.WaitEvent(logEvNoteFound, time.Second, "holder", proposal)
		if b.Logged("dropped it without releasing") {
			t.Errorf("b waited W for the baton although a left its note")
		}
	})

	// The same delete while the leader's member is cut off from its peers:
	// the delete commits at the quorum, the leader hears nothing, its
	// renewals cannot commit and its lease runs out. Its note, a write,
	// cannot commit through that member: the successor waits W after the
	// session's expiry, as for any cut-off leader. Never two commands.
	t.Run("proposal deleted, the leader's member cut off", func(t *testing.T) {
		m := aFollower(t, c)
		e, a, b := ensembleElection(t, c, []string{c.Servers()[m]}, others(c, m))
		proposal := e.base + "/" + e.proposals()[0]
		c.CutOff(m)
		t.Cleanup(func() { c.HealAll() }) // should it fail: the ensemble is shared
		cut := time.Now()
		// Through the quorum's members: a session on the cut-off one
		// could not be made (it would cost the client's timeouts, and a's
		// session could expire first).
		conn := zkConnect(t, others(c, m), ensembleSession)
		if err := conn.Delete(proposal, -1); err != nil {
			t.Fatalf("delete %s: %v", proposal, err)
		}
		conn.Close()
		takeover(t, e, b, "the leader's proposal deleted while its member is cut off from its peers", cut, 30*time.Second)
		if len(b.Events(logEvNoteFound)) > 0 {
			t.Errorf("b took on a note that a cut-off leader could not have written")
		}
		if !b.Logged("dropped it without releasing") {
			t.Errorf("b did not wait for the dropped baton")
		}
		_ = a
		whole(t, c)
	})

	t.Run("slots", func(t *testing.T) { slotsOnEnsemble(t, c) })

	// An operator deletes the baton: the leader stops at once and gives up
	// its place; the next candidate takes over once that is done.
	t.Run("baton deleted", func(t *testing.T) {
		e, a, b := ensembleElection(t, c, nil, nil)
		deleteNode(t, c, e.base+"/"+batonName)
		deleted := time.Now()
		takeover(t, e, b, "the baton deleted by another client", deleted, 20*time.Second)
		a.WaitEvent(logEvLeadershipLost, 5*time.Second)
		if !strings.Contains(a.out.String(), "baton") {
			t.Errorf("a did not say its baton went")
		}
	})
}

// TestEnsembleSafetyKeeperAlarm: TestEnsembleSafety's scenarios that
// stop the keeper. Serial: its alarm wakes it T/16 (125 ms) before the
// kill time, and it must catch up on renewals, or kill, before that and
// its backstop (T/32 later), margins that load on the machine could eat.
func TestEnsembleSafetyKeeperAlarm(t *testing.T) {
	c := startEnsemble(t)

	// ballot and its keeper are stopped together (pkill -STOP -f ballot
	// matches both); the command runs on. The keeper's SIGCONT alarm wakes
	// it at the kill time to end the command before the lease does.
	t.Run("ballot and keeper SIGSTOP", func(t *testing.T) {
		e, a, b := ensembleElection(t, c, nil, nil)
		cpid := commandPid(t, a)
		keeper := parentPid(cpid)
		a.Signal(syscall.SIGSTOP)
		_ = syscall.Kill(keeper, syscall.SIGSTOP)
		stopped := time.Now()
		defer func() { _ = syscall.Kill(keeper, syscall.SIGCONT); a.Signal(syscall.SIGCONT) }()
		takeover(t, e, b, "ballot and its keeper SIGSTOPped together", stopped, 20*time.Second)
		if processAlive(cpid) {
			t.Errorf("the stopped keeper's command still runs")
		}
		// Woken by its alarm, the keeper killed the tree and waits for
		// ballot: neither still stopped nor ended by its backstop (a
		// zombie, as the stopped ballot does not reap it).
		if st := procStat(keeper); len(st) == 0 || st[0] == "T" || st[0] == "Z" {
			t.Errorf("the keeper was not woken by its alarm: state %v", st)
		}
		a.Signal(syscall.SIGCONT)
		a.WaitEvent(logEvLeaseExpired, 10*time.Second)
		a.WaitEvent(logEvFollowing, 20*time.Second)
		checkNoOverlap(t, e.ticks)
	})

	// The keeper alone is stopped while ballot renews on: its alarm
	// resumes it at the kill time it last knew, and it reads the renewals
	// it missed before it would kill. (A keeper that stays stopped, under
	// a debugger, meets its backstop, or ballot's own kill: Kill.)
	t.Run("keeper SIGSTOP", func(t *testing.T) {
		e, a, b := ensembleElection(t, c, nil, nil)
		cpid := commandPid(t, a)
		keeper := parentPid(cpid)
		_ = syscall.Kill(keeper, syscall.SIGSTOP)
		defer func() { _ = syscall.Kill(keeper, syscall.SIGCONT) }()
		stopped := time.Now()
		state := func() string {
			if st := procStat(keeper); len(st) > 0 {
				return st[0]
			}
			return "gone"
		}
		for state() != "T" {
			time.Sleep(time.Millisecond)
		}
		for state() == "T" {
			if time.Since(stopped) > ensembleSession { // the kill time is less than a lease away
				t.Fatalf("the keeper was not resumed by its alarm %s after its stop", ensembleSession)
			}
			time.Sleep(time.Millisecond)
		}
		resumed := time.Now()
		time.Sleep(ensembleSession / 4) // a renewal: ample time to kill on a stale deadline
		if !processAlive(cpid) || a.Logged("command ended") {
			t.Fatalf("the keeper killed the command on the deadline it knew when stopped")
		}
		t.Logf("the keeper was resumed by its alarm %s after its stop; the command runs on", resumed.Sub(stopped).Round(time.Millisecond))
		a.Signal(syscall.SIGTERM)
		takeover(t, e, b, "keeper SIGSTOPped until its alarm, then ballot stopped with SIGTERM", time.Now(), 20*time.Second)
		if code := a.Wait(10 * time.Second); code != 128+int(syscall.SIGKILL) {
			t.Errorf("a exited %d, want %d (its command was killed)", code, 128+int(syscall.SIGKILL))
		}
	})
}

// TestEnsembleSafetyRollingConfigChange: half-way through a rolling change
// of syncLimit from 16 down to 2 (tickTime 500 ms), the followers,
// restarted, run the short one, the leader still the long one. Cut off from
// its peers, silence both ways, the ZooKeeper leader is dropped by its
// followers after 2 ticks (1 s) and goes on answering its clients for 16
// (8 s). The 7 s between are more than a successor needs once the new
// leader counts the leading candidate's session afresh: T to expire it, a
// tick to round up, 3T/4 waiting for the dropped baton (4 s in all); so a
// lease that trusts the old leader's answers overlaps the successor. (16,
// not 12: the followers' new leader must be elected while the old one
// still reports leading, and at a load of 15 on 2 cores one election took
// longer than 12 ticks' 6 s; 8 s leaves it twice a busy election's time.)
func TestEnsembleSafetyRollingConfigChange(t *testing.T) {
	t.Parallel()
	const long, short = 16, 2
	c := startZKWith(t, zkOptions{N: 3, TickTime: 500 * time.Millisecond, SyncLimit: long, PeerProxies: true})
	tick := c.TickTime()
	if lag, need := (long-short)*tick, ensembleSession+tick+3*ensembleSession/4; lag <= need {
		t.Fatalf("syncLimit %d against %d leaves the deposed leader %v, not more than a successor's %v", long, short, lag, need)
	}
	l := c.Leader()
	for i := 0; i < c.Size(); i++ {
		if i != l {
			c.SetMemberConfig(i, fmt.Sprintf("syncLimit=%d", short))
			c.Restart(i)
		}
	}
	if c.Leader() != l {
		t.Fatalf("restarting the followers moved the leadership from %d to %d", l, c.Leader())
	}
	e, a, b := ensembleElection(t, c, []string{c.Servers()[l]}, others(c, l))
	cpid := commandPid(t, a)
	time.Sleep(time.Second) // as in TestEnsembleSafety: the fault falls between renewals
	c.CutOff(l)
	cut := time.Now()
	deposedLeader(t, c, l, cut)
	takeoverFenced(t, e, b, cpid, fmt.Sprintf("ZooKeeper leader (syncLimit %d) cut off from followers with syncLimit %d, the leader's session on it", long, short), cut, 40*time.Second)
}
