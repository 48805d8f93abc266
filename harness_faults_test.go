package main

// Self-tests of the harness's steadiness and deposition faults: a slow
// link (tcpProxy.SetDelay) and a one-sided reset (ResetClientSides).

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
)

// TestHarnessProxyDelay: SetDelay holds every byte back d in each
// direction, keeps the stream's order, passes the end of a stream on after
// its last bytes, and SetDelay(0) forwards at once again.
func TestHarnessProxyDelay(t *testing.T) {
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
