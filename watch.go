package main

// ballot watch: the election as `ballot info` prints it, then one line per
// change, until SIGINT/SIGTERM.
//
// Driven by ZooKeeper watches, never by polling: a children watch on the
// base path (joins, leaves, handovers), a data watch on the leader's
// proposal node (its state: command started or exited, resigning) and on
// the cron record; an exists watch on the base path while it does not
// exist. A watch fires once; only the one that fired is re-armed. After a
// reconnect everything is read again and compared with what was known;
// after a session expiry a new connection (and session) is opened.
//
// Session events arrive through zk.WithEventCallback (the client's event
// channel drops events beyond 6). The callback must not block: every
// output line goes through a queue that one goroutine writes out.

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// ---------------------------------------------------------------------------
// The watcher.

type watcher struct {
	set  *Settings
	zk   *zookeeper.Access
	log  *slog.Logger
	out  *linePrinter
	stop chan struct{}
	wake chan struct{} // pinged by the session callback

	mu        sync.Mutex
	conn      *zk.Conn
	gen       int  // of conn; events of older connections are ignored
	connected bool // has a session now
	lost      bool // "connection lost" printed, "reconnected" not yet
	expired   bool
	needFull  bool // read everything again (after a reconnect)
	stopping  bool
	closed    chan struct{} // closed once the last connection is closed

	// Main loop only. A nil channel is a watch not armed.
	childW, leaderW, cronW, baseW <-chan zk.Event
	leaderPath                    string
	prev                          *electionSnapshot
}

func (w *watcher) emit(ev watchEvent) {
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC().Truncate(time.Millisecond)
	}
	if w.set.Output == "json" {
		b, _ := jsonlite.Marshal(ev)
		w.out.Print(string(b) + "\n")
		return
	}
	if ev.Event == evSnapshot && ev.Election != nil {
		var b strings.Builder
		writeInfoHuman(&b, ev.Election)
		w.out.Print(b.String())
		return
	}
	w.out.Print(ev.Time.Format(humanTime) + " " + ev.Message + "\n")
}

