package main

// Unit tests of the lease's arithmetic (leaseterms.go): the README's
// inequalities ("How the election works", "The lease") as assertions, for
// session timeouts with odd milliseconds and any grace period. No
// ZooKeeper, no waiting: milliseconds.

import (
	"strings"
	"testing"
	"time"

	"ballot/internal/bootclock"
)

// leaseTimeouts are the session timeouts the arithmetic is checked for:
// the server's smallest at a 200 ms tick, odd milliseconds, the default,
// the largest at Debian's 2 s tick, and more.
var leaseTimeouts = []time.Duration{
	400 * time.Millisecond, 401 * time.Millisecond, 999 * time.Millisecond,
	2 * time.Second, 2001 * time.Millisecond, 3333 * time.Millisecond, 4007 * time.Millisecond,
	5 * time.Second, 5003 * time.Millisecond, 10 * time.Second, 40 * time.Second, 40*time.Second + 1,
	119999 * time.Millisecond,
}

// leaseGraces are --stop-grace-period values, relative to T: none, a
// millisecond, less than T/8, T/8 and more (the grace owed is capped).
func leaseGraces(t time.Duration) []time.Duration {
	return []time.Duration{0, time.Millisecond, t / 16, t/8 - 1, t / 8, t/8 + 1, 10 * time.Second, time.Hour}
}

func TestLeaseTermsKeepTheREADMEsOrder(t *testing.T) {
	const ns = 4 // nanoseconds lost to integer division, at most
	for _, T := range leaseTimeouts {
		for _, stopGrace := range leaseGraces(T) {
			p := newLeaseTerms(T, stopGrace)
			if err := p.check(); err != nil {
				t.Errorf("T=%s grace=%s: %v", T, stopGrace, err)
				continue
			}
			var vouched bootTime = 1e12 // any send time of a vouching write
			end := p.endFrom(vouched)
			stop, kill, backstop := p.stopFor(end), p.killFor(end), p.backstopFor(end)
			wake, keeperEnd := bootclock.KeeperAlarms(kill, backstop)
			since := func(b bootTime) time.Duration { return time.Duration(b - vouched) }
			near := func(got, want time.Duration) bool { return got-want <= ns && want-got <= ns }
			for _, c := range []struct {
				ok   bool
				what string
			}{
				{p.wait == T*3/4, "a successor waits W = 3T/4 for a dropped baton"},
				{since(end) == p.wait, "the lease ends W after the last vouching write was sent"},
				{p.grace == min(stopGrace, T/8), "the grace owed is min(--stop-grace-period, T/8)"},
				{kill-stop == bootTime(p.grace), "SIGTERM comes g before the kill"},
				{near(since(kill), p.wait-T/16), "the kill comes at W − T/16"},
				{kill < end, "the first kill comes before a successor's 3T/4 wait ends"},
				{near(since(backstop), p.wait-T/32), "the kernel kills the keeper at W − T/32"},
				{kill < keeperEnd && keeperEnd == backstop && keeperEnd < end, "the keeper's backstop comes after ballot's kill and before the hard end"},
				{near(since(wake), p.wait-T/8), "the keeper's wake alarm comes at W − T/8"},
				{wake < kill, "the wake alarm comes before the kill"},
				{since(wake) > p.renewEvery(), "the wake alarm comes after the next renewal was due"},
				{near(p.renewEvery(), T/8), "a renewal goes out every T/8"},
				{since(stop) > p.renewEvery(), "a fresh lease lasts more than a renewal period before SIGTERM"},
				{p.slowAfter() < since(stop), "a slow renewal is reported before SIGTERM"},
				{p.checkInWithin() > p.renewEvery(), "supervision checks in (every T/8) within the T/4 renewals allow"},
				{maxRenewalsInFlight*p.renewEvery() >= p.wait, "the renewals in flight cover a lease"},
				{near(p.leaseSpan(), since(kill)), "ballot info's lease is the time to the kill"},
				{p.ridesThrough(0) >= 7*T/16-ns, "a leader rides through 7T/16 − ρ"},
				{p.grace < T/8 || near(p.ridesThrough(0), 7*T/16), "at the largest grace, exactly 7T/16"},
				{p.ridesThrough(T/8) == p.ridesThrough(0)-T/8, "each millisecond of round trip costs a millisecond of stall"},
				{p.ridesThrough(0) < 2*T/3, "the client's read timeout (2T/3) comes after the lease lets go, not before"},
			} {
				if !c.ok {
					t.Errorf("T=%s grace=%s (W=%s g=%s): not true that %s", T, stopGrace, p.wait, p.grace, c.what)
				}
			}
		}
	}
}

