package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// sniffedSession opens a session as ballot does (DialSession) and returns
// its connection with its handoff as the keeper would get it: id and
// password read off the wire.
func sniffedSession(t *testing.T, c *zkCluster) (*zk.Conn, *zookeeper.Handoff) {
	t.Helper()
	return sniffedSessionVia(t, c, c.Servers())
}

// sniffedSessionVia is sniffedSession with the client library connected
// to servers (a proxy), the handoff to c's. The library's first connection
// is its only one: once a keeper's connection takes the session (the
// server then closes the library's), the library never takes it back, as
// after ballot's death; left free, it would at once (a session opened as
// ballot opens it reconnects without waiting), and the keeper's next
// request would find its connection closed. conn serves until then.
func sniffedSessionVia(t *testing.T, c *zkCluster, servers []string) (*zk.Conn, *zookeeper.Handoff) {
	t.Helper()
	once := newTCPProxy(t, servers)
	acc, err := loadZKAccess(&Settings{ZooKeeperServers: []string{once.Addr()}, ZooKeeperACL: aclOpen})
	if err != nil {
		t.Fatal(err)
	}
	s, err := zookeeper.DialSession(newLogger(io.Discard, "human", slog.LevelError), acc, 2*time.Second, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	conn := s.Conn
	if _, _, err := conn.Exists("/"); err != nil { // the session, as the library has it
		t.Fatal(err)
	}
	once.RefuseNew()
	h := s.Handoff()
	if h == nil || h.SessionID != conn.SessionID() || len(h.Passwd) == 0 {
		t.Fatalf("sniffed session %+v, the client has 0x%x", h, conn.SessionID())
	}
	return conn, &zookeeper.Handoff{Servers: c.Servers(), SessionID: h.SessionID, Passwd: h.Passwd, TimeoutMs: 2000}
}

// takeAs creates what a leader holds: its proposal and baton (ephemeral),
// and the handover record; base must exist.
func takeAs(t *testing.T, conn *zk.Conn, base, record string) {
	t.Helper()
	for _, n := range []struct {
		path  string
		data  string
		flags int32
	}{{base + "/proposal", "", zk.FlagEphemeral}, {base + "/baton", "", zk.FlagEphemeral}, {base + "/handover", record, 0}} {
		if _, err := conn.Create(n.path, []byte(n.data), n.flags, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatalf("create %s: %v", n.path, err)
		}
	}
}

func mkdir(t *testing.T, conn *zk.Conn, path string) {
	t.Helper()
	if _, err := conn.Create(path, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
}

func releaseOf(h *zookeeper.Handoff, base string) {
	h.Proposal, h.ReleasePath, h.Baton = base+"/proposal", base+"/handover", base+"/baton"
	h.ReleaseVersion, h.ReleaseData = 0, []byte("released")
}

// TestWireEndsASessionItDidNotOpen: what the keeper does for a dead ballot.
// A session opened by the client library, whose password was read off the
// wire, is resumed by the tiny client, which gives the baton back (record
// marked, baton deleted) and closes the session: its proposal goes at once.
func TestWireEndsASessionItDidNotOpen(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	conn, h := sniffedSession(t, c)
	mkdir(t, conn, "/e")
	takeAs(t, conn, "/e", "taken")
	releaseOf(h, "/e")

	// A wrong password is refused: the server answers with no session.
	bad := *h
	bad.Passwd = make([]byte, len(h.Passwd))
	if err := bad.EndSession(2 * time.Second); !errors.Is(err, errSessionLost) {
		t.Errorf("a wrong password: %v, want the session refused", err)
	}

	if err := h.EndSession(2 * time.Second); err != nil {
		t.Fatalf("endSession: %v", err)
	}
	other := zkConnect(t, c.Servers(), 2*time.Second)
	for _, n := range []string{"/e/proposal", "/e/baton"} {
		if ok, _, err := other.Exists(n); err != nil || ok {
			t.Errorf("%s: exists=%v err=%v, want it gone", n, ok, err)
		}
	}
	if b, _, err := other.Get("/e/handover"); err != nil || string(b) != "released" {
		t.Errorf("the record: %q, %v; want released", b, err)
	}

	// The session is gone now: a second try says so, and is no error.
	if err := h.EndSession(2 * time.Second); !errors.Is(err, errSessionLost) {
		t.Errorf("ending an ended session: %v, want errSessionLost", err)
	}
}

// TestWireReleaseIsConditional: the release marks only our own take,
// fenced by our proposal; the session is closed in every case.
func TestWireReleaseIsConditional(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	other := zkConnect(t, c.Servers(), 2*time.Second)

	// The record changed since the take (someone else took the baton):
	// left alone. The first server is dead.
	t.Run("record changed", func(t *testing.T) {
		conn, h := sniffedSession(t, c)
		mkdir(t, conn, "/v")
		takeAs(t, conn, "/v", "taken")
		if _, err := conn.Set("/v/handover", []byte("taken by another"), 0); err != nil {
			t.Fatal(err)
		}
		releaseOf(h, "/v")
		h.Servers = append([]string{basicDeadPort(t)}, c.Servers()...)
		if err := h.EndSession(3 * time.Second); err != nil {
			t.Fatalf("endSession (first server dead): %v", err)
		}
		if b, _, _ := other.Get("/v/handover"); string(b) != "taken by another" {
			t.Errorf("the record was overwritten: %q", b)
		}
		if ok, _, _ := other.Exists("/v/proposal"); ok {
			t.Errorf("the session was not closed")
		}
	})

	// An operator deleted our proposal and the record, a successor took
	// the baton and created the record again: at version 0, the version
	// we took ours at. The release changes nothing of the successor's.
	t.Run("proposal gone, record re-created", func(t *testing.T) {
		conn, h := sniffedSession(t, c)
		mkdir(t, conn, "/p")
		takeAs(t, conn, "/p", "taken")
		releaseOf(h, "/p")
		for _, n := range []string{"/p/proposal", "/p/baton", "/p/handover"} {
			if err := other.Delete(n, -1); err != nil {
				t.Fatal(err)
			}
		}
		succ := zkConnect(t, c.Servers(), 2*time.Second)
		if _, err := succ.Create("/p/baton", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		if _, err := succ.Create("/p/handover", []byte("taken by the successor"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		if err := h.EndSession(2 * time.Second); err != nil {
			t.Fatalf("endSession: %v", err)
		}
		if b, st, _ := other.Get("/p/handover"); string(b) != "taken by the successor" || st.Version != 0 {
			t.Errorf("the successor's record: %q at version %d, want it untouched", b, st.Version)
		}
		if ok, st, _ := other.Exists("/p/baton"); !ok || st.EphemeralOwner != succ.SessionID() {
			t.Errorf("the successor's baton is gone")
		}
		if err := h.EndSession(2 * time.Second); !errors.Is(err, errSessionLost) {
			t.Errorf("the session was not closed: %v", err)
		}
	})

	// Someone deleted the baton under a live leader: the record is still
	// ours and is marked released.
	t.Run("baton gone", func(t *testing.T) {
		conn, h := sniffedSession(t, c)
		mkdir(t, conn, "/b")
		takeAs(t, conn, "/b", "taken")
		releaseOf(h, "/b")
		if err := other.Delete("/b/baton", -1); err != nil {
			t.Fatal(err)
		}
		if err := h.EndSession(2 * time.Second); err != nil {
			t.Fatalf("endSession: %v", err)
		}
		if b, _, _ := other.Get("/b/handover"); string(b) != "released" {
			t.Errorf("the record: %q, want released", b)
		}
	})
}

// TestWireWithdrawWakesTheNextInLineWithTheRelease: an idle keeper's
// release (Withdraw) deletes the proposal in the release's own transaction,
// as ballot's resignation does, so the next in line, which watches it, is
// woken by the release and not one quorum write later by the close: the
// election's pzxid (its last child change) is the record's mzxid. Without
// Withdraw the proposal goes with the close, later. The fence is the same:
// a record changed since our take, or a proposal already gone, and the
// release (and so the withdrawal) changes nothing.
func TestWireWithdrawWakesTheNextInLineWithTheRelease(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	other := zkConnect(t, c.Servers(), 2*time.Second)
	for _, withdraw := range []bool{true, false} {
		base := fmt.Sprintf("/w%v", withdraw)
		conn, h := sniffedSession(t, c)
		mkdir(t, conn, base)
		takeAs(t, conn, base, "taken")
		releaseOf(h, base)
		h.Withdraw = withdraw
		if err := h.EndSession(2 * time.Second); err != nil {
			t.Fatalf("endSession (withdraw %v): %v", withdraw, err)
		}
		b, rec, err := other.Get(base + "/handover")
		if err != nil || string(b) != "released" {
			t.Fatalf("withdraw %v: the record %q, %v; want released", withdraw, b, err)
		}
		_, parent, err := other.Get(base)
		if err != nil {
			t.Fatal(err)
		}
		if withRelease := parent.Pzxid == rec.Mzxid; withRelease != withdraw {
			t.Errorf("withdraw %v: the proposal went with the release: %v (pzxid 0x%x, the release's zxid 0x%x)", withdraw, withRelease, parent.Pzxid, rec.Mzxid)
		}
	}

	t.Run("record changed", func(t *testing.T) {
		conn, h := sniffedSession(t, c)
		mkdir(t, conn, "/wv")
		takeAs(t, conn, "/wv", "taken")
		if _, err := conn.Set("/wv/handover", []byte("taken by another"), 0); err != nil {
			t.Fatal(err)
		}
		releaseOf(h, "/wv")
		h.Withdraw = true
		if err := h.EndSession(2 * time.Second); err != nil {
			t.Fatalf("endSession: %v", err)
		}
		if b, _, _ := other.Get("/wv/handover"); string(b) != "taken by another" {
			t.Errorf("the record was overwritten: %q", b)
		}
	})

	t.Run("proposal gone, record re-created", func(t *testing.T) {
		conn, h := sniffedSession(t, c)
		mkdir(t, conn, "/wp")
		takeAs(t, conn, "/wp", "taken")
		releaseOf(h, "/wp")
		h.Withdraw = true
		for _, n := range []string{"/wp/proposal", "/wp/baton", "/wp/handover"} {
			if err := other.Delete(n, -1); err != nil {
				t.Fatal(err)
			}
		}
		succ := zkConnect(t, c.Servers(), 2*time.Second)
		if _, err := succ.Create("/wp/baton", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		if _, err := succ.Create("/wp/handover", []byte("taken by the successor"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		if err := h.EndSession(2 * time.Second); err != nil {
			t.Fatalf("endSession: %v", err)
		}
		if b, st, _ := other.Get("/wp/handover"); string(b) != "taken by the successor" || st.Version != 0 {
			t.Errorf("the successor's record: %q at version %d, want it untouched", b, st.Version)
		}
		if ok, st, _ := other.Exists("/wp/baton"); !ok || st.EphemeralOwner != succ.SessionID() {
			t.Errorf("the successor's baton is gone")
		}
	})
}

// TestWireServerThatNeverAnswers: a first member that accepts connections
// but never answers gets only its share of the session timeout; the
// release still happens on the second.
func TestWireServerThatNeverAnswers(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			cn, err := mute.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, cn) // accepted, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, cn := range held {
			cn.Close()
		}
		mu.Unlock()
	}()

	conn, h := sniffedSession(t, c)
	mkdir(t, conn, "/m")
	takeAs(t, conn, "/m", "taken")
	releaseOf(h, "/m")
	h.Servers = append([]string{mute.Addr().String()}, c.Servers()...)
	start := time.Now()
	if err := h.EndSession(h.Timeout()); err != nil {
		t.Fatalf("endSession with a mute first server: %v", err)
	}
	took := time.Since(start)
	mu.Lock()
	accepted := len(held)
	mu.Unlock()
	if accepted == 0 {
		t.Errorf("the mute server was never tried")
	}
	other := zkConnect(t, c.Servers(), 2*time.Second)
	if b, _, _ := other.Get("/m/handover"); string(b) != "released" {
		t.Errorf("the record: %q, want released", b)
	}
	if ok, _, _ := other.Exists("/m/proposal"); ok {
		t.Errorf("the session was not closed")
	}
	t.Logf("released %s after the start, the mute server holding %s of it", took.Round(time.Millisecond), h.Timeout()/2)
}

// TestWireKeepAlive: the keeper keeps a session alive on its own while
// ballot's connection is silent (ballot is dead), for two session
// timeouts; and says so when it cannot, because no server answers.
func TestWireKeepAlive(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	proxy := newTCPProxy(t, c.Servers())
	conn, h := sniffedSessionVia(t, c, []string{proxy.Addr()})
	if _, err := conn.Create("/ka", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	s, _, err := h.Resume(time.Now().Add(h.Timeout()), 0)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	proxy.Blackhole(true) // the library's pings go nowhere now
	var out syncBuffer
	log := newLogger(&out, "human", slog.LevelInfo)
	stop := make(chan struct{})
	kept := make(chan *zookeeper.WireSession, 1)
	go func() { kept <- zookeeper.KeepAlive(log, h, s, stop) }()
	time.Sleep(2 * h.Timeout())
	close(stop)
	s = <-kept
	other := zkConnect(t, c.Servers(), 2*time.Second)
	if ok, _, _ := other.Exists("/ka"); !ok || s == nil {
		t.Fatalf("after two session timeouts of pings: session kept %v, its node exists %v\n%s", s != nil, ok, out.String())
	}
	if err := s.Finish(h, time.Now().Add(h.Timeout())); err != nil {
		t.Fatalf("closing the kept session: %v", err)
	}
	s.Close()
	if ok, _, _ := other.Exists("/ka"); ok {
		t.Errorf("the session was not closed")
	}

	// No server answers any more: keepAlive gives up and says so.
	_, h2 := sniffedSession(t, c)
	s2, _, err := h2.Resume(time.Now().Add(h2.Timeout()), 0)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	c.Kill(0)
	stop2 := make(chan struct{})
	defer close(stop2)
	gaveUp := make(chan *zookeeper.WireSession, 1)
	go func() { gaveUp <- zookeeper.KeepAlive(log, h2, s2, stop2) }()
	select {
	case got := <-gaveUp:
		if got != nil {
			t.Errorf("keepAlive kept a session no server answers for")
		}
	case <-time.After(2 * h2.Timeout()):
		t.Fatalf("keepAlive did not give up within two session timeouts of the servers' end")
	}
	if !strings.Contains(out.String(), "outlasts ballot's session") {
		t.Errorf("keepAlive gave up without saying so:\n%s", out.String())
	}
}

// TestWireSharedReleaseResent: a shared session's keeper gives its
// baton back without closing the session (others' keepers may still be
// at work), and its release sent again, as after a lost answer, changes
// nothing: not the record it released, nor, once a successor took, the
// successor's record and baton (the release's first operation deletes
// the proposal, gone since the first commit). The session is closed
// only when last says so; a second close finds it gone.
func TestWireSharedReleaseResent(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	other := zkConnect(t, c.Servers(), 2*time.Second)
	conn, h := sniffedSession(t, c)
	base := fmt.Sprintf("/wshared-%d", time.Now().UnixNano())
	mkdir(t, conn, base)
	takeAs(t, conn, base, "taken")
	if _, err := conn.Create(base+"/leader", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	releaseOf(h, base)
	h.Shared, h.Withdraw = true, true
	notLast := func() bool { return false }
	if err := h.EndShared([]*zookeeper.Handoff{h}, 2*time.Second, notLast); err != nil {
		t.Fatalf("the release: %v", err)
	}
	if b, st, err := other.Get(base + "/handover"); err != nil || string(b) != "released" || st.Version != 1 {
		t.Fatalf("the record: %q, %v; want released", b, err)
	}
	for _, n := range []string{"/proposal", "/baton"} {
		if ok, _, _ := other.Exists(base + n); ok {
			t.Errorf("%s outlived the release", n)
		}
	}
	if ok, _, _ := other.Exists(base + "/leader"); !ok {
		t.Fatalf("the session was closed, not being the last keeper")
	}

	if err := h.EndShared([]*zookeeper.Handoff{h}, 2*time.Second, notLast); err != nil {
		t.Fatalf("the release resent: %v", err)
	}
	if b, st, _ := other.Get(base + "/handover"); string(b) != "released" || st.Version != 1 {
		t.Errorf("the resent release changed the record: %q at version %d", b, st.Version)
	}

	succ := zkConnect(t, c.Servers(), 2*time.Second)
	if _, err := succ.Multi(&zk.CreateRequest{Path: base + "/baton", Acl: zk.WorldACL(zk.PermAll), Flags: zk.FlagEphemeral},
		&zk.SetDataRequest{Path: base + "/handover", Data: []byte("taken by the successor"), Version: 1}); err != nil {
		t.Fatal(err)
	}
	last := 0
	if err := h.EndShared([]*zookeeper.Handoff{h}, 2*time.Second, func() bool { last++; return true }); err != nil {
		t.Fatalf("the release resent after the successor's take, then the close: %v", err)
	}
	if b, st, _ := other.Get(base + "/handover"); string(b) != "taken by the successor" || st.Version != 2 {
		t.Errorf("the successor's record: %q at version %d, want it untouched", b, st.Version)
	}
	if ok, st, _ := other.Exists(base + "/baton"); !ok || st.EphemeralOwner != succ.SessionID() {
		t.Errorf("the successor's baton is gone")
	}
	if ok, _, _ := other.Exists(base + "/leader"); ok || last != 1 {
		t.Errorf("the last keeper did not close the session (asked %d times)", last)
	}
	if err := h.EndShared(nil, 2*time.Second, func() bool { return true }); !errors.Is(err, errSessionLost) {
		t.Errorf("closing it again: %v, want errSessionLost", err)
	}
}

// TestWireReleasesAllAtOnce: a shared session's keeper sends the
// releases of several elections together (releaseAll), each its own
// fenced multi-op: one whose baton someone deleted is sent again without
// that delete and still marks its record; one whose proposal is gone is
// refused and changes nothing; the others' commit regardless.
func TestWireReleasesAllAtOnce(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	other := zkConnect(t, c.Servers(), 2*time.Second)
	conn, h := sniffedSession(t, c)
	root := fmt.Sprintf("/wall-%d", time.Now().UnixNano())
	mkdir(t, conn, root)
	var rs []*zookeeper.Handoff
	for i := range 4 {
		base := fmt.Sprintf("%s/e%d", root, i)
		mkdir(t, conn, base)
		takeAs(t, conn, base, "taken")
		r := h.SessionOnly()
		releaseOf(r, base)
		r.Withdraw = true
		rs = append(rs, r)
	}
	if err := other.Delete(root+"/e1/baton", -1); err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(root+"/e2/proposal", -1); err != nil {
		t.Fatal(err)
	}
	if err := h.EndShared(rs, 2*time.Second, func() bool { return false }); err != nil {
		t.Fatalf("the releases: %v", err)
	}
	for i, want := range []string{"released", "released", "taken", "released"} {
		b, _, err := other.Get(fmt.Sprintf("%s/e%d/handover", root, i))
		if err != nil || string(b) != want {
			t.Errorf("election %d's record: %q, %v; want %s", i, b, err, want)
		}
	}
	if ok, _, _ := other.Exists(root + "/e2/baton"); !ok {
		t.Errorf("election 2's baton, its proposal gone, was deleted by a refused release")
	}
}
