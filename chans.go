package main

// Channels used as signals: a poke that never blocks, whether one is
// closed, and waits for the first of several without a goroutine each.

import (
	"reflect"
	"slices"
	"sync"
)

func ping(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// isClosed reports whether ch is closed (false for nil): the one way to
// ask.
func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// closer is a channel closed once, by whoever comes first.
type closer struct {
	C    chan struct{}
	once sync.Once
}

func newCloser() *closer { return &closer{C: make(chan struct{})} }

func (c *closer) Close() { c.once.Do(func() { close(c.C) }) }

// whenFirst runs f(i), in a goroutine of its own, once the first of chans
// (receive channels of any element type; nil ones never fire) fires: a
// receive succeeds, or the channel is closed. i is that channel's index.
// It is the goroutine that only waits, `go func() { select { case <-a:
// f(0); case <-b: f(1) } }()`, without its stack (8 KiB at least): the
// waits of the process are watched by a few dispatcher goroutines, each
// of at most waitsPerDispatcher waits (issue 34: a crontab of 200 jobs
// kept 800 goroutines that only waited). f runs on its own goroutine, so
// a slow f never holds up another wait. The dispatcher takes the value it
// receives; these channels are signals.
func whenFirst(f func(i int), chans ...any) {
	whenFirstRecv(func(i int, _ any) { f(i) }, chans...)
}

// whenFirstRecv is whenFirst for a wait that needs what it received (a
// watch's event): f(i, v) gets the value taken from chans[i], as `v :=
// <-ch` would have it: from a closed channel, the zero value of its
// element type (a zk.Event{} for a closed watch channel, never a nil
// any), so v.(T) holds for a channel of T either way.
func whenFirstRecv(f func(i int, v any), chans ...any) {
	w := &chanWait{f: f}
	for i, ch := range chans {
		if v := reflect.ValueOf(ch); v.IsValid() && !v.IsNil() {
			w.chans = append(w.chans, v)
			w.index = append(w.index, i)
		}
	}
	if len(w.chans) == 0 {
		return // nothing can fire, as a select of nil channels
	}
	waits.add(w)
}

type chanWait struct {
	chans []reflect.Value
	index []int // each channel's index in whenFirst's arguments
	f     func(int, any)
}

// waitsPerDispatcher bounds a dispatcher's select: each wait added or
// fired costs its dispatcher a select over all its waits' channels, so
// one dispatcher for every wait would cost a failover of n jobs, each
// adding waits, n² (measured: 200 jobs' failover took 1.2–1.9 s instead
// of 0.2–0.35 s).
const waitsPerDispatcher = 16

// chanWaits are the waits of whenFirst, in groups, each watched by its
// own dispatcher goroutine while it has some.
type chanWaits struct {
	mu     sync.Mutex
	groups []*waitGroup
}

type waitGroup struct {
	pending map[*chanWait]struct{}
	changed chan struct{} // the dispatcher's own case: pending grew
}

var waits = &chanWaits{}

func (ws *chanWaits) add(w *chanWait) {
	ws.mu.Lock()
	var g *waitGroup
	for _, x := range ws.groups {
		if len(x.pending) < waitsPerDispatcher {
			g = x
			break
		}
	}
	start := g == nil
	if start {
		g = &waitGroup{pending: map[*chanWait]struct{}{}, changed: make(chan struct{}, 1)}
		ws.groups = append(ws.groups, g)
	}
	g.pending[w] = struct{}{}
	ws.mu.Unlock()
	if start {
		go ws.dispatch(g)
	} else {
		ping(g.changed)
	}
}

// pendingCount is the number of waits not fired yet (tests).
func (ws *chanWaits) pendingCount() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	n := 0
	for _, g := range ws.groups {
		n += len(g.pending)
	}
	return n
}

func (ws *chanWaits) dispatch(g *waitGroup) {
	type owner struct {
		w *chanWait
		i int
		v reflect.Value // what it received (the element's zero value: closed)
	}
	// Built again on each pass, in the same arrays: a pass for every wait
	// added or fired made the dispatchers most of a crontab's garbage at
	// start (27 of 59 MB at 200 jobs), and that garbage the heap's holes.
	var cases []reflect.SelectCase
	var owners []owner
	for {
		ws.mu.Lock()
		if len(g.pending) == 0 {
			// Out of the list under the lock: an add after this starts
			// another group.
			ws.groups = slices.DeleteFunc(ws.groups, func(x *waitGroup) bool { return x == g })
			ws.mu.Unlock()
			return
		}
		clear(cases[:cap(cases)]) // no fired wait kept alive by the arrays
		clear(owners[:cap(owners)])
		cases = append(cases[:0], reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(g.changed)})
		owners = append(owners[:0], owner{})
		for w := range g.pending {
			for i, ch := range w.chans {
				cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: ch})
				owners = append(owners, owner{w: w, i: w.index[i]})
			}
		}
		ws.mu.Unlock()
		chosen, v, _ := reflect.Select(cases)
		if chosen == 0 {
			continue // a wait added
		}
		o := owners[chosen]
		o.v = v
		fired := []owner{o}
		ws.mu.Lock()
		delete(g.pending, o.w)
		// What fired with it (a lost session ends every job's waits at
		// once): taken in this pass, not a select over all of them each.
		for w := range g.pending {
			for i, ch := range w.chans {
				if x, _ := ch.TryRecv(); x.IsValid() {
					delete(g.pending, w)
					fired = append(fired, owner{w: w, i: w.index[i], v: x})
					break
				}
			}
		}
		ws.mu.Unlock()
		governor.stir() // whatever follows a wait is activity
		for _, o := range fired {
			go o.w.f(o.i, o.v.Interface())
		}
	}
}
