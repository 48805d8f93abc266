// Package zookeeper is ballot's ZooKeeper layer: sessions (a
// candidate's, which must not outlive its expiry; its id, password and
// negotiated timeout read off the wire, never from the client library's
// log lines) and readers' connections (info, watch, leader, the
// operators' commands), and what counts as retryable.
// TLS, credentials and ACLs are in zkaccess.go; the keeper's own tiny
// client in zkwire.go. It knows nothing of elections: package main
// passes in what it needs (Params) and reads what it gets back.
package zookeeper

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/slog"
)

// The errors a session's waits end with; package main compares with them.
var (
	ErrSessionLost = errors.New("ZooKeeper session lost")
	ErrStopped     = errors.New("stopped")
)

// Events are the event attributes of the log lines a session writes
// (ballot's vocabulary, events.go in package main).
type Events struct{ Disconnected, Reconnected slog.Attr }

func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Session is one ZooKeeper session. The go-zookeeper client reconnects
// within a session by itself, but after an expiry it quietly opens a new
// one; ballot treats that as the end of this session.
type Session struct {
	log       *slog.Logger
	Conn      *zk.Conn
	ACL       []zk.ACL // of every node this session creates (nodeACL)
	requested time.Duration
	events    Events

	servers []string
	wire    WireAccess // TLS and credentials, for the keeper's own connection

	mu      sync.Mutex
	id      int64
	timeout time.Duration // negotiated by the server
	passwd  []byte        // the session's password, read off the wire
	pwFor   int64         // the session passwd belongs to

	established   chan struct{} // closed once the client library has the first session
	establishOnce sync.Once
	lost          chan struct{} // closed once the session is known to be gone
	lostOnce      sync.Once
	lostWhy       atomic.Value // string
	changeMu      sync.Mutex
	changed       chan struct{} // closed (and replaced) at every connection state change
	connected     atomic.Bool
	wasOnline     atomic.Bool

	watchMu sync.Mutex
	watches map[string]*pendingWatch // existsWatch's, by path

	writes writes // its elections' quorum writes, gathered (writes.go)

	shared atomic.Bool // its keepers share it (ShareKeepers)
}

// ShareKeepers says the session serves several elections (run crontab),
// each with keepers of its own: its handoffs are Shared. Before the
// first keeper is told one.
func (s *Session) ShareKeepers() { s.shared.Store(true) }

// DialSession connects and waits up to wait for a session, then logs in
// with the credentials, if any; it gives up with ErrStopped as soon as
// stop is closed, so a stop signal is not held up by an unreachable server.
func DialSession(log *slog.Logger, acc *Access, timeout, wait time.Duration, stop <-chan struct{}) (*Session, error) {
	s := &Session{
		log:         log,
		servers:     acc.servers,
		wire:        acc.wire,
		ACL:         acc.ACL,
		events:      acc.events,
		requested:   timeout,
		established: make(chan struct{}),
		lost:        make(chan struct{}),
		changed:     make(chan struct{}),
	}
	conn, diag, err := acc.connect(timeout, zkDebugLogger{log}, logConnects, s.onEvent, s.learned)
	if err != nil {
		return nil, err
	}
	s.Conn = conn
	if err := acc.awaitSession(conn, diag, s.established, wait, stop,
		fmt.Sprintf("no ZooKeeper session with %s within %s", strings.Join(acc.servers, ","), wait)); err != nil {
		return nil, err
	}
	s.mu.Lock()
	id, negotiated := s.id, s.timeout
	s.mu.Unlock()
	log.Info("ZooKeeper session established", "session", SessionHex(id),
		"server", conn.Server(), "session_timeout", negotiated)
	if negotiated != timeout {
		log.Warn("ZooKeeper negotiated a different session timeout than requested; the server allows 2 to 20 times its tickTime",
			"requested", timeout, "negotiated", negotiated)
	}
	return s, nil
}

// learned takes the session's facts from the connect response on the wire
// (sniffConnect), on every connection, just before the client library
// takes it up: the first makes the session (established once the library
// says it has it), a different id means the client replaced it after an
// expiry, and the timeout may be renegotiated.
func (s *Session) learned(r connectReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pwFor, s.passwd = r.sessionID, r.passwd
	switch id, timeout := r.sessionID, r.timeout; {
	case s.id == 0:
		s.id, s.timeout = id, timeout
	case s.id != id:
		s.MarkLost(fmt.Sprintf("the client replaced session %s by %s", SessionHex(s.id), SessionHex(id)))
	case timeout < s.timeout:
		// A member with a lower maxSessionTimeout: the quorum now expires
		// the session sooner than the lease was counted for.
		s.MarkLost(fmt.Sprintf("a reconnect renegotiated the session timeout from %s down to %s", s.timeout, timeout))
	case timeout > s.timeout:
		// Keep counting with the smallest timeout ever negotiated.
		s.log.Warn("a reconnect renegotiated a longer session timeout; leases keep counting with the shorter one",
			"session_timeout", s.timeout, "renegotiated", timeout)
	}
}

