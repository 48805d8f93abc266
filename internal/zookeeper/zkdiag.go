package zookeeper

// Why a connection to ZooKeeper failed, as far as the dialer could tell:
// a refused connection, a certificate that does not verify, a plain client
// at a TLS port or the reverse (a quick probe tells which), a server that
// wants a client certificate. Also the host provider that remembers the
// name each address was written as, which certificates are checked against.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// withDiag appends to msg why the connection attempts failed, if known.
func withDiag(msg string, d *zkDiag) error {
	if why := d.summary(); why != "" {
		return errors.New(msg + ": " + why)
	}
	return errors.New(msg)
}

// zkHosts is a zk.HostProvider: the servers, resolved once and shuffled
// like the client's own DNSHostProvider does, remembering the name each
// address was written as.
type zkHosts struct {
	mu         sync.Mutex
	addrs      []string          // ip:port
	names      map[string]string // ip:port → host as written
	curr, last int
	round      int // failed rounds since the last connection
}

func (h *zkHosts) Init(servers []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.names = map[string]string{}
	for _, s := range servers {
		host, port, err := net.SplitHostPort(s)
		if err != nil {
			return err
		}
		ips, err := net.DefaultResolver.LookupHost(ctx, host)
		if err != nil {
			return err
		}
		for _, ip := range ips {
			addr := net.JoinHostPort(ip, port)
			if _, dup := h.names[addr]; !dup {
				h.names[addr] = host
				h.addrs = append(h.addrs, addr)
			}
		}
	}
	if len(h.addrs) == 0 {
		return fmt.Errorf("no address found for %s", strings.Join(servers, ","))
	}
	rand.Shuffle(len(h.addrs), func(i, j int) { h.addrs[i], h.addrs[j] = h.addrs[j], h.addrs[i] })
	h.curr, h.last = -1, -1
	return nil
}

func (h *zkHosts) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.addrs)
}

// quickRounds are the pauses before the first rounds of dials after a
// connection is lost, before the client's own 1 s pause between rounds
// takes over. While the ensemble elects a new leader (a rolling restart)
// every member refuses clients for a few hundred milliseconds; a client
// that then waits a whole second more spends a lease on nothing.
var quickRounds = [...]time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}

// Next returns the next address; retryStart is true once every address
// was tried since the last success, after the quick rounds.
func (h *zkHosts) Next() (server string, retryStart bool) {
	h.mu.Lock()
	h.curr = (h.curr + 1) % len(h.addrs)
	retryStart = h.curr == h.last
	if h.last == -1 {
		h.last = 0
	}
	var pause time.Duration
	if retryStart && h.round < len(quickRounds) {
		pause, retryStart = quickRounds[h.round], false
		h.round++
	}
	addr := h.addrs[h.curr]
	h.mu.Unlock()
	time.Sleep(pause)
	return addr, retryStart
}

func (h *zkHosts) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last, h.round = h.curr, 0
}

// name is the host addr was written as (without an IPv6 zone).
func (h *zkHosts) name(addr string) string {
	h.mu.Lock()
	name, ok := h.names[addr]
	h.mu.Unlock()
	if !ok {
		name, _, _ = net.SplitHostPort(addr)
	}
	name, _, _ = strings.Cut(name, "%")
	return name
}

// dialer connects to one server, with TLS when configured: the handshake
// happens here, within handshake, so that nothing waits on a server that
// does not speak TLS.
func (a *Access) dialer(hosts *zkHosts, diag *zkDiag, handshake time.Duration) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		name := hosts.name(addr)
		raw, err := net.DialTimeout(network, addr, timeout)
		if err != nil {
			diag.note(addr, fmt.Sprintf("%s: %v", addr, opCause(err)))
			return nil, err
		}
		if a.tls == nil {
			return &diagConn{Conn: raw, addr: addr, name: name, diag: diag}, nil
		}
		tc, cert, err := a.tls.handshake(raw, name, addr, diag, handshake)
		if err != nil {
			raw.Close()
			return nil, err
		}
		return &diagConn{Conn: tc, addr: addr, name: name, diag: diag, tls: true, cert: cert}, nil
	}
}

// opCause strips a *net.OpError of the operation and address it repeats.
func opCause(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil && oe.Op != "remote error" {
		return oe.Err
	}
	return err
}

// errTLSAnswer ends a plain connection whose server answered with TLS.
var errTLSAnswer = errors.New("the server answered with TLS")

