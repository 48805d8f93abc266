package main

// A session's facts — its id, its password and the session timeout the
// server negotiated — come off the wire (sniffConnect), not from the
// client library's log lines: these tests pin that for the go-zookeeper
// version in go.mod, against a real ZooKeeper.

import (
	"io"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// TestSessionFactsComeOffTheWire: whatever timeout a candidate asks for,
// its session knows the id the client library uses and the timeout the
// server granted it (clamped to [2, 20] × tickTime), with the library's
// logs going nowhere; and its password resumes the session.
func TestSessionFactsComeOffTheWire(t *testing.T) {
	t.Parallel()
	zkc := startZK(t, 1)
	tick := zkc.TickTime()
	acc, err := loadZKAccess(&Settings{ZooKeeperServers: zkc.Servers(), ZooKeeperACL: aclOpen})
	if err != nil {
		t.Fatal(err)
	}
	quiet := newLogger(io.Discard, "human", slog.LevelError)
	for _, tc := range []struct {
		name      string
		requested time.Duration
		granted   time.Duration
	}{
		{"as requested", 10 * tick, 10 * tick},
		{"odd milliseconds", 10*tick + 7*time.Millisecond, 10*tick + 7*time.Millisecond},
		{"raised to 2 ticks", tick / 2, 2 * tick},
		{"lowered to 20 ticks", 100 * tick, 20 * tick},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := zookeeper.DialSession(quiet, acc, tc.requested, 5*time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// dialSession returns once the client library has the session
			// too: ballot's requests go out on it.
			if got, lib := s.ID(), s.Conn.SessionID(); got == 0 || got != lib || s.Conn.State() != zk.StateHasSession {
				t.Fatalf("session id 0x%x, the client library has 0x%x (%s)", got, lib, s.Conn.State())
			}
			if got := s.Timeout(); got != tc.granted {
				t.Fatalf("session timeout %s, want %s (requested %s, tickTime %s)", got, tc.granted, tc.requested, tick)
			}
			if server := serverSessionTimeout(t, zkc, s.ID()); server != tc.granted {
				t.Fatalf("the server says the session's timeout is %s; ballot counts with %s", server, tc.granted)
			}
			h := s.Handoff()
			if h == nil || len(h.Passwd) == 0 || h.SessionID != s.ID() || h.Timeout() != tc.granted {
				t.Fatalf("handoff %+v: want session 0x%x with a password and timeout %s", h, s.ID(), tc.granted)
			}
			// Resume gives its one server T, 400 ms on the "raised" row: on a
			// busy machine a connect can take longer, so it is tried again
			// within the 5 s the test has always given it. A wrong password
			// fails every try.
			var w *zookeeper.WireSession
			for deadline := time.Now().Add(5 * time.Second); ; {
				w, _, err = h.Resume(deadline, 0)
				if err == nil || !time.Now().Before(deadline) {
					break
				}
			}
			if err != nil {
				t.Fatalf("the password read off the wire does not resume the session: %v", err)
			}
			w.Close()
		})
	}
}

// serverSessionTimeout is the timeout the server holds for session id,
// from its "cons" listing.
func serverSessionTimeout(t *testing.T, zkc *zkCluster, id int64) time.Duration {
	t.Helper()
	out, err := zkFourLetterWord(zkc.Servers()[0], "cons", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`sid=0x` + strconv.FormatInt(id, 16) + `\b[^)]*\bto=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("session 0x%x not in the server's connections:\n%s", id, out)
	}
	ms, _ := strconv.Atoi(m[1])
	return time.Duration(ms) * time.Millisecond
}
