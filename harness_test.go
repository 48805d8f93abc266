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
	"path/filepath"
	"strconv"
	"strings"
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
			if m := c.Mode(i); m != "follower" {
				t.Fatalf("Mode(%d) = %q, want follower", i, m)
			}
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

// harnessRead is one Exists+Get on a member, as answered (or failed).
type harnessRead struct {
	at     time.Time // when answered
	exists bool
	err    error
}

// harnessReadLoop reads path on conn until stop is closed or a read fails,
// sending every result on the returned channel (buffered: a read blocked in
// the client ends with the connection at cleanup, so nothing leaks).
func harnessReadLoop(conn *zk.Conn, path string, stop <-chan struct{}) <-chan harnessRead {
	out := make(chan harnessRead, 10000)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			ok, _, err := conn.Exists(path)
			if err == nil && ok {
				_, _, err = conn.Get(path)
				if errors.Is(err, zk.ErrNoNode) {
					ok, err = false, nil
				}
			}
			out <- harnessRead{at: time.Now(), exists: ok, err: err}
			if err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return out
}

// harnessPeerConns inspects the established TCP connections to the
// members' quorum and election ports: proxied counts those whose other end
// is a socket of this process (a harness proxy); direct lists the others.
func harnessPeerConns(t *testing.T, c *zkCluster) (proxied int, direct []string) {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatalf("reading /proc/net/tcp: %v", err)
	}
	peerPorts := map[int]string{}
	for i, m := range c.members {
		peerPorts[m.quorumPort] = fmt.Sprintf("member %d quorum port", i)
		peerPorts[m.electionPort] = fmt.Sprintf("member %d election port", i)
	}
	type ends struct{ local, remote int }
	inode := map[ends]string{}
	port := func(hexAddr string) int {
		_, p, _ := strings.Cut(hexAddr, ":")
		n, _ := strconv.ParseInt(p, 16, 32)
		return int(n)
	}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != "01" { // 01 = ESTABLISHED
			continue
		}
		inode[ends{port(f[1]), port(f[2])}] = f[9]
	}
	ours := map[string]bool{}
	fds, _ := filepath.Glob("/proc/self/fd/*")
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil {
			if v, ok := strings.CutPrefix(l, "socket:["); ok {
				ours[strings.TrimSuffix(v, "]")] = true
			}
		}
	}
	for e := range inode {
		what, ok := peerPorts[e.local]
		if !ok {
			continue
		}
		if other, ok := inode[ends{e.remote, e.local}]; ok && ours[other] {
			proxied++
		} else {
			direct = append(direct, fmt.Sprintf("%s ← 127.0.0.1:%d", what, e.remote))
		}
	}
	return proxied, direct
}

// harnessCheckProxied fails the test if any member talks to another
// without crossing a harness proxy.
func harnessCheckProxied(t *testing.T, c *zkCluster, when string) {
	t.Helper()
	proxied, direct := harnessPeerConns(t, c)
	if len(direct) > 0 || proxied == 0 {
		t.Fatalf("%s: %d proxied peer connections; direct ones: %v", when, proxied, direct)
	}
	t.Logf("%s: %d peer connections, all through harness proxies", when, proxied)
}

// harnessWaitMode polls member i until ok(Mode) holds; it returns when.
func harnessWaitMode(t *testing.T, c *zkCluster, i int, what string, ok func(string) bool, timeout time.Duration) time.Time {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; {
		if ok(c.Mode(i)) {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("member %d not %s within %v (Mode %q)", i, what, timeout, c.Mode(i))
		}
		time.Sleep(zkPollInterval)
	}
}

func serving(mode string) bool { return mode == "leader" || mode == "follower" }

