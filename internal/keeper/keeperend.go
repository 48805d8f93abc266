package keeper

// What the keeper does once ballot has died and the command's tree is
// reaped: run the on-demote hook ballot can no longer run, keeping ballot's
// session (and so its baton) alive meanwhile, then give the baton back and
// close the session. Without the hook first, the release would let the
// successor's on-promote hook run while nothing ever ran this host's
// on-demote: two holders of a virtual IP.

import (
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// DemoteReasonBallotDied is BALLOT_DEMOTE_REASON when the keeper runs the
// on-demote hook for a ballot that died while leading.
const DemoteReasonBallotDied = "ballot-died"

// DemoteHook is the on-demote hook as ballot would run it.
type DemoteHook struct {
	Argv      []string
	Env       []string // BALLOT_* NAME=value pairs, over the keeper's own
	Timeout   time.Duration
	Wrap      bool   // ballot wraps hook output into log lines: its pipes die with it
	LogFormat string // ballot's, for the keeper's own log lines
}

// environ is the keeper's environment (ballot's plus the command's
// BALLOT_*) with the hook's pairs in place of any of the same name.
func (d *DemoteHook) environ() []string {
	name := func(kv string) string { n, _, _ := strings.Cut(kv, "="); return n }
	ours := map[string]bool{}
	for _, kv := range d.Env {
		ours[name(kv)] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		if !ours[name(kv)] {
			env = append(env, kv)
		}
	}
	return append(env, d.Env...)
}

// afterBallot ends what ballot left when it died: the on-demote hook, if
// ballot would have run one, then the release and the session's close.
// idle: no command ran under this keeper (a cron leader's between runs),
// so its release also withdraws the proposal (Handoff.Withdraw): the next
// in line is woken by the release, one quorum write before the close.
func (k *keeper) afterBallot(idle bool) {
	// The orders ballot wrote before it died are all read by EOF, and the
	// deadline's alarms were deleted once the tree was reaped.
	k.mu.Lock()
	h, hook := k.h, k.demote
	k.mu.Unlock()
	if h != nil && (idle || h.Shared) {
		// Shared: the session is closed only once every keeper is done,
		// so this job's successor is woken by the release itself.
		w := *h
		w.Withdraw = true
		h = &w
	}
	if h != nil && h.Shared {
		if k.share = newSharing(h); k.share == nil {
			h = nil // told shared without the pipes: leave the session to expire
		}
	}
	if hook == nil {
		if h != nil {
			k.endSession(h)
		}
		return
	}

	log := k.cfg.NewLogger(k.logOut, hook.LogFormat).With("keeper_pid", os.Getpid())
	var s *zookeeper.WireSession
	switch {
	case h == nil:
		log.Warn("ballot died while leading; its session is unknown to the keeper: running the on-demote hook, best effort")
	default:
		var err error
		if h.Shared {
			err = k.share.touch(h) // no connection of its own: touchShared
		} else {
			s, _, err = h.Resume(time.Now().Add(h.Timeout()), 0)
		}
		switch {
		case errors.Is(err, zookeeper.ErrSessionLost):
			log.Warn("ballot died while leading and its session has expired (its baton was dropped): running the on-demote hook anyway, best effort")
			h = nil
		case err != nil:
			log.Warn("ballot died while leading and the keeper cannot resume its session: running the on-demote hook anyway, best effort",
				"error", err)
		default:
			log.Info("ballot died while leading: running the on-demote hook, holding the baton until it ends")
		}
	}

	stop := make(chan struct{})
	kept := make(chan *zookeeper.WireSession, 1)
	switch {
	case h != nil && h.Shared:
		go func() { k.touchShared(log, h, stop); kept <- nil }()
	case s != nil:
		go func() { kept <- zookeeper.KeepAlive(log, h, s, stop) }()
	default:
		kept <- nil
	}
	k.runDemote(log, hook)
	close(stop)
	s = <-kept
	if h == nil {
		return
	}
	if s != nil {
		k.cfg.StampRelease(h)
		err := s.Finish(h, time.Now().Add(h.Timeout()))
		s.Close()
		if err == nil || errors.Is(err, zookeeper.ErrSessionLost) {
			return
		}
	}
	k.endSession(h)
}

// endSession gives h's baton back and ends the session, or, shared,
// leaves its end to the last keeper done with it (keepershare.go).
func (k *keeper) endSession(h *zookeeper.Handoff) {
	if h.Shared {
		k.endShared(h)
		return
	}
	k.cfg.StampRelease(h)
	_ = h.EndSession(h.Timeout())
}

// runDemote runs the on-demote hook as ballot would: its own process
// group, bounded by the hook timeout (then SIGTERM, the grace period,
// SIGKILL), and done once everything it started is reaped.
func (k *keeper) runDemote(log *slog.Logger, hook *DemoteHook) {
	path, err := exec.LookPath(hook.Argv[0])
	if err != nil {
		log.Error("cannot execute the on-demote hook", "command", hook.Argv[0], "reason", err.Error())
		return
	}
	// Output wrapped by ballot went to pipes that died with it: the hook
	// writes to ballot's stderr instead, not into a broken pipe.
	out, errOut := uintptr(1), uintptr(2)
	if hook.Wrap && k.logOut != nil {
		out, errOut = k.logOut.Fd(), k.logOut.Fd()
	}
	start := time.Now()
	pid, err := syscall.ForkExec(path, hook.Argv, &syscall.ProcAttr{
		Env:   hook.environ(),
		Files: []uintptr{0, out, errOut},
		Sys:   NewGroupAttr(syscall.SIGKILL),
	})
	if err != nil {
		log.Error("cannot execute the on-demote hook", "command", hook.Argv[0], "reason", err.Error())
		return
	}
	log.Info("on-demote hook started", k.cfg.HookStarted, "hook", "on-demote", "pid", pid, "command", hook.Argv[0], "reason", DemoteReasonBallotDied)
	t := &tree{pgid: pid}
	done := make(chan int, 1)
	go func() { done <- reapTree(t, pid, k.grace) }()
	timer := time.NewTimer(hook.Timeout)
	defer timer.Stop()
	var code int
	select {
	case code = <-done:
	case <-timer.C:
		log.Warn("on-demote hook timed out", "timeout", hook.Timeout)
		go t.endWithGrace(k.grace)
		code = <-done
	}
	log.Info("on-demote hook ended", k.cfg.HookEnded, "hook", "on-demote", "reason", DemoteReasonBallotDied, "exit_code", code,
		"duration", time.Since(start).Round(time.Millisecond))
}
