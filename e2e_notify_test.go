package main

import (
	"net"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// notifyListener collects what ballot sends to $NOTIFY_SOCKET.
type notifyListener struct {
	mu   sync.Mutex
	msgs []string
}

func listenNotify(t *testing.T) (string, *notifyListener) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	l := &notifyListener{}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			l.mu.Lock()
			l.msgs = append(l.msgs, string(buf[:n]))
			l.mu.Unlock()
		}
	}()
	return path, l
}

// index is the position of the first message containing s, -1 if none.
func (l *notifyListener) index(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, m := range l.msgs {
		if strings.Contains(m, s) {
			return i
		}
	}
	return -1
}

func (l *notifyListener) wait(t *testing.T, s string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if i := l.index(s); i >= 0 {
			return i
		}
		if time.Now().After(deadline) {
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("no %q among %q", s, l.msgs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSystemdNotify: READY once joined (a follower is a healthy service),
// STATUS with the role, leader and fencing token, the watchdog fed while
// healthy, STOPPING and a timeout extension on stop, in that order.
func TestSystemdNotify(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	leaderSock, lead := listenNotify(t)
	a := startBallot(t, "a", ballotEnv(t, "BALLOT_TEST_CHILD=tick", "NOTIFY_SOCKET="+leaderSock, "WATCHDOG_USEC=400000"),
		append(runArgs(c.Servers(), e.base, "a"), "--", selfExe(), e.ticks)...)
	a.WaitEvent(logEvCommandStarted, 10*time.Second)
	followerSock, follow := listenNotify(t)
	b := startBallot(t, "b", ballotEnv(t, "BALLOT_TEST_CHILD=tick", "NOTIFY_SOCKET="+followerSock),
		append(runArgs(c.Servers(), e.base, "b"), "--", selfExe(), e.ticks)...)
	b.WaitEvent(logEvFollowing, 10*time.Second)

	ready := lead.wait(t, "READY=1")
	leading := lead.wait(t, "STATUS=leading; leader a; fencing token ")
	lead.wait(t, "WATCHDOG=1")
	if follow.wait(t, "READY=1") < 0 || follow.wait(t, "STATUS=following, 2nd in line; leader a") < 0 {
		t.Fatal("unreachable")
	}
	if follow.index("WATCHDOG=1") >= 0 {
		t.Errorf("the follower fed a watchdog it was not given")
	}
	a.Signal(syscall.SIGTERM)
	a.Wait(10 * time.Second)
	stopping := lead.wait(t, "STOPPING=1")
	extend := lead.wait(t, "EXTEND_TIMEOUT_USEC=")
	if !(ready <= leading && leading < stopping && stopping <= extend) {
		lead.mu.Lock()
		t.Errorf("out of order: %q", lead.msgs)
		lead.mu.Unlock()
	}
	follow.wait(t, "STATUS=leading; leader b")
}
