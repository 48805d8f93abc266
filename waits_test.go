package main

// Waits that take no goroutine (issue 34): a crontab's jobs at rest wait
// on their watches and their leadership's ends through whenFirst's one
// dispatcher and go-zookeeper's own watch channels, not a goroutine each,
// so a process's goroutines do not grow with its jobs.

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
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
