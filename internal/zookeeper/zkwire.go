package zookeeper

// Just enough of ZooKeeper's wire protocol for the keeper to end a dead
// ballot's session at once: resume the session by id and password, keep it
// alive with pings while the on-demote hook runs, give the baton back (the
// multi-op ballot itself would send, fenced by its proposal), and close
// the session, which deletes its proposal. The successor is then elected in milliseconds instead of after the
// session timeout and the wait for a dropped baton.
//
// The client library exports neither a session's password nor its
// negotiated timeout, nor connects to a given session, so ballot reads
// them as the server sends them: the first frame on every connection is
// the connect response (sniffConnect, parseConnectReply).
//
// Frames are a 4-byte big-endian length, then jute-encoded fields: int32,
// int64, buffers and strings as a 4-byte length and the bytes.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"ballot/internal/slog"
)

const (
	wireOpDelete       = 2
	wireOpSetData      = 5
	wireOpPing         = 11
	wireOpCheck        = 13
	wireOpMulti        = 14
	wireOpAuth         = 100
	wireOpError        = -1 // a failed operation in a multi's reply
	wireOpCloseSession = -11
	wireXidPing        = -2 // the reserved xid of a ping and its reply
	wireXidAuth        = -4 // the reserved xid of an auth packet and its reply

	wireErrRuntimeInconsistency = -2 // an operation of a failed multi that was not the cause
	wireErrNoNode               = -101

	wireStatSize = 68 // a Stat: 6 int64 and 5 int32
)

// WireAccess is how ballot reaches ZooKeeper (zkaccess.go), in a form the
// keeper gets over its control pipe: TLS roots and client certificate as
// bytes, so the keeper reads no file when it finally needs them.
type WireAccess struct {
	TLS        bool
	ServerName string     // "": each server's host as written
	CA         []byte     // PEM; nil: the system's roots
	cert       clientCert // client certificate; none when empty (SetCertFields)
	Digest     []byte     // user:password; nil: none
}

// CertFields spell the client certificate for the keeper's pipe: the
// chain's certificates (DER) in hex, comma-separated, and the key (PKCS
// #8) in hex; "-" for none.
func (a WireAccess) CertFields() (chain, key string) { return encodeCert(a.cert) }

// SetCertFields reads what CertFields wrote; false if it is bad.
func (a *WireAccess) SetCertFields(chain, key string) bool {
	c, ok := decodeCert(chain, key)
	if ok {
		a.cert = c
	}
	return ok
}

// dial connects to addr, with the TLS handshake when configured.
func (a WireAccess) dial(addr string, deadline time.Time) (net.Conn, error) {
	d := &net.Dialer{Deadline: deadline}
	if !a.TLS {
		return d.Dial("tcp", addr)
	}
	return a.dialTLS(d, addr)
}

// Handoff is what a keeper needs to end its ballot's session: the session,
// and the baton's release if ballot holds it.
type Handoff struct {
	Servers   []string
	Access    WireAccess
	SessionID int64
	Passwd    []byte
	TimeoutMs int32

	// The release, fenced by Proposal: while ballot's own proposal exists
	// nobody else can hold the baton, so a late release cannot mark a
	// successor's record (which may be at the same version). "" when no
	// baton is held.
	ReleasePath    string // the handover record
	ReleaseVersion int32
	ReleaseData    []byte
	Proposal       string
	Baton          string
	// Withdraw: the release deletes Proposal instead of only checking it
	// (the same fence: either fails if it is gone), as ballot's own
	// resignation does, so the next in line is woken by the release and
	// not one quorum write later by the session's close. Only for a
	// keeper under which nothing ran (keeperidle.go): what else the
	// session holds (the leader node, which a new leader replaces) goes
	// with the close; a once key's running node would, as seen by a
	// successor woken first, skip that key's retry.
	Withdraw bool

	// Shared: the session serves several elections (run crontab), each
	// with keepers of its own. Each keeper withdraws its own proposal
	// with its release (its successor must not wait for the others), and
	// the session is closed only by the last keeper done with it: one
	// closing it earlier would drop a baton whose keeper has not yet
	// released it (the on-demote hook still running). The keepers take
	// turns on it (internal/keeper, keepershare.go): a connect to a
	// session makes the server drop the session's other connection.
	// Only for elections without a once key (Withdraw).
	Shared bool
}

// SessionOnly is h without its release: what a keeper that holds no
// baton (a run beside another, the session's own keeper) needs to close
// a shared session once every keeper is done.
func (h *Handoff) SessionOnly() *Handoff {
	return &Handoff{Servers: h.Servers, Access: h.Access, SessionID: h.SessionID, Passwd: h.Passwd, TimeoutMs: h.TimeoutMs, Shared: h.Shared}
}

