package main

// --ping-url: a dead-man's-switch service told of each run, by
// healthchecks.io's conventions: URL/start when a run starts, URL/<exit
// code> (URL/fail when it has none) when it ends, the output tail as the
// body. Pings go through a small queue to one sender, so a slow or
// unreachable service never delays a run, the schedule or the lease.
//
// The client is a minimal HTTP/1.1 one (POST, Host, Content-Length,
// Connection: close, the status line; https through crypto/tls, already
// linked for ZooKeeper): net/http would add 300 KiB to the binary. No
// redirects, no proxies.

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	pingTimeout = 5 * time.Second // one try: connect, TLS, request, status line
	pingTries   = 3               // then the ping is given up, logged and counted
	pingQueue   = 16              // pings waiting; a newer one is dropped when full
	// pingFlushLimit bounds how long ballot's exit waits for the pings
	// queued (a --once-key run's end): the tries of one ping and their
	// pauses.
	pingFlushLimit = pingTries*pingTimeout + 3*time.Second
)

// pingMsg is one ping: the path after the URL, and the body.
type pingMsg struct {
	what string // "start", an exit code, "fail"
	body []byte
}

// pinger sends the pings of a run, in order, from one goroutine.
type pinger struct {
	u      *webURL
	shown  string // the URL as logs show it (redactURL)
	tls    *pingTLSConfig
	done   chan struct{} // closed once the queue is closed and empty
	runner *runner

	mu     sync.Mutex
	queue  chan pingMsg
	closed bool // flushed: ballot exits; a later run end (closeRun's) is not sent
}

// parsePingURL checks a ping URL: http or https (https only in a build
// with TLS), a host, no user or fragment.
func parsePingURL(v string) (*webURL, error) {
	u, err := parseWebURL(strings.TrimSpace(v))
	switch {
	case err != nil:
		return nil, errors.New("not a URL; use one such as https://hc-ping.com/<uuid>")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("must start with https:// or http://, e.g. https://hc-ping.com/<uuid>")
	case u.Host == "" || u.Hostname() == "":
		return nil, errors.New("has no host; use one such as https://hc-ping.com/<uuid>")
	case u.User != nil:
		return nil, errors.New("must not carry a user or password")
	case u.Fragment != "":
		return nil, errors.New("must not have a #fragment")
	case u.Scheme == "https" && !tlsBuilt:
		return nil, errors.New("this ballot was built without TLS (tag ballot_notls): use an http:// URL or a standard build")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, errors.New("has a bad port; use 1 to 65535")
		}
	}
	return u, nil
}

// readPingURLFile is --ping-url-file: the URL on the file's first line.
func readPingURLFile(name string) (string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("cannot read it: %v", errors.Unwrap(err))
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if strings.TrimSpace(line) == "" {
		return "", errors.New("is empty; write the ping URL on its first line")
	}
	return strings.TrimSpace(line), nil
}

// newPinger starts the sender; nil without --ping-url.
func newPinger(r *runner) (*pinger, error) {
	if r.set.PingURL == "" {
		return nil, nil
	}
	u, err := parsePingURL(r.set.PingURL)
	if err != nil {
		return nil, fmt.Errorf("--ping-url %q: %v", redactURL(r.set.PingURL), err)
	}
	p := &pinger{u: u, shown: redactURL(r.set.PingURL), queue: make(chan pingMsg, pingQueue), done: make(chan struct{}), runner: r}
	if u.Scheme == "https" {
		if p.tls, err = loadPingTLS(r.set.PingCA); err != nil {
			return nil, fmt.Errorf("--ping-ca %q: %v", r.set.PingCA, err)
		}
	}
	go p.loop()
	return p, nil
}

// send queues a ping; dropped, and logged, when the queue is full.
func (p *pinger) send(what string, body []byte) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	select {
	case p.queue <- pingMsg{what: what, body: body}:
	default:
		p.runner.log.Warn("ping dropped: too many waiting", "url", p.shown, "ping", what)
		p.runner.metrics.PingFailed()
	}
}

func (p *pinger) loop() {
	defer close(p.done)
	for m := range p.queue {
		p.deliver(m)
	}
}

// deliver tries a ping a few times: again after a network error or a 5xx,
// not after another answer (a 4xx will not change; a 3xx is not followed).
func (p *pinger) deliver(m pingMsg) {
	target := *p.u
	target.Path = strings.TrimSuffix(target.Path, "/") + "/" + m.what
	target.RawPath = ""
	for try := 1; ; try++ {
		code, err := pingPost(&target, m.body, p.tls, pingTimeout)
		if err == nil && code >= 200 && code < 300 {
			p.runner.log.Debug("ping sent", "url", p.shown, "ping", m.what, "status", code)
			return
		}
		if err == nil {
			err = fmt.Errorf("HTTP status %d", code)
		}
		if try >= pingTries || (code != 0 && code < 500) {
			p.runner.log.Warn("ping failed", "url", p.shown, "ping", m.what, "tries", try, "error", err)
			p.runner.metrics.PingFailed()
			return
		}
		select {
		case <-time.After(time.Duration(try) * time.Second):
		case <-p.runner.hurry:
			return
		}
	}
}

// flush closes the queue and waits for what is in it, bounded by
// pingFlushLimit and a second signal.
func (p *pinger) flush() {
	if p == nil {
		return
	}
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.queue)
	}
	p.mu.Unlock()
	select {
	case <-p.done:
	case <-time.After(pingFlushLimit):
		p.runner.log.Warn("pings not sent before exiting", "url", p.shown)
	case <-p.runner.hurry:
	}
}

// pingPost POSTs body to u and returns the response's status code, all
// within timeout: HTTP/1.1, one request per connection.
func pingPost(u *webURL, body []byte, tc *pingTLSConfig, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	d := net.Dialer{Deadline: deadline}
	conn, err := d.Dial("tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return 0, err
	}
	defer func() { conn.Close() }()
	_ = conn.SetDeadline(deadline)
	if u.Scheme == "https" {
		if conn, err = pingTLS(conn, u.Hostname(), tc); err != nil {
			return 0, err
		}
	}
	target := u.EscapedPath()
	if target == "" {
		target = "/"
	}
	if u.RawQuery != "" {
		target += "?" + u.RawQuery
	}
	w := bufio.NewWriter(conn)
	fmt.Fprintf(w, "POST %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: ballot/%s\r\nContent-Type: text/plain; charset=utf-8\r\n"+
		"Content-Length: %d\r\nConnection: close\r\n\r\n", target, u.Host, version, len(body))
	_, _ = w.Write(body)
	if err := w.Flush(); err != nil {
		return 0, err
	}
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("no answer: %w", err)
	}
	f := strings.Fields(status)
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/1.") {
		return 0, fmt.Errorf("not an HTTP answer: %q", strings.TrimSpace(status))
	}
	code, err := strconv.Atoi(f[1])
	if err != nil || code < 100 || code > 999 {
		return 0, fmt.Errorf("not an HTTP status line: %q", strings.TrimSpace(status))
	}
	return code, nil
}
