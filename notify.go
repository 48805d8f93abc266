package main

// systemd notification (sd_notify), standard library only: a datagram to
// the unix socket named by $NOTIFY_SOCKET. A follower is a healthy service:
// READY=1 is sent once the candidate has joined the election, not when it
// leads. The watchdog is fed only while the candidate can vouch for itself:
// a leader right after a lease renewal, a follower while its session is
// connected; a stopped or wedged ballot then gets restarted by systemd.

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

type notifier struct {
	mu    sync.Mutex
	conn  *net.UnixConn // nil: not under systemd
	ready bool
	last  string // the last STATUS sent
}

func newNotifier() *notifier {
	n := &notifier{}
	path := os.Getenv("NOTIFY_SOCKET")
	if path == "" {
		return n
	}
	if strings.HasPrefix(path, "@") {
		path = "\x00" + path[1:] // abstract socket
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
	if err == nil {
		n.conn = conn
	}
	return n
}

func (n *notifier) send(msg string) {
	if n == nil || n.conn == nil {
		return
	}
	_ = n.conn.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = n.conn.Write([]byte(msg))
	_ = n.conn.SetWriteDeadline(time.Time{}) // an armed deadline fires later, waking ballot for nothing
}

// Ready says the candidate has joined the election; once.
func (n *notifier) Ready(status string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	first := !n.ready
	if first {
		// Only here: a later Ready goes through Status, which must still
		// see the status shown until now to know this one is news.
		n.ready, n.last = true, status
	}
	n.mu.Unlock()
	if first {
		n.send("READY=1\nSTATUS=" + status)
	} else {
		n.Status(status)
	}
}

// Status tells the role, the leader and the fencing token, on every change.
func (n *notifier) Status(status string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	same := status == n.last
	n.last = status
	n.mu.Unlock()
	if !same {
		n.send("STATUS=" + status)
	}
}

func (n *notifier) Stopping() { n.send("STOPPING=1") }

// ExtendTimeout asks systemd for d more before it kills ballot, while a
// stop's grace period runs.
func (n *notifier) ExtendTimeout(d time.Duration) {
	n.send("EXTEND_TIMEOUT_USEC=" + strconv.FormatInt(d.Microseconds(), 10))
}

// watchdog feeds systemd's watchdog every half WATCHDOG_USEC while healthy
// says so; it returns at once when no watchdog is set for this process.
func (n *notifier) watchdog(healthy func() bool, stop <-chan struct{}) {
	if n == nil || n.conn == nil {
		return
	}
	every, ok := watchdogInterval(os.Getenv("WATCHDOG_USEC"), os.Getenv("WATCHDOG_PID"), os.Getpid())
	if !ok {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if healthy() {
				n.send("WATCHDOG=1")
			}
		case <-stop:
			return
		}
	}
}

// watchdogInterval is how often to feed systemd's watchdog: half its
// timeout; ok is false when no watchdog is set for this process.
func watchdogInterval(usecEnv, pidEnv string, pid int) (every time.Duration, ok bool) {
	usec, err := strconv.ParseInt(usecEnv, 10, 64)
	if err != nil || usec <= 0 {
		return 0, false
	}
	if pidEnv != "" && pidEnv != strconv.Itoa(pid) {
		return 0, false
	}
	return time.Duration(usec) * time.Microsecond / 2, true
}

// statusLine is the STATUS= text: role, leader, fencing token.
func statusLine(role, leader string, token int64) string {
	s := role
	if leader != "" {
		s += "; leader " + leader
	}
	if token != 0 {
		s += fmt.Sprintf("; fencing token %d", token)
	}
	return s
}
