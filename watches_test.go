package main

// A session's watches: go-zookeeper keeps every watch's channel until its
// path's next event and cannot drop one, so ballot must not arm a second
// watch on a path whose first has not fired, or the channels pile up for
// the session's life (issue 37: a leader's controls, read by every new
// leadership, gathered two a leadership).

import (
	"errors"
	"fmt"
	"io"
	"path"
	"reflect"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/go-zookeeper/zk"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// pendingWatchers counts the watch channels go-zookeeper v1.0.4 holds for
// path (of any kind), read off its unexported watchers map under its lock.
func pendingWatchers(t *testing.T, conn *zk.Conn, path string) int {
	t.Helper()
	v := reflect.ValueOf(conn).Elem()
	lockField, mapField := v.FieldByName("watchersLock"), v.FieldByName("watchers")
	if !lockField.IsValid() || !mapField.IsValid() || mapField.Kind() != reflect.Map {
		t.Fatal("go-zookeeper's Conn has no watchers map and watchersLock: the client changed, update pendingWatchers")
	}
	mu := (*sync.Mutex)(unsafe.Pointer(lockField.UnsafeAddr()))
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, k := range mapField.MapKeys() {
		if k.Field(0).String() == path {
			n += mapField.MapIndex(k).Len()
		}
	}
	return n
}

// TestControlsKeepOneWatchPerPath: leadership after leadership on one
// session (--on-child-success reelect) reads the controls with one watch
// per control node in all, not one more each time; and the shared watch
// still tells each leadership of a pause, a resume and a step-down.
func TestControlsKeepOneWatchPerPath(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	_, s := watchTestSession(t, c)
	base := "/ballot/test/controls-watches"
	seedElection(t, c.Servers(), base)
	op := zkConnect(t, c.Servers(), 2*time.Second)
	defer op.Close()
	pause, stepDown := base+"/"+pauseName, base+"/"+stepDownName
	cand := &candidate{s: s, proposalFacts: proposalFacts{basePath: base, node: base + "/_c_0-proposal-0000000001"}}

	const leaderships = 20
	for range leaderships {
		quit := make(chan struct{})
		if ctl := watchControls(cand.s, &cand.proposalFacts, quit); ctl.Paused() != nil || ctl.SteppingDown() {
			t.Fatalf("controls say paused %v, stepping down %v; no control node exists", ctl.Paused(), ctl.SteppingDown())
		}
		close(quit)
	}
	for _, p := range []string{pause, stepDown} {
		if n := pendingWatchers(t, s.Conn, p); n != 1 {
			t.Errorf("after %d leaderships the session holds %d watches on %s, want 1", leaderships, n, p)
		}
	}

	// A watch event comes one round trip after the write; T (the session
	// timeout) is far more than that while the session is alive.
	changed := func(ctl *controls, what string) {
		t.Helper()
		select {
		case <-ctl.Changed():
		case <-time.After(s.Timeout()):
			t.Fatalf("the leader's controls did not change within T = %s after %s", s.Timeout(), what)
		}
	}
	quit := make(chan struct{})
	ctl := watchControls(cand.s, &cand.proposalFacts, quit)
	if _, err := op.Create(pause, []byte(`{"reason":"test"}`), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	changed(ctl, "a pause")
	if ctl.Paused() == nil {
		t.Fatal("paused, but the leader's controls say not")
	}
	if err := op.Delete(pause, -1); err != nil {
		t.Fatal(err)
	}
	changed(ctl, "a resume")
	if ctl.Paused() != nil {
		t.Fatal("resumed, but the leader's controls say paused")
	}
	if _, err := op.Create(stepDown, []byte(`{"proposal":"`+cand.node+`"}`), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	changed(ctl, "a step-down")
	if !ctl.SteppingDown() {
		t.Fatal("a step-down names the leader, but its controls say not")
	}
	close(quit)

	// Paused between two leaderships: the next one reads it before it
	// starts anything, whatever became of the watch the last one left.
	if _, err := op.Create(pause, []byte(`{"reason":"test"}`), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	quit = make(chan struct{})
	if ctl := watchControls(cand.s, &cand.proposalFacts, quit); ctl.Paused() == nil {
		t.Fatal("paused before the leadership began, but its controls say not")
	}
	close(quit)
	for range leaderships {
		quit := make(chan struct{})
		watchControls(cand.s, &cand.proposalFacts, quit)
		close(quit)
	}
	for _, p := range []string{pause, stepDown} {
		if n := pendingWatchers(t, s.Conn, p); n > 1 {
			t.Errorf("with the control nodes present, the session holds %d watches on %s after %d more leaderships, want at most 1", n, p, leaderships)
		}
	}
}

// allPendingWatchers counts every watch channel go-zookeeper v1.0.4
// holds, on any path, read as pendingWatchers reads them.
func allPendingWatchers(t *testing.T, conn *zk.Conn) int {
	t.Helper()
	v := reflect.ValueOf(conn).Elem()
	mapField := v.FieldByName("watchers")
	mu := (*sync.Mutex)(unsafe.Pointer(v.FieldByName("watchersLock").UnsafeAddr()))
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, k := range mapField.MapKeys() {
		n += mapField.MapIndex(k).Len()
	}
	return n
}

// TestFollowersLeaveNoWatchOnGoneProposals: a follower that watches a
// proposal the line listed, after it went (the race of every fast
// handover: listed, then deleted before the watch), keeps no watch for
// it. An exists watch on a missing node waits for its creation, which for
// a proposal never comes: go-zookeeper and the server kept one for the
// session's life, a few hundred bytes per lost race (issue 37's soak:
// heap live +14 to +19 bytes a handover). Each round plays one handover
// in each shape: the predecessor gone (further back), the lowest gone
// (third in line), the named successor gone (a candidate waiting for a
// handed-over baton), a slot holder gone; then deletes every node, so
// every watch on a node that existed fires and is dropped, and counts
// what the session still holds.
func TestFollowersLeaveNoWatchOnGoneProposals(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	log, s := watchTestSession(t, c)
	base := "/ballot/test/gone-proposal-watches"
	seedElection(t, c.Servers(), base)
	op := zkConnect(t, c.Servers(), 2*time.Second)
	defer op.Close()
	cand := &candidate{s: s, log: log, standby: &standby{},
		proposalFacts: proposalFacts{basePath: base, id: "c", node: base + "/_c_c-proposal-9999999999"}}
	f := &followWatches{c: cand}
	sw := &slotWatches{c: cand, armed: map[string]bool{}, woke: make(chan struct{}, 1), quit: make(chan struct{})}
	defer close(sw.quit)
	stop := make(chan struct{})

	const rounds = 25
	seq := 0
	node := func() string {
		seq++
		n := fmt.Sprintf("_c_%d-proposal-%010d", seq, seq)
		if _, err := op.Create(base+"/"+n, []byte(`{}`), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		return n
	}
	del := func(names ...string) {
		for _, n := range names {
			if err := op.Delete(base+"/"+n, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				t.Fatal(err)
			}
		}
	}
	for range rounds {
		// Further back: the predecessor went after the listing.
		a, b := node(), node()
		del(b)
		if _, w, err := f.watchAhead([]string{a, b, path.Base(cand.node)}, 2, stop); err != nil || w != nil {
			t.Fatalf("predecessor gone: watch %v, err %v; want neither (list the line again)", w, err)
		}
		del(a)
		// Third in line: the lowest went after the listing.
		a, b = node(), node()
		del(a)
		f.lowest = ""
		if _, w, err := f.watchAhead([]string{a, b, path.Base(cand.node)}, 2, stop); err != nil || w != nil {
			t.Fatalf("lowest gone: watch %v, err %v; want neither (list the line again)", w, err)
		}
		del(b)
		// Waiting for a handed-over baton whose successor went.
		a = node()
		del(a)
		seen := &namedWait{}
		announced := ""
		if waited, err := waitForNamed(cand, handed(base+"/"+a, 1500, false), seen, &announced, stop); err != nil || waited {
			t.Fatalf("successor gone: waited %v, err %v; want the wait for a dropped take", waited, err)
		}
		// A slot's holder gone.
		a = node()
		del(a)
		if err := sw.watch([]string{a}); err != nil {
			t.Fatal(err)
		}
	}
	// Every watch on a node that existed fired at its delete; the event
	// reaches the client one round trip after it, within T.
	deadline := time.Now().Add(s.Timeout())
	for n := allPendingWatchers(t, s.Conn); n != 0; n = allPendingWatchers(t, s.Conn) {
		if time.Now().After(deadline) {
			t.Fatalf("after %d rounds of proposals gone before their watch, and every proposal deleted, the session holds %d watches, want 0", rounds, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// watchTestSession is a session of its own on c (T = 2 s), closed with
// the test, and a log that says nothing.
func watchTestSession(t *testing.T, c *zkCluster) (*slog.Logger, *zookeeper.Session) {
	t.Helper()
	log := newLogger(io.Discard, "human", slog.LevelInfo)
	acc, err := loadZKAccess(&Settings{ZooKeeperServers: c.Servers(), ZooKeeperACL: "open"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := zookeeper.DialSession(log, acc, 2*time.Second, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return log, s
}
