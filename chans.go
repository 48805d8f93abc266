package main

// Channels used as signals: a poke that never blocks, whether one is
// closed, and waits for the first of several without a goroutine each.

import (
	"reflect"
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
// f(0); case <-b: f(1) } }()`, without its stack (8 KiB at least): every
// such wait of the process is watched by one dispatcher goroutine
// (issue 34: a crontab of 200 jobs kept 400 of them at rest). f runs on
// its own goroutine, so a slow f never holds up another wait. The
// dispatcher takes the value it receives; these channels are signals.
func whenFirst(f func(i int), chans ...any) {
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
	f     func(int)
}

// chanWaits are the waits of whenFirst, and their one dispatcher, which
// runs while there are some.
type chanWaits struct {
	mu      sync.Mutex
	pending map[*chanWait]struct{}
	changed chan struct{} // the dispatcher's own case: pending changed
	running bool
}

var waits = &chanWaits{pending: map[*chanWait]struct{}{}, changed: make(chan struct{}, 1)}

func (ws *chanWaits) add(w *chanWait) {
	ws.mu.Lock()
	ws.pending[w] = struct{}{}
	start := !ws.running
	ws.running = true
	ws.mu.Unlock()
	if start {
		go ws.dispatch()
	} else {
		ping(ws.changed)
	}
}

func (ws *chanWaits) dispatch() {
	type owner struct {
		w *chanWait
		i int
	}
	for {
		ws.mu.Lock()
		if len(ws.pending) == 0 {
			ws.running = false // an add after this starts another
			ws.mu.Unlock()
			return
		}
		cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ws.changed)}}
		owners := []owner{{}}
		for w := range ws.pending {
			for i, ch := range w.chans {
				cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: ch})
				owners = append(owners, owner{w, w.index[i]})
			}
		}
		ws.mu.Unlock()
		chosen, _, _ := reflect.Select(cases)
		if chosen == 0 {
			continue // a wait added
		}
		o := owners[chosen]
		fired := []owner{o}
		ws.mu.Lock()
		delete(ws.pending, o.w)
		// What fired with it (a lost session ends every job's waits at
		// once): taken in this pass, not a select over all of them each.
		for w := range ws.pending {
			for i, ch := range w.chans {
				if x, _ := ch.TryRecv(); x.IsValid() {
					delete(ws.pending, w)
					fired = append(fired, owner{w, w.index[i]})
					break
				}
			}
		}
		ws.mu.Unlock()
		for _, o := range fired {
			go o.w.f(o.i)
		}
	}
}
