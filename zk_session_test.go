package main

import (
	"io"
	"testing"
	"time"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// TestWaitOnlineWakesEveryWaiter: several goroutines wait for the
// connection to come back (a claim, watches, renewals); the reconnect
// must wake them all, or one waits forever on a healthy session.
func TestWaitOnlineWakesEveryWaiter(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	p := newTCPProxy(t, c.Servers())
	log := newLogger(io.Discard, "human", slog.LevelInfo)
	acc, err := loadZKAccess(&Settings{ZooKeeperServers: []string{p.Addr()}, ZooKeeperACL: "open"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := zookeeper.DialSession(log, acc, 2*time.Second, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// Cut off (the session lives on: well within its timeout).
	p.Blackhole(true)
	p.CloseAll()
	for s.Connected() {
		time.Sleep(5 * time.Millisecond)
	}
	const waiters = 4
	woken := make(chan error, waiters)
	for range waiters {
		go func() { woken <- s.WaitOnline(nil) }()
	}
	time.Sleep(100 * time.Millisecond) // let them wait
	p.Blackhole(false)
	for i := range waiters {
		select {
		case err := <-woken:
			if err != nil {
				t.Fatalf("waiter: %v", err)
			}
		case <-s.Lost():
			t.Fatal("the session was lost")
		case <-time.After(s.Timeout()):
			t.Fatalf("%d of %d waiters still wait, though the session is connected (%v)", waiters-i, waiters, s.Connected())
		}
	}
}
