package main

// Preferred leaders (--priority, --preempt-after; preempt.go): the leader
// hands over to a candidate of higher priority once it has stood in line,
// ready, for --preempt-after; never to a lower one; and a candidate that
// keeps leaving and rejoining the line does not bounce the command.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// preemptAfter in these tests: 2T at the harness's T = 2 s. A flapping
// candidate's stints in line (from its join to the test's reaction, a few
// health intervals) must stay well under it.
const preemptAfterTest = 4 * time.Second

func TestPreferredLeaders(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	preempt := []string{"--preempt-after", preemptAfterTest.String()}

	t.Run("a higher priority takes over once, a lower one never", func(t *testing.T) {
		t.Parallel()
		e := newElection(t, zkc)
		a := e.add("a", preempt, nil, "tick")
		waitTenures(t, e.ticks, 1, 10*time.Second)
		b := e.add("b", append([]string{"--priority", "10"}, preempt...), nil, "tick")
		a.WaitEvent(logEvPreemptPlanned, 10*time.Second)
		// The handover comes once b has stood in line for --preempt-after.
		waitTenures(t, e.ticks, 2, preemptAfterTest+10*time.Second)
		b.WaitEvent(logEvElected, 10*time.Second)
		logGaps(t, "preemption", checkNoOverlap(t, e.ticks))
		e.checkTokensGrow()

		// a stood again, behind b; c, of a priority between a's and b's,
		// joins. Neither is preferred to b. b would decide at c's join +
		// --preempt-after at the latest; wait that and T more.
		a.WaitEvent(logEvFollowing, 10*time.Second)
		c := e.add("c", append([]string{"--priority", "5"}, preempt...), nil, "tick")
		c.WaitEvent(logEvStandingBy, 10*time.Second)
		time.Sleep(preemptAfterTest + 2*time.Second)
		if n := len(readTenures(t, e.ticks)); n != 2 {
			t.Errorf("%d tenures, want 2: a lower priority took over", n)
		}
		for _, p := range []*ballotProc{a, b, c} {
			if k := len(p.Events(logEvPreempting)); p == a && k != 1 || p != a && k != 0 {
				t.Errorf("%s handed over %d times for a priority:\n%s", p.name, k, p.out.String())
			}
		}
		checkNoOverlap(t, e.ticks)
		for _, p := range []*ballotProc{c, a, b} {
			p.Signal(syscall.SIGTERM)
			p.Wait(10 * time.Second)
		}
	})

	// A step-down of the preferred leader: it stands again at once, ahead
	// of the next in line, which is on a slower link (30 ms each way) and
	// so lists the line only after that. The release named it: it must
	// take over, not wait behind the old leader until the handover is
	// revoked. a revokes only if b has not taken within W = 3T/4 of a's
	// reading the record; b's take is a few round trips (~0.4 s at 60 ms
	// each): T = 4 s makes W 3 s, room for a stalled -race ballot on a
	// busy machine.
	t.Run("the preferred leader steps down to a slower next in line", func(t *testing.T) {
		t.Parallel()
		e := newElection(t, zkc)
		proxy := newTCPProxy(t, zkc.Servers())
		proxy.SetDelay(30 * time.Millisecond)
		slow := []string{"--zookeeper-session-timeout", "4s"}
		// a's command takes T/8 to stop: b, which proves its place only
		// once a announces the step-down (standby.go), has its proof
		// answered before the release, as in TestCleanHandoverStartsOnCredit.
		a := e.add("a", append([]string{"--priority", "10"}, slow...), nil, "slowstop", "500ms")
		waitTenures(t, e.ticks, 1, 10*time.Second)
		b := e.add("b", append([]string{"--preempt-after", "0"}, slow...), []string{proxy.Addr()}, "tick")
		b.WaitEvent(logEvStandingBy, 10*time.Second)
		if out, code := control(t, e, "step-down"); code != 0 {
			t.Fatalf("step-down: exit %d: %s", code, out)
		}
		b.WaitEvent(logEvElected, 10*time.Second)
		b.WaitEvent(logEvHandedOver, 10*time.Second) // as the named successor
		waitTenures(t, e.ticks, 2, 10*time.Second)
		if len(a.Events(logEvRevoked)) > 0 {
			t.Errorf("a revoked the handover to b:\n%s", a.out.String())
		}
		checkNoOverlap(t, e.ticks)
		e.checkTokensGrow()
		for _, p := range []*ballotProc{a, b} {
			p.Signal(syscall.SIGTERM)
			p.Wait(10 * time.Second)
		}
	})

	t.Run("a flapping candidate does not bounce the command", func(t *testing.T) {
		t.Parallel()
		e := newElection(t, zkc)
		healthy := filepath.Join(t.TempDir(), "healthy")
		a := e.add("a", preempt, nil, "tick")
		waitTenures(t, e.ticks, 1, 10*time.Second)
		b := e.add("b", append([]string{"--priority", "10", "--health-check", "test -f " + healthy,
			"--health-interval", "100ms", "--health-failures", "1"}, preempt...), nil, "tick")
		// b joins as soon as its check passes and withdraws at the first
		// failure: three short stints in line, each ended by the test as
		// soon as b is in line and ready.
		for i := 1; i <= 3; i++ {
			if err := os.WriteFile(healthy, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			waitEvents(t, b, logEvStandingBy, i, 10*time.Second)
			if err := os.Remove(healthy); err != nil {
				t.Fatal(err)
			}
			waitEvents(t, b, logEvWithdrew, i, 10*time.Second, "reason", "unhealthy")
		}
		if n := len(readTenures(t, e.ticks)); n != 1 {
			t.Fatalf("%d tenures while b flapped, want 1 (a's)", n)
		}
		// Healthy from now on: one handover, after --preempt-after.
		if err := os.WriteFile(healthy, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		waitTenures(t, e.ticks, 2, preemptAfterTest+10*time.Second)
		b.WaitEvent(logEvElected, 10*time.Second)
		if k := len(a.Events(logEvPreempting)); k != 1 {
			t.Errorf("a handed over %d times, want once:\n%s", k, a.out.String())
		}
		checkNoOverlap(t, e.ticks)
		e.checkTokensGrow()
		for _, p := range []*ballotProc{a, b} {
			p.Signal(syscall.SIGTERM)
			p.Wait(10 * time.Second)
		}
	})
}

// waitEvents waits until p has logged event ev (with kv) at least n times.
func waitEvents(t *testing.T, p *ballotProc, ev logEvent, n int, timeout time.Duration, kv ...string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for len(p.Events(ev, kv...)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: waited %s for event %s %d times:\n%s", p.name, timeout, ev, n, p.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNamedSuccessorHoldsOffAHigherPriority: a leader names the first
// other proposal it saw in line; a candidate of higher priority that
// joined unseen goes ahead of it in line, but must not take the baton
// while the named one may run on credit: not before that one's proposal is
// gone plus W, or, should it never take (stopped, unaware), before a
// revocation of the handover plus W — and a successor that reads the
// revoked record gets no credit.
func TestNamedSuccessorHoldsOffAHigherPriority(t *testing.T) {
	t.Parallel()
	zkc := startZK(t, 1)
	for _, gone := range []bool{true, false} {
		name := "named successor gone"
		if !gone {
			name = "named successor never takes"
		}
		t.Run(name, func(t *testing.T) {
			base := "/ballot/test/" + strings.NewReplacer(" ", "-", "/", "-").Replace(t.Name())
			seedElection(t, zkc.Servers(), base)
			p := newInProcess(t, zkc, base)
			leader := p.join(p.session(), "leader")
			if _, err := leader.readElection(); err != nil {
				t.Fatal(err)
			}
			if _, err := leader.takeBaton(nil); err != nil {
				t.Fatal(err)
			}
			named := p.join(p.session(), "named")
			named.standby.start()
			// A handover may come: as the leader's announcement says (standby.go).
			named.standby.proveWhile(true)
			waitProof(t, named, 0) // the first proof is sent at once
			if _, err := named.readElection(); err != nil {
				t.Fatal(err)
			}
			children, _, err := leader.s.Conn.Children(base)
			if err != nil {
				t.Fatal(err)
			}
			leader.line.seen.Store(&children) // before the preferred one joined
			preferred := p.joinWith(p.session(), "preferred", 10)
			if _, err := preferred.readElection(); err != nil {
				t.Fatal(err)
			}
			if !leader.withdraw() {
				t.Fatal("the leader's release failed")
			}
			released := bootNow()
			// The preferred candidate is first in line now.
			if err := preferred.awaitLeadership(nil); err != nil {
				t.Fatal(err)
			}
			took := make(chan error, 1)
			go func() { _, err := preferred.takeBaton(nil); took <- err }()

			var creditEnd bootTime
			if gone {
				// Its credit counts from a proof sent after the preferred one
				// read the record (which it does at once).
				waitProof(t, named, named.standby.proof.Load())
				start, err := named.takeBaton(nil)
				if err != nil || start.pending == nil {
					t.Fatalf("the named successor did not start on credit: %v", err)
				}
				creditEnd = start.end
				named.standby.stop()
				named.s.Close() // gone before its take: it may run until creditEnd
			} else {
				// It never reads the record: the preferred one revokes the
				// handover W after the release and waits W more.
				creditEnd = released + 2*bootTime(batonWait(2*time.Second))
			}
			select {
			case err := <-took:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the preferred candidate never took the baton")
			}
			now := bootNow()
			if gone && now < creditEnd {
				t.Fatalf("the preferred candidate took the baton %v before the named successor's credit ran out", time.Duration(creditEnd-now))
			}
			if !gone {
				// Revoked after W, then W more: at least 2W from the release.
				h, err := named.readHandover()
				if err != nil {
					t.Fatal(err)
				}
				if h.rec.State != handoverTaken || h.rec.CandidateID != "preferred" {
					t.Fatalf("record %s, want taken by preferred", h.raw)
				}
				if _, ok := (oneBaton{named}).credit(&handoverSeen{parsed: true, rec: handoverRecord{State: handoverRevoked, Successor: named.node, BatonWaitMs: 1500}}, bootTime(named.standby.proof.Load())); ok {
					t.Errorf("a revoked handover gives credit")
				}
				if now < creditEnd {
					t.Errorf("the preferred candidate took the baton %v after the release; revoking after W, then W more, takes at least %v",
						time.Duration(now-released), time.Duration(creditEnd-released))
				}
			}
		})
	}
}

// waitProof waits for a standing-by candidate's proof sent after the one
// at since (0: its first). Proofs go every T/4 (0.5 s here): 10 s is
// twenty of them.
func waitProof(t *testing.T, c *candidate, since int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); c.standby.proof.Load() == since; {
		if time.Now().After(deadline) {
			t.Fatal("no proof of its place in 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