// Timeout is the session timeout the server negotiated.
func (h *Handoff) Timeout() time.Duration { return time.Duration(h.TimeoutMs) * time.Millisecond }

// EndSession resumes the session on the first server that takes it, gives
// the baton back and closes the session, trying the next server if one
// fails midway. An expired session is no error: ZooKeeper has done the
// work (the successor waits for the dropped baton).
func (h *Handoff) EndSession(timeout time.Duration) error {
	return h.EndShared([]*Handoff{h}, timeout, func() bool { return true })
}

// Resume connects to the session on the first server, from the index
// from on, that takes it. Each server gets the session timeout divided by
// the number of servers, as ZooKeeper's Java client bounds its connects
// (ClientCnxn: connectTimeout = sessionTimeout / hosts): a member that
// accepts TCP but never answers cannot use up the time of the others.
// None goes past deadline.
func (h *Handoff) Resume(deadline time.Time, from int) (s *WireSession, at int, err error) {
	if len(h.Servers) == 0 {
		return nil, 0, errors.New("no servers")
	}
	each := h.Timeout() / time.Duration(len(h.Servers))
	var errs []error
	for i := from; i < len(h.Servers); i++ {
		if !time.Now().Before(deadline) {
			errs = append(errs, errors.New("out of time"))
			break
		}
		bound := time.Now().Add(each)
		if bound.After(deadline) {
			bound = deadline
		}
		s, err := h.resumeAt(h.Servers[i], bound)
		if err == nil || errors.Is(err, ErrSessionLost) {
			return s, i, err
		}
		errs = append(errs, fmt.Errorf("%s: %w", h.Servers[i], err))
	}
	if len(errs) == 0 {
		errs = append(errs, errors.New("no server left to try"))
	}
	return nil, 0, errors.Join(errs...)
}

// EndShared gives back each baton of releases (each a Handoff's release,
// Withdraw) on h's session, which other keepers share (Shared), trying
// the next server if one fails midway, as EndSession; then, if last says
// every other keeper is done with the session, closes it. The caller
// holds the session's turn. Each release is its own multi-op: one
// refused (its proposal gone) leaves the others to commit. A release
// whose answer was lost is safe to send again: the first one's commit
// deleted the proposal (Withdraw; without, it moved the record's
// version), which the second's first (second) operation needs, so it
// fails as a whole and changes nothing.
func (h *Handoff) EndShared(releases []*Handoff, timeout time.Duration, last func() bool) error {
	deadline := time.Now().Add(timeout)
	var rs []*Handoff
	for _, r := range releases {
		if r.ReleasePath != "" && r.Proposal != "" {
			rs = append(rs, r)
		}
	}
	releases = rs
	var errs []error
	from := 0
	for range h.Servers {
		s, at, err := h.Resume(deadline, from)
		if err != nil {
			if errors.Is(err, ErrSessionLost) {
				return err
			}
			return errors.Join(append(errs, err)...)
		}
		if len(releases) > 0 {
			if err = s.releaseAll(releases, deadline); err == nil {
				releases = nil
			}
		}
		if err == nil && last() {
			err = s.closeSession(deadline)
		}
		s.Close()
		if err == nil || errors.Is(err, ErrSessionLost) {
			return err
		}
		errs = append(errs, fmt.Errorf("%s: %w", h.Servers[at], err))
		from = at + 1
	}
	return errors.Join(errs...)
}

// Touch connects to the session and drops the connection: the connect
// itself touches the session at the server, as a ping would, so a
// keeper that holds the session's turn only this long keeps it alive
// for the others too (keepershare.go). ErrSessionLost: it is gone.
func (h *Handoff) Touch(deadline time.Time) error {
	s, _, err := h.Resume(deadline, 0)
	if err == nil {
		s.Close()
	}
	return err
}

// WireSession is ballot's session resumed on one connection.
type WireSession struct {
	conn    net.Conn
	xid     int32
	timeout time.Duration // as the server granted it
}

