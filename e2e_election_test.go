package main

// End to end: the election's basics with the real binary — one leader
// of two or three, a SIGTERM handover, the --on-child-* policies, and a
// SIGKILLed ballot that leaves no command behind, and a connected
// leader's grace period, whole even when longer than the session timeout.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/zookeeper"
)

// election is a set of candidates for one election path whose commands
// tick into one file.
type election struct {
	t     *testing.T
	zk    *zkCluster
	base  string
	ticks string
	cands []*ballotProc
}

// newElection is an election that has had a leader before, as a
// production election has after its first start: its path exists and the
// handover record says the baton was given back. A brand-new election's
// first leader waits for a baton nobody recorded (TestNewElectionWaits);
// the tests that are about something else need not.
func newElection(t *testing.T, c *zkCluster) *election {
	e := newFreshElection(t, c)
	seedElection(t, c.Servers(), e.base)
	return e
}

// newFreshElection is an election whose path does not exist yet.
func newFreshElection(t *testing.T, c *zkCluster) *election {
	name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
	return &election{t: t, zk: c, base: "/ballot/test/" + name, ticks: filepath.Join(t.TempDir(), "ticks")}
}

// seedElection creates base with a handover record that says a leader gave
// the baton back.
func seedElection(t testing.TB, servers []string, base string) {
	t.Helper()
	conn := zkConnect(t, servers, 2*time.Second)
	defer conn.Close()
	if err := zookeeper.CreateParents(conn, base, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("seed %s: %v", base, err)
	}
	rec := []byte(`{"state":"released","candidateId":"seed","sessionTimeoutMs":2000,"at":"2026-01-01T00:00:00Z"}`)
	if _, err := conn.Create(base+"/"+handoverName, rec, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("seed %s: %v", base, err)
	}
}

// add starts a candidate whose command ticks forever (mode tick) or
// ticks and exits (mode exit CODE DELAY).
func (e *election) add(id string, runFlags []string, servers []string, child ...string) *ballotProc {
	e.t.Helper()
	if servers == nil {
		servers = e.zk.Servers()
	}
	mode := child[0]
	env := ballotEnv(e.t, "BALLOT_TEST_CHILD="+mode, "TICK_FILE="+e.ticks)
	args := runArgs(servers, e.base, id, runFlags...)
	args = append(args, "--", selfExe())
	if mode == "tick" || mode == "stubborn" || mode == "slowstop" {
		args = append(args, e.ticks)
	}
	args = append(args, child[1:]...)
	p := startBallot(e.t, id, env, args...)
	e.cands = append(e.cands, p)
	return p
}

