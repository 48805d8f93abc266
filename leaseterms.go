package main

// The lease's arithmetic, apart from clocks and ZooKeeper: for a session
// timeout T and the grace a command is owed, when the command is asked to
// stop, when it is killed, when the keeper's alarms fire and when the
// lease ends, all counted from the send time of the last write that
// vouched for the leadership (lease.go). Pure, so that leaseterms_test.go
// checks docs/design.md's inequalities for any T; and checked once at start
// (init below), so that no edit of a fraction can make them false
// unnoticed.

import (
	"fmt"
	"time"

	"ballot/internal/bootclock"
)

// leaseTerms are a lease's durations, fixed when it is taken.
type leaseTerms struct {
	timeout time.Duration // T, the smallest session timeout negotiated
	wait    time.Duration // W, what a successor waits for a dropped baton
	grace   time.Duration // owed to the command before the kill
}

func newLeaseTerms(t, stopGrace time.Duration) leaseTerms {
	return leaseTerms{timeout: t, wait: batonWait(t), grace: min(stopGrace, t/graceOwedDiv)}
}

// endFrom is the lease's end for the last write that vouched, sent at
// vouched: the earliest a successor could start.
func (p leaseTerms) endFrom(vouched bootTime) bootTime { return vouched + bootTime(p.wait) }

// killFor is when the command must be dead, for a lease that ends at end:
// ballot kills it then, and so does the keeper.
func (p leaseTerms) killFor(end bootTime) bootTime { return end - bootTime(p.timeout/killMarginDiv) }

// backstopFor is when the kernel kills the keeper itself, should it not
// have killed the command (ptrace-stopped, wedged): half the margin later,
// still T/32 before the lease's end.
func (p leaseTerms) backstopFor(end bootTime) bootTime {
	return end - bootTime(p.timeout/killMarginDiv/2)
}

// stopFor is when ballot asks the command to stop (SIGTERM): the grace it
// is owed before the kill. Nothing new starts from then on.
func (p leaseTerms) stopFor(end bootTime) bootTime { return p.killFor(end) - bootTime(p.grace) }

// renewEvery is the time between two renewals' sends.
func (p leaseTerms) renewEvery() time.Duration { return p.timeout / renewEveryDiv }

// superviseEvery is supervision's own wake-up when nothing else wakes
// it: it wakes on every answered renewal anyway, so its timer only
// matters when renewals go unanswered. Half-way between a renewal period
// (later, so that it does not fire just before the next answer: one
// wake-up per renewal, not two) and the check-in limit (earlier by T/16,
// for the scheduler), so that supervision still checks in in time.
func (p leaseTerms) superviseEvery() time.Duration { return (p.renewEvery() + p.checkInWithin()) / 2 }

// slowAfter is how long a renewal goes unanswered before it is reported.
func (p leaseTerms) slowAfter() time.Duration { return p.timeout / slowDiv }

// checkInWithin is how recent supervision's last check-in must be for
// renewals to vouch.
func (p leaseTerms) checkInWithin() time.Duration { return p.timeout / checkInDiv }

// leaseSpan is the time from a vouching write's send to the kill, as
// ballot info shows it.
func (p leaseTerms) leaseSpan() time.Duration { return time.Duration(p.killFor(p.endFrom(0))) }

// ridesThrough is how long ZooKeeper may leave every renewal unanswered
// before the command is stopped, when answers took rtt: the last answered
// renewal was sent up to a renewal period and a round trip before the
// silence began. 7T/16 − rtt at the largest grace.
func (p leaseTerms) ridesThrough(rtt time.Duration) time.Duration {
	return time.Duration(p.stopFor(p.endFrom(0))) - p.renewEvery() - rtt
}