// resumeAt resumes the session on the server at addr (Resume: on the
// first of them that takes it).
func (h *Handoff) resumeAt(addr string, deadline time.Time) (*WireSession, error) {
	conn, err := h.Access.dial(addr, deadline)
	if err != nil {
		return nil, err
	}
	s := &WireSession{conn: conn}
	if err := s.connect(h, deadline); err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

func (s *WireSession) connect(h *Handoff, deadline time.Time) error {
	_ = s.conn.SetDeadline(deadline)
	defer s.conn.SetDeadline(time.Time{})
	var req wireBuf
	req.int32(0) // protocol version
	req.int64(0) // last zxid seen: none, so any member in sync may take it
	req.int32(h.TimeoutMs)
	req.int64(h.SessionID)
	req.buffer(h.Passwd)
	if err := writeFrame(s.conn, req.Bytes()); err != nil {
		return err
	}
	resp, err := readFrame(s.conn)
	if err != nil {
		return err
	}
	reply, err := parseConnectReply(resp)
	if err != nil {
		return err
	}
	if reply.sessionID == 0 || reply.timeout <= 0 {
		return ErrSessionLost // expired: its nodes are gone already
	}
	s.timeout = reply.timeout

	if h.Access.Digest != nil {
		// Before anything else, as the client library does on every
		// connection: the record's ACL may grant only this identity.
		var auth wireBuf
		auth.int32(wireXidAuth)
		auth.int32(wireOpAuth)
		auth.int32(0) // type
		auth.string("digest")
		auth.buffer(h.Access.Digest)
		code, err := wireCall(s.conn, auth.Bytes(), wireXidAuth)
		if err == nil && code != 0 {
			err = fmt.Errorf("credentials refused: error code %d", code)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// call sends one request (body after the header) and waits for its reply
// until deadline.
func (s *WireSession) call(op int32, body []byte, deadline time.Time) (code int32, reply []byte, err error) {
	s.xid++
	var req wireBuf
	req.int32(s.xid)
	req.int32(op)
	req.Write(body)
	_ = s.conn.SetDeadline(deadline)
	defer s.conn.SetDeadline(time.Time{})
	return wireRoundTrip(s.conn, req.Bytes(), s.xid)
}

// ping keeps the session alive (a ping touches it at the server).
func (s *WireSession) ping(deadline time.Time) error {
	var req wireBuf
	req.int32(wireXidPing)
	req.int32(wireOpPing)
	_ = s.conn.SetDeadline(deadline)
	defer s.conn.SetDeadline(time.Time{})
	_, _, err := wireRoundTrip(s.conn, req.Bytes(), wireXidPing)
	return err
}

// Finish gives the baton back, if ballot holds it, and closes the session.
func (s *WireSession) Finish(h *Handoff, deadline time.Time) error {
	if h.ReleasePath != "" && h.Proposal != "" {
		// A refusal (our proposal is gone, or someone else took the
		// baton) is fine: then the record is not ours to mark.
		if _, err := s.release(h, deadline); err != nil {
			return err
		}
	}
	return s.closeSession(deadline)
}

// closeSession ends the session: the server deletes its ephemeral nodes
// and drops its connections. Closed already (by another keeper of a
// shared session), it cannot be resumed: Resume says ErrSessionLost.
func (s *WireSession) closeSession(deadline time.Time) error {
	code, _, err := s.call(wireOpCloseSession, nil, deadline)
	if err == nil && code != 0 {
		err = fmt.Errorf("close-session refused: error code %d", code)
	}
	return err
}

// release is the multi-op ballot itself would send: check our proposal
// (delete it, with Withdraw), mark the record released at the version we
// took it at, delete the baton.
// A baton someone deleted meanwhile is no reason to leave the record
// taken: then it is tried again without the delete.
func (s *WireSession) release(h *Handoff, deadline time.Time) (released bool, err error) {
	withBaton := h.Baton != ""
	for {
		code, reply, err := s.call(wireOpMulti, releaseMulti(h, withBaton), deadline)
		if err != nil {
			return false, err
		}
		released, again, err := releaseAnswer(code, reply, withBaton)
		if !again {
			return released, err
		}
		withBaton = false
	}
}

// releaseAll sends the releases of rs all at once and then reads their
// answers, which ZooKeeper gives a session in order: one round trip (and
// the quorum's fsyncs grouped) for the batons of many jobs, not one each.
// Each is its own multi-op, fenced by its own proposal.
func (s *WireSession) releaseAll(rs []*Handoff, deadline time.Time) error {
	var frames bytes.Buffer
	first := s.xid + 1
	for _, r := range rs {
		s.xid++
		var req wireBuf
		req.int32(s.xid)
		req.int32(wireOpMulti)
		req.Write(releaseMulti(r, r.Baton != ""))
		if err := writeFrame(&frames, req.Bytes()); err != nil {
			return err
		}
	}
	_ = s.conn.SetDeadline(deadline)
	defer s.conn.SetDeadline(time.Time{})
	if _, err := s.conn.Write(frames.Bytes()); err != nil {
		return err
	}
	var again []*Handoff
	for i, r := range rs {
		code, reply, err := readReply(s.conn, first+int32(i))
		if err != nil {
			return err
		}
		_, a, err := releaseAnswer(code, reply, r.Baton != "")
		if err != nil {
			return err
		}
		if a {
			again = append(again, r)
		}
	}
	for _, r := range again {
		if _, err := s.release(r, deadline); err != nil {
			return err
		}
	}
	return nil
}

// releaseMulti is a release's multi-op (release), without the baton's
// delete unless withBaton.
func releaseMulti(h *Handoff, withBaton bool) []byte {
	var m wireBuf
	op := func(typ int32) {
		m.int32(typ)
		m.bool(false) // done
		m.int32(-1)   // err
	}
	if h.Withdraw {
		op(wireOpDelete)
	} else {
		op(wireOpCheck)
	}
	m.string(h.Proposal)
	m.int32(-1)
	op(wireOpSetData)
	m.string(h.ReleasePath)
	m.buffer(h.ReleaseData)
	m.int32(h.ReleaseVersion)
	if withBaton {
		op(wireOpDelete)
		m.string(h.Baton)
		m.int32(-1)
	}
	m.int32(-1) // the end: type -1, done, err -1
	m.bool(true)
	m.int32(-1)
	return m.Bytes()
}

// releaseAnswer reads a release's answer: released, or again: the baton
// was gone, to be sent again without its delete; a refusal otherwise
// (the proposal gone, the record changed) is neither, and no error.
func releaseAnswer(code int32, reply []byte, withBaton bool) (released, again bool, err error) {
	codes, err := multiResults(reply)
	if err != nil {
		return false, false, err
	}
	failed := -1
	for i, c := range codes {
		if c != 0 && c != wireErrRuntimeInconsistency {
			failed = i
			break
		}
	}
	if code == 0 && failed < 0 {
		return true, false, nil
	}
	return false, withBaton && failed == 2 && codes[2] == wireErrNoNode, nil
}

// KeepAlive pings s every third of the session timeout until stop is
// closed, as a client library would. A connection that fails is replaced
// by one to the next server that takes the session, while the session may
// still live: a session timeout after the last answered ping. It returns
// the session's connection, nil if it is lost.
func KeepAlive(log *slog.Logger, h *Handoff, s *WireSession, stop <-chan struct{}) *WireSession {
	t := s.timeout
	tick := time.NewTicker(t / 3)
	defer tick.Stop()
	touched := time.Now()
	for {
		select {
		case <-stop:
			return s
		case <-tick.C:
		}
		sent := time.Now()
		if err := s.ping(sent.Add(t / 3)); err == nil {
			touched = sent
			continue
		}
		s.Close()
		ns, _, err := h.Resume(touched.Add(t), 0)
		if err != nil {
			log.Warn("the on-demote hook outlasts ballot's session, which the keeper cannot keep alive: the baton is dropped, and the next leader may be promoted before the hook ends",
				"error", err)
			return nil
		}
		s, touched = ns, time.Now()
	}
}

// multiResults reads a multi's reply: each operation's error code (0: it
// succeeded).
func multiResults(b []byte) ([]int32, error) {
	r := wireReader{b: b}
	var codes []int32
	for len(r.b) > 0 {
		typ := r.int32()
		done := r.bool()
		errc := r.int32()
		if r.err != nil {
			return nil, r.err
		}
		if done {
			return codes, nil
		}
		switch typ {
		case wireOpError:
			errc = r.int32() // ErrorResponse
		case wireOpSetData:
			r.take(wireStatSize)
		case wireOpCheck, wireOpDelete:
		default:
			return nil, fmt.Errorf("unexpected operation %d in a multi's reply", typ)
		}
		if r.err != nil {
			return nil, r.err
		}
		codes = append(codes, errc)
	}
	return codes, nil
}

// Close drops the connection; the session lives on until it times out.
func (s *WireSession) Close() { s.conn.Close() }

// wireCall sends one request and returns the error code of its reply,
// skipping notifications (xid -1) and pings.
func wireCall(conn net.Conn, req []byte, xid int32) (int32, error) {
	code, _, err := wireRoundTrip(conn, req, xid)
	return code, err
}

// wireRoundTrip sends one request and returns its reply's error code and
// body, skipping notifications (xid -1) and other replies.
func wireRoundTrip(conn net.Conn, req []byte, xid int32) (int32, []byte, error) {
	if err := writeFrame(conn, req); err != nil {
		return 0, nil, err
	}
	return readReply(conn, xid)
}

// readReply reads until the reply to xid, skipping notifications and
// other replies.
func readReply(conn net.Conn, xid int32) (int32, []byte, error) {
	for {
		resp, err := readFrame(conn)
		if err != nil {
			return 0, nil, err
		}
		r := wireReader{b: resp}
		got := r.int32()
		r.int64() // zxid
		code := r.int32()
		if r.err != nil {
			return 0, nil, r.err
		}
		if got == xid {
			return code, r.b, nil
		}
	}
}

func writeFrame(w io.Writer, body []byte) error {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(body)))
	_, err := w.Write(append(n[:], body...))
	return err
}

func readFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > 1<<20 {
		return nil, fmt.Errorf("frame of %d bytes: not ZooKeeper", size)
	}
	b := make([]byte, size)
	_, err := io.ReadFull(r, b)
	return b, err
}

type wireBuf struct{ bytes.Buffer }

// int32 and int64 append big-endian bytes as binary.Write would, without
// its reflection (issue 35: binary size).
func (w *wireBuf) int32(v int32) { w.Write(binary.BigEndian.AppendUint32(nil, uint32(v))) }
func (w *wireBuf) int64(v int64) { w.Write(binary.BigEndian.AppendUint64(nil, uint64(v))) }
func (w *wireBuf) buffer(b []byte) {
	w.int32(int32(len(b)))
	w.Write(b)
}
func (w *wireBuf) string(s string) { w.buffer([]byte(s)) }
func (w *wireBuf) bool(b bool) {
	if b {
		w.WriteByte(1)
	} else {
		w.WriteByte(0)
	}
}

type wireReader struct {
	b   []byte
	err error
}

func (r *wireReader) take(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.err = io.ErrUnexpectedEOF
		return make([]byte, n)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *wireReader) int32() int32 { return int32(binary.BigEndian.Uint32(r.take(4))) }
func (r *wireReader) int64() int64 { return int64(binary.BigEndian.Uint64(r.take(8))) }
func (r *wireReader) bool() bool   { return r.take(1)[0] != 0 }
func (r *wireReader) buffer() []byte {
	n := r.int32()
	if n <= 0 {
		return nil
	}
	return append([]byte(nil), r.take(int(n))...)
}

// connectReply is the server's connect response, the first frame on every
// connection: the session it gave the connection, the session timeout it
// negotiated and the session's password. Session id 0: the session asked
// for has expired.
type connectReply struct {
	sessionID int64
	timeout   time.Duration
	passwd    []byte
}

// parseConnectReply reads a connect response (the frame without its
// length): int32 protocol version, int32 timeout in ms, int64 session id,
// the password as a buffer, then an optional read-only flag.
func parseConnectReply(frame []byte) (connectReply, error) {
	r := wireReader{b: frame}
	r.int32() // protocol version
	ms := r.int32()
	id := r.int64()
	pw := r.buffer()
	if r.err != nil {
		return connectReply{}, fmt.Errorf("a connect response of %d bytes: %w", len(frame), r.err)
	}
	return connectReply{sessionID: id, timeout: time.Duration(ms) * time.Millisecond, passwd: pw}, nil
}

// sniffConnect wraps a dialer so that the connect response the server
// sends on each connection is handed to learned, before the client library
// reads it (a session, not an expired one); the connection is otherwise
// untouched.
func sniffConnect(dial func(network, addr string, timeout time.Duration) (net.Conn, error), learned func(connectReply)) func(network, addr string, timeout time.Duration) (net.Conn, error) {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		c, err := dial(network, addr, timeout)
		if err != nil {
			return nil, err
		}
		return &sniffer{Conn: c, learned: learned}, nil
	}
}

type sniffer struct {
	net.Conn
	learned func(connectReply)

	mu   sync.Mutex
	done bool
	head []byte // what the server sent so far, until the first frame is whole
}

func (s *sniffer) Read(p []byte) (int, error) {
	n, err := s.Conn.Read(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || n == 0 {
		return n, err
	}
	s.head = append(s.head, p[:n]...)
	if len(s.head) < 4 {
		return n, err
	}
	size := int(binary.BigEndian.Uint32(s.head[:4]))
	if size > 1<<16 {
		s.done, s.head = true, nil // not a connect response
		return n, err
	}
	if len(s.head) < 4+size {
		return n, err
	}
	if r, perr := parseConnectReply(s.head[4 : 4+size]); perr == nil && r.sessionID != 0 && r.timeout > 0 {
		s.learned(r)
	}
	s.done, s.head = true, nil
	return n, err
}
