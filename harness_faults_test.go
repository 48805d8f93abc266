package main

// Self-tests of the harness's steadiness and deposition faults: a slow
// link (tcpProxy.SetDelay), a one-sided reset (ResetClientSides), a
// stopped ZooKeeper member (Pause), and a ZooKeeper leader deposed by its
// followers while it still believes it leads (Depose).

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestHarnessProxyDelay: SetDelay holds every byte back d in each
// direction, keeps the stream's order, passes the end of a stream on after
// its last bytes, and SetDelay(0) forwards at once again.
func TestHarnessProxyDelay(t *testing.T) {
	// Serial: a round trip after SetDelay(0) must take less than d (300 ms),
	// a bound that load on the machine could eat.
	const d = 300 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	harnessEcho(t, ln)
	p := newTCPProxy(t, []string{ln.Addr().String()})
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := harnessRoundTrip(conn, "warm"); err != nil {
		t.Fatal(err)
	}

	p.SetDelay(d)
	// Many small writes, spread over more than d: they come back whole and
	// in order, none sooner than 2d (there and back) after it was sent.
	var want strings.Builder
	sent := time.Now()
	for i := 0; i < 40; i++ {
		msg := fmt.Sprintf("msg-%03d;", i)
		want.WriteString(msg)
		if _, err := io.WriteString(conn, msg); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * d))
	got := make([]byte, want.Len())
	if _, err := io.ReadFull(conn, got[:1]); err != nil {
		t.Fatalf("first byte back: %v", err)
	}
	rtt := time.Since(sent)
	if rtt < 2*d {
		t.Fatalf("first byte back after %v, want at least 2 × %v", rtt, d)
	}
	if _, err := io.ReadFull(conn, got[1:]); err != nil {
		t.Fatalf("the rest: %v", err)
	}
	if string(got) != want.String() {
		t.Fatalf("echoed through the delay:\n%s\nwant\n%s", got, want.String())
	}
	t.Logf("with %v each way: the first byte back after %v, all %d after %v", d, rtt.Round(time.Millisecond), len(got), time.Since(sent).Round(time.Millisecond))

	// Off again: a round trip takes far less than one delay.
	p.SetDelay(0)
	t0 := time.Now()
	if err := harnessRoundTrip(conn, "prompt"); err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(t0); rtt >= d {
		t.Fatalf("after SetDelay(0) a round trip took %v", rtt)
	}

	// A stream's end follows its last bytes through the delay.
	sink, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	received := make(chan string, 1)
	go func() {
		c, err := sink.Accept()
		if err != nil {
			received <- err.Error()
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(c)
		received <- string(b)
	}()
	sp := newTCPProxy(t, []string{sink.Addr().String()})
	sp.SetDelay(d)
	sc, err := net.Dial("tcp", sp.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(sc, "last words"); err != nil {
		t.Fatal(err)
	}
	sc.Close()
	select {
	case got := <-received:
		if got != "last words" {
			t.Fatalf("the sink read %q before the end of the stream, want %q", got, "last words")
		}
	case <-time.After(10 * d):
		t.Fatalf("the end of the stream did not arrive")
	}
}

// TestHarnessProxyResetClientSides: the client of each current connection
// gets a reset, the upstream only silence until the proxy closes.
func TestHarnessProxyResetClientSides(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	p := newTCPProxy(t, []string{ln.Addr().String()})
	client, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := io.WriteString(client, "hello"); err != nil {
		t.Fatal(err)
	}
	var up net.Conn
	select {
	case up = <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("the proxy did not connect upstream")
	}
	defer up.Close()
	_ = up.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadFull(up, make([]byte, 5)); err != nil {
		t.Fatal(err)
	}

	p.ResetClientSides()
	_ = client.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := client.Read(make([]byte, 16)); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("client side: read %d bytes, %v; want a reset", n, err)
	}
	// The upstream may still send (it is discarded) and hears nothing.
	if _, err := io.WriteString(up, "anyone there?"); err != nil {
		t.Fatalf("upstream write after the client's reset: %v", err)
	}
	_ = up.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if n, err := up.Read(make([]byte, 16)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("upstream side: read %d bytes, %v; want silence", n, err)
	}
	p.Close()
	_ = up.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := up.Read(make([]byte, 16)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("upstream side after Close: read %d bytes, %v; want the connection ended", n, err)
	}
}

