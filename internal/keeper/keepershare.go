package keeper

// One session, several keepers (run crontab: each running job has its
// own, Handoff.Shared). Once ballot is dead they must not end the session
// under one another, nor use it at once: a connect to a session makes
// ZooKeeper drop that session's other connection (ZooKeeperServer.
// processConnectRequest closes it, CLIENT_RECONNECT; on another member
// the session moves and the old connection's requests fail), so two
// keepers resuming it together would take it from each other in turn.
//
// ballot makes three pipes once per process and gives both ends of each
// to every keeper (fds 6 to 11), and no file is left behind:
//   - the turn: one byte in a pipe. A keeper reads it before it connects
//     to the session, and writes it back once it has dropped the
//     connection: one keeper on the session at a time;
//   - done: nobody writes it. Each keeper closes its write end once it
//     has given its baton back (or died: the kernel closes it), and so
//     did ballot, dying. The keeper that then reads EOF on it, holding
//     the turn, is the last: it closes the session. The last to close
//     its end sees EOF; two that close theirs together may both see it,
//     and the second to connect finds the session gone (ErrSessionLost).
//   - trees: nobody writes it either. Each keeper closes its write end
//     once its command's tree is reaped (an idle one at once), and gives
//     no baton back before EOF on it, or a quarter of the session timeout
//     (a tree that cannot be reaped must not hold the other jobs' batons
//     until the session expires, 2T/3 at the earliest after ballot's
//     death; each job's own baton still waits for its own tree): every
//     job's tree dies before any baton is given back.
// A keeper that dies holding the turn costs the others only their wait
// (the session's timeout): the session then expires, the batons not
// given back are dropped, and the successors wait W for them.

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"time"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// The pipes' fds in the keeper, after status (3), control (4), stderr (5).
const (
	fdTurn     = 6  // the turn's read end
	fdTurnBack = 7  // its write end
	fdDone     = 8  // done's read end
	fdDoneW    = 9  // done's write end, closed once this keeper is done
	fdTrees    = 10 // trees' read end
	fdTreesW   = 11 // trees' write end, closed once this keeper's tree is reaped
)

// sharing is this keeper's side of the pipes.
type sharing struct {
	turn     *os.File
	trees    *os.File
	treesBy  time.Time // the longest wait for the other trees
	doneOnce sync.Once
}

// closeOnExecShared keeps the pipes from the command and the hooks: a
// command holding done's write end would keep the session open until
// its expiry.
func closeOnExecShared() {
	for fd := fdTurn; fd <= fdTreesW; fd++ {
		syscall.CloseOnExec(fd)
	}
}

// newSharing takes up the pipes once ballot is dead, if the keeper was
// told the session is shared (ballot says so only to keepers it gave
// them to); nil if they are not pipes.
func newSharing(h *zookeeper.Handoff) *sharing {
	for fd := fdTurn; fd <= fdTreesW; fd++ {
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
			return nil
		}
	}
	// Non-blocking, so that a read waits in Go's poller with a deadline;
	// not before ballot is dead: its next keeper's start (exec's Fd) would
	// set them blocking again, as they are one file for all.
	_ = syscall.SetNonblock(fdTurn, true)
	_ = syscall.SetNonblock(fdDone, true)
	_ = syscall.SetNonblock(fdTrees, true)
	// This keeper's tree is reaped (or it never had one).
	_ = syscall.Close(fdTreesW)
	return &sharing{turn: os.NewFile(fdTurn, "turn"), trees: os.NewFile(fdTrees, "trees"), treesBy: time.Now().Add(h.Timeout() / 4)}
}

// awaitTrees waits until every keeper's tree is reaped, at most until
// treesBy.
func (s *sharing) awaitTrees() {
	_ = s.trees.SetReadDeadline(s.treesBy)
	var b [1]byte
	for {
		if _, err := s.trees.Read(b[:]); err != nil {
			return // EOF, or the deadline
		}
	}
}

// touch checks, on its turn, that the session lives, touching it.
func (s *sharing) touch(h *zookeeper.Handoff) error {
	deadline := time.Now().Add(h.Timeout())
	if !s.take(deadline) {
		return errors.New("another keeper holds the session's turn")
	}
	defer s.give()
	return h.Touch(deadline)
}

// take waits for the turn until deadline; false: another keeper holds
// it still (or died with it).
func (s *sharing) take(deadline time.Time) bool {
	_ = s.turn.SetReadDeadline(deadline)
	var b [1]byte
	n, _ := s.turn.Read(b[:])
	return n == 1
}

// give hands the turn on.
func (s *sharing) give() { _, _ = syscall.Write(fdTurnBack, []byte{1}) }

// done closes this keeper's write end of done: it will not use the
// session again but to close it.
func (s *sharing) done() { s.doneOnce.Do(func() { _ = syscall.Close(fdDoneW) }) }

// last reports that every other keeper, and ballot, closed their ends of
// done (after this one's own, done).
func (s *sharing) last() bool {
	s.done()
	var b [1]byte
	for {
		n, err := syscall.Read(fdDone, b[:])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil: // EAGAIN: a write end is open
			return false
		}
		return n == 0
	}
}

// endShared gives h's baton back, if it holds one, and those of the
// jobs at rest it holds (the session's own keeper), and closes the
// session if this keeper is the last one done with it. Its own tree is
// reaped and its on-demote hook has ended by now; the jobs at rest run
// nothing here (a job at rest with an on-demote hook keeps a keeper of
// its own instead: package main's keeperidle.go).
func (k *keeper) endShared(h *zookeeper.Handoff) {
	s := k.share
	defer s.done()
	s.awaitTrees()
	k.cfg.StampRelease(h)
	releases := []*zookeeper.Handoff{h}
	k.mu.Lock()
	for _, r := range k.held {
		w := *r
		w.Withdraw = true
		k.cfg.StampRelease(&w)
		releases = append(releases, &w)
	}
	k.mu.Unlock()
	if !s.take(time.Now().Add(h.Timeout())) {
		return
	}
	defer s.give()
	_ = h.EndShared(releases, h.Timeout(), s.last)
}

// touchShared keeps the session alive while the on-demote hook runs, the
// other keepers' turns in between: every third of the session timeout a
// connect (Touch) on its turn, not a connection of its own, which the
// others' connects would take. It gives up once the session is lost
// (expired, or not to be had within the session timeout of the last
// touch: the session may be gone).
func (k *keeper) touchShared(log *slog.Logger, h *zookeeper.Handoff, stop <-chan struct{}) {
	t := h.Timeout()
	tick := time.NewTicker(t / 3)
	defer tick.Stop()
	touched := time.Now()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		deadline := touched.Add(t)
		var err error = zookeeper.ErrSessionLost
		if k.share.take(deadline) {
			sent := time.Now()
			err = h.Touch(deadline)
			k.share.give()
			if err == nil {
				touched = sent
			}
		}
		if errors.Is(err, zookeeper.ErrSessionLost) || err != nil && !time.Now().Before(deadline) {
			log.Warn("the on-demote hook outlasts ballot's session, which the keeper cannot keep alive: the baton is dropped, and the next leader may be promoted before the hook ends",
				"error", err)
			return
		}
	}
}
