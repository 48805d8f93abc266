package main

// The idle keeper: a keeper with no command yet. Two uses:
//   - the next in line of run once starts one ahead (prestartKeeper), and
//     its command, when it leads, runs on it (a run order): no keeper's
//     start on a handover's critical path. Until then it knows nothing of
//     the session, so should ballot die it gives nothing back;
//   - a cron leader keeps one between runs, told the session and the
//     release. Should ballot die then (SIGKILL, OOM), the keeper does at
//     once what it does after a command (internal/keeper/keeperend.go): the on-demote hook,
//     then the baton given back and the session closed, so the next leader
//     starts in milliseconds instead of after the session's expiry and the
//     dropped baton's wait (T + W, 8.75 s at T = 5 s). The next run starts
//     on it, so there is never a moment with two keepers (a release while a
//     command may still run) or none.
//
// This is ballot's side; the keeper's is internal/keeper/keeperidle.go.

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"ballot/internal/keeper"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// sessionOnly is h without the release, for a shared session only
// (Handoff.Shared; nil otherwise): a keeper that gives no baton back may
// still be the last one done with the session, which closes it.
func sessionOnly(h *zookeeper.Handoff) *zookeeper.Handoff {
	if h == nil || !h.Shared {
		return nil
	}
	return h.SessionOnly()
}

// startSessionKeeper starts the one idle keeper of a session shared by
// several jobs (run crontab). The jobs keep no keeper of their own
// between runs (startIdleKeeper): each at rest has this one hold its
// release instead, so 20 jobs at rest cost ballot and one keeper. Should
// ballot die, it gives back the batons it holds and closes the session
// once every running job's keeper has given its own back (or at once,
// none running). The caller stops it (stop) when the session ends.
func startSessionKeeper(s *zookeeper.Session) (*idleKeeper, error) {
	h := s.Handoff()
	if h == nil || !h.Shared {
		return nil, fmt.Errorf("no shared session to keep")
	}
	k, err := startIdle(h.SessionOnly(), nil, false)
	if err != nil {
		return nil, err
	}
	k.session = h.SessionID
	sessionKeepers.Lock()
	defer sessionKeepers.Unlock()
	old := sessionKeepers.k
	sessionKeepers.k = k
	if old != nil {
		go old.stop() // a session before this one: its keeper holds nothing of this one's
	}
	return k, nil
}

// keepSharedSession makes s a shared session (its keepers take turns on
// it) and starts its keeper; without one (it did not start), the jobs at
// rest hold their batons with no keeper to give them back should ballot
// die: they are dropped when the session ends.
func keepSharedSession(log *slog.Logger, s *zookeeper.Session) {
	s.ShareKeepers()
	k, err := startSessionKeeper(s)
	if err != nil {
		log.Warn("cannot start the session's keeper; should ballot die, the batons of the jobs at rest go with its session", "error", err)
		return
	}
	log.Debug("a keeper stands by for the session: should ballot die, it gives back the batons of the jobs at rest", logEvKeeperReady.attr(),
		"keeper_pid", k.c.keeper.Process.Pid)
}

// dropSessionKeeper stops s's keeper, if it has one, as ballot ends s
// itself: it must not act on ballot's death later.
func dropSessionKeeper(s *zookeeper.Session) {
	sessionKeepers.Lock()
	k := sessionKeepers.k
	if k == nil || k.session != s.ID() {
		sessionKeepers.Unlock()
		return
	}
	sessionKeepers.k = nil
	sessionKeepers.Unlock()
	k.stop()
}

// sessionKeepers is the process's shared session's keeper.
var sessionKeepers struct {
	sync.Mutex
	k *idleKeeper
}

// hold has the session's keeper hold h's release for a job at rest; it
// returns what stands for that keeper between its runs (idleKeeper.held),
// nil if there is none to hold it.
func hold(h *zookeeper.Handoff) *idleKeeper {
	sessionKeepers.Lock()
	defer sessionKeepers.Unlock()
	sk := sessionKeepers.k
	if sk == nil || sk.session != h.SessionID || !sk.alive() || !sk.c.tell(keeper.HoldOrder(h)) {
		return nil
	}
	return &idleKeeper{held: h.Baton, by: sk}
}

