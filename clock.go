package main

// Where the lease and the keeper's deadline read the time: the boot clock
// (bootTime, lease.go), and Go's clock for the deadlines the lease hands to
// Go's timers and to the log. (Network and I/O deadlines, and the keeper's
// grace and ping periods, stay on Go's own clock, which the poller and the
// kernel keep.)

import (
	"time"

	"ballot/internal/bootclock"
)

// clock reads the boot clock and Go's clock. The zero clock is the
// system's; unit tests set their own (lease_test.go, keeper_test.go).
type clock struct {
	boot func() bootTime
	wall func() time.Time
}

func (c clock) now() bootTime {
	if c.boot != nil {
		return c.boot()
	}
	return bootNow()
}

func (c clock) goNow() time.Time {
	if c.wall != nil {
		return c.wall()
	}
	return time.Now()
}

// onGoClock is boot-clock moment t on Go's clock, computed afresh at each
// call, so that it compares with Go's clock at that moment.
func (c clock) onGoClock(t bootTime) time.Time { return c.goNow().Add(time.Duration(t - c.now())) }

// bootTime is a reading of CLOCK_BOOTTIME (internal/bootclock). The lease
// is kept on it, not on the monotonic clock of Go's time package, which
// stops while the machine is suspended: ZooKeeper's clock runs on
// meanwhile, and a lease must not look fresh on resume. The keeper reads
// the same clock, so a deadline passes between the two as a number.
type bootTime = bootclock.Time

func bootNow() bootTime { return bootclock.Now() }

func onGoClock(t bootTime) time.Time { return clock{}.onGoClock(t) }

// zkClockReading is ZooKeeper's clock as one of the leader's writes saw it.
type zkClockReading struct {
	mtime time.Time // ZooKeeper's clock when the write committed
	sent  bootTime  // when the write was sent, on this host's boot clock
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