// check returns the first of the lease's inequalities that p breaks, nil
// if none: the order of the moments in docs/design.md's table, and what the
// renewals and supervision need to keep a lease.
func (p leaseTerms) check() error {
	end := p.endFrom(0)
	stop, kill, backstop := p.stopFor(end), p.killFor(end), p.backstopFor(end)
	wake, keeperEnd := bootclock.KeeperAlarms(kill, backstop)
	for _, c := range []struct {
		ok   bool
		what string
	}{
		{p.grace >= 0 && stop <= kill, "SIGTERM comes no later than the kill"},
		{kill < end, "the kill comes before the lease's end, which a successor's wait for a dropped baton ends no sooner than"},
		{keeperEnd > kill, "the keeper's backstop comes after ballot's kill"},
		{keeperEnd < end, "the keeper's backstop comes before the lease's end"},
		{wake < kill, "the keeper's wake alarm comes before the kill"},
		{time.Duration(wake) > p.renewEvery(), "the keeper's wake alarm comes after the next renewal"},
		{time.Duration(stop) > p.renewEvery(), "a fresh lease outlasts a renewal period before SIGTERM"},
		{p.ridesThrough(0) > 0, "a leader rides through some silence"},
		{p.slowAfter() < time.Duration(stop), "a slow renewal is reported before the command is stopped"},
		{p.checkInWithin() > p.renewEvery(), "supervision, which checks in on every answered renewal, checks in within the time renewals allow"},
		{p.superviseEvery() > p.renewEvery() && p.superviseEvery() < p.checkInWithin(), "supervision's own wake-up comes after a renewal period and before the check-in limit"},
		{maxRenewalsInFlight*p.renewEvery() >= p.wait, "the renewals in flight cover a whole lease"},
	} {
		if !c.ok {
			return fmt.Errorf("lease terms T=%s W=%s g=%s: not true that %s", p.timeout, p.wait, p.grace, c.what)
		}
	}
	return nil
}

// The fractions hold for any T once they hold for one, apart from
// rounding to the nanosecond, which leaseterms_test.go covers.
func init() {
	if err := newLeaseTerms(time.Second, time.Hour).check(); err != nil {
		panic(err)
	}
}

// Fractions of the session timeout T.
const (
	// renewEveryDiv: a renewal goes out every T/8. Each is a quorum write
	// (8 per T: 96 a minute at T = 5 s); more often would load the ensemble
	// for little, less often would cut the stall a leader rides through by
	// as much.
	renewEveryDiv = 8
	// maxRenewalsInFlight bounds the renewals waiting for an answer (a
	// stalled server): one lease's worth.
	maxRenewalsInFlight = 8
	// killMarginDiv: the command must be dead T/16 before the lease's end,
	// for the kill itself, clocks that tick at slightly different rates
	// over W (ppm, far less), and the keeper's backstop half-way: a keeper
	// woken from a stop must have the time to catch up on renewals before
	// it (keeper.go, deadline.set).
	killMarginDiv = 16
	// graceOwedDiv: a command is owed min(--stop-grace-period, T/8) between
	// SIGTERM and the kill when the lease runs out.
	graceOwedDiv = 8
	// slowDiv: a renewal unanswered after T/8 is reported as slow.
	slowDiv = 8
	// checkInDiv: renewals vouch only while supervision has checked in
	// within T/4: a ballot whose main goroutine is stuck must not keep the
	// lead (and the baton) while nothing watches the command.
	checkInDiv = 4
)

// batonWait is W: how long a successor waits after finding the baton
// dropped by a holder whose session timeout was t. Whatever dropped it
// (the session's expiry, a deletion), that came after the holder's last
// renewal was sent, and the holder's command is dead by that send time +
// W (lease.go): so it is dead by the time the successor, which saw the
// baton gone no earlier than it went, has waited W. 3T/4 leaves the
// leader's renewals room to ride through a stalled or slow ZooKeeper
// (README, "How the election works"); a host that dies costs T + W.
func batonWait(t time.Duration) time.Duration { return t * 3 / 4 }