// unhold takes the release back from the session's keeper, before the
// job's run starts or its leadership ends: the keeper reads it before it
// acts on ballot's death (EOF comes after every line written). One that
// does not take the order (stopped: its pipe full) is killed and waited
// for, so that it can never give that baton back while the run goes on.
func (k *idleKeeper) unhold() {
	sessionKeepers.Lock()
	defer sessionKeepers.Unlock()
	sk := k.by
	if !sk.alive() || sk.c.tell(keeper.UnholdOrder(k.held)) {
		return
	}
	_ = sk.c.keeper.Process.Kill()
	<-sk.done
	if sessionKeepers.k == sk {
		sessionKeepers.k = nil
	}
}

// idleKeeper is ballot's side.
type idleKeeper struct {
	c       *child // its control pipe (tell, bye); no command
	statusR *os.File
	status  *bufio.Reader
	done    chan struct{} // closed once the keeper process is reaped
	// With --wrap-child-logs: the read ends of the pipes that will be the
	// command's stdout and stderr.
	wrapped []*os.File
	session int64 // the session's own keeper (startSessionKeeper): its id

	// held, not "": this is no keeper but a job at rest's release, of
	// this baton, held by the session's keeper by (hold). alive is false
	// (no command runs on it) and stop takes the release back.
	held string
	by   *idleKeeper
}

// startIdleKeeper starts an idle keeper that knows h (the session and
// the release) and demote (nil: none); wrap: the command it may run will
// have its output wrapped into log lines.
//
// A job of a shared session (h.Shared) gets none: one per job at rest
// would be a keeper per job. The session's own keeper holds its release
// (hold); (nil, nil) if there is none. Only a job with an on-demote
// hook, which the keeper must run before it gives the baton back, gets a
// keeper of its own.
func startIdleKeeper(h *zookeeper.Handoff, demote *keeper.DemoteHook, wrap bool) (*idleKeeper, error) {
	if h != nil && h.Shared && demote == nil {
		if h.ReleasePath == "" {
			return nil, nil
		}
		return hold(h), nil
	}
	return startIdle(h, demote, wrap)
}

func startIdle(h *zookeeper.Handoff, demote *keeper.DemoteHook, wrap bool) (*idleKeeper, error) {
	// The on-demote hook, should it run, writes where the command would.
	out, errw := os.Stdout, os.Stderr
	var wrapped, writeEnds []*os.File
	if wrap {
		for range 2 {
			r, w, err := os.Pipe()
			if err != nil {
				for _, f := range append(wrapped, writeEnds...) {
					f.Close()
				}
				return nil, err
			}
			wrapped, writeEnds = append(wrapped, r), append(writeEnds, w)
		}
		out, errw = writeEnds[0], writeEnds[1]
	}
	cmd, statusR, controlW, err := spawnKeeper(keeper.Args(os.Getpid(), 0, killTimes{}, nil), nil, out, errw)
	for _, w := range writeEnds {
		w.Close()
	}
	if err != nil {
		for _, r := range wrapped {
			r.Close()
		}
		return nil, err
	}
	k := &idleKeeper{c: &child{keeper: cmd, control: controlW}, statusR: statusR, status: bufio.NewReader(statusR),
		done: make(chan struct{}), wrapped: wrapped}
	go func() {
		_ = cmd.Wait()
		close(k.done)
	}()
	_ = statusR.SetReadDeadline(time.Now().Add(keeperStartLimit))
	first, _ := k.status.ReadString('\n')
	_ = statusR.SetReadDeadline(time.Time{})
	if strings.TrimSpace(first) != keeper.IdleLine {
		k.stop()
		return nil, fmt.Errorf("the idle keeper did not start: %q", strings.TrimSpace(first))
	}
	if h != nil {
		k.c.tellHandoff(h)
	}
	if demote != nil {
		k.c.tell(keeper.DemoteOrder(demote))
	}
	return k, nil
}

// stop says "bye" and waits for the keeper to be gone.
func (k *idleKeeper) stop() {
	if k == nil {
		return
	}
	if k.held != "" {
		k.unhold()
		return
	}
	k.c.bye()
	select {
	case <-k.done:
	case <-time.After(keeperUnresponsive):
		_ = k.c.keeper.Process.Kill()
		<-k.done
	}
	k.statusR.Close()
	for _, r := range k.wrapped {
		r.Close()
	}
}

// alive reports that the keeper still waits for orders.
func (k *idleKeeper) alive() bool {
	if k.held != "" {
		return false // no command runs on a held release
	}
	select {
	case <-k.done:
		return false
	default:
		return true
	}
}
