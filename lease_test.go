package main

// Unit tests of the lease's decisions (lease.go) on a clock of the test's
// own (testClock): when a leader may start something, when it is told to
// stop, when the kill comes, when renewals vouch. The arithmetic they rest
// on is tested in leaseterms_test.go. No ZooKeeper, no waiting.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"ballot/internal/zookeeper"
)

// testClock is a boot clock and a Go clock that move only when told.
type testClock struct {
	boot bootTime
	wall time.Time
}

func (c *testClock) clock() clock {
	return clock{boot: func() bootTime { return c.boot }, wall: func() time.Time { return c.wall }}
}

func (c *testClock) advance(d time.Duration) {
	c.boot += bootTime(d)
	c.wall = c.wall.Add(d)
}

// testLease is a lease as holdLease makes it, with no renewals running,
// on the test's clock; busy says a command runs.
func testLease(T, stopGrace time.Duration, clk *testClock, busy bool) *lease {
	ended, endWith := context.WithCancelCause(context.Background())
	l := &lease{
		c:          &candidate{s: zookeeper.Detached(0, 0)},
		leaseTerms: newLeaseTerms(T, stopGrace),
		clock:      clk.clock(),
		end:        newLeaseTerms(T, stopGrace).endFrom(clk.boot),
		busy:       func() bool { return busy },
		enforced:   true,
		gone:       make(chan struct{}),
		ended:      ended,
		endWith:    endWith,
		quit:       make(chan struct{}),
	}
	l.checkIn()
	return l
}

// TestLeaseDecisionsOnItsClock: when a leader may start something, when
// it is told to stop, when the kill comes, and when renewals vouch, read
// off the lease's own clock.
func TestLeaseDecisionsOnItsClock(t *testing.T) {
	for _, T := range []time.Duration{2 * time.Second, 2001 * time.Millisecond, 5 * time.Second} {
		for _, stopGrace := range []time.Duration{0, 100 * time.Millisecond, 10 * time.Second} {
			t.Run(fmt.Sprintf("T=%s/grace=%s", T, stopGrace), func(t *testing.T) {
				clk := &testClock{boot: bootTime(time.Hour), wall: time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)}
				l := testLease(T, stopGrace, clk, true)
				taken := clk.boot
				g := min(stopGrace, T/8)

				if got, want := l.Left(), T*3/4-T/16; got != want {
					t.Errorf("at the take: %s left before the kill, want W − T/16 = %s", got, want)
				}
				if got, want := l.KillBy(), clk.wall.Add(l.Left()); !got.Equal(want) {
					t.Errorf("KillBy on Go's clock %s, want %s", got, want)
				}
				if got, want := l.KillBy().Sub(l.StopBy()), g; got != want {
					t.Errorf("StopBy comes %s before KillBy, want the grace %s", got, want)
				}

				// Nothing renews: fresh until SIGTERM's moment, not at it.
				clk.boot = l.stopAt() - 1
				if !l.fresh() {
					t.Errorf("not fresh 1 ns before SIGTERM's moment")
				}
				clk.boot = l.stopAt()
				if l.fresh() {
					t.Errorf("fresh at SIGTERM's moment (%s after the take)", time.Duration(clk.boot-taken))
				}

				// A renewal sent now and answered moves every moment by as much.
				kill := l.KillAt()
				l.mu.Lock()
				l.end = max(l.end, l.endFrom(clk.boot))
				l.mu.Unlock()
				if got := l.KillAt() - kill; got != clk.boot-taken {
					t.Errorf("a renewal sent %s after the take moved the kill by %s", time.Duration(clk.boot-taken), time.Duration(got))
				}
				if !l.Fresh() {
					t.Errorf("not fresh right after a renewal")
				}

				// Renewals vouch only while supervision checks in (Fresh
				// did, just now) within T/4.
				clk.advance(T/4 - 1)
				if !l.Vouches() {
					t.Errorf("does not vouch %s after a check-in", T/4-1)
				}
				clk.advance(1)
				if l.supervised(clk.boot) || l.Vouches() {
					t.Errorf("vouches %s after the last check-in", T/4)
				}
				idle := testLease(T, stopGrace, clk, false)
				clk.advance(T / 2)
				if !idle.supervised(clk.boot) {
					t.Errorf("a leader with nothing running counts as unsupervised")
				}
				l.mu.Lock()
				l.end = max(l.end, l.endFrom(clk.boot)) // renewed
				l.mu.Unlock()
				l.checkIn()
				if !l.Vouches() {
					t.Errorf("does not vouch again after a renewal and a check-in")
				}

				// A deleted proposal or baton, or a lost session, ends it at once.
				l.lose("our baton node was deleted")
				if l.fresh() || l.GoneWhy() != "our baton node was deleted" {
					t.Errorf("fresh after its baton went (%q)", l.GoneWhy())
				}
				lost := testLease(T, stopGrace, clk, true)
				lost.c.s.MarkLost("session expired")
				if lost.fresh() {
					t.Errorf("fresh after its session was lost")
				}
			})
		}
	}
}

