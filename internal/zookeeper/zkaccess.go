package zookeeper

// Reaching ZooKeeper: the servers as written, TLS, digest credentials, and
// the ACL of every node ballot creates. run, info, watch and leader all
// connect through Access.connect and Access.login, so they take the
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
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// Access is how to reach ZooKeeper, built once from the settings.
type Access struct {
	servers  []string     // host:port as written, without the chroot
	tls      *tlsSettings // nil: plain TCP (tls_on.go)
	digest   []byte       // "user:password" from --zookeeper-auth-file; nil: none
	user     string       // the digest user, for logs
	authFile string       // where digest came from, for messages
	aclMode  string       // --zookeeper-acl
	ACL      []zk.ACL     // on every node ballot creates: nodeACL(aclMode)
	events   Events

	// wire is what the keeper needs to reach ZooKeeper the same way,
	// should it have to end the session for a dead ballot (zkwire.go).
	wire WireAccess

	// Warnings to log once a logger exists (a readable auth file, ...)
	Warnings []string
}

// The values of --zookeeper-acl.
const (
	ACLOpen             = "open"
	ACLCreator          = "creator"
	ACLCreatorWorldRead = "creator-world-read"
)

// Params is what reaching ZooKeeper takes: ballot's settings, and how to
// word a bad one.
type Params struct {
	Servers                []string
	ACL                    string // ACLOpen, ACLCreator or ACLCreatorWorldRead
	TLS                    bool
	TLSCA, TLSCert, TLSKey string // files
	TLSServerName          string
	AuthFile               string
	Events                 Events // of the log lines of sessions
	// Source names parameter name as the user gave it (a flag, a
	// variable, a config file's key), for messages; TLSAskedBy is the one
	// that asked for TLS.
	Source     func(name string) string
	TLSAskedBy string
	// Usage makes the error of a bad parameter: ballot exits 2 on it.
	Usage func(format string, a ...any) error
}

// nodeACL is the ACL of every node ballot creates. ZooKeeper expands the
// "auth" scheme into every identity the session authenticated with: its
// digest user, and the subject of its client certificate (x509).
func nodeACL(mode string) []zk.ACL {
	switch mode {
	case ACLCreator:
		return zk.AuthACL(zk.PermAll)
	case ACLCreatorWorldRead:
		return append(zk.AuthACL(zk.PermAll), zk.WorldACL(zk.PermRead)...)
	}
	return zk.WorldACL(zk.PermAll)
}

// maxCredentialFile bounds what is read of a certificate, key or auth file.
const MaxCredentialFile = 1 << 20

// LoadAccess reads the certificate, key and auth files. Every problem
// with them is a *usageError naming the parameter and the file: ballot
// exits 2 before anything connects.
func LoadAccess(p *Params) (*Access, error) {
	a := &Access{servers: p.Servers, aclMode: p.ACL, ACL: nodeACL(p.ACL), events: p.Events}
	if p.TLS {
		if err := a.loadTLS(p); err != nil {
			return nil, err
		}
	}
	if p.AuthFile != "" {
		if err := a.readAuthFile(p); err != nil {
			return nil, err
		}
		if a.tls == nil {
			a.Warnings = append(a.Warnings, "the ZooKeeper credentials travel in clear text without --zookeeper-tls")
		}
	}
	return a, nil
}

// fileError is the usage error for a file a parameter names.
func fileError(p *Params, name, path, reason string) error {
	return p.Usage("%s %q: %s", p.Source(name), path, reason)
}

func readCredentialFile(p *Params, name, path string) ([]byte, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fileError(p, name, path, "no such file")
	case err != nil:
		return nil, fileError(p, name, path, "cannot read it: "+pathErr(err).Error())
	case info.IsDir():
		return nil, fileError(p, name, path, "is a directory, not a file")
	case info.Size() > MaxCredentialFile:
		return nil, fileError(p, name, path, fmt.Sprintf("is %d bytes; at most 1 MiB is read", info.Size()))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fileError(p, name, path, "cannot read it: "+pathErr(err).Error())
	}
	return data, nil
}

