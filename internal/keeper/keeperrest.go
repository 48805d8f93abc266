package keeper

// An idle keeper at rest (issue 34). An idle keeper waits, for hours, for
// an order or for ballot's death; what it touched since its start (the
// orders of a crontab's leaderships spreading, a collection) stays mapped
// and counts in the host's RSS beside ballot's: 2.5–3 MB of the binary's
// pages, each touched page mapped with its neighbours (the kernel's
// fault-around, 64 KiB). Quiet for restQuiet, it collects once, turns its
// collector off and drops the binary's pages again: from then on nothing
// in it runs until an order or ballot's end, so nothing maps them back.
// The collector's periodic forced run would (every two minutes, with the
// stack scan's tables); with nothing allocating, nothing needs it. Any
// order puts the collector back before it is carried out.

import (
	"runtime/debug"
	"sync"
	"time"
)

// restQuiet is how long an idle keeper must have had no order to rest:
// half of ballot's shortest quiet (10 s, restmem.go), which counts from
// its last order too, so that a ballot at rest has a keeper at rest (but
// for a pipe read delayed by 5 s); a crontab's leaderships settle within
// it.
const restQuiet = 5 * time.Second

type idleRest struct {
	mu      sync.Mutex
	last    time.Time // the last order
	resting bool      // the collector is off, the pages dropped
	stopped bool      // no longer idle: never rest again
	pct     int       // the collector's percent before the rest
	wake    chan struct{}
	quiet   time.Duration
	now     func() time.Time
	rest    func() int // collect, turn the collector off, drop pages: the old percent
	restore func(pct int)
}

func newIdleRest() *idleRest {
	return &idleRest{
		wake:  make(chan struct{}, 1),
		quiet: restQuiet,
		now:   time.Now,
		rest: func() int {
			debug.FreeOSMemory()
			pct := debug.SetGCPercent(-1)
			DropStartPages()
			return pct
		},
		restore: func(pct int) { debug.SetGCPercent(pct) },
	}
}

// stir records an order (or ballot's end) and, at rest, puts the
// collector back before the caller carries it out. A nil rest: not idle.
func (r *idleRest) stir() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = r.now()
	if r.resting {
		r.restore(r.pct)
		r.resting = false
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// stop ends the idle keeper's rests for good (it runs a command now): the
// collector back if resting, and the loop ends.
func (r *idleRest) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.resting {
		r.restore(r.pct)
		r.resting = false
	}
	if !r.stopped {
		r.stopped = true
		close(r.wake)
	}
}

// check rests if quiet long enough; it says how long to wait before
// looking again (0: resting or stopped, wait for a wake).
func (r *idleRest) check() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.resting {
		return 0
	}
	if idle := r.now().Sub(r.last); idle < r.quiet {
		return r.quiet - idle
	}
	// Under mu: an order waits the millisecond this takes, and then finds
	// the collector off and puts it back.
	r.pct = r.rest()
	r.resting = true
	return 0
}

// loop rests the keeper whenever it has been quiet for r.quiet; it ends
// with stop.
func (r *idleRest) loop() {
	r.mu.Lock()
	r.last = r.now()
	r.mu.Unlock()
	t := time.NewTimer(r.quiet)
	for {
		<-t.C
		wait := r.check()
		if wait == 0 {
			if _, ok := <-r.wake; !ok {
				return
			}
			wait = r.quiet
		}
		t.Reset(wait)
	}
}
