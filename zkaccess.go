package main

// Reaching ZooKeeper: the servers as written, TLS, digest credentials, and
// the ACL of every node ballot creates. run, info, watch and leader all
// connect through zkAccess.connect and zkAccess.login, so they take the
// same options and fail the same way.
//
// go-zookeeper has no TLS of its own: its Dialer returns a *tls.Conn. Its
// default host provider resolves names before dialling, so the dialer would
// see only IPs; zkHosts resolves the same way but remembers the name each
// address was written as, which is what the server's certificate is
// checked against.
//
// When no session comes, the caller's error says why, as far as the dialer
// could tell (zkDiag): a refused connection, a certificate that does not
// verify, a plain client at a TLS port or the reverse (a quick probe tells
// which), a server that wants a client certificate.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkAccess is how to reach ZooKeeper, built once from the settings.
type zkAccess struct {
	servers  []string    // host:port as written, without the chroot
	tls      *tls.Config // nil: plain TCP; ServerName "" means each server's host as written
	digest   []byte      // "user:password" from --zookeeper-auth-file; nil: none
	user     string      // the digest user, for logs
	authFile string      // where digest came from, for messages
	aclMode  string      // --zookeeper-acl
	acl      []zk.ACL    // on every node ballot creates: nodeACL(aclMode)

	// wire is what the keeper needs to reach ZooKeeper the same way,
	// should it have to end the session for a dead ballot (zkwire.go).
	wire wireAccess

	// warnings to log once a logger exists (a readable auth file, ...)
	warnings []string
}

// nodeACL is the ACL of every node ballot creates. ZooKeeper expands the
// "auth" scheme into every identity the session authenticated with: its
// digest user, and the subject of its client certificate (x509).
func nodeACL(mode string) []zk.ACL {
	switch mode {
	case aclCreator:
		return zk.AuthACL(zk.PermAll)
	case aclCreatorWorldRead:
		return append(zk.AuthACL(zk.PermAll), zk.WorldACL(zk.PermRead)...)
	}
	return zk.WorldACL(zk.PermAll)
}

// maxCredentialFile bounds what is read of a certificate, key or auth file.
const maxCredentialFile = 1 << 20

// loadZKAccess reads the certificate, key and auth files. Every problem
// with them is a *usageError naming the parameter and the file: ballot
// exits 2 before anything connects.
func loadZKAccess(set *Settings) (*zkAccess, error) {
	a := &zkAccess{servers: set.ZooKeeperServers, aclMode: set.ZooKeeperACL, acl: nodeACL(set.ZooKeeperACL)}
	if set.ZooKeeperTLS {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: set.ZooKeeperTLSServerName}
		a.wire.TLS, a.wire.ServerName = true, set.ZooKeeperTLSServerName
		if set.ZooKeeperTLSCA != "" {
			data, err := readCredentialFile(set, "zookeeper-tls-ca", set.ZooKeeperTLSCA)
			if err != nil {
				return nil, err
			}
			a.wire.CA = data
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(data) {
				return nil, fileError(set, "zookeeper-tls-ca", set.ZooKeeperTLSCA,
					"holds no PEM certificate; expected one or more -----BEGIN CERTIFICATE----- blocks")
			}
		}
		if set.ZooKeeperTLSCert != "" {
			cert, err := loadClientCert(set)
			if err != nil {
				return nil, err
			}
			cfg.Certificates = []tls.Certificate{cert}
			a.wire.Cert = cert
			if leaf, err := x509.ParseCertificate(cert.Certificate[0]); err == nil && time.Now().After(leaf.NotAfter) {
				a.warnings = append(a.warnings, fmt.Sprintf("the client certificate %s expired on %s: servers that check it will refuse it",
					set.ZooKeeperTLSCert, leaf.NotAfter.UTC().Format(time.RFC3339)))
			}
		}
		a.tls = cfg
	}
	if set.ZooKeeperAuthFile != "" {
		if err := a.readAuthFile(set); err != nil {
			return nil, err
		}
		if a.tls == nil {
			a.warnings = append(a.warnings, "the ZooKeeper credentials travel in clear text without --zookeeper-tls")
		}
	}
	return a, nil
}