// readAuthFile reads user:password from --zookeeper-auth-file. Messages
// never quote the file's content.
func (a *Access) readAuthFile(p *Params) error {
	const name = "zookeeper-auth-file"
	path := p.AuthFile
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && strings.Contains(path, ":") {
		// Most likely the credentials themselves: do not echo them.
		return p.Usage("%s: no such file; it takes the path of a file holding user:password, never the credentials themselves",
			p.Source(name))
	}
	data, err := readCredentialFile(p, name, path)
	if err != nil {
		return err
	}
	text := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	user, password, found := strings.Cut(text, ":")
	bad := func(reason string) error {
		return fileError(p, name, path, reason+"; expected one line user:password")
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
		a.Warnings = append(a.Warnings, fmt.Sprintf("the auth file %s is readable by its group or by others (mode %04o): whoever can read it can act as ZooKeeper user %s; chmod 600 it",
			path, info.Mode().Perm(), user))
	}
	return nil
}

// pathErr is the reason of a *fs.PathError, without the path that the
// message names already.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ---------------------------------------------------------------------------
// Connecting.

// connect starts a client (zk.Connect returns at once and dials in the
// background); the caller waits for a session, then calls login. The
// zkDiag says why no session came, if none does.
func (a *Access) connect(timeout time.Duration, logger zk.Logger, logInfo clientLogs, cb func(zk.Event), learned func(connectReply)) (*zk.Conn, *zkDiag, error) {
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
		zk.WithLogInfo(bool(logInfo)),
		zk.WithEventCallback(cb))
	if err != nil {
		return nil, nil, fmt.Errorf("cannot connect to ZooKeeper %s: %w", strings.Join(a.servers, ","), err)
	}
	return conn, diag, nil
}

// login sends the digest credentials on a new session; the client sends
// them again by itself after every reconnect, before any other request.
// It gives up at deadline or when stop is closed.
func (a *Access) login(conn *zk.Conn, deadline time.Time, stop <-chan struct{}) error {
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
			case !Retryable(err):
				return fmt.Errorf("not authorized: ZooKeeper refused the credentials of user %s from %s: %v", a.user, a.authFile, err)
			}
			// The connection dropped before the answer: send them again
			// once it is back (the request waits for it).
			select {
			case <-time.After(100 * time.Millisecond):
			case <-t.C:
				return fmt.Errorf("ZooKeeper did not answer the credentials of user %s in time", a.user)
			case <-stop:
				return ErrStopped
			}
		case <-t.C:
			return fmt.Errorf("ZooKeeper did not answer the credentials of user %s in time", a.user)
		case <-stop:
			return ErrStopped
		}
	}
}

// Describe is for the "ballot starting" log line: nothing for a plain
// connection without credentials, as before TLS existed.
func (a *Access) Describe() []any {
	if a.tls == nil && a.user == "" && a.aclMode == ACLOpen {
		return nil
	}
	attrs := []any{"zookeeper_tls", a.tls != nil}
	if a.user != "" {
		attrs = append(attrs, "zookeeper_user", a.user)
	}
	return append(attrs, "zookeeper_acl", a.aclMode)
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

// Error rewords an ACL refusal of the request to action path; any other
// error is returned as it is.
func Error(err error, action, path string) error {
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

// Failed is Error for a message of its own: "cannot ACTION PATH: err"
// unless it is a refusal, which already names both.
func Failed(err error, action, path string) error {
	if r := Error(err, action, path); r != err {
		return r
	}
	return fmt.Errorf("cannot %s %s: %w", action, path, err)
}

// ---------------------------------------------------------------------------
// ACLs as text.

// permString spells ZooKeeper permissions the way its shell does: cdrwa.
func PermString(p int32) string {
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
