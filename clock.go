package main

// Where the lease and the keeper's deadline read the time: the boot clock
// (bootTime, lease.go), and Go's clock for the deadlines the lease hands to
// Go's timers and to the log. (Network and I/O deadlines, and the keeper's
// grace and ping periods, stay on Go's own clock, which the poller and the
// kernel keep.)

import "time"

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
