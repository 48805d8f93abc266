package main

// Waits that take no goroutine (issue 34): a crontab's jobs at rest wait
// on their watches and their leadership's ends through whenFirst's one
// dispatcher and go-zookeeper's own watch channels, not a goroutine each,
// so a process's goroutines do not grow with its jobs.

import (
	"fmt"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/slog"
)

// TestWhenFirst: f runs once, with the index of the channel that fired
// (nil channels never do); one close ends every wait on it, each once; a
// slow f holds up no other wait; the dispatcher ends with the last wait.
func TestWhenFirst(t *testing.T) {
	const bound = 10 * time.Second // a goroutine's start; no timing is asserted
	got := make(chan int, 1)
	a, b := make(chan struct{}), make(chan zk.Event, 1)
	var none chan struct{}
	whenFirst(func(i int) { got <- i }, a, none, b)
	b <- zk.Event{}
	select {
	case i := <-got:
		if i != 2 {
			t.Errorf("fired index %d, want 2 (the zk.Event channel)", i)
		}
	case <-time.After(bound):
		t.Fatal("the wait did not end on its channel's event")
	}
	close(a)
	select {
	case i := <-got:
		t.Fatalf("f ran again (index %d) after the wait had ended", i)
	case <-time.After(50 * time.Millisecond):
	}

	// One close, many waits: each f once; one of them blocked for good
	// does not stop the others.
	const n = 300
	shared := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	ran := map[int]int{}
	block := make(chan struct{})
	defer close(block)
	for k := range n {
		wg.Add(1)
		whenFirst(func(i int) {
			mu.Lock()
			ran[k]++
			mu.Unlock()
			wg.Done()
			if k == 0 {
				<-block
			}
		}, make(chan struct{}), shared)
	}
	close(shared)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(bound):
		t.Fatalf("%d of %d waits on one closed channel ended", len(ran), n)
	}
	for k, c := range ran {
		if c != 1 {
			t.Errorf("wait %d: f ran %d times", k, c)
		}
	}
	if left := waits.pendingCount(); left != 0 {
		t.Errorf("%d waits still pending after every one fired", left)
	}
}

