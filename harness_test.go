package main

// Self-tests of the test harness (zk_harness_test.go, tcpproxy_test.go),
// and the tests' ZooKeeper client: zkConnect, and harnessConnect for one
// whose events a test follows.
// Run: go test -race -run Harness -count=1 -v

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkTestLogger sends go-zookeeper's log lines to t.Logf until the test ends.
type zkTestLogger struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (l *zkTestLogger) Printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Logf("zk client: "+format, args...)
	}
}

// zkConnect connects a test's own go-zookeeper client (not ballot's) to
// servers. It is quiet, opts aside (zk.WithDialer, ...: go-zookeeper's
// option type is unexported, hence func(*zk.Conn)), and closed when the
// test ends; closing it sooner is fine. It does not wait for the session:
// the first request does.
func zkConnect(t testing.TB, servers []string, sessionTimeout time.Duration, opts ...func(*zk.Conn)) *zk.Conn {
	t.Helper()
	conn, _, err := zk.Connect(servers, sessionTimeout, zk.WithLogInfo(false), func(c *zk.Conn) {
		for _, o := range opts {
			o(c)
		}
	})
	if err != nil {
		t.Fatalf("zk.Connect %v: %v", servers, err)
	}
	t.Cleanup(conn.Close)
	return conn
}

// harnessConnect connects a go-zookeeper client and returns it with a
// channel receiving every event (fed from the event callback, never
// dropping below 1000 pending events); its log lines go to t.Logf. It
// waits for StateHasSession.
func harnessConnect(t *testing.T, servers []string, sessionTimeout time.Duration) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	logger := &zkTestLogger{t: t}
	t.Cleanup(func() { logger.mu.Lock(); logger.done = true; logger.mu.Unlock() })
	events := make(chan zk.Event, 1000)
	conn := zkConnect(t, servers, sessionTimeout, // closed before the logger is silenced
		zk.WithLogInfo(true),
		zk.WithLogger(logger),
		zk.WithEventCallback(func(ev zk.Event) {
			select {
			case events <- ev:
			default:
			}
		}))
	harnessWaitState(t, events, zk.StateHasSession, 10*time.Second)
	return conn, events
}

// harnessWaitState waits for a session event with the given state.
func harnessWaitState(t *testing.T, events <-chan zk.Event, want zk.State, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev := <-events:
			if ev.Type == zk.EventSession && ev.State == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %v within %v", want, timeout)
		}
	}
}

