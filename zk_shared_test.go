package main

// One standalone ZooKeeper server shared by the tests that need nothing but
// a plain server: a JVM start-up costs a second or two of CPU, more than
// most such tests, and the suite starts a hundred of them. Each test keeps
// to its own election path (newElection names it after the test), so they
// share the server as a fleet of elections would. A test that kills,
// pauses, reconfigures or inspects its server, counts its writes or lists
// its root still starts its own (startZK).

import (
	"flag"
	"os"
	"sync"
	"testing"
)

var sharedZKState struct {
	once sync.Once
	dir  string
	c    *zkCluster
	err  error
}

// sharedZK returns the shared server, started on first use. Under
// -count > 1 a test runs again in the same process and would find its
// first run's nodes on its paths there: it gets a server of its own.
func sharedZK(t testing.TB) *zkCluster {
	t.Helper()
	if f := flag.Lookup("test.count"); f != nil && f.Value.String() != "1" {
		return startZK(t, 1)
	}
	s := &sharedZKState
	s.once.Do(func() {
		if s.dir, s.err = os.MkdirTemp("", "ballot-zk-shared-"); s.err == nil {
			s.c, s.err = launchZK(s.dir, zkOptions{Logf: t.Logf})
		}
		if s.c != nil {
			s.c.opts.Logf = nil // t outlives only this test
		}
	})
	if s.err != nil {
		t.Fatalf("zk harness (shared server): %v", s.err)
	}
	return s.c
}

// stopSharedZK ends the shared server, if any, after the last test.
func stopSharedZK() {
	s := &sharedZKState
	if s.c != nil {
		s.c.close()
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}
