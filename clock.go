package main

// Where the lease and the keeper's deadline read the time: the boot clock
// (bootTime, lease.go), and Go's clock for the deadlines the lease hands to
// Go's timers and to the log. (Network and I/O deadlines, and the keeper's
// grace and ping periods, stay on Go's own clock, which the poller and the
// kernel keep.)

import (
	"sync"
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

// Steps of the wall clock (NTP, an operator's date, a machine resumed
// from suspend, whose Go clock stood still): Go's timers count on the
// monotonic clock, so a wait until a wall-clock time (a cron leader's next
// run) comes late or early by the step. One watch a process compares the
// two clocks every wallCheckEvery and wakes every waiter once they part by
// more than wallStepMin; a cron leader then reads its schedule afresh. One
// ticker a process, instead of each leader waking every few seconds to
// read its schedule again (a crontab's 100 leaders at rest: 20 wake-ups a
// second, each with its schedule's garbage).
const (
	wallCheckEvery = 5 * time.Second
	wallStepMin    = time.Second
)

var wallSteps wallWatch

type wallWatch struct {
	mu sync.Mutex
	ch chan struct{} // closed at the next step; nil until the first waiter
}

// stepped is closed at the next step of the wall clock.
func (w *wallWatch) stepped() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
		go w.loop()
	}
	return w.ch
}

func (w *wallWatch) loop() {
	prev := time.Now()
	t := time.NewTicker(wallCheckEvery)
	for range t.C {
		now := time.Now()
		if wallStepped(now.Round(0).Sub(prev.Round(0)), now.Sub(prev)) {
			w.mu.Lock()
			close(w.ch)
			w.ch = make(chan struct{})
			w.mu.Unlock()
		}
		prev = now
	}
}

// wallStepped reports that between two readings of Go's clock the wall
// clock moved (wall) by more than wallStepMin beyond what the monotonic
// one did (mono).
func wallStepped(wall, mono time.Duration) bool {
	d := wall - mono
	return d > wallStepMin || d < -wallStepMin
}