// callback handles session events of connection gen.
func (w *watcher) callback(gen int) func(zk.Event) {
	return func(ev zk.Event) {
		if ev.Type != zk.EventSession {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if gen != w.gen || w.stopping || w.expired {
			return
		}
		switch ev.State {
		case zk.StateHasSession:
			if w.lost {
				w.lost = false
				w.needFull = true
				w.emit(watchEvent{Event: evReconnected, Server: ev.Server, Message: "reconnected to ZooKeeper " + ev.Server})
			}
			w.connected = true
		case zk.StateDisconnected:
			if w.connected {
				w.connected = false
				w.lost = true
				w.emit(watchEvent{Event: evConnectionLost, Server: ev.Server, Message: "connection to ZooKeeper lost"})
			}
		case zk.StateExpired:
			w.expired = true
			w.emit(watchEvent{Event: evSessionExpired, Message: "session expired; starting a new one"})
		default:
			return
		}
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// dial opens a new connection and session, replacing the current one.
func (w *watcher) dial() error {
	w.mu.Lock()
	old := w.conn
	w.gen++
	gen := w.gen
	w.conn, w.connected, w.lost, w.expired = nil, false, false, false
	w.mu.Unlock()
	if old != nil {
		go old.Close()
	}
	w.childW, w.leaderW, w.cronW, w.baseW, w.leaderPath = nil, nil, nil, nil, ""
	conn, err := zookeeper.DialReader(w.zk, w.set.SessionTimeout, w.log, w.callback(gen), w.stop)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.gen++ // ignore whatever the abandoned connection still reports
		return err
	}
	if w.stopping {
		go conn.Close()
		return errStopped
	}
	w.conn, w.connected = conn, true
	return nil
}

func (w *watcher) shutdown() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopping {
		return
	}
	w.stopping = true
	close(w.stop)
	if conn := w.conn; conn != nil {
		go func() {
			conn.Close() // also unblocks a request waiting for a reconnect
			close(w.closed)
		}()
	} else {
		close(w.closed)
	}
}

func (w *watcher) stopped() bool { return isClosed(w.stop) }

func (w *watcher) current() *zk.Conn {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.conn
}

// read reads the election, arming the watches that are not armed. Nodes
// whose watch has not fired are taken from the last snapshot unless full.
func (w *watcher) read(full bool) (*electionSnapshot, error) {
	conn := w.current()
	base := w.set.BasePath
	var cached map[string]*snapNode
	if w.prev != nil && !full {
		cached = map[string]*snapNode{}
		for _, n := range w.prev.proposals {
			cached[n.name] = n
		}
		for _, n := range []*snapNode{w.prev.cron, w.prev.ackNode} {
			if n != nil {
				cached[n.name] = n
			}
		}
		for _, n := range w.prev.others {
			cached[n.name] = n
		}
	}
	return readSnapshot(snapshotSource{
		children: func() ([]string, bool, error) { return w.listWatched(conn, base) },
		node: func(name string, lowest bool) (*snapNode, error) {
			p := base + "/" + name
			var (
				raw  []byte
				stat *zk.Stat
				ev   <-chan zk.Event
				err  error
			)
			switch {
			case lowest && (w.leaderW == nil || w.leaderPath != p):
				if raw, stat, ev, err = conn.GetW(p); err == nil {
					w.leaderW, w.leaderPath = ev, p
				}
			case name == cronName && w.cronW == nil:
				if raw, stat, ev, err = conn.GetW(p); err == nil {
					w.cronW = ev
				}
			case cached[name] != nil:
				return cached[name], nil // its watch has not fired, or nothing is watched
			default:
				raw, stat, err = conn.Get(p)
			}
			if err != nil {
				return nil, err
			}
			return newSnapNode(name, raw, stat), nil
		},
	})
}

// listWatched lists base with a children watch, or, while base does not
// exist, watches for its creation.
func (w *watcher) listWatched(conn *zk.Conn, base string) ([]string, bool, error) {
	for {
		if w.childW != nil {
			children, _, err := conn.Children(base)
			if errors.Is(err, zk.ErrNoNode) {
				return nil, false, nil // deleted: the children watch fires and is re-armed
			}
			return children, err == nil, err
		}
		children, _, ch, err := conn.ChildrenW(base)
		if err == nil {
			w.childW, w.baseW = ch, nil
			return children, true, nil
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return nil, false, err
		}
		if w.baseW != nil {
			return nil, false, nil
		}
		ok, _, ev, err := conn.ExistsW(base)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			w.baseW = ev
			return nil, false, nil
		}
		// Created in the meantime: list it (ev is a data watch; dropped).
	}
}

// runWatch is `ballot watch`. It exits 0 on SIGINT/SIGTERM, 125 when
// ZooKeeper cannot be reached at the start.
func runWatch(set *Settings, acc *zookeeper.Access, log *slog.Logger) int {
	w := &watcher{set: set, zk: acc, log: log, out: newLinePrinter(os.Stdout),
		stop: make(chan struct{}), wake: make(chan struct{}, 1), closed: make(chan struct{})}
	defer w.out.Close()
	defer func() {
		w.shutdown()
		select { // let the server end the session now, if it is quick
		case <-w.closed:
		case <-time.After(time.Second):
		}
	}()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			w.shutdown()
		case <-w.stop:
		}
	}()

	if err := w.dial(); err != nil {
		if errors.Is(err, errStopped) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "ballot: watch: "+err.Error())
		return exitFailure
	}
	return w.loop()
}

