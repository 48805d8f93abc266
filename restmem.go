package main

// The collector at rest (issue 34): a process that runs nothing and
// changes nothing for a while lowers Go's GC percent and gives the heap's
// free pages back once; any activity puts the percent back at once,
// before the work that follows allocates, so a failover or a run goes with
// the collector as it was. At rest the heap otherwise fills with garbage
// up to twice what is live, and the scavenger keeps those pages: most of
// a crontab host's anonymous memory (BENCHMARKS.md, section 18). The rest
// also drops the binary's pages that start-up and the busy time mapped:
// at rest ballot touches little of its code (the session's pings), and
// what a failover or a run needs maps again in minor faults.

import (
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"ballot/internal/keeper"
	"ballot/internal/slog"
)

// restGCPercent is the collector's percent at rest (Go's default: 100).
// At rest the heap's goal is then live × 1.25 instead of × 2, and the
// scavenger returns what lies above it. Between two collections a
// process at rest allocates little (pings, a cron leader writes nothing),
// so collecting four times as often costs little CPU (BENCHMARKS.md,
// section 18, CPU at rest).
const restGCPercent = 25

// restQuiet is how long a process must have been quiet to be at rest:
// 3T, and at least 10 s. Whatever follows a transition or a run's end
// (the publisher's writes, a successor's proofs, a handover's take) ends
// within T, the lease's own bound; 3T leaves slow round trips slack. Rest
// costs one full collection on entry (FreeOSMemory: about a millisecond a
// MB live), so the floor bounds that cost for small T, whose activity
// comes in shorter gaps.
func restQuiet(t time.Duration) time.Duration { return max(3*t, 10*time.Second) }

// memGovernor switches the collector between busy (the process's own
// percent, GOGC or 100) and rest. One a process: the collector is the
// process's.
type memGovernor struct {
	on      atomic.Bool  // started, and the collector not off (GOGC=off)
	resting atomic.Bool  // the rest percent is set
	last    atomic.Int64 // the last activity, ns on the governor's clock
	wake    chan struct{}
	mu      sync.Mutex // orders rest against stir's restore

	busyPct, restPct int
	quiet            time.Duration
	log              *slog.Logger

	restGen atomic.Int64 // counts the rests: a watch of an earlier rest stops

	now       func() time.Duration // the governor's clock: monotonic
	setPct    func(int) int        // debug.SetGCPercent
	freeMem   func()               // debug.FreeOSMemory
	dropPages func()               // keeper.DropStartPages
	afterGC   func(f func())       // f after the next collection (afterNextGC)
}

// governor is the process's: started by the run commands (startGovernor),
// stirred from wherever activity begins. Unstarted, stir does nothing
// (the readers, tests).
var governor = newMemGovernor()

func newMemGovernor() *memGovernor {
	epoch := time.Now()
	return &memGovernor{
		wake:      make(chan struct{}, 1),
		now:       func() time.Duration { return time.Since(epoch) },
		setPct:    debug.SetGCPercent,
		freeMem:   debug.FreeOSMemory,
		dropPages: keeper.DropStartPages,
		afterGC:   afterNextGC,
	}
}

// afterNextGC runs f (on the runtime's finalizer goroutine) once a
// collection has found a sentinel unreachable: after the next one.
func afterNextGC(f func()) {
	s := &gcSentinel{}
	runtime.SetFinalizer(s, func(*gcSentinel) { f() })
}

// gcSentinel holds a pointer: never one of the tiny allocator's blocks,
// whose finalizers may wait for their neighbours.
type gcSentinel struct{ _ *byte }

// start turns the governor on with the process's current percent as the
// busy one; a collector turned off (GOGC=off) is left alone. It returns
// without starting the loop (tests drive check themselves).
func (g *memGovernor) start(quiet time.Duration, log *slog.Logger) bool {
	p := g.setPct(100)
	g.setPct(p)
	if p < 0 {
		return false
	}
	g.busyPct, g.restPct, g.quiet, g.log = p, min(p, restGCPercent), quiet, log
	g.last.Store(int64(g.now()))
	g.on.Store(true)
	return true
}

// startGovernor starts the process's governor and its goroutine, for a
// run command whose session timeout is t.
func startGovernor(t time.Duration, log *slog.Logger) {
	if governor.start(restQuiet(t), log) {
		go governor.loop()
	}
}

// stir says the process is active: a transition, a run's start or end, a
// watch that fired, a signal. At rest it restores the busy percent before
// returning, so the work that follows allocates under it. Cheap otherwise
// (a clock read and two atomics): it is called on every such event.
func (g *memGovernor) stir() {
	if !g.on.Load() {
		return
	}
	// last before resting: rest sets resting, then reads last (both under
	// mu), so either it sees this activity or stir sees it resting.
	g.last.Store(int64(g.now()))
	if !g.resting.Load() {
		return
	}
	g.mu.Lock()
	restored := g.resting.Load()
	if restored {
		g.setPct(g.busyPct)
		g.resting.Store(false)
		ping(g.wake)
	}
	g.mu.Unlock()
	if restored && g.log != nil {
		g.log.Debug("busy again: the collector as before", logEvMemoryBusy.attr(), "gc_percent", g.busyPct)
	}
}

// check is one look of the loop: it rests the process if it has been
// quiet for g.quiet, and says how long to wait before looking again
// (0: resting, wait for a stir).
func (g *memGovernor) check() (wait time.Duration) {
	g.mu.Lock()
	if g.resting.Load() {
		g.mu.Unlock()
		return 0
	}
	g.resting.Store(true)
	if idle := g.now() - time.Duration(g.last.Load()); idle < g.quiet {
		g.resting.Store(false)
		g.mu.Unlock()
		return g.quiet - idle
	}
	g.setPct(g.restPct)
	gen := g.restGen.Add(1)
	g.mu.Unlock()
	// Outside mu: a full collection; a stir meanwhile restores at once.
	g.freeMem()
	g.dropPages()
	g.watchCollections(gen)
	if g.log != nil {
		g.log.Debug("at rest: the collector's percent lowered, the heap's free pages returned", logEvMemoryAtRest.attr(),
			"gc_percent", g.restPct, "quiet", g.quiet, "heap_live_bytes", heapLive())
	}
	return 0
}

// watchCollections drops the binary's pages again after each collection
// of rest gen: the runtime's own (one every two minutes at least, even at
// rest) reads the tables of every goroutine's stack and maps 1.5 MB of
// them back, which then stayed mapped until the next rest.
func (g *memGovernor) watchCollections(gen int64) {
	g.afterGC(func() {
		if !g.resting.Load() || g.restGen.Load() != gen {
			return // busy, or another rest watches
		}
		g.dropPages()
		g.watchCollections(gen)
	})
}

// loop looks when the quiet period may have passed, and after a rest
// when stirred.
func (g *memGovernor) loop() {
	t := time.NewTimer(g.quiet)
	for {
		<-t.C
		wait := g.check()
		if wait == 0 {
			<-g.wake
			wait = g.quiet
		}
		t.Reset(wait)
	}
}

// heapLive is what the last collection kept.
func heapLive() uint64 {
	s := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