// leader returns the candidate whose log says it is leading now, waiting
// for one.
func (e *election) leader(timeout time.Duration) *ballotProc {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		conn := zkConnect(e.t, e.zk.Servers(), 2*time.Second)
		children, _, err := conn.Children(e.base)
		line := sortedProposals(children)
		// The leader holds the baton; without one, the first in line is next.
		_, baton, berr := conn.Exists(e.base + "/" + batonName)
		for i, n := range line {
			if _, st, err := conn.Exists(e.base + "/" + n); berr == nil && err == nil && baton != nil && st != nil && st.EphemeralOwner == baton.EphemeralOwner {
				line[0], line[i] = line[i], line[0]
			}
		}
		conn.Close()
		if err == nil {
			if len(line) > 0 {
				data, _, err := e.connGet(e.base + "/" + line[0])
				if err == nil {
					for _, p := range e.cands {
						if !p.Exited() && strings.Contains(data, fmt.Sprintf(`"pid":%d,`, p.Pid())) {
							return p
						}
					}
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("no leader within %s", timeout)
	return nil
}

func (e *election) connGet(path string) (string, *zk.Stat, error) {
	conn := zkConnect(e.t, e.zk.Servers(), 2*time.Second)
	defer conn.Close()
	b, st, err := conn.Get(path)
	return string(b), st, err
}

// proposals lists the proposal nodes now in the election.
func (e *election) proposals() []string {
	conn := zkConnect(e.t, e.zk.Servers(), 2*time.Second)
	defer conn.Close()
	children, _, err := conn.Children(e.base)
	if err != nil && err != zk.ErrNoNode {
		e.t.Fatal(err)
	}
	return sortedProposals(children)
}

func (e *election) tokens() []int64 {
	var out []int64
	for _, tn := range readTenures(e.t, e.ticks) {
		n, _ := strconv.ParseInt(tn.token, 10, 64)
		out = append(out, n)
	}
	return out
}

// checkTokensGrow fails unless every new tenure had a higher fencing token.
func (e *election) checkTokensGrow() {
	e.t.Helper()
	toks := e.tokens()
	for i := 1; i < len(toks); i++ {
		if toks[i] <= toks[i-1] {
			e.t.Errorf("fencing token did not grow: %v", toks)
		}
	}
}

func logGaps(t *testing.T, what string, gaps []time.Duration) {
	var s []string
	for _, g := range gaps {
		s = append(s, g.Round(100*time.Microsecond).String())
	}
	t.Logf("%s: failover gaps (old command's last tick → new command's first tick): %s", what, strings.Join(s, " "))
}

func TestTwoCandidatesOneLeaderSIGTERMHandover(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	a := e.add("a", nil, nil, "tick")
	e.leader(10 * time.Second) // a is first
	b := e.add("b", nil, nil, "tick")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)
	if l := e.leader(time.Second); l != a {
		t.Fatalf("leader is %s, want a", l.name)
	}
	if ticks := readTenures(t, e.ticks); len(ticks) != 1 {
		t.Fatalf("%d commands ran, want 1", len(ticks))
	}

	a.Signal(syscall.SIGTERM)
	if code := a.Wait(10 * time.Second); code != 128+int(syscall.SIGTERM) {
		t.Errorf("a exited %d, want %d (its command died of SIGTERM)", code, 128+int(syscall.SIGTERM))
	}
	waitTenures(t, e.ticks, 2, 10*time.Second)
	gaps := checkNoOverlap(t, e.ticks)
	logGaps(t, "SIGTERM handover", gaps)
	e.checkTokensGrow()
	if len(e.proposals()) != 1 {
		t.Errorf("proposals left: %v, want only b's", e.proposals())
	}
	b.Signal(syscall.SIGTERM)
	b.Wait(10 * time.Second)
	if p := e.proposals(); len(p) != 0 {
		t.Errorf("proposals left after everyone stopped: %v", p)
	}
}

// TestChildExitPolicies: the leader's command exits; each policy decides
// what follows. Two candidates, each command ticks for 300ms then exits.
func TestChildExitPolicies(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	for _, tc := range []struct {
		policy string
		code   string
	}{
		{"rerun", "0"}, {"reelect", "0"}, {"exit", "0"}, {"ignore", "0"},
		{"rerun", "3"}, {"reelect", "3"}, {"exit", "3"}, {"ignore", "3"},
	} {
		t.Run(tc.policy+"-exit"+tc.code, func(t *testing.T) {
			e := newElection(t, c)
			flags := []string{"--on-child-success", tc.policy, "--on-child-error", tc.policy}
			a := e.add("a", flags, nil, "exit", tc.code, "300ms")
			e.leader(10 * time.Second)
			b := e.add("b", flags, nil, "exit", tc.code, "300ms")
			b.WaitEvent(logEvFollowing, 10*time.Second)
			switch tc.policy {
			case "rerun":
				// a keeps the lead and runs again; b never runs.
				a.WaitEvent(logEvChildPolicy, 10*time.Second, "policy", "rerun")
				time.Sleep(700 * time.Millisecond)
				if b.Logged("command started") {
					t.Errorf("b ran although a reran")
				}
			case "reelect":
				// The lead alternates: a, b, a ...
				waitTenures(t, e.ticks, 3, 15*time.Second)
				if !b.Logged("command started") {
					t.Errorf("b never ran")
				}
			case "exit":
				want := 0
				if tc.code == "3" {
					want = 3
				}
				if code := a.Wait(10 * time.Second); code != want {
					t.Errorf("a exited %d, want the command's %d", code, want)
				}
				waitTenures(t, e.ticks, 2, 10*time.Second)
			case "ignore":
				a.WaitEvent(logEvChildPolicy, 10*time.Second, "policy", "ignore")
				time.Sleep(700 * time.Millisecond)
				if b.Logged("command started") {
					t.Errorf("b ran although a keeps the lead")
				}
				a.Signal(syscall.SIGTERM)
				if code := a.Wait(10 * time.Second); code != 0 {
					t.Errorf("a exited %d after SIGTERM with no command running, want 0", code)
				}
				b.WaitEvent(logEvCommandStarted, 10*time.Second)
				waitTenures(t, e.ticks, 2, 10*time.Second)
			}
			gaps := checkNoOverlap(t, e.ticks)
			logGaps(t, tc.policy, gaps)
			e.checkTokensGrow()
		})
	}
}

// TestSIGKILLedLeaderLeavesNothing: ballot is killed outright; its command
// and a grandchild that left the process group must die with it, and the
// follower takes over once the session expires.
func TestSIGKILLedLeaderLeavesNothing(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	a := e.add("a", nil, nil, "tick", "grandchild")
	e.leader(10 * time.Second)
	b := e.add("b", nil, nil, "tick")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	a.WaitLog("grandchild ", 10*time.Second)         // the command's own output, naming its child
	a.WaitEvent(logEvCommandStarted, 10*time.Second) // logged once the keeper reports the start
	var gpid, cpid int
	for _, line := range strings.Split(a.out.String(), "\n") {
		if i := strings.Index(line, "grandchild "); i >= 0 {
			fmt.Sscanf(line[i:], "grandchild %d", &gpid)
		}
	}
	cpid = eventPid(t, a, logEvCommandStarted)
	if gpid == 0 || cpid == 0 {
		t.Fatalf("could not find the command's and grandchild's pids in:\n%s", a.out.String())
	}
	killed := time.Now()
	a.Signal(syscall.SIGKILL)
	a.Wait(5 * time.Second)
	deadline := time.Now().Add(2 * time.Second)
	for processAlive(cpid) || processAlive(gpid) {
		if time.Now().After(deadline) {
			t.Fatalf("2s after SIGKILL of ballot: command alive=%v grandchild alive=%v", processAlive(cpid), processAlive(gpid))
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("command and grandchild gone %s after SIGKILL of ballot", time.Since(killed).Round(time.Millisecond))
	waitTenures(t, e.ticks, 2, 15*time.Second)
	gaps := checkNoOverlap(t, e.ticks)
	logGaps(t, "SIGKILL failover", gaps)
	e.checkTokensGrow()
	// Once the tree was gone, the keeper gave the baton back and closed
	// a's session: b neither waited for the session to expire nor for a
	// dropped baton.
	if b.Logged("dropped it without releasing") {
		t.Errorf("b waited for a dropped baton: the keeper did not give it back")
	}
}

// TestCommandEndsAsBallotDies: the command ends on its own just as ballot
// is SIGKILLed, and the keeper reaps it before it sees ballot go. ballot is
// stopped first, so it cannot take the keeper's exit report, and killed
// once the command is reaped: the keeper, waiting for ballot's "bye", sees
// EOF instead and gives the baton back.
func TestCommandEndsAsBallotDies(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	quit := filepath.Join(t.TempDir(), "quit")
	a := e.add("a", nil, nil, "quitfile", quit)
	e.leader(10 * time.Second)
	b := e.add("b", nil, nil, "tick")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)
	cpid := commandPid(t, a)

	a.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	if err := os.WriteFile(quit, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for procStat(cpid) != nil { // until the keeper has reaped it
		time.Sleep(time.Millisecond)
	}
	a.Signal(syscall.SIGKILL)
	a.Wait(5 * time.Second)
	// ballot was stopped for this long; well under its session timeout
	// (2 s), so the session was alive for the keeper to end.
	frozen := time.Since(stopped)
	b.WaitEvent(logEvCommandStarted, 15*time.Second)
	waitTenures(t, e.ticks, 2, 10*time.Second)
	gaps := checkNoOverlap(t, e.ticks)
	logGaps(t, "command ended as ballot was SIGKILLed", gaps)
	if b.Logged("dropped it without releasing") {
		t.Errorf("b waited for a dropped baton: the keeper did not give it back (ballot stopped for %s before its SIGKILL)", frozen.Round(time.Millisecond))
	}
}

// TestThreeCandidatesInLine: leadership passes down the line in proposal
// order, one command at a time, waking only the next candidate.
func TestThreeCandidatesInLine(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	a := e.add("a", nil, nil, "tick")
	e.leader(10 * time.Second)
	b := e.add("b", nil, nil, "tick")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	cc := e.add("c", nil, nil, "tick")
	cc.WaitEvent(logEvFollowing, 10*time.Second, "place_in_line", "3")
	waitTenures(t, e.ticks, 1, 10*time.Second)

	a.Signal(syscall.SIGTERM)
	a.Wait(10 * time.Second)
	waitTenures(t, e.ticks, 2, 10*time.Second)
	if l := e.leader(5 * time.Second); l != b {
		t.Fatalf("after a, leader is %s, want b", l.name)
	}
	if !strings.Contains(cc.out.String(), "place_in_line=2") && cc.Logged("command started") {
		t.Errorf("c started a command while b leads")
	}
	b.Signal(syscall.SIGTERM)
	b.Wait(10 * time.Second)
	waitTenures(t, e.ticks, 3, 10*time.Second)
	gaps := checkNoOverlap(t, e.ticks)
	logGaps(t, "three in line", gaps)
	e.checkTokensGrow()
	cc.Signal(syscall.SIGTERM)
	cc.Wait(10 * time.Second)
}

// TestGracePeriodOutlivesTheLease: a connected leader keeps renewing its
// lease while its command takes its time to stop, so the whole grace period
// applies, even one far longer than the session timeout; nobody, the
// keeper included, kills the command early.
func TestGracePeriodOutlivesTheLease(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	a := e.add("a", []string{"--stop-grace-period", "6s"}, nil, "slowstop", "3s")
	e.leader(10 * time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)
	a.Signal(syscall.SIGTERM)
	if code := a.Wait(15 * time.Second); code != 0 {
		t.Fatalf("a exited %d, want 0: its command, given 3 s to stop (session timeout 2 s), was killed:\n%s", code, a.out.String())
	}
}