// diagConn watches a connection until the server's first answer, which
// tells whether it speaks ZooKeeper's protocol at all.
type diagConn struct {
	net.Conn
	addr, name string
	diag       *zkDiag
	tls, cert  bool // TLS; a client certificate was offered
	answered   bool // read by one goroutine at a time, in turn
}

func (c *diagConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.answered {
		return n, err
	}
	switch {
	case n > 0 && !c.tls && (p[0] == 0x15 || p[0] == 0x16):
		// A ZooKeeper frame starts with its length, whose first byte is 0
		// in practice; 0x15 and 0x16 start a TLS alert or handshake record.
		// (Reading on would allocate a buffer of that "length".)
		c.diag.note(c.addr, c.addr+" answered with TLS: it serves TLS on this port; connect with --zookeeper-tls (and --zookeeper-tls-ca)")
		c.Conn.Close()
		return 0, errTLSAnswer
	case n > 0:
		c.answered = true
	case err != nil:
		c.diag.noAnswer(c, err)
	}
	return n, err
}

// zkDiag keeps, per server address, the last reason a connection to it
// failed, for the error when no session comes.
type zkDiag struct {
	mu       sync.Mutex
	order    []string          // addresses, in the order they failed first
	reasons  map[string]string // address → why
	probed   map[string]bool
	verdicts sync.Map // address → what a probe found, which beats the reason
}

func (d *zkDiag) note(addr, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, seen := d.reasons[addr]; !seen {
		d.order = append(d.order, addr)
	}
	d.reasons[addr] = reason
}

// summary is the reasons, one per server, on one line; "" if none.
func (d *zkDiag) summary() string {
	if d == nil {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	order := append([]string(nil), d.order...)
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] }) // not sort.Strings, whose generic pdqsort for strings costs ~12 KB (issue 35)
	var out []string
	for _, addr := range order {
		reason := d.reasons[addr]
		if v, ok := d.verdicts.Load(addr); ok {
			reason = v.(string)
		}
		if !strings.Contains(strings.Join(out, "; "), reason) {
			out = append(out, reason)
		}
	}
	return strings.Join(out, "; ")
}

// probeOnce runs probe for addr in the background, once per connect.
func (d *zkDiag) probeOnce(addr string, probe func() string) {
	d.mu.Lock()
	done := d.probed[addr]
	d.probed[addr] = true
	d.mu.Unlock()
	if done {
		return
	}
	go func() {
		if v := probe(); v != "" {
			d.verdicts.Store(addr, v)
		}
	}()
}

// noAnswer explains a connection that ended before the server's first
// answer (which comes only once a request was sent).
func (d *zkDiag) noAnswer(c *diagConn, err error) {
	var ne net.Error
	switch {
	case c.tls && isRemoteAlert(err):
		// TLS 1.3 checks the client certificate after the handshake.
		d.note(c.addr, fmt.Sprintf("%s refused the TLS session: %v%s", c.addr, err, alertHint(err, c.cert)))
	case errors.As(err, &ne) && ne.Timeout():
		d.note(c.addr, c.addr+" accepted the connection but did not answer")
	case c.tls:
		d.note(c.addr, c.addr+" closed the TLS connection without answering (a server that is not serving, without a quorum, does that)")
	default:
		d.note(c.addr, c.addr+" closed the connection without answering (a server that is not serving, without a quorum, does that, and so does a TLS port)")
		addr, name := c.addr, c.name
		d.probeOnce(addr, func() string {
			if speaksTLS(addr, name) {
				return addr + " serves TLS on this port: connect with --zookeeper-tls (and --zookeeper-tls-ca)"
			}
			return ""
		})
	}
}

func isRemoteAlert(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "remote error"
}

func isConnReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset by peer")
}

func alertHint(err error, offeredCert bool) string {
	if !strings.Contains(err.Error(), "certificate") {
		return ""
	}
	if offeredCert {
		return " (the server does not accept the client certificate: not signed by a CA it trusts, or expired?)"
	}
	return " (the server requires a client certificate: --zookeeper-tls-cert and --zookeeper-tls-key)"
}

// probeTimeout bounds each diagnostic probe.
const probeTimeout = time.Second

// speaksPlainZooKeeper reports whether the server at addr answers a
// ZooKeeper four-letter word in plain text (even if only to say the word
// is not allowed).
func speaksPlainZooKeeper(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, probeTimeout)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(probeTimeout))
	if _, err := io.WriteString(c, "srvr"); err != nil {
		return false
	}
	b := make([]byte, 64)
	n, _ := io.ReadAtLeast(c, b, 1)
	return n > 0 && b[0] != 0x15 && b[0] != 0x16
}
