package main

// The ping client (ping.go) against the standard library's HTTP server:
// what it sends, what it makes of the answers, over http and https.

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

type pingReceiver struct {
	mu   sync.Mutex
	got  []string // "METHOD PATH BODY"
	hdr  []http.Header
	code int
}

func (p *pingReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.got = append(p.got, r.Method+" "+r.URL.RequestURI()+" "+string(b))
	p.hdr = append(p.hdr, r.Header.Clone())
	code := p.code
	p.mu.Unlock()
	if code == 0 {
		code = 200
	}
	w.WriteHeader(code)
	_, _ = io.WriteString(w, "OK")
}

func (p *pingReceiver) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string{}, p.got...)
}

func TestPingPost(t *testing.T) {
	recv := &pingReceiver{}
	plain := httptest.NewServer(recv)
	defer plain.Close()
	u, _ := parseWebURL(plain.URL + "/ping/abc?create=1")
	code, err := pingPost(u, []byte("last line\n"), nil, 5*time.Second)
	if err != nil || code != 200 {
		t.Fatalf("http: %d %v", code, err)
	}
	got := recv.requests()
	if len(got) != 1 || got[0] != "POST /ping/abc?create=1 last line\n" {
		t.Errorf("http: the server got %q", got)
	}
	if h := recv.hdr[0]; !strings.HasPrefix(h.Get("User-Agent"), "ballot/") || h.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("headers: %v", h)
	}

	recv.code = 503
	if code, err := pingPost(u, nil, nil, 5*time.Second); err != nil || code != 503 {
		t.Errorf("a 503: %d %v", code, err)
	}
	recv.code = 0

	// https, the server's certificate from --ping-ca; without it, refused.
	secure := httptest.NewTLSServer(recv)
	defer secure.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: secure.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	tc, err := loadPingTLS(ca)
	if err != nil {
		t.Fatal(err)
	}
	su, _ := parseWebURL(secure.URL + "/uuid/0")
	if code, err := pingPost(su, []byte("fine"), tc, 5*time.Second); err != nil || code != 200 {
		t.Errorf("https with --ping-ca: %d %v", code, err)
	}
	sys, _ := loadPingTLS("")
	if _, err := pingPost(su, nil, sys, 5*time.Second); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("https to a server no system CA signs: %v, want a certificate error", err)
	}
	if _, err := loadPingTLS("/etc/hostname-not-there"); err == nil {
		t.Errorf("a missing --ping-ca loads")
	}

	// Nothing listens: an error, within the timeout.
	dead := httptest.NewServer(recv)
	du, _ := parseWebURL(dead.URL + "/x")
	dead.Close()
	if _, err := pingPost(du, nil, nil, 5*time.Second); err == nil {
		t.Errorf("a closed port answered")
	}
}

func TestPingURLParsing(t *testing.T) {
	for _, tc := range []struct{ in, redacted, err string }{
		{"https://hc-ping.com/5f3c-uuid", "https://hc-ping.com/…", ""},
		{"http://10.0.0.1:8000/ping/key/slug", "http://10.0.0.1:8000/…", ""},
		{"ftp://hc-ping.com/x", "ftp://hc-ping.com/…", "https:// or http://"},
		{"hc-ping.com/x", "…", "https:// or http://"},
		{"https:///x", "…", "no host"},
		{"https://user:pw@hc-ping.com/x", "https://hc-ping.com/…", "user or password"},
		{"https://hc-ping.com:99999/x", "https://hc-ping.com:99999/…", "port"},
		{"https://hc-ping.com/x#frag", "https://hc-ping.com/…", "fragment"},
	} {
		_, err := parsePingURL(tc.in)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("parsePingURL(%q) = %v, want %q", tc.in, err, tc.err)
		}
		if r := redactURL(tc.in); r != tc.redacted {
			t.Errorf("redactURL(%q) = %q, want %q", tc.in, r, tc.redacted)
		}
	}
}
