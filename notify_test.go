package main

import (
	"strings"
	"testing"
	"time"
)

func TestStatusLine(t *testing.T) {
	for _, c := range []struct {
		role, leader string
		token        int64
		want         string
	}{
		{"following", "", 0, "following"},
		{"following", "host-b", 0, "following; leader host-b"},
		{"leading", "host-a", 7, "leading; leader host-a; fencing token 7"},
	} {
		if got := statusLine(c.role, c.leader, c.token); got != c.want {
			t.Errorf("statusLine(%q, %q, %d) = %q, want %q", c.role, c.leader, c.token, got, c.want)
		}
	}
}

// TestWatchdogInterval: fed at half of systemd's WATCHDOG_USEC, and not at
// all when the watchdog is unset, malformed or meant for another process.
func TestWatchdogInterval(t *testing.T) {
	for _, c := range []struct {
		usec, pid string
		want      time.Duration
		ok        bool
	}{
		{"400000", "", 200 * time.Millisecond, true},
		{"30000000", "4242", 15 * time.Second, true},
		{"1", "", 500 * time.Nanosecond, true},
		{"", "", 0, false},
		{"0", "", 0, false},
		{"-5", "", 0, false},
		{"3s", "", 0, false},
		{"400000", "4243", 0, false},
	} {
		every, ok := watchdogInterval(c.usec, c.pid, 4242)
		if every != c.want || ok != c.ok {
			t.Errorf("WATCHDOG_USEC=%q WATCHDOG_PID=%q: %s, %v; want %s, %v", c.usec, c.pid, every, ok, c.want, c.ok)
		}
	}
}

// TestNotifierMessages: READY=1 once, with the status; STATUS only when it
// changes; the stop's timeout extension in microseconds; and nothing at
// all, without failing, when not under systemd.
func TestNotifierMessages(t *testing.T) {
	sock, l := listenNotify(t)
	t.Setenv("NOTIFY_SOCKET", sock)
	n := newNotifier()
	n.Ready("following")
	n.Status("following")
	n.Status("following; leader host-b")
	n.Ready("following; leader host-b")
	n.Status("leading; leader host-a; fencing token 7")
	n.Stopping()
	n.ExtendTimeout(1500 * time.Millisecond)
	n.send("END")
	l.wait(t, "END")
	want := []string{"READY=1\nSTATUS=following", "STATUS=following; leader host-b", "STATUS=leading; leader host-a; fencing token 7",
		"STOPPING=1", "EXTEND_TIMEOUT_USEC=1500000", "END"}
	l.mu.Lock()
	got := strings.Join(l.msgs, "|")
	l.mu.Unlock()
	if got != strings.Join(want, "|") {
		t.Errorf("sent %q, want %q", got, strings.Join(want, "|"))
	}

	t.Setenv("NOTIFY_SOCKET", "")
	for _, n := range []*notifier{newNotifier(), nil} {
		n.Ready("following")
		n.Status("leading")
		n.Stopping()
		n.ExtendTimeout(time.Second)
		n.watchdog(func() bool { return true }, nil) // returns at once
	}
}

// TestNotifierWatchdog: the watchdog is fed only on a tick where the
// candidate can vouch for itself, and not at all for another process.
func TestNotifierWatchdog(t *testing.T) {
	sock, l := listenNotify(t)
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", "2000")
	n := newNotifier()

	t.Setenv("WATCHDOG_PID", "1")
	n.watchdog(func() bool { t.Error("a watchdog for pid 1 was fed"); return true }, nil) // returns at once
	t.Setenv("WATCHDOG_PID", "")

	asked := make(chan int)
	stop, done := make(chan struct{}), make(chan struct{})
	calls := 0
	go func() {
		defer close(done)
		n.watchdog(func() bool {
			calls++
			select { // a tick taken before stop was seen: nobody asks any more
			case asked <- calls:
			case <-stop:
			}
			return calls == 1
		}, stop)
	}()
	for <-asked < 3 { // the first tick vouches, the next two do not
	}
	close(stop)
	<-done
	n.send("END") // after every WATCHDOG=1 the watchdog sent, on the same socket
	l.wait(t, "END")
	l.mu.Lock()
	got := strings.Join(l.msgs, "|")
	l.mu.Unlock()
	if got != "WATCHDOG=1|END" {
		t.Errorf("sent %q; want one WATCHDOG=1, for the one healthy tick", got)
	}
}

// TestNotifierReadyAgain: joining again (a new session after a lost one)
// says "following" to systemd even though READY=1 went out long ago,
// instead of leaving the last status, such as "leadership lost", shown.
func TestNotifierReadyAgain(t *testing.T) {
	sock, l := listenNotify(t)
	t.Setenv("NOTIFY_SOCKET", sock)
	n := newNotifier()
	n.Ready("following")
	n.Status("leadership lost (session-expired)")
	n.Ready("following")
	n.Ready("following")
	n.send("END")
	l.wait(t, "END")
	l.mu.Lock()
	got := strings.Join(l.msgs, "|")
	l.mu.Unlock()
	if want := "READY=1\nSTATUS=following|STATUS=leadership lost (session-expired)|STATUS=following|END"; got != want {
		t.Errorf("sent %q, want %q", got, want)
	}
}