// fileError is the usage error for a file a parameter names.
func fileError(set *Settings, name, path, reason string) error {
	return usagef("%s %q: %s", paramSource(set, name), path, reason)
}

func readCredentialFile(set *Settings, name, path string) ([]byte, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fileError(set, name, path, "no such file")
	case err != nil:
		return nil, fileError(set, name, path, "cannot read it: "+pathErr(err).Error())
	case info.IsDir():
		return nil, fileError(set, name, path, "is a directory, not a file")
	case info.Size() > maxCredentialFile:
		return nil, fileError(set, name, path, fmt.Sprintf("is %d bytes; at most 1 MiB is read", info.Size()))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fileError(set, name, path, "cannot read it: "+pathErr(err).Error())
	}
	return data, nil
}

// loadClientCert reads --zookeeper-tls-cert and --zookeeper-tls-key,
// blaming the right file for what is wrong.
func loadClientCert(set *Settings) (tls.Certificate, error) {
	certPath, keyPath := set.ZooKeeperTLSCert, set.ZooKeeperTLSKey
	certPEM, err := readCredentialFile(set, "zookeeper-tls-cert", certPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := readCredentialFile(set, "zookeeper-tls-key", keyPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	certs := 0
	for rest := certPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return tls.Certificate{}, fileError(set, "zookeeper-tls-cert", certPath, "cannot parse its certificate: "+err.Error())
		}
		certs++
	}
	if certs == 0 {
		return tls.Certificate{}, fileError(set, "zookeeper-tls-cert", certPath,
			"holds no PEM certificate; expected a -----BEGIN CERTIFICATE----- block")
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if !hasPrivateKeyBlock(keyPEM) {
			return tls.Certificate{}, fileError(set, "zookeeper-tls-key", keyPath,
				"holds no PEM private key; expected a -----BEGIN PRIVATE KEY----- block (or RSA/EC PRIVATE KEY)")
		}
		return tls.Certificate{}, fileError(set, "zookeeper-tls-key", keyPath,
			fmt.Sprintf("is not the private key of the certificate in %s: %s", certPath, strings.TrimPrefix(err.Error(), "tls: ")))
	}
	return cert, nil
}

func hasPrivateKeyBlock(data []byte) bool {
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return false
		}
		if strings.HasSuffix(b.Type, "PRIVATE KEY") {
			return true
		}
	}
}