// TestHarnessPeerCutOff: a member cut off from its peers by the proxies
// keeps serving its clients from a stale copy for about syncLimit × tickTime
// while the quorum expires their sessions; it rejoins after the heal. A cut
// leader is replaced by the other two.
func TestHarnessPeerCutOff(t *testing.T) {
	const (
		tick      = 500 * time.Millisecond
		syncLimit = 5
		stale     = syncLimit * tick // how long a cut-off follower goes on serving
		session   = 2 * time.Second
	)
	t0 := time.Now()
	c := startZKWith(t, zkOptions{N: 3, TickTime: tick, SyncLimit: syncLimit, PeerProxies: true})
	t.Logf("3 members with peer proxies serving in %v", time.Since(t0).Round(time.Millisecond))
	harnessCheckProxied(t, c, "after start")

	// a. A follower m, cut off from its peers.
	m := -1
	for i := 0; i < 3 && m < 0; i++ {
		if c.Mode(i) == "follower" {
			m = i
		}
	}
	if m < 0 {
		t.Fatalf("no follower: modes %q %q %q", c.Mode(0), c.Mode(1), c.Mode(2))
	}
	var others []string
	for i, s := range c.Servers() {
		if i != m {
			others = append(others, s)
		}
	}
	mc, mevents := harnessConnect(t, []string{c.Servers()[m]}, session)
	const eph = "/cutoff-eph"
	if _, err := mc.Create(eph, []byte("m"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create ephemeral via member %d: %v", m, err)
	}
	// A second reader on m (its own session): its reads are never held
	// behind the sync below, so it shows how long m keeps serving.
	rc, _ := harnessConnect(t, []string{c.Servers()[m]}, session)
	oc, _ := harnessConnect(t, others, session)
	if _, err := oc.Sync(eph); err != nil {
		t.Fatalf("sync on the other members: %v", err)
	}
	if ok, _, err := oc.Exists(eph); err != nil || !ok {
		t.Fatalf("ephemeral not seen by the other members: %v, %v", ok, err)
	}

	cut := time.Now()
	c.CutOff(m)
	since := func(at time.Time) time.Duration { return at.Sub(cut).Round(10 * time.Millisecond) }
	t.Logf("member %d (follower) cut off from its peers", m)
	stop := make(chan struct{})
	defer close(stop)
	mstop := make(chan struct{})
	mreads := harnessReadLoop(mc, eph, mstop)
	rreads := harnessReadLoop(rc, eph, stop)

	// The quorum expires m's client's session and deletes its node.
	gone := make(chan time.Time, 1)
	go func() {
		for deadline := cut.Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			select {
			case <-stop:
				return
			default:
			}
			if ok, _, err := oc.Exists(eph); err == nil && !ok {
				gone <- time.Now()
				return
			}
		}
	}()

	// (i) m's client's reads are answered, from the stale copy, for 2 s.
	var lastStale time.Time
	for lastStale.Sub(cut) < 2*time.Second {
		select {
		case r := <-mreads:
			if r.err != nil {
				t.Fatalf("read on cut-off member %d failed %v after the cut (want answers for 2s): %v", m, since(r.at), r.err)
			}
			if !r.exists {
				t.Fatalf("cut-off member %d reports the node gone %v after the cut: not a stale copy?", m, since(r.at))
			}
			lastStale = r.at
		case <-time.After(2 * time.Second):
			t.Fatalf("no read answered by cut-off member %d for 2s (last %v after the cut)", m, since(lastStale))
		}
	}
	t.Logf("(i) member %d answered its client's Exists/Get (node present) until %v after the cut", m, since(lastStale))

	// (iii) A sync from the same client must not succeed: m cannot reach
	// the leader. (Issued only now: it holds the session's later requests.)
	type syncResult struct {
		at  time.Time
		err error
	}
	close(mstop)
	syncDone := make(chan syncResult, 1)
	syncAt := time.Now()
	go func() {
		_, err := mc.Sync(eph)
		syncDone <- syncResult{time.Now(), err}
	}()

	// Watch it all until m drops out and the sync is settled.
	var goneAt, droppedAt, rLast, rLastAfterGone time.Time
	var syncRes *syncResult
	rDone := false
	for deadline := cut.Add(stale + 6*time.Second); time.Now().Before(deadline); time.Sleep(zkPollInterval) {
		select {
		case g := <-gone:
			goneAt = g
		default:
		}
		select {
		case r := <-syncDone:
			syncRes = &r
		default:
		}
	drain:
		for !rDone {
			select {
			case r := <-rreads:
				if r.err != nil || !r.exists {
					rDone = true
					break drain
				}
				rLast = r.at
				if !goneAt.IsZero() && r.at.After(goneAt) {
					rLastAfterGone = r.at
				}
			default:
				break drain
			}
		}
		if droppedAt.IsZero() && c.Mode(m) == "" {
			droppedAt = time.Now()
		}
		if !goneAt.IsZero() && !droppedAt.IsZero() && syncRes != nil && rDone {
			break
		}
	}
	if goneAt.IsZero() {
		t.Fatalf("(ii) the quorum did not delete the ephemeral node of member %d's client within 10s", m)
	}
	t.Logf("(ii) the other members saw the ephemeral node deleted (session expired at the quorum) %v after the cut", since(goneAt))
	if droppedAt.IsZero() {
		t.Fatalf("cut-off member %d still serves %v after the cut (syncLimit × tickTime = %v)", m, stale+6*time.Second, stale)
	}
	t.Logf("member %d stopped serving (Mode \"\") %v after the cut; a second client's reads on it were answered until %v", m, since(droppedAt), since(rLast))
	if !rLastAfterGone.IsZero() {
		t.Logf("member %d still said the node exists %v after the quorum had deleted it", m, rLastAfterGone.Sub(goneAt).Round(10*time.Millisecond))
	}
	switch {
	case syncRes == nil:
		t.Logf("(iii) sync issued %v after the cut: still pending when member %d dropped out", since(syncAt), m)
	case syncRes.err == nil:
		t.Fatalf("(iii) sync issued %v after the cut succeeded %v after the cut on cut-off member %d", since(syncAt), since(syncRes.at), m)
	default:
		t.Logf("(iii) sync issued %v after the cut failed %v after the cut: %v", since(syncAt), since(syncRes.at), syncRes.err)
	}

	// b. Heal: m serves again, and its client learns the session expired.
	healed := time.Now()
	c.Heal(m)
	back := harnessWaitMode(t, c, m, "serving", serving, 20*time.Second)
	t.Logf("b. member %d serves again (%s) %v after the heal", m, c.Mode(m), back.Sub(healed).Round(10*time.Millisecond))
	harnessWaitState(t, mevents, zk.StateExpired, 10*time.Second)
	t.Logf("b. member %d's client told its session expired %v after the heal", m, time.Since(healed).Round(10*time.Millisecond))

	// c. Cut off the leader: the other two elect a new one; it steps down.
	l := c.Leader()
	if l < 0 {
		t.Fatalf("no leader after the heal")
	}
	lcut := time.Now()
	c.CutOff(l)
	var newLeader int
	var elected, stepped time.Time
	for deadline := lcut.Add(stale + 10*time.Second); elected.IsZero() || stepped.IsZero(); time.Sleep(zkPollInterval) {
		if time.Now().After(deadline) {
			t.Fatalf("after cutting off leader %d: new leader at %v, old one stepped down at %v (zero = not yet)", l, elected, stepped)
		}
		for i := 0; i < 3 && elected.IsZero(); i++ {
			if i != l && c.Mode(i) == "leader" {
				newLeader, elected = i, time.Now()
			}
		}
		if stepped.IsZero() && c.Mode(l) != "leader" {
			stepped = time.Now()
		}
	}
	t.Logf("c. leader %d cut off: member %d elected leader %v after the cut; member %d stopped leading %v after the cut (syncLimit × tickTime = %v)",
		l, newLeader, elected.Sub(lcut).Round(10*time.Millisecond), l, stepped.Sub(lcut).Round(10*time.Millisecond), stale)
	if d := stepped.Sub(lcut); d > stale+3*time.Second {
		t.Errorf("cut-off leader %d went on leading for %v", l, d)
	}
	for i := 0; i < 3; i++ {
		if i != l && i != newLeader {
			if md := c.Mode(i); md != "follower" {
				t.Errorf("member %d: Mode %q, want follower of %d", i, md, newLeader)
			}
		}
	}
	lhealed := time.Now()
	c.Heal(l)
	var whole time.Time
	for i := 0; i < 3; i++ {
		if w := harnessWaitMode(t, c, i, "serving", serving, 20*time.Second); w.After(whole) {
			whole = w
		}
	}
	if c.Leader() < 0 {
		t.Fatalf("no leader after healing member %d", l)
	}
	t.Logf("c. member %d healed: 3 members serving again %v later (member %d is %s)", l, whole.Sub(lhealed).Round(10*time.Millisecond), l, c.Mode(l))
	harnessCheckProxied(t, c, "after the heals")

	// d. Restarts keep the proxies (same ports in every zoo.cfg).
	t1 := time.Now()
	c.Kill(l)
	c.Start(l)
	c.StopAll()
	c.StartAll()
	if c.Leader() < 0 {
		t.Fatalf("no leader after StopAll/StartAll")
	}
	t.Logf("d. Kill/Start and StopAll/StartAll with peer proxies: %v", time.Since(t1).Round(10*time.Millisecond))
	harnessCheckProxied(t, c, "after the restarts")
	t.Logf("total %v", time.Since(t0).Round(time.Millisecond))
}
