package main

// Steadiness: ZooKeeper hiccups that cannot expire any session must not
// restart the command. Each test runs a leader a and a follower b whose
// commands tick into one file, injects hiccups, and then asserts the one
// property: the command a started before the hiccups is the only command
// that ever ran, and it still ticks once every lease it could have held
// before the last hiccup has run out, so it was renewed across them rather
// than merely outliving them.
//
// T is ballot's default session timeout, 5 s; tickTime is 500 ms (T needs
// tickTime ≥ T/20, and a real ensemble's tickTime is larger than the
// harness's 200 ms). Every hiccup is derived from T and tickTime and stays
// well inside what the lease rides through (a stall of about 0.44 T, a
// steady round trip of about 0.4 T) and inside what could expire a session
// on ZooKeeper's side (T, and syncLimit × tickTime for a member).

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	steadyT    = 5 * time.Second        // the session timeout, ballot's default
	steadyTick = 500 * time.Millisecond // the ensemble's tickTime
)

// steadyEnsemble is a 3-member ensemble with tickTime steadyTick and the
// default syncLimit (5 ticks).
func steadyEnsemble(t *testing.T) *zkCluster {
	return startZKWith(t, zkOptions{N: 3, TickTime: steadyTick})
}

// steadyElection starts a, leading, connected to aServers, and b,
// following, connected to bServers (nil: every member), both with session
// timeout T and a ticking command; it returns once a's command ticks.
func steadyElection(t *testing.T, c *zkCluster, aServers, bServers []string) (*election, *ballotProc, *ballotProc) {
	t.Helper()
	e := newElection(t, c)
	flags := []string{"--zookeeper-session-timeout", steadyT.String()}
	a := e.add("a", flags, aServers, "tick")
	if l := e.leader(30 * time.Second); l != a {
		t.Fatalf("%s leads, want a", l.name)
	}
	b := e.add("b", flags, bServers, "tick")
	b.WaitEvent(logEvFollowing, 30*time.Second)
	waitTenures(t, e.ticks, 1, 30*time.Second)
	return e, a, b
}

// commandRun is one command process as seen in the tick file.
type commandRun struct {
	token, pid  string
	first, last time.Time
}

// tickFollower reads a tick file incrementally, one run per command
// process (a command rerun under the same fencing token is a restart too).
type tickFollower struct {
	file string
	off  int64
	rest []byte
	runs []*commandRun
	idx  map[string]*commandRun
}

func newTickFollower(file string) *tickFollower {
	return &tickFollower{file: file, idx: map[string]*commandRun{}}
}

