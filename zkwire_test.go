package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestWireEndsASessionItDidNotOpen: what the keeper does for a dead ballot.
// A session opened by the client library, whose password was read off the
// wire, is resumed by the tiny client, which marks the handover record and
// closes the session: the session's ephemeral node goes at once.
func TestWireEndsASessionItDidNotOpen(t *testing.T) {
	c := startZK(t, 1)
	var mu sync.Mutex
	var id int64
	var pw []byte
	conn := zkConnect(t, c.Servers(), 2*time.Second,
		zk.WithDialer(sniffConnect(net.DialTimeout, func(i int64, p []byte) { mu.Lock(); id, pw = i, p; mu.Unlock() })))
	if _, err := conn.Create("/wire-eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create("/wire-record", []byte("taken"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	h := &handoff{Servers: c.Servers(), SessionID: id, Passwd: pw, TimeoutMs: 2000,
		ReleasePath: "/wire-record", ReleaseVersion: 0, ReleaseData: []byte("released")}
	mu.Unlock()
	if h.SessionID != conn.SessionID() || len(h.Passwd) == 0 {
		t.Fatalf("sniffed session 0x%x (password %d bytes), the client has 0x%x", h.SessionID, len(h.Passwd), conn.SessionID())
	}

	// A wrong password is refused: the server answers with no session.
	bad := *h
	bad.Passwd = make([]byte, len(h.Passwd))
	if err := bad.endSession(2 * time.Second); !errors.Is(err, errSessionLost) {
		t.Errorf("a wrong password: %v, want the session refused", err)
	}

	if err := h.endSession(2 * time.Second); err != nil {
		t.Fatalf("endSession: %v", err)
	}
	other := zkConnect(t, c.Servers(), 2*time.Second)
	if ok, _, err := other.Exists("/wire-eph"); err != nil || ok {
		t.Errorf("the closed session's ephemeral node: exists=%v err=%v", ok, err)
	}
	if b, _, err := other.Get("/wire-record"); err != nil || string(b) != "released" {
		t.Errorf("the record: %q, %v; want released", b, err)
	}

	// The session is gone now: a second try says so, and is no error.
	if err := h.endSession(2 * time.Second); !errors.Is(err, errSessionLost) {
		t.Errorf("ending an ended session: %v, want errSessionLost", err)
	}
}

// TestWireReleaseIsConditional: a record changed since the take (someone
// else took the baton) is left alone, and the session is closed anyway.
func TestWireReleaseIsConditional(t *testing.T) {
	c := startZK(t, 1)
	var id int64
	var pw []byte
	var mu sync.Mutex
	conn := zkConnect(t, c.Servers(), 2*time.Second,
		zk.WithDialer(sniffConnect(net.DialTimeout, func(i int64, p []byte) { mu.Lock(); id, pw = i, p; mu.Unlock() })))
	if _, err := conn.Create("/rec", []byte("taken"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Set("/rec", []byte("taken by another"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create("/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	h := &handoff{Servers: append([]string{basicDeadPort(t)}, c.Servers()...), SessionID: id, Passwd: pw, TimeoutMs: 2000,
		ReleasePath: "/rec", ReleaseVersion: 0, ReleaseData: []byte("released")}
	mu.Unlock()
	if err := h.endSession(3 * time.Second); err != nil {
		t.Fatalf("endSession (first server dead): %v", err)
	}
	other := zkConnect(t, c.Servers(), 2*time.Second)
	if b, _, _ := other.Get("/rec"); string(b) != "taken by another" {
		t.Errorf("the record was overwritten: %q", b)
	}
	if ok, _, _ := other.Exists("/eph"); ok {
		t.Errorf("the session was not closed")
	}
}

// TestWireAccessLine: what the keeper learns over its pipe is what ballot
// connects with, the client certificate's key included.
func TestWireAccessLine(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []wireAccess{
		{},
		{Digest: []byte("alice:correct horse")},
		{TLS: true, ServerName: "zk.example.com", CA: []byte("-----BEGIN CERTIFICATE-----\n"),
			Cert: tls.Certificate{Certificate: [][]byte{{1, 2}, {3}}, PrivateKey: key}, Digest: []byte("u:p")},
	} {
		f := strings.Fields(a.line())
		got, ok := parseAccess(f[1:])
		if f[0] != "access" || !ok || !reflect.DeepEqual(got, a) {
			t.Errorf("%q\nparsed %+v, %v\nwant   %+v", a.line(), got, ok, a)
		}
	}
}