// onEvent runs on the client's goroutine for every event; it must not block.
func (s *Session) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		s.connected.Store(true)
		if s.ID() != 0 { // learned off the wire just before
			s.establishOnce.Do(func() { close(s.established) })
		}
		if s.wasOnline.Swap(true) {
			s.log.Info("reconnected to ZooKeeper", s.events.Reconnected, "server", ev.Server)
		}
	case zk.StateDisconnected:
		if s.connected.Swap(false) && !s.IsLost() {
			s.log.Info("connection to ZooKeeper lost", s.events.Disconnected, "server", ev.Server)
		}
	case zk.StateExpired:
		s.connected.Store(false)
		s.MarkLost("session expired")
	}
	// Every waiter must hear of it: a single ping woke only one of them,
	// and the others waited for a change that might never come.
	s.changeMu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.changeMu.Unlock()
}

// nextChange is closed at the next connection state change.
func (s *Session) nextChange() <-chan struct{} {
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	return s.changed
}

func (s *Session) MarkLost(why string) {
	s.lostOnce.Do(func() {
		s.lostWhy.Store(why)
		close(s.lost)
	})
}

func (s *Session) IsLost() bool { return isClosed(s.lost) }

// Lost is closed once the session is known to be gone.
func (s *Session) Lost() <-chan struct{} { return s.lost }

// Connected reports that the client is connected now (the session may
// still be lost: IsLost).
func (s *Session) Connected() bool { return s.connected.Load() }

// Detached is a session that never connected, with id and negotiated
// timeout as given, for the unit tests of what is built on sessions.
func Detached(id int64, timeout time.Duration) *Session {
	return &Session{id: id, timeout: timeout, lost: make(chan struct{})}
}

func (s *Session) LostReason() string {
	if w, ok := s.lostWhy.Load().(string); ok {
		return w
	}
	return "closed"
}

// Handoff is what the keeper needs to end this session should ballot die
// (zkwire.go); nil if the password is not known.
func (s *Session) Handoff() *Handoff {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id == 0 || s.pwFor != s.id || s.IsLost() {
		return nil
	}
	return &Handoff{Servers: s.servers, Access: s.wire, SessionID: s.id, Passwd: s.passwd, TimeoutMs: int32(s.timeout.Milliseconds()),
		Shared: s.shared.Load()}
}

func (s *Session) ID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Timeout is the negotiated session timeout (the smallest, if a reconnect
// negotiated another).
func (s *Session) Timeout() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.timeout
}

// Close ends the session; the server deletes its ephemeral nodes at once
// when it can be reached.
func (s *Session) Close() {
	s.MarkLost("closed")
	s.Conn.Close()
}

// pendingWatch is ExistsWatch's watch on one path: fired is go-zookeeper's
// own channel, which receives the event and is closed at once when it fires
// (or the session ends), so every waiter wakes; mu is held while it is read
// or armed.
type pendingWatch struct {
	mu    sync.Mutex
	fired <-chan zk.Event
}

// ExistsWatch is ExistsW with at most one watch pending per path on the
// session. go-zookeeper keeps each watch's channel until its path's next
// event, and has no way to drop one: a node that never changes (the
// pause and step-down controls, read by every new leader) would gather a
// channel per leadership for the session's life (issue 37). While its
// watch is pending, a path is read without a watch and that watch's
// channel returned: the read sees every change before it, the watch
// every change after. For a few fixed paths only: each keeps its entry,
// and a watch on a node that never comes back (a proposal) would stay.
//
// The channel is go-zookeeper's own: it sends the event (the change, or
// EventNotWatching when the session ends) and closes the channel at once,
// under its watchers' lock, so every receiver wakes, the one that gets
// the event and the others on the close. No goroutine a watch (issue 34:
// three a job at rest, 700 for 200 jobs, 8 KiB of stack each).
func (s *Session) ExistsWatch(path string) (exists bool, fired <-chan zk.Event, err error) {
	s.watchMu.Lock()
	if s.watches == nil {
		s.watches = map[string]*pendingWatch{}
	}
	w := s.watches[path]
	if w == nil {
		w = &pendingWatch{}
		s.watches[path] = w
	}
	s.watchMu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fired != nil && !hasFired(w.fired) {
		exists, _, err = s.Conn.Exists(path)
		return exists, w.fired, err
	}
	exists, _, ev, err := s.Conn.ExistsW(path)
	if err != nil {
		return false, nil, err // no watch was set
	}
	w.fired = ev
	return exists, ev, nil
}