// TestLeaseTermsRefuseUnsafeFractions: the check made at start refuses
// terms that would break the lease, such as a constant edited into a W
// too short or too long for the renewals, or a negative grace.
func TestLeaseTermsRefuseUnsafeFractions(t *testing.T) {
	T := 2 * time.Second
	for _, tc := range []struct {
		name string
		p    leaseTerms
		want string
	}{
		{"W no longer than a renewal period", leaseTerms{timeout: T, wait: T / 8, grace: 0}, "after the next renewal"},
		{"W longer than the renewals in flight", leaseTerms{timeout: T, wait: 2 * T, grace: 0}, "renewals in flight"},
		{"a grace that eats the lease", leaseTerms{timeout: T, wait: T * 3 / 4, grace: T * 5 / 8}, "outlasts a renewal period"},
		{"a negative grace", leaseTerms{timeout: T, wait: T * 3 / 4, grace: -1}, "SIGTERM comes no later"},
	} {
		err := tc.p.check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: check() = %v, want an error about %q", tc.name, err, tc.want)
		}
	}
}

// TestKeeperAlarms: the keeper's kernel alarms for a kill time and a
// backstop as ballot sends them.
func TestKeeperAlarms(t *testing.T) {
	for _, tc := range []struct {
		at, backstop, wake, stop bootTime
	}{
		{0, 0, 0, 0},                // no deadline: both disarmed
		{0, 500, 0, 0},              // a backstop without a kill time is none
		{1000, 0, 1000, 0},          // no backstop: wake at the kill
		{1000, 900, 1000, 0},        // a backstop before the kill is dropped
		{1000, 1000, 1000, 1000},    // at the kill itself
		{1000, 1010, 980, 1010},     // twice the backstop's distance early
		{10000, 10625, 8750, 10625}, // 625 after the kill: wake 1250 before it
	} {
		wake, stop := bootclock.KeeperAlarms(tc.at, tc.backstop)
		if wake != tc.wake || stop != tc.stop {
			t.Errorf("keeperAlarms(%d, %d) = %d, %d; want %d, %d", tc.at, tc.backstop, wake, stop, tc.wake, tc.stop)
		}
	}
}

// TestKeeperAlarmsKeepTheREADMEsOrder: for a lease as ballot sends it, the
// keeper arms its wake-up after the next renewal was due and before the
// kill, and its own backstop after the kill and before the lease's end
// (the README's table: W − T/8, W − T/16, W − T/32, W). The keeper arms
// exactly bootclock.KeeperAlarms (internal/keeper, TestKeeperDeadlineOrders).
func TestKeeperAlarmsKeepTheREADMEsOrder(t *testing.T) {
	const keeperBase = bootTime(time.Hour)
	for _, T := range leaseTimeouts {
		p := newLeaseTerms(T, 0)
		end := p.endFrom(keeperBase)
		kt := killTimes{Kill: p.killFor(end), Backstop: p.backstopFor(end)}
		wake, backstop := bootclock.KeeperAlarms(kt.Kill, kt.Backstop)
		if !(keeperBase+bootTime(p.renewEvery()) < wake && wake < kt.Kill && kt.Kill < backstop && backstop < end) {
			t.Errorf("T=%s: renewal due %d, wake %d, kill %d, backstop %d, lease's end %d: not in that order",
				T, keeperBase+bootTime(p.renewEvery()), wake, kt.Kill, backstop, end)
		}
	}
}