// poll reads what was appended since the last poll.
func (f *tickFollower) poll(t *testing.T) {
	t.Helper()
	fh, err := os.Open(f.file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.Seek(f.off, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(bufio.NewReader(fh))
	if err != nil {
		t.Fatal(err)
	}
	f.off += int64(len(b))
	b = append(f.rest, b...)
	end := strings.LastIndexByte(string(b), '\n') + 1
	f.rest = append([]byte(nil), b[end:]...)
	for _, line := range strings.Split(string(b[:end]), "\n") {
		fs := strings.Fields(line)
		if len(fs) != 3 {
			continue
		}
		ns, err := strconv.ParseInt(fs[2], 10, 64)
		if err != nil {
			continue
		}
		at := time.Unix(0, ns)
		r := f.idx[fs[0]+" "+fs[1]]
		if r == nil {
			r = &commandRun{token: fs[0], pid: fs[1], first: at}
			f.idx[fs[0]+" "+fs[1]] = r
			f.runs = append(f.runs, r)
		}
		if at.After(r.last) {
			r.last = at
		}
	}
}

// steadyScenario is one test's hiccups against a's command.
type steadyScenario struct {
	t      *testing.T
	e      *election
	a      *ballotProc
	ticks  *tickFollower
	t0     time.Time
	faults []string
	now    string    // the hiccup going on, if any
	end    time.Time // when the last hiccup's effect ended
}

func newSteadyScenario(t *testing.T, e *election, a *ballotProc) *steadyScenario {
	return &steadyScenario{t: t, e: e, a: a, ticks: newTickFollower(e.ticks), t0: time.Now()}
}

func (s *steadyScenario) at(tm time.Time) string {
	return "+" + tm.Sub(s.t0).Round(time.Millisecond).String()
}

// begin notes a hiccup that starts now, for a report made before it ends.
func (s *steadyScenario) begin(what string) time.Time {
	now := time.Now()
	s.now = fmt.Sprintf("%s since %s", what, s.at(now))
	return now
}

// fault records a hiccup from start to end (its effect ends then).
func (s *steadyScenario) fault(what string, start, end time.Time) {
	s.now = ""
	s.faults = append(s.faults, fmt.Sprintf("%s %s–%s", what, s.at(start), s.at(end)))
	s.t.Logf("hiccup: %s from %s to %s", what, s.at(start), s.at(end))
	if end.After(s.end) {
		s.end = end
	}
}

// hold lets d pass while the hiccups go on, and ends the test at once if
// the command is restarted meanwhile (a second command ticks, or a says it
// stopped its command).
func (s *steadyScenario) hold(d time.Duration) {
	s.t.Helper()
	for end := time.Now().Add(d); ; {
		s.ticks.poll(s.t)
		if len(s.ticks.runs) > 1 || s.a.Logged("command stopped") {
			s.failRestarts(time.Time{})
			s.t.FailNow()
		}
		left := time.Until(end)
		if left <= 0 {
			return
		}
		time.Sleep(min(left, 100*time.Millisecond))
	}
}

// ridesThrough asserts that a's command, the only one ever started, still
// ticks once every lease it held before the last hiccup ended has run out:
// no lease outlasts its session, which the quorum may expire T after the
// last touch it saw (rounded up to the next tick), and every touch before
// the end of the last hiccup came before that end. It fails at once if a
// second command ticks. It also checks that no two commands overlapped.
func (s *steadyScenario) ridesThrough() {
	t := s.t
	t.Helper()
	until := s.end.Add(steadyT + steadyTick)
	// A command ticks every 2 ms: T/4 without a tick past the point means
	// it no longer runs.
	deadline := until.Add(steadyT / 4)
	f := s.ticks
	for {
		f.poll(t)
		if len(f.runs) > 1 || time.Now().After(deadline) {
			s.failRestarts(until)
			return
		}
		if len(f.runs) == 1 && !f.runs[0].last.Before(until) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	checkNoOverlap(t, s.e.ticks)
	r := f.runs[0]
	t.Logf("STEADY %s: one command (pid %s) from %s to %s, through %s (last hiccup ended %s, + T + tickTime); hiccups: %s",
		t.Name(), r.pid, s.at(r.first), s.at(r.last), s.at(until), s.at(s.end), strings.Join(s.faults, "; "))
	if s.a.Logged("command stopped") {
		t.Errorf("a logged a command stop")
	}
}

// failRestarts reports every command run against the hiccups and fails;
// until, if set, is when the first command should still have ticked.
func (s *steadyScenario) failRestarts(until time.Time) {
	t := s.t
	t.Helper()
	f := s.ticks
	var runs []string
	for _, r := range f.runs {
		runs = append(runs, fmt.Sprintf("token %s pid %s %s–%s", r.token, r.pid, s.at(r.first), s.at(r.last)))
	}
	checkNoOverlap(t, s.e.ticks)
	all := s.faults[:len(s.faults):len(s.faults)]
	if s.now != "" {
		all = append(all, s.now)
	}
	hiccups := strings.Join(all, "; ")
	switch {
	case len(f.runs) == 0:
		t.Errorf("no command ticked")
	case len(f.runs) > 1:
		t.Errorf("the command was restarted: %d runs by %s: %s; hiccups: %s", len(f.runs), s.at(time.Now()), strings.Join(runs, "; "), hiccups)
	case until.IsZero():
		t.Errorf("a stopped its command (a restart to come) by %s: %s; hiccups: %s", s.at(time.Now()), runs[0], hiccups)
	default:
		t.Errorf("the command stopped ticking at %s, before %s (last hiccup ended %s, + T + tickTime); hiccups: %s",
			s.at(f.runs[0].last), s.at(until), s.at(s.end), strings.Join(s.faults, "; "))
	}
}

// TestSteady runs the steadiness scenarios in two lanes side by side: the
// far candidates' minute, during which nothing but slow links happens (a
// round trip of T/10 against the lease's 0.4 T, so the other lane's CPU
// bursts cannot matter), and the short hiccups one after the other, whose
// margins are tighter and which therefore share the machine with nothing
// busier than that idle minute. Nothing else runs beside them: they are
// subtests of a test that is not parallel itself.
func TestSteady(t *testing.T) {
	t.Run("far candidates", func(t *testing.T) {
		t.Parallel()
		steadyFarCandidates(t)
	})
	t.Run("hiccups", func(t *testing.T) {
		t.Parallel()
		t.Run("member paused", steadyMemberPaused)
		t.Run("slow link", steadySlowLink)
		t.Run("rolling restart", steadyRollingRestart)
	})
}

// steadyMemberPaused: ZooKeeper members stopped for 0.3 T (a garbage
// collection pause), four times, T apart: the member a is connected to (a
// follower) and the ZooKeeper leader, in turn. A pause of 0.3 T is shorter
// than syncLimit × tickTime (no member leaves the quorum) and than the
// client's read timeout, 2T/3 (no client disconnects): nothing can expire.
func steadyMemberPaused(t *testing.T) {
	const pause = 3 * steadyT / 10
	c := steadyEnsemble(t)
	if limit := time.Duration(c.opts.SyncLimit) * steadyTick; pause >= limit || pause >= 2*steadyT/3 {
		t.Fatalf("a pause of %v could cost a member its quorum (syncLimit × tickTime = %v) or a client its connection (2T/3)", pause, limit)
	}
	m, l := aFollower(t, c), c.Leader()
	e, a, _ := steadyElection(t, c, []string{c.Servers()[m]}, others(c, m))
	s := newSteadyScenario(t, e, a)
	targets := []int{m, l, m, l}
	for k, i := range targets {
		what := fmt.Sprintf("member %d (a's, a follower) paused", i)
		if i == l {
			what = fmt.Sprintf("member %d (the ZooKeeper leader) paused", i)
		}
		start := s.begin(what)
		c.Pause(i)
		s.hold(pause)
		c.Resume(i)
		s.fault(what, start, time.Now())
		if k < len(targets)-1 {
			s.hold(time.Until(start.Add(steadyT)))
		}
	}
	s.ridesThrough()
}

// steadySlowLink: for 2 T, every byte between a and ZooKeeper arrives
// 0.15 T late each way (a congested link): a round trip of 0.3 T.
func steadySlowLink(t *testing.T) {
	const delay = 3 * steadyT / 20
	c := steadyEnsemble(t)
	p := newTCPProxy(t, c.Servers())
	e, a, _ := steadyElection(t, c, []string{p.Addr()}, nil)
	s := newSteadyScenario(t, e, a)
	what := fmt.Sprintf("a's link %v late each way", delay)
	start := s.begin(what)
	p.SetDelay(delay)
	s.hold(2 * steadyT)
	p.SetDelay(0)
	// What was sent just before is still on its way for one delay.
	s.fault(what, start, time.Now().Add(delay))
	s.ridesThrough()
}

// steadyFarCandidates: every candidate is far from ZooKeeper, a round
// trip of T/10, for a minute of a's leadership.
func steadyFarCandidates(t *testing.T) {
	const delay = steadyT / 20
	c := steadyEnsemble(t)
	pa, pb := newTCPProxy(t, c.Servers()), newTCPProxy(t, c.Servers())
	e, a, _ := steadyElection(t, c, []string{pa.Addr()}, []string{pb.Addr()})
	s := newSteadyScenario(t, e, a)
	what := fmt.Sprintf("every candidate's link %v late each way", delay)
	start := s.begin(what)
	pa.SetDelay(delay)
	pb.SetDelay(delay)
	s.hold(time.Minute)
	pa.SetDelay(0)
	pb.SetDelay(0)
	s.fault(what, start, time.Now().Add(delay))
	s.ridesThrough()
}

// steadyRollingRestart: the 3 members are restarted one at a time
// (SIGTERM, start, whole again), the ZooKeeper leader last, as in an
// upgrade. a's member goes down on the way (a reconnects to another within
// its session), and the ZooKeeper leader's restart stalls writes for an
// election.
func steadyRollingRestart(t *testing.T) {
	c := steadyEnsemble(t)
	l := c.Leader()
	e, a, _ := steadyElection(t, c, nil, nil)
	s := newSteadyScenario(t, e, a)
	start := s.begin("rolling restart")
	order := c.RollingRestart()
	s.fault(fmt.Sprintf("rolling restart of members %v", order), start, time.Now())
	if order[len(order)-1] != l {
		t.Errorf("the rolling restart took member %d last, not the ZooKeeper leader %d", order[len(order)-1], l)
	}
	s.ridesThrough()
}