func TestHarnessStandalone(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	c := startZK(t, 1)
	t.Logf("standalone start: %v", time.Since(t0))

	if got := c.Mode(0); got != "standalone" {
		t.Fatalf("Mode(0) = %q, want standalone", got)
	}
	if got := c.Mntr(0)["zk_server_state"]; got != "standalone" {
		t.Fatalf("mntr zk_server_state = %q, want standalone", got)
	}
	if err := c.setCut(0, true); err == nil {
		t.Fatalf("CutOff without PeerProxies did not fail")
	}
	if c.TickTime() != 200*time.Millisecond {
		t.Fatalf("TickTime = %v", c.TickTime())
	}
	if len(c.Servers()) != 1 || c.ConnString() != c.Servers()[0] {
		t.Fatalf("Servers %v, ConnString %q", c.Servers(), c.ConnString())
	}

	conn, _ := harnessConnect(t, c.Servers(), time.Second)
	if _, err := conn.Create("/harness", []byte("hello"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create: %v", err)
	}
	data, _, err := conn.Get("/harness")
	if err != nil || string(data) != "hello" {
		t.Fatalf("get = %q, %v", data, err)
	}
	conn.Close()

	// Whole-cluster restart keeps the data and the port.
	c.StopAll()
	if c.Mode(0) != "" || c.Running(0) {
		t.Fatalf("member still up after StopAll")
	}
	t1 := time.Now()
	c.StartAll()
	t.Logf("standalone restart: %v", time.Since(t1))
	conn2, _ := harnessConnect(t, c.Servers(), time.Second)
	data, _, err = conn2.Get("/harness")
	if err != nil || string(data) != "hello" {
		t.Fatalf("get after restart = %q, %v", data, err)
	}
}

func TestHarnessEnsemble(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	c := startZKWith(t, zkOptions{N: 3})
	t.Logf("ensemble start: %v", time.Since(t0))

	leaders := 0
	leader := -1
	for i := 0; i < 3; i++ {
		switch m := c.Mode(i); m {
		case "leader":
			leaders++
			leader = i
		case "follower":
		default:
			t.Fatalf("Mode(%d) = %q", i, m)
		}
	}
	if leaders != 1 || c.Leader() != leader {
		t.Fatalf("%d leaders, Leader() = %d", leaders, c.Leader())
	}
	if n := len(c.Mntr(leader)); n == 0 {
		t.Fatalf("mntr on the leader returned nothing")
	}

	conn, _ := harnessConnect(t, c.Servers(), 2*time.Second)
	if _, err := conn.Create("/ens", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create: %v", err)
	}

	// Kill the leader: the other two elect a new one.
	t1 := time.Now()
	c.Kill(leader)
	if c.Mode(leader) != "" || c.Running(leader) {
		t.Fatalf("killed member still answers")
	}
	newLeader := -1
	for deadline := time.Now().Add(10 * time.Second); newLeader < 0; {
		for i := 0; i < 3; i++ {
			if i != leader && c.Mode(i) == "leader" {
				newLeader = i
			}
		}
		if newLeader < 0 {
			if time.Now().After(deadline) {
				t.Fatalf("no new leader 10s after killing member %d", leader)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Logf("new leader %d elected %v after killing leader %d", newLeader, time.Since(t1), leader)
	for i := 0; i < 3; i++ {
		if i != leader && i != newLeader {
			// It may still be syncing with the new leader.
			harnessWaitMode(t, c, i, "a follower", func(m string) bool { return m == "follower" }, 10*time.Second)
		}
	}
	if _, _, err := conn.Get("/ens"); err != nil {
		t.Fatalf("get after leader loss: %v", err)
	}

	// Restart the old leader: it rejoins as a follower.
	t2 := time.Now()
	c.Start(leader)
	t.Logf("old leader rejoined in %v", time.Since(t2))
	if m := c.Mode(leader); m != "follower" {
		t.Fatalf("restarted member Mode = %q, want follower", m)
	}

	// A lone member cannot serve; StartNoWait + WaitReady brings the
	// ensemble back after a full stop.
	c.StopAll()
	c.StartNoWait(0)
	time.Sleep(300 * time.Millisecond)
	if m := c.Mode(0); m != "" {
		t.Fatalf("lone member serves with Mode %q", m)
	}
	t3 := time.Now()
	c.StartNoWait(1)
	c.StartNoWait(2)
	c.WaitReady(30 * time.Second)
	t.Logf("ensemble restart after StopAll: %v", time.Since(t3))
	if c.Leader() < 0 {
		t.Fatalf("no leader after restart")
	}
	conn2, _ := harnessConnect(t, c.Servers(), 2*time.Second)
	if _, _, err := conn2.Get("/ens"); err != nil {
		t.Fatalf("get after full restart: %v", err)
	}
}

func TestHarnessProxyBlackhole(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	p := newTCPProxy(t, c.Servers())

	// A reset is a short cut: same session after reconnecting. (The client
	// sleeps 1 s before redialling its only server, so this uses a longer
	// session timeout than the partition below.)
	rc, revents := harnessConnect(t, []string{p.Addr()}, 3*time.Second)
	rsid := rc.SessionID()
	p.CloseAll()
	harnessWaitState(t, revents, zk.StateDisconnected, 2*time.Second)
	harnessWaitState(t, revents, zk.StateHasSession, 5*time.Second)
	if rc.SessionID() != rsid {
		t.Fatalf("session changed after a reset: %x → %x", rsid, rc.SessionID())
	}
	rc.Close()

	conn, events := harnessConnect(t, []string{p.Addr()}, time.Second)
	sid := conn.SessionID()
	if _, err := conn.Create("/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create ephemeral: %v", err)
	}

	// Partition for 2 s: the client notices (~2/3 of the 1 s timeout) and
	// the server expires the session.
	t0 := time.Now()
	p.Blackhole(true)
	harnessWaitState(t, events, zk.StateDisconnected, 2*time.Second)
	t.Logf("client disconnected %v into the blackhole", time.Since(t0))
	time.Sleep(2*time.Second - time.Since(t0))

	direct, _ := harnessConnect(t, c.Servers(), time.Second)
	for deadline := time.Now().Add(3 * time.Second); ; {
		ok, _, err := direct.Exists("/eph")
		if err != nil {
			t.Fatalf("exists: %v", err)
		}
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ephemeral node of the partitioned session still exists")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("ephemeral node gone %v into the blackhole", time.Since(t0))

	t1 := time.Now()
	p.Blackhole(false)
	harnessWaitState(t, events, zk.StateExpired, 5*time.Second)
	harnessWaitState(t, events, zk.StateHasSession, 5*time.Second)
	t.Logf("new session %v after the heal", time.Since(t1))
	if conn.SessionID() == sid || conn.SessionID() == 0 {
		t.Fatalf("session id %x after expiry (old %x)", conn.SessionID(), sid)
	}
	if _, err := conn.Create("/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("create on the new session: %v", err)
	}
	if _, _, err := conn.Get("/eph"); err != nil {
		t.Fatalf("get on the new session: %v", err)
	}
}

// harnessEcho starts an echo server on ln, closed by t.Cleanup.
func harnessEcho(t *testing.T, ln net.Listener) {
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_, _ = io.Copy(conn, conn)
			}()
		}
	}()
}

// harnessRoundTrip writes msg on conn and reads it back (from an echo).
func harnessRoundTrip(conn net.Conn, msg string) error {
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(conn, msg); err != nil {
		return err
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(conn, buf); err != nil {
		return err
	}
	if string(buf) != msg {
		return fmt.Errorf("read %q, want %q", buf, msg)
	}
	return nil
}

// TestHarnessProxyHoleReset: after a blackhole, a connection that lost
// bytes is reset (its stream has a hole); an idle one carries on.
func TestHarnessProxyHoleReset(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	harnessEcho(t, ln)
	p := newTCPProxy(t, []string{ln.Addr().String()})
	dial := func() net.Conn {
		conn, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if err := harnessRoundTrip(conn, "hello"); err != nil {
			t.Fatalf("before the blackhole: %v", err)
		}
		return conn
	}
	idle, busy := dial(), dial()

	p.Blackhole(true)
	if _, err := io.WriteString(busy, "lost"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the proxy reads and drops it
	p.Blackhole(false)

	_ = busy.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := busy.Read(make([]byte, 16)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection with a hole: read %d bytes, %v; want a reset at the heal", n, err)
	}
	if err := harnessRoundTrip(idle, "still here"); err != nil {
		t.Fatalf("idle connection after the heal: %v", err)
	}
}

// TestHarnessProxyDialRetry: with SetDialRetry, a client accepted while the
// target does not listen yet gets through once it does.
func TestHarnessProxyDialRetry(t *testing.T) {
	ports, err := zkFreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	p := newTCPProxy(t, []string{addr})
	p.SetDialRetry(3 * time.Second)
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	time.Sleep(300 * time.Millisecond) // refused meanwhile
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	harnessEcho(t, ln)
	if err := harnessRoundTrip(conn, "late"); err != nil {
		t.Fatalf("through a late target: %v", err)
	}
}