// TestHarnessPause: a paused member answers nothing, keeps its clients'
// connections, and after Resume serves the same session again.
func TestHarnessPause(t *testing.T) {
	t.Parallel()
	const session = 4 * time.Second // the client's read timeout, 2/3 of it, outlasts the pause
	c := startZK(t, 1)
	conn, events := harnessConnect(t, c.Servers(), session)
	sid := conn.SessionID()
	c.Pause(0)
	paused := time.Now()
	if m := c.Mode(0); m != "" {
		t.Fatalf("a paused member answered srvr with Mode %q", m)
	}
	if time.Since(paused) < zkFourLetterTTL {
		t.Fatalf("srvr on a paused member failed after %v, before its own timeout", time.Since(paused))
	}
	c.Resume(0)
	if _, _, err := conn.Exists("/"); err != nil {
		t.Fatalf("request after Resume: %v", err)
	}
	if m := c.Mode(0); m != "standalone" {
		t.Fatalf("Mode after Resume = %q", m)
	}
	if conn.SessionID() != sid {
		t.Fatalf("session changed across the pause: %x → %x", sid, conn.SessionID())
	}
	for len(events) > 0 {
		if ev := <-events; ev.Type == zk.EventSession && ev.State == zk.StateDisconnected {
			t.Fatalf("the client disconnected during a %v pause", time.Since(paused))
		}
	}
}

// harnessNewLeader waits until a member other than old leads, and returns
// it with the Mode old reported right after (still "leader" if it has not
// noticed its deposition).
func harnessNewLeader(t *testing.T, c *zkCluster, old int, timeout time.Duration) (int, string) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(zkPollInterval) {
		for i := 0; i < c.Size(); i++ {
			if i != old && c.Mode(i) == "leader" {
				return i, c.Mode(old)
			}
		}
	}
	t.Fatalf("no member but %d leads %v after its deposition", old, timeout)
	return -1, ""
}

// TestHarnessDeposedLeader: Depose gives two members that report Mode:
// leader for a while: its followers get a reset and elect a new leader at
// once, the old leader hears silence and steps down only by its own
// syncLimit × tickTime. (The other way, followers with a shorter syncLimit
// than their leader, is checked where it is used, by
// TestEnsembleSafetyRollingConfigChange's deposedLeader.)
func TestHarnessDeposedLeader(t *testing.T) {
	t.Parallel()
	const (
		tick      = 500 * time.Millisecond
		syncLimit = 8
	)
	c := startZKWith(t, zkOptions{N: 3, TickTime: tick, SyncLimit: syncLimit, PeerProxies: true})
	l := c.Leader()
	t0 := time.Now()
	c.Depose(l)
	nl, oldMode := harnessNewLeader(t, c, l, syncLimit*tick)
	elected := time.Since(t0)
	if oldMode != "leader" {
		t.Fatalf("member %d was elected %v after the deposition, but the old leader %d already reports %q", nl, elected.Round(time.Millisecond), l, oldMode)
	}
	stepped := harnessWaitMode(t, c, l, "no longer leading", func(m string) bool { return m != "leader" }, syncLimit*tick+5*time.Second)
	t.Logf("member %d elected %v after the deposition while member %d still reported Mode: leader; it stopped leading %v after (its syncLimit × tickTime = %v)",
		nl, elected.Round(time.Millisecond), l, stepped.Sub(t0).Round(time.Millisecond), syncLimit*tick)
	c.Heal(l)
	c.WaitWhole(40 * time.Second)
	harnessCheckProxied(t, c, "after the heal")
}