// readAuthFile reads user:password from --zookeeper-auth-file. Messages
// never quote the file's content.
func (a *zkAccess) readAuthFile(set *Settings) error {
	const name = "zookeeper-auth-file"
	path := set.ZooKeeperAuthFile
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && strings.Contains(path, ":") {
		// Most likely the credentials themselves: do not echo them.
		return usagef("%s: no such file; it takes the path of a file holding user:password, never the credentials themselves",
			paramSource(set, name))
	}
	data, err := readCredentialFile(set, name, path)
	if err != nil {
		return err
	}
	text := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	user, password, found := strings.Cut(text, ":")
	bad := func(reason string) error {
		return fileError(set, name, path, reason+"; expected one line user:password")
	}
	switch {
	case strings.TrimSpace(text) == "":
		return bad("is empty")
	case strings.ContainsAny(text, "\r\n"):
		return bad("holds more than one line")
	case !found:
		return bad("has no colon between user and password")
	case user == "":
		return bad("has no user name before the colon")
	case password == "":
		return bad("has no password after the colon")
	case strings.IndexFunc(text, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return bad("contains a control character")
	}
	a.digest, a.user, a.authFile = []byte(text), user, path
	a.wire.Digest = a.digest
	if info, err := os.Stat(path); err == nil && info.Mode().Perm()&0o044 != 0 {
		a.warnings = append(a.warnings, fmt.Sprintf("the auth file %s is readable by its group or by others (mode %04o): whoever can read it can act as ZooKeeper user %s; chmod 600 it",
			path, info.Mode().Perm(), user))
	}
	return nil
}

// ---------------------------------------------------------------------------
// Connecting.

// connect starts a client (zk.Connect returns at once and dials in the
// background); the caller waits for a session, then calls login. The
// zkDiag says why no session came, if none does.
func (a *zkAccess) connect(timeout time.Duration, logger zk.Logger, logInfo bool, cb func(zk.Event), learned func(id int64, passwd []byte)) (*zk.Conn, *zkDiag, error) {
	hosts := &zkHosts{}
	diag := &zkDiag{reasons: map[string]string{}, probed: map[string]bool{}}
	dial := a.dialer(hosts, diag, max(minConnectWait, timeout/2))
	if learned != nil {
		dial = sniffConnect(dial, learned)
	}
	conn, _, err := zk.Connect(a.servers, timeout,
		zk.WithHostProvider(hosts),
		zk.WithDialer(dial),
		zk.WithLogger(logger),
		zk.WithLogInfo(logInfo),
		zk.WithEventCallback(cb))
	if err != nil {
		return nil, nil, fmt.Errorf("cannot connect to ZooKeeper %s: %w", strings.Join(a.servers, ","), err)
	}
	return conn, diag, nil
}

// login sends the digest credentials on a new session; the client sends
// them again by itself after every reconnect, before any other request.
// It gives up at deadline or when stop is closed.
func (a *zkAccess) login(conn *zk.Conn, deadline time.Time, stop <-chan struct{}) error {
	if a.digest == nil {
		return nil
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for {
		done := make(chan error, 1)
		go func() { done <- conn.AddAuth("digest", a.digest) }()
		select {
		case err := <-done:
			switch {
			case err == nil:
				return nil
			case !retryable(err):
				return fmt.Errorf("not authorized: ZooKeeper refused the credentials of user %s from %s: %v", a.user, a.authFile, err)
			}
			// The connection dropped before the answer: send them again
			// once it is back (the request waits for it).
			select {
			case <-time.After(100 * time.Millisecond):
			case <-t.C:
				return fmt.Errorf("ZooKeeper did not answer the credentials of user %s in time", a.user)
			case <-stop:
				return errStopped
			}
		case <-t.C:
			return fmt.Errorf("ZooKeeper did not answer the credentials of user %s in time", a.user)
		case <-stop:
			return errStopped
		}
	}
}

// describe is for the "ballot starting" log line: nothing for a plain
// connection without credentials, as before TLS existed.
func (a *zkAccess) describe() []any {
	if a.tls == nil && a.user == "" && a.aclMode == aclOpen {
		return nil
	}
	attrs := []any{"zookeeper_tls", a.tls != nil}
	if a.user != "" {
		attrs = append(attrs, "zookeeper_user", a.user)
	}
	return append(attrs, "zookeeper_acl", a.aclMode)
}

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

// Next returns the next address; retryStart is true once every address
// was tried since the last success.
func (h *zkHosts) Next() (server string, retryStart bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.curr = (h.curr + 1) % len(h.addrs)
	retryStart = h.curr == h.last
	if h.last == -1 {
		h.last = 0
	}
	return h.addrs[h.curr], retryStart
}

func (h *zkHosts) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = h.curr
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
func (a *zkAccess) dialer(hosts *zkHosts, diag *zkDiag, handshake time.Duration) zk.Dialer {
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
		cfg := a.tls.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = name
		}
		tc := tls.Client(raw, cfg)
		_ = tc.SetDeadline(time.Now().Add(handshake))
		err = tc.Handshake()
		if err != nil {
			raw.Close()
			diag.handshakeFailed(addr, cfg, err, handshake)
			return nil, err
		}
		_ = tc.SetDeadline(time.Time{})
		return &diagConn{Conn: tc, addr: addr, name: name, diag: diag, tls: true, cert: len(cfg.Certificates) > 0}, nil
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
	sort.Strings(order)
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

// handshakeFailed explains a failed TLS handshake.
func (d *zkDiag) handshakeFailed(addr string, cfg *tls.Config, err error, limit time.Duration) {
	var (
		verr *tls.CertificateVerificationError
		rerr tls.RecordHeaderError
		ne   net.Error
	)
	switch {
	case errors.As(err, &verr):
		d.note(addr, fmt.Sprintf("%s: its certificate does not verify for the name %s: %v%s", addr, cfg.ServerName, verr.Err, certHint(verr.Err)))
	case isRemoteAlert(err):
		d.note(addr, fmt.Sprintf("%s refused the TLS handshake: %v%s", addr, err, alertHint(err, len(cfg.Certificates) > 0)))
	case errors.As(err, &rerr):
		d.note(addr, addr+" answered the TLS handshake in plain text: it does not speak TLS on this port (a plain clientPort? use the servers' secureClientPort, or drop --zookeeper-tls)")
	case errors.As(err, &ne) && ne.Timeout():
		d.note(addr, fmt.Sprintf("%s: no TLS handshake within %s", addr, limit))
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isConnReset(err):
		d.note(addr, addr+" closed the connection during the TLS handshake")
		d.probeOnce(addr, func() string {
			if speaksPlainZooKeeper(addr) {
				return addr + " does not speak TLS on this port: it answers in plain text (a plain clientPort? use the servers' secureClientPort, or drop --zookeeper-tls)"
			}
			return ""
		})
	default:
		d.note(addr, fmt.Sprintf("%s: TLS handshake failed: %v", addr, err))
	}
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

func certHint(err error) string {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &unknown):
		return " (check --zookeeper-tls-ca: it must hold the CA that signed the server's certificate)"
	case errors.As(err, &hostname):
		return " (check the host names in --zookeeper-servers, or --zookeeper-tls-server-name)"
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return " (the server's certificate must be renewed)"
	}
	return ""
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

// speaksTLS reports whether the server at addr completes (or gets far
// enough into) a TLS handshake: it answers TLS with a certificate, even
// one this host does not trust, or with a TLS alert.
func speaksTLS(addr, name string) bool {
	raw, err := net.DialTimeout("tcp", addr, probeTimeout)
	if err != nil {
		return false
	}
	defer raw.Close()
	tc := tls.Client(raw, &tls.Config{ServerName: name, MinVersion: tls.VersionTLS12})
	_ = tc.SetDeadline(time.Now().Add(probeTimeout))
	err = tc.Handshake()
	var verr *tls.CertificateVerificationError
	return err == nil || errors.As(err, &verr) || isRemoteAlert(err)
}

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

// ---------------------------------------------------------------------------
// Refusals.

// zkRefusal is a ZooKeeper refusal worded for people: ZooKeeper says only
// "not authenticated" or "invalid ACL", naming neither the node nor what
// to check.
type zkRefusal struct {
	msg string
	err error
}

func (e *zkRefusal) Error() string { return e.msg }
func (e *zkRefusal) Unwrap() error { return e.err }

// zkError rewords an ACL refusal of the request to action path; any other
// error is returned as it is.
func zkError(err error, action, path string) error {
	var r *zkRefusal
	switch {
	case errors.As(err, &r):
		return err
	case errors.Is(err, zk.ErrNoAuth):
		return &zkRefusal{err: err, msg: fmt.Sprintf("not authorized to %s %s: ZooKeeper's ACL does not grant it to this client "+
			"(check --zookeeper-auth-file and the client certificate; ballot info shows the election's ACL)", action, path)}
	case errors.Is(err, zk.ErrInvalidACL):
		return &zkRefusal{err: err, msg: fmt.Sprintf("cannot %s %s with a creator ACL: the server knows no identity of this client "+
			"(no credentials reached it, or it did not ask for the client certificate); use --zookeeper-auth-file, or --zookeeper-acl open", action, path)}
	}
	return err
}

// zkFailed is zkError for a message of its own: "cannot ACTION PATH: err"
// unless it is a refusal, which already names both.
func zkFailed(err error, action, path string) error {
	if r := zkError(err, action, path); r != err {
		return r
	}
	return fmt.Errorf("cannot %s %s: %w", action, path, err)
}

// ---------------------------------------------------------------------------
// ACLs as text.

// permString spells ZooKeeper permissions the way its shell does: cdrwa.
func permString(p int32) string {
	var b strings.Builder
	for _, f := range []struct {
		bit int32
		c   byte
	}{{zk.PermCreate, 'c'}, {zk.PermDelete, 'd'}, {zk.PermRead, 'r'}, {zk.PermWrite, 'w'}, {zk.PermAdmin, 'a'}} {
		if p&f.bit != 0 {
			b.WriteByte(f.c)
		}
	}
	return b.String()
}
