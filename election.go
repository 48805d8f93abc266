package main

// The ZooKeeper leader-election recipe, as ballot uses it:
//
//   - a session is one zk.Conn; once it is known to be lost (expired, or the
//     client silently replaced it) it is closed and never used again;
//   - a candidate makes one ephemeral-sequential proposal in a session; the
//     lowest sequence number leads; every other candidate watches only its
//     predecessor, so a handover wakes one candidate, not all of them;
//   - a leader holds a lease: the send time of the last request the server
//     answered, plus the negotiated session timeout. The server cannot expire
//     the session before the lease ends, so nobody else can lead before
//     then; the leader's command must be gone before it ends.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

var (
	errSessionLost  = errors.New("ZooKeeper session lost")
	errProposalGone = errors.New("proposal node is gone")
	errStopped      = errors.New("stopped")
)

// session is one ZooKeeper session. The go-zookeeper client reconnects
// within a session by itself, but after an expiry it quietly opens a new
// one; ballot treats that as the end of this session.
type session struct {
	log       *slog.Logger
	conn      *zk.Conn
	requested time.Duration

	servers []string

	mu      sync.Mutex
	id      int64
	timeout time.Duration // negotiated by the server
	passwd  []byte        // the session's password, read off the wire
	pwFor   int64         // the session passwd belongs to

	established chan struct{} // closed at the first authenticated session
	lost        chan struct{} // closed once the session is known to be gone
	lostOnce    sync.Once
	lostWhy     atomic.Value  // string
	changed     chan struct{} // pinged on every connection state change
	connected   atomic.Bool
	wasOnline   atomic.Bool
}

// dialSession connects and waits up to wait for a session; it gives up with
// errStopped as soon as stop is closed, so a stop signal is not held up by
// an unreachable server.
func dialSession(log *slog.Logger, servers []string, timeout, wait time.Duration, stop <-chan struct{}) (*session, error) {
	s := &session{
		log:         log,
		servers:     servers,
		requested:   timeout,
		established: make(chan struct{}),
		lost:        make(chan struct{}),
		changed:     make(chan struct{}, 1),
	}
	conn, _, err := zk.Connect(servers, timeout,
		zk.WithDialer(sniffConnect(net.DialTimeout, s.learnPasswd)),
		zk.WithLogger(zkLogger{s}),
		zk.WithLogInfo(true),
		zk.WithEventCallback(s.onEvent))
	if err != nil {
		return nil, fmt.Errorf("cannot connect to ZooKeeper %s: %w", strings.Join(servers, ","), err)
	}
	s.conn = conn
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-s.established:
	case <-t.C:
		go conn.Close() // never connected: nothing to clean up, do not wait for it
		return nil, fmt.Errorf("no ZooKeeper session with %s within %s", strings.Join(servers, ","), wait)
	case <-stop:
		go conn.Close()
		return nil, errStopped
	}
	s.mu.Lock()
	id, negotiated := s.id, s.timeout
	s.mu.Unlock()
	log.Info("ZooKeeper session established", "session", fmt.Sprintf("0x%x", id),
		"server", conn.Server(), "session_timeout", negotiated)
	if negotiated != timeout {
		log.Warn("ZooKeeper negotiated a different session timeout than requested; the server allows 2 to 20 times its tickTime",
			"requested", timeout, "negotiated", negotiated)
	}
	return s, nil
}

// zkLogger routes the client's log lines to debug level, and reads the one
// line that tells the negotiated timeout and the session id (the client
// exports neither reliably).
type zkLogger struct{ s *session }

func (l zkLogger) Printf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	var id int64
	var ms int
	if n, _ := fmt.Sscanf(msg, "authenticated: id=%d, timeout=%d", &id, &ms); n == 2 {
		l.s.authenticated(id, time.Duration(ms)*time.Millisecond)
	}
	l.s.log.Debug(msg, "component", "zookeeper-client")
}

func (s *session) authenticated(id int64, timeout time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.id == 0:
		s.id, s.timeout = id, timeout
		close(s.established)
	case s.id != id:
		s.markLost(fmt.Sprintf("the client replaced session 0x%x by 0x%x", s.id, id))
	case timeout < s.timeout:
		// A member with a lower maxSessionTimeout: the quorum now expires
		// the session sooner than the lease was counted for.
		s.markLost(fmt.Sprintf("a reconnect renegotiated the session timeout from %s down to %s", s.timeout, timeout))
	case timeout > s.timeout:
		// Keep counting with the smallest timeout ever negotiated.
		s.log.Warn("a reconnect renegotiated a longer session timeout; leases keep counting with the shorter one",
			"session_timeout", s.timeout, "renegotiated", timeout)
	}
}

// onEvent runs on the client's goroutine for every event; it must not block.
func (s *session) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		s.connected.Store(true)
		if s.wasOnline.Swap(true) {
			s.log.Info("reconnected to ZooKeeper", "server", ev.Server)
		}
	case zk.StateDisconnected:
		if s.connected.Swap(false) && !s.isLost() {
			s.log.Info("connection to ZooKeeper lost", "server", ev.Server)
		}
	case zk.StateExpired:
		s.connected.Store(false)
		s.markLost("session expired")
	}
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *session) markLost(why string) {
	s.lostOnce.Do(func() {
		s.lostWhy.Store(why)
		close(s.lost)
	})
}

func (s *session) isLost() bool {
	select {
	case <-s.lost:
		return true
	default:
		return false
	}
}

func (s *session) lostReason() string {
	if w, ok := s.lostWhy.Load().(string); ok {
		return w
	}
	return "closed"
}