// loop reads and shows the election each time a watch fires, until a stop
// (0) or a refusal (exitFailure); it starts a new session after an expiry.
func (w *watcher) loop() int {
	set, log := w.set, w.log
	first, needRead, full := true, true, true
	var retry <-chan time.Time
	for {
		if w.stopped() {
			return 0
		}
		w.mu.Lock()
		expired := w.expired
		if w.needFull {
			needRead, full, w.needFull = true, true, false
		}
		w.mu.Unlock()
		if expired {
			if !w.renew() {
				return 0
			}
			needRead, full = true, true
		}
		if needRead {
			s, err := w.read(full)
			w.mu.Lock()
			expiredMeanwhile := w.expired
			w.mu.Unlock()
			switch {
			case err == nil && expiredMeanwhile:
				// Read on the session the client opened silently after the
				// expiry: say "reconnected" first, then read again.
				continue
			case err == nil:
				w.show(first, s)
				first, needRead, full, retry = false, false, false, nil
			case w.stopped():
				return 0
			case errors.Is(err, zk.ErrSessionExpired):
				w.mu.Lock()
				if !w.expired {
					w.expired = true
					w.emit(watchEvent{Event: evSessionExpired, Message: "session expired; starting a new one"})
				}
				w.mu.Unlock()
				continue
			case errors.Is(err, zk.ErrNoAuth):
				// Retrying would only print the same refusal again.
				fmt.Fprintln(os.Stderr, "ballot: watch: "+zookeeper.Error(err, "read", set.BasePath).Error())
				return exitFailure
			default:
				if !zookeeper.Retryable(err) {
					log.Warn("cannot read the election; retrying", "election", set.BasePath, "error", err)
				}
				retry = time.After(time.Second)
			}
		}
		if w.await(retry) {
			needRead = true
		}
		if w.stopped() {
			return 0
		}
	}
}

// await waits for a fired watch (true: read again), a wake-up, a retry or
// a stop.
func (w *watcher) await(retry <-chan time.Time) (fired bool) {
	select {
	case <-w.stop:
	case <-w.wake:
	case <-retry:
	case <-w.childW:
		w.childW = nil
		return true
	case <-w.leaderW:
		w.leaderW = nil
		return true
	case <-w.cronW:
		w.cronW = nil
		return true
	case <-w.baseW:
		w.baseW = nil
		return true
	}
	return false
}

// show prints the first snapshot, or the changes since the last one.
func (w *watcher) show(first bool, s *electionSnapshot) {
	base := w.set.BasePath
	if first {
		if s.exists {
			s.readACL(w.current(), base)
		}
		inf := buildInfo(base, w.set.ZooKeeperServers, s, readClock())
		msg := "no candidates"
		if l := s.lowestProposal(); l != nil {
			msg = fmt.Sprintf("leader %s, %d candidate(s)", label(l), len(s.proposals))
		}
		w.emit(watchEvent{Event: evSnapshot, Election: inf, Message: msg})
		switch {
		case !s.exists:
			w.emit(watchEvent{Event: evNoCandidates, Message: "no candidates yet: " + base + " does not exist; watching for its creation"})
		case len(s.proposals) == 0:
			w.emit(watchEvent{Event: evNoCandidates, Message: "no candidates yet"})
		}
	} else {
		for _, ev := range diffElection(base, w.prev, s) {
			w.emit(ev)
		}
	}
	w.prev = s
}

// renew replaces an expired session by a new connection, retrying until it
// works or watch is stopped.
func (w *watcher) renew() bool {
	warned := false
	for {
		err := w.dial()
		if err == nil {
			w.emit(watchEvent{Event: evReconnected, SessionID: zookeeper.SessionHex(w.current().SessionID()),
				Message: "reconnected: new session " + zookeeper.SessionHex(w.current().SessionID())})
			return true
		}
		if w.stopped() {
			return false
		}
		if !warned {
			w.log.Warn("cannot open a new ZooKeeper session; retrying", "error", err)
			warned = true
		}
		select {
		case <-time.After(time.Second):
		case <-w.stop:
			return false
		}
	}
}