// TestLeaseStanding: supervision's reading of its lease, on the lease's
// clock: the lease holds until the stop, which leaves the command its
// whole grace before the kill; from the kill on it has expired, and left
// says how late. A renewal moves both moments together.
func TestLeaseStanding(t *testing.T) {
	for _, T := range leaseTimeouts {
		for _, stopGrace := range []time.Duration{0, 100 * time.Millisecond, 10 * time.Second} {
			t.Run(fmt.Sprintf("T=%s/grace=%s", T, stopGrace), func(t *testing.T) {
				clk := &testClock{boot: bootTime(time.Hour), wall: time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)}
				l := testLease(T, stopGrace, clk, true)
				kill, stop := l.KillAt(), l.stopAt()
				at := func(when bootTime, want leaseStanding, wantLeft time.Duration) {
					t.Helper()
					st, left := l.standing(when)
					if st != want || left != wantLeft {
						t.Errorf("at kill%+v: standing %d, left %v; want %d, %v", time.Duration(when-kill), st, left, want, wantLeft)
					}
				}
				if grace := time.Duration(kill - stop); grace != l.grace {
					t.Errorf("the stop comes %v before the kill, want the grace owed, %v", grace, l.grace)
				}
				at(clk.boot, leaseHolds, time.Duration(kill-clk.boot))
				if stop > clk.boot {
					at(stop-1, leaseHolds, time.Duration(kill-stop+1))
				}
				if stop < kill {
					at(stop, leaseRunningOut, l.grace)
					at(kill-1, leaseRunningOut, 1)
				}
				at(kill, leaseExpired, 0)
				at(kill+bootTime(time.Second), leaseExpired, -time.Second)

				// An answered renewal sent now moves the end: what was past
				// the stop holds again.
				l.end = l.endFrom(stop)
				at(stop, leaseHolds, time.Duration(l.KillAt()-stop))
			})
		}
	}
}

// TestNextCheckInCountsFromTheLastCheckIn: supervision's own wake-up is
// counted from its last check-in, not from when it began to wait, so a
// wait begun late (a keeper order that blocked) still checks in before
// the limit renewals allow.
func TestNextCheckInCountsFromTheLastCheckIn(t *testing.T) {
	for _, T := range leaseTimeouts {
		clk := &testClock{boot: bootTime(time.Hour), wall: time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)}
		l := testLease(T, 0, clk, true)
		l.checkIn()
		if got := l.nextCheckIn(); got != l.superviseEvery() {
			t.Errorf("T=%s: right after a check-in, wake in %v, want %v", T, got, l.superviseEvery())
		}
		late := 100 * time.Millisecond // a blocked keeper order's longest write
		clk.advance(late)
		if got, want := l.nextCheckIn(), max(l.superviseEvery()-late, 0); got != want {
			t.Errorf("T=%s: %v after a check-in, wake in %v, want %v", T, late, got, want)
		}
		if at := late + l.nextCheckIn(); at >= l.checkInWithin() && late < l.checkInWithin() {
			t.Errorf("T=%s: the next check-in at %v after the last, past the limit %v", T, at, l.checkInWithin())
		}
		clk.advance(l.superviseEvery())
		if got := l.nextCheckIn(); got != 0 {
			t.Errorf("T=%s: past the wake-up, wait %v, want 0", T, got)
		}
	}
}

// TestArmedFreshWaitsForARenewalSentSinceTheRest: a lapsed lease's tail
// may still look fresh when a run is due soon after the last one; a run
// starts only on a renewal sent since the renewals resumed.
func TestArmedFreshWaitsForARenewalSentSinceTheRest(t *testing.T) {
	clk := &testClock{boot: bootTime(time.Hour), wall: time.Unix(1e9, 0)}
	l := testLease(5*time.Second, time.Second, clk, false)
	l.wakeRenew = make(chan struct{}, 1)
	if !l.armedFresh() {
		t.Fatal("a lease that never rested is not armedFresh")
	}
	l.lastAnswered = clk.boot
	l.Rest()
	clk.advance(time.Second)
	l.Arm()
	if l.armedFresh() {
		t.Error("armedFresh before any renewal sent since Arm was answered")
	}
	l.lastAnswered = clk.boot - 1 // sent just before Arm: still the old tail
	if l.armedFresh() {
		t.Error("armedFresh on a renewal sent before Arm")
	}
	l.lastAnswered = clk.boot
	if !l.armedFresh() {
		t.Error("not armedFresh on a renewal sent at Arm")
	}
	clk.advance(time.Second)
	l.Arm() // not resting: renewals go on, nothing to wait for again
	if !l.armedFresh() {
		t.Error("an Arm while renewals run made the lease wait again")
	}
}