func (s *session) learnPasswd(id int64, passwd []byte) {
	s.mu.Lock()
	s.pwFor, s.passwd = id, passwd
	s.mu.Unlock()
}

// handoff is what the keeper needs to end this session should ballot die
// (zkwire.go); nil if the password is not known.
func (s *session) handoff() *handoff {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id == 0 || s.pwFor != s.id || s.isLost() {
		return nil
	}
	return &handoff{Servers: s.servers, SessionID: s.id, Passwd: s.passwd, TimeoutMs: int32(s.timeout.Milliseconds())}
}

func (s *session) ID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// Timeout is the negotiated session timeout (the smallest, if a reconnect
// negotiated another).
func (s *session) Timeout() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.timeout
}

// Close ends the session; the server deletes its ephemeral nodes at once
// when it can be reached.
func (s *session) Close() {
	s.markLost("closed")
	s.conn.Close()
}

// waitOnline waits for the next connection state change; used after a
// request failed because the connection is down.
func (s *session) waitOnline(stop <-chan struct{}) error {
	for !s.connected.Load() {
		select {
		case <-s.changed:
		case <-s.lost:
			return errSessionLost
		case <-stop:
			return errStopped
		}
	}
	return nil
}

// retryable reports whether a request failed only because the connection
// was down; such requests are retried within the session.
func retryable(err error) bool {
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrClosing) || errors.Is(err, zk.ErrSessionMoved)
}

// propose creates this candidate's proposal node. The create is protected by
// a random id in the node name: when the answer is lost with the connection,
// the node may exist anyway, and is found again instead of made twice.
func propose(log *slog.Logger, s *session, basePath, candidateID, mode string, stop <-chan struct{}) (*candidate, error) {
	host, _ := os.Hostname()
	status := proposalData{
		CandidateID:      candidateID,
		Host:             host,
		PID:              os.Getpid(),
		ProposalTime:     time.Now().UTC(),
		SessionTimeout:   s.Timeout().String(),
		SessionTimeoutMs: s.Timeout().Milliseconds(),
		Version:          version,
		Mode:             mode,
		State:            stateFollowing,
	}
	data := status.encode()
	var guid [16]byte
	_, _ = rand.Read(guid[:])
	tag := "_c_" + hex.EncodeToString(guid[:]) + "-"
	var node string
	created := false // this candidate created the election path: nobody led on it before
	for node == "" {
		if s.isLost() {
			return nil, errSessionLost
		}
		p, err := s.conn.Create(basePath+"/"+tag+proposalPrefix, data, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		switch {
		case err == nil:
			node = p
		case errors.Is(err, zk.ErrNoNode):
			if dir := path.Dir(basePath); dir != "/" {
				if err := createParents(s.conn, dir); err != nil && !retryable(err) {
					return nil, fmt.Errorf("cannot create the election path %s: %w", basePath, err)
				}
			}
			_, err := s.conn.Create(basePath, nil, 0, zk.WorldACL(zk.PermAll))
			switch {
			case err == nil:
				created = true
			case !errors.Is(err, zk.ErrNodeExists) && !retryable(err):
				return nil, fmt.Errorf("cannot create the election path %s: %w", basePath, err)
			}
		case retryable(err):
			// The create may have happened: never create again before a
			// listing has shown our tag absent, or this session would hold
			// two proposals, the lower one led by nobody.
			found, err := findTagged(s, basePath, tag, stop)
			if err != nil {
				return nil, err
			}
			node = found
		case errors.Is(err, zk.ErrSessionExpired):
			return nil, errSessionLost
		default:
			return nil, fmt.Errorf("cannot create a proposal under %s: %w", basePath, err)
		}
	}
	c := &candidate{log: log, s: s, basePath: basePath, id: candidateID, node: node, createdElection: created, done: make(chan struct{})}
	c.seq, _ = proposalSeq(node[strings.LastIndexByte(node, '/')+1:])
	for {
		ok, stat, err := s.conn.Exists(node)
		if err == nil && !ok {
			return nil, errProposalGone
		}
		if err == nil {
			c.token = stat.Czxid
			break
		}
		if !retryable(err) {
			return nil, err
		}
		if err := s.waitOnline(stop); err != nil {
			return nil, err
		}
	}
	log.Info("proposal made", "proposal", node, "fencing_token", c.token)
	c.pub = newPublisher(c, status)
	return c, nil
}

// findTagged lists the election until the listing succeeds and returns our
// tagged proposal, "" if the create did not happen. Should there be two,
// the lower is kept and the other deleted.
func findTagged(s *session, basePath, tag string, stop <-chan struct{}) (string, error) {
	for {
		if err := s.waitOnline(stop); err != nil {
			return "", err
		}
		children, _, err := s.conn.Children(basePath)
		if err != nil {
			if retryable(err) {
				continue
			}
			if errors.Is(err, zk.ErrSessionExpired) {
				return "", errSessionLost
			}
			return "", err
		}
		var mine []string
		for _, c := range sortedProposals(children) {
			if strings.HasPrefix(c, tag) {
				mine = append(mine, c)
			}
		}
		if len(mine) == 0 {
			return "", nil
		}
		for _, extra := range mine[1:] {
			_ = s.conn.Delete(basePath+"/"+extra, -1)
		}
		return basePath + "/" + mine[0], nil
	}
}

func createParents(conn *zk.Conn, path string) error {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	p := ""
	for _, part := range parts {
		p += "/" + part
		_, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
	}
	return nil
}