// hasFired reports whether a watch's channel has fired. It may take the
// event, never the close that follows it: the other receivers still wake.
func hasFired(ch <-chan zk.Event) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// WatchNode watches a node that should exist until it changes or goes
// (a data watch: getData). A node already gone leaves no watch: ExistsW
// on a missing node arms a watch for its creation, which for a proposal
// (a name never used again) never comes, and go-zookeeper and the server
// keep that watch for the session's life (issue 37: 16 bytes a handover
// in a fast soak, a proposal gone between a listing and its watch).
func (s *Session) WatchNode(path string) (exists bool, ev <-chan zk.Event, err error) {
	_, _, ev, err = s.Conn.GetW(path)
	if errors.Is(err, zk.ErrNoNode) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, err
	}
	return true, ev, nil
}

// WaitOnline waits for the next connection state change; used after a
// request failed because the connection is down.
func (s *Session) WaitOnline(stop <-chan struct{}) error {
	for {
		changed := s.nextChange() // before the check: no change is missed
		if s.connected.Load() {
			return nil
		}
		select {
		case <-changed:
		case <-s.lost:
			return ErrSessionLost
		case <-stop:
			return ErrStopped
		}
	}
}

// Retryable reports whether a request failed only because the connection
// was down; such requests are retried within the session.
func Retryable(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrClosing) || errors.Is(err, zk.ErrSessionMoved)
}

// CreateParents creates path and its missing parents with acl; nodes that
// exist keep theirs.
func CreateParents(conn *zk.Conn, path string, acl []zk.ACL) error {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	p := ""
	for _, part := range parts {
		p += "/" + part
		_, err := conn.Create(p, nil, 0, acl)
		if errors.Is(err, zk.ErrNoAuth) {
			// ZooKeeper checks the parent's ACL before it looks for the
			// node: a node that exists is no refusal.
			if ok, _, e := conn.Exists(p); e == nil && ok {
				continue
			}
		}
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return Error(err, "create", p)
		}
	}
	return nil
}

// zkDebugLogger sends the ZooKeeper client's messages to the log at debug.
// Nothing reads them: a session's facts come off the wire (learned).
type zkDebugLogger struct{ log *slog.Logger }

// clientLogs says whether the client library logs its connects and
// sessions ("connected to", "authenticated: id=…"), for the debug log.
type clientLogs bool

const (
	logConnects   clientLogs = true // a candidate's session: its reconnects matter
	quietConnects clientLogs = false
)

func (l zkDebugLogger) Printf(format string, a ...any) {
	l.log.Debug(fmt.Sprintf(format, a...), "component", "zookeeper-client")
}

// minConnectWait is the least ballot waits for a first session, whatever
// the session timeout: connecting includes a TCP (and TLS) handshake with
// each server tried, which a short timeout such as 1s does not cover.
const minConnectWait = 2 * time.Second

// ConnectWait is how long ballot waits for a first session (and info for
// its reads): the session timeout, at least minConnectWait.
func ConnectWait(sessionTimeout time.Duration) time.Duration {
	return max(sessionTimeout, minConnectWait)
}

// DialReader connects, waits for a session and logs in with the
// credentials, if any. cb, if set, gets every event (on the client's
// goroutine; it must not block).
func DialReader(acc *Access, sessionTimeout time.Duration, log *slog.Logger, cb func(zk.Event), stop <-chan struct{}) (*zk.Conn, error) {
	servers := strings.Join(acc.servers, ",")
	ready := make(chan struct{}, 1)
	conn, diag, err := acc.connect(sessionTimeout, zkDebugLogger{log}, quietConnects, func(ev zk.Event) {
		if ev.Type == zk.EventSession && ev.State == zk.StateHasSession {
			select {
			case ready <- struct{}{}:
			default:
			}
		}
		if cb != nil {
			cb(ev)
		}
	}, nil)
	if err != nil {
		return nil, err
	}
	wait := ConnectWait(sessionTimeout)
	if err := acc.awaitSession(conn, diag, ready, wait, stop,
		fmt.Sprintf("cannot reach ZooKeeper %s: no session within %s", servers, wait)); err != nil {
		return nil, err
	}
	return conn, nil
}

// awaitSession waits up to wait for a first session (ready), then logs
// in with the credentials, if any; it gives up with ErrStopped as soon as
// stop is closed. On any failure it closes conn without waiting for it
// (that may take a second with no server; a connection that never had a
// session leaves nothing to clean up). noSession says what failed when no
// session came in time; the diagnosis of the servers tried is added.
func (a *Access) awaitSession(conn *zk.Conn, diag *zkDiag, ready <-chan struct{}, wait time.Duration, stop <-chan struct{}, noSession string) error {
	t := time.NewTimer(wait)
	defer t.Stop()
	err := ErrStopped
	select {
	case <-ready:
		err = a.login(conn, time.Now().Add(wait), stop)
	case <-t.C:
		err = withDiag(noSession, diag)
	case <-stop:
	}
	if err != nil {
		go conn.Close()
	}
	return err
}