// TestIdleWatchesTakeNoGoroutineEach: elections' controls (a leader's
// pause, step-down and drain watches) and drain watches (a follower's),
// all at rest on one session, add one goroutine a waitsPerDispatcher
// (16) waits, not one or more a wait as before (four a leader, two a
// follower); and the
// watches still work: a pause reaches its election's leader.
func TestIdleWatchesTakeNoGoroutineEach(t *testing.T) {
	c := sharedZK(t)
	_, s := watchTestSession(t, c)
	T := s.Timeout()
	const elections = 60
	settled := func(what string, max int) int {
		t.Helper()
		// The reads' goroutines end one round trip after each watch is
		// armed; T is far more than that while the session lives.
		deadline := time.Now().Add(T)
		for {
			n := runtime.NumGoroutine()
			if n <= max || time.Now().After(deadline) {
				return n
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	op := zkConnect(t, c.Servers(), 2*time.Second)
	defer op.Close()
	time.Sleep(100 * time.Millisecond) // the connections' own start
	before := runtime.NumGoroutine()
	quit := make(chan struct{})
	var ctls []*controls
	var undrains []func()
	base := fmt.Sprintf("/ballot/test/idle-waits-%d", time.Now().UnixNano())
	for e := range elections {
		b := fmt.Sprintf("%s/job%03d", base, e)
		seedElection(t, c.Servers(), b)
		f := &proposalFacts{basePath: b, node: b + "/_c_0-proposal-0000000001", id: "host-a"}
		ctls = append(ctls, watchControls(s, f, quit))
		_, undrain := watchDrain(s, b, "host-b")
		undrains = append(undrains, undrain)
	}
	// One dispatcher a waitsPerDispatcher waits (two waits an election:
	// 8 for 60) and a few for the client; the old waits were 4 × 60 + 2 ×
	// 60 goroutines.
	if n := settled("at rest", before+elections/4); n > before+elections/4 {
		t.Fatalf("%d elections' watches at rest: %d goroutines more (from %d), want at most %d: one or more a watch again?", elections, n-before, before, elections/4)
	}
	last := ctls[elections-1]
	if _, err := op.Create(base+fmt.Sprintf("/job%03d/", elections-1)+pauseName, []byte(`{"reason":"test"}`), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-last.Changed():
	case <-time.After(T):
		t.Fatalf("the last election's controls did not change within T = %s after a pause", T)
	}
	if last.Paused() == nil {
		t.Fatal("paused, but the leader's controls say not")
	}
	close(quit)
	for _, u := range undrains {
		u()
	}
	if n := settled("ended", before+2); n > before+2 {
		t.Errorf("the watches ended: %d goroutines more than before them, want at most 2", n-before)
	}
}

// TestWhenFirstRecv: the wait that needs what it received gets the value
// taken from the channel that fired, as `v := <-ch` would: the value
// sent, or from a closed channel the zero value of its element type (a
// zk.Event{}, not a nil any); nil channels never fire, and a wait of nil
// channels alone is not even registered.
func TestWhenFirstRecv(t *testing.T) {
	const bound = 10 * time.Second // a goroutine's start; no timing is asserted
	sent := zk.Event{Type: zk.EventNodeChildrenChanged, Path: "/x"}
	for _, tc := range []struct {
		name  string
		chans func() ([]any, func()) // the wait's channels; what makes one fire
		i     int                    // the index that fires; -1: none can
		v     any
	}{
		{"value received", func() ([]any, func()) {
			ev := make(chan zk.Event, 1)
			return []any{make(chan struct{}), ev}, func() { ev <- sent }
		}, 1, sent},
		{"channel closed", func() ([]any, func()) {
			ev := make(chan zk.Event, 1)
			return []any{ev, make(chan struct{})}, func() { close(ev) }
		}, 0, zk.Event{}},
		{"closed signal", func() ([]any, func()) {
			q := make(chan struct{})
			return []any{make(chan zk.Event), q}, func() { close(q) }
		}, 1, struct{}{}},
		{"nil channel beside one that fires", func() ([]any, func()) {
			var none chan int
			n := make(chan int, 1)
			return []any{none, n}, func() { n <- 7 }
		}, 1, 7},
		{"nil channels only", func() ([]any, func()) {
			var a chan int
			var b chan zk.Event
			return []any{a, b, nil}, func() {}
		}, -1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chans, fire := tc.chans()
			type got struct {
				i int
				v any
			}
			ch := make(chan got, 2)
			before := waits.pendingCount()
			whenFirstRecv(func(i int, v any) { ch <- got{i, v} }, chans...)
			if tc.i < 0 {
				if n := waits.pendingCount(); n != before {
					t.Fatalf("a wait of nil channels only was registered (%d pending, %d before)", n, before)
				}
				return
			}
			fire()
			select {
			case g := <-ch:
				if g.i != tc.i || g.v != tc.v {
					t.Errorf("f(%d, %#v), want f(%d, %#v)", g.i, g.v, tc.i, tc.v)
				}
			case <-time.After(bound):
				t.Fatal("the wait did not fire")
			}
		})
	}
}

// leaseGoroutines are the goroutines of the process with a lease's
// renewal loop or watch on their stacks (their creators not counted: a
// renewal's own goroutine, created by the loop, is not the loop).
func leaseGoroutines() []string {
	var b strings.Builder
	pprof.Lookup("goroutine").WriteTo(&b, 2)
	var found []string
goroutines:
	for _, g := range strings.Split(b.String(), "\n\n") {
		lines := strings.Split(g, "\n")
		for i, ln := range lines {
			if strings.HasPrefix(ln, "created by ") {
				lines = lines[:i]
				break
			}
		}
		for _, ln := range lines {
			for _, f := range []string{"(*lease).renewLoop", "(*lease).renewFrom", "(*lease).renewals",
				"(*lease).drainRest", "(*lease).atRest", "(*lease).watch", "(*lease).watchRound"} {
				// The frame's function, or a closure of it (….func1).
				if strings.Contains(ln, "."+f+"(") || strings.Contains(ln, "."+f+".func") {
					found = append(found, g)
					continue goroutines
				}
			}
		}
	}
	return found
}

// TestRestingLeaderHoldsNoLeaseGoroutine: a cron leader at rest holds no
// goroutine of its lease (issue 34: "cost nothing while waiting"):
// neither the renewal loop nor the watch of its election's children
// waits on one, through two rests; an Arm still gets a renewal answered
// (AwaitFresh), and a baton deleted while the lease is armed still ends
// it. Not parallel: it reads every goroutine of the process, and the
// parallel tests' leases run after it.
func TestRestingLeaderHoldsNoLeaseGoroutine(t *testing.T) {
	zkc := sharedZK(t)
	root := "/ballot/test/" + t.Name()
	seedElection(t, zkc.Servers(), root)
	p := newInProcess(t, zkc, root)
	logs := &syncBuffer{}
	p.log = newLogger(logs, "human", slog.LevelDebug) // lease-at-rest is a debug event
	s := p.session()
	c := p.join(s, "leader")
	l := holdLease(c, lead(t, c), 0, func() bool { return false }, true)
	t.Cleanup(l.Stop)
	T := s.Timeout()
	// Bounds: a rest is seen at the loop's next tick (T/8) and drained a
	// round trip later; an armed renewal is sent at once and answered in
	// a round trip; a deleted baton's watch fires in one. 4T is ample on
	// a busy machine. Once the rest is logged, the loop's goroutine only
	// registers its wait and returns: T is far more than that.
	rests := func() int { return strings.Count(logs.String(), string(logEvLeaseAtRest)) }
	for round := 1; round <= 2; round++ {
		l.Rest()
		for deadline := time.Now().Add(4 * T); rests() < round; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("rest %d: no %s within 4T (%s)", round, logEvLeaseAtRest, 4*T)
			}
		}
		var left []string
		for deadline := time.Now().Add(T); ; time.Sleep(10 * time.Millisecond) {
			if left = leaseGoroutines(); len(left) == 0 || time.Now().After(deadline) {
				break
			}
		}
		if len(left) > 0 {
			t.Fatalf("rest %d: %d goroutines of the lease at rest, want none:\n%s", round, len(left), strings.Join(left, "\n\n"))
		}
		if n := len(l.inFlight); n != 0 {
			t.Errorf("rest %d: %d renewals in flight at rest", round, n)
		}
		stop := make(chan struct{})
		tm := time.AfterFunc(4*T, func() { close(stop) })
		ok := l.AwaitFresh(stop)
		tm.Stop()
		if !ok {
			t.Fatalf("rest %d: armed, no renewal sent since was answered within 4T (%s): gone %v (%s), lost %v",
				round, 4*T, isClosed(l.gone), l.GoneWhy(), s.IsLost())
		}
		if len(leaseGoroutines()) == 0 {
			t.Errorf("rest %d: armed and fresh, but no renewal loop runs", round)
		}
	}
	conn := zkConnect(t, zkc.Servers(), 2*time.Second)
	defer conn.Close()
	if err := conn.Delete(c.batonPath(), -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.gone:
		if why := l.GoneWhy(); !strings.Contains(why, "baton") {
			t.Errorf("the lease ended: %q, want its baton named", why)
		}
	case <-time.After(4 * T):
		t.Fatalf("the lease whose baton was deleted did not end within 4T (%s)", 4*T)
	}
}
