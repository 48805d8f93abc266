package main

// Just enough of ZooKeeper's wire protocol for the keeper to end a dead
// ballot's session at once: resume the session by id and password, give
// the baton back (one setData on the handover record, with the version
// ballot took it at), and close the session, which deletes its proposal and
// baton. The successor is then elected in milliseconds instead of after the
// session timeout and the wait for a dropped baton.
//
// The client library neither exports a session's password nor connects to
// a given session, so ballot reads the password as the server sends it: the
// first frame on every connection is the connect response (sniffConnect).
//
// Frames are a 4-byte big-endian length, then jute-encoded fields: int32,
// int64, buffers and strings as a 4-byte length and the bytes.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

const (
	wireOpSetData      = 5
	wireOpCloseSession = -11
)

// handoff is what a keeper needs to end its ballot's session: the session,
// and the baton's release if ballot holds it.
type handoff struct {
	Servers   []string
	SessionID int64
	Passwd    []byte
	TimeoutMs int32

	ReleasePath    string // the handover record; "" when no baton is held
	ReleaseVersion int32
	ReleaseData    []byte
}

// stampRelease dates the release record now, as the keeper writes it.
func (h *handoff) stampRelease() {
	var rec handoverRecord
	if h.ReleasePath == "" || json.Unmarshal(h.ReleaseData, &rec) != nil {
		return
	}
	rec.At = time.Now().UTC()
	h.ReleaseData, _ = json.Marshal(rec)
}

// endSession resumes the session on the first server that takes it, gives
// the baton back and closes the session. An expired session is no error:
// ZooKeeper has done the work (the successor waits for the dropped baton).
func (h *handoff) endSession(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var errs []error
	for _, addr := range h.Servers {
		if time.Now().After(deadline) {
			break
		}
		err := h.endSessionAt(addr, deadline)
		if err == nil || errors.Is(err, errSessionLost) {
			return err
		}
		errs = append(errs, fmt.Errorf("%s: %w", addr, err))
	}
	return errors.Join(errs...)
}

func (h *handoff) endSessionAt(addr string, deadline time.Time) error {
	conn, err := net.DialTimeout("tcp", addr, time.Until(deadline))
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(deadline)

	var req wireBuf
	req.int32(0) // protocol version
	req.int64(0) // last zxid seen: none, so any member in sync may take it
	req.int32(h.TimeoutMs)
	req.int64(h.SessionID)
	req.buffer(h.Passwd)
	if err := writeFrame(conn, req.Bytes()); err != nil {
		return err
	}
	resp, err := readFrame(conn)
	if err != nil {
		return err
	}
	r := wireReader{b: resp}
	r.int32() // protocol version
	timeout := r.int32()
	id := r.int64()
	if r.err != nil {
		return r.err
	}
	if id == 0 || timeout <= 0 {
		return errSessionLost // expired: its nodes are gone already
	}

	xid := int32(1)
	if h.ReleasePath != "" {
		var sd wireBuf
		sd.int32(xid)
		sd.int32(wireOpSetData)
		sd.string(h.ReleasePath)
		sd.buffer(h.ReleaseData)
		sd.int32(h.ReleaseVersion)
		// A refusal (someone else took the baton: a version conflict) is
		// fine: then the record is not ours to mark.
		if _, err := wireCall(conn, sd.Bytes(), xid); err != nil {
			return err
		}
		xid++
	}
	var cs wireBuf
	cs.int32(xid)
	cs.int32(wireOpCloseSession)
	code, err := wireCall(conn, cs.Bytes(), xid)
	if err == nil && code != 0 {
		err = fmt.Errorf("close-session refused: error code %d", code)
	}
	return err
}

// wireCall sends one request and returns the error code of its reply,
// skipping notifications (xid -1) and pings.
func wireCall(conn net.Conn, req []byte, xid int32) (int32, error) {
	if err := writeFrame(conn, req); err != nil {
		return 0, err
	}
	for {
		resp, err := readFrame(conn)
		if err != nil {
			return 0, err
		}
		r := wireReader{b: resp}
		got := r.int32()
		r.int64() // zxid
		code := r.int32()
		if r.err != nil {
			return 0, r.err
		}
		if got == xid {
			return code, nil
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

func (w *wireBuf) int32(v int32) { _ = binary.Write(w, binary.BigEndian, v) }
func (w *wireBuf) int64(v int64) { _ = binary.Write(w, binary.BigEndian, v) }
func (w *wireBuf) buffer(b []byte) {
	w.int32(int32(len(b)))
	w.Write(b)
}
func (w *wireBuf) string(s string) { w.buffer([]byte(s)) }

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
func (r *wireReader) buffer() []byte {
	n := r.int32()
	if n <= 0 {
		return nil
	}
	return append([]byte(nil), r.take(int(n))...)
}

// sniffConnect wraps a dialer so that the session id and password the
// server sends in its connect response on each connection are handed to
// learned; the connection is otherwise untouched.
func sniffConnect(dial func(network, addr string, timeout time.Duration) (net.Conn, error), learned func(id int64, passwd []byte)) func(network, addr string, timeout time.Duration) (net.Conn, error) {
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
	learned func(id int64, passwd []byte)

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
	r := wireReader{b: s.head[4 : 4+size]}
	r.int32() // protocol version
	r.int32() // timeout
	id := r.int64()
	pw := r.buffer()
	if r.err == nil && id != 0 {
		s.learned(id, pw)
	}
	s.done, s.head = true, nil
	return n, err
}
