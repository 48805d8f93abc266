package main

// Promote and demote hooks (health-gated candidacy: health.go).
//
// Order on every path: elected → on-promote → command → (leader node
// published) … command stopped and reaped → leader node removed →
// on-demote → proposal deleted. The demote hook runs before the proposal
// goes, so a "make this host secondary" hook finishes before the next
// leader's "make this host primary" starts — except when the connection is
// lost, where the proposal cannot be deleted and the hook is best effort.

import (
	"syscall"
	"time"
)

// runPromote runs the on-promote hook as a leader's command: under the
// lease, killed at the hook timeout.
func (r *runner) runPromote(c *candidate, l *lease) (outcome, childExit) {
	if !l.Fresh() {
		return leaseLost, childExit{}
	}
	hook, err := r.startHook(c, l, "on-promote", r.set.OnPromote, "leader", "")
	if err != nil {
		r.log.Error("cannot start the on-promote hook", "error", err)
		return childEnded, childExit{Code: exitFailure}
	}
	if hook.pid == 0 {
		return childEnded, hook.Exit()
	}
	deadline := time.Now().Add(r.set.HookTimeout)
	for {
		how := r.supervise(c, l, hook, deadline)
		if how != wakeUp {
			ex := hook.Exit()
			r.log.Info("on-promote hook ended", logEvHookEnded.attr(), "hook", "on-promote", "exit_code", ex.Code, "duration", ex.Duration.Round(time.Millisecond))
			return how, ex
		}
		if !time.Now().Before(deadline) {
			ex, stopped := hook.Stop(syscall.SIGTERM, r.set.StopGracePeriod, r.killByFor(l))
			r.log.Warn("on-promote hook timed out", "timeout", r.set.HookTimeout, "how", stopped)
			ex.Started = false // a hook that timed out failed, whatever its status
			return childEnded, ex
		}
	}
}

// demote runs the on-demote hook once a leadership is over and its command
// is gone: best effort, bounded by the hook timeout.
func (r *runner) demote(c *candidate, reason string) {
	if !c.demoteOwed {
		return
	}
	c.demoteOwed = false
	if len(r.set.OnDemote) == 0 {
		return
	}
	hook, err := r.startHook(c, nil, "on-demote", r.set.OnDemote, "follower", reason)
	if err != nil {
		r.log.Error("cannot start the on-demote hook", "error", err)
		return
	}
	t := time.NewTimer(r.set.HookTimeout)
	defer t.Stop()
	select {
	case <-hook.Done():
	case <-t.C:
		hook.Stop(syscall.SIGTERM, r.set.StopGracePeriod, nil)
		r.log.Warn("on-demote hook timed out", "timeout", r.set.HookTimeout)
	case <-r.hurry:
		hook.Kill()
	}
	ex := hook.Exit()
	r.log.Info("on-demote hook ended", logEvHookEnded.attr(), "hook", "on-demote", "reason", reason, "exit_code", ex.Code, "duration", ex.Duration.Round(time.Millisecond))
}

// keeperDemote is the on-demote hook as demote would run it, for the
// keeper to run should ballot die while leading (keeperend.go); nil when
// ballot would run none (demote clears c.demoteOwed before its own hook).
func (r *runner) keeperDemote(c *candidate) *demoteHook {
	if c == nil || !c.demoteOwed || len(r.set.OnDemote) == 0 {
		return nil
	}
	env := append(r.childEnv(c), "BALLOT_ROLE=follower", "BALLOT_DEMOTE_REASON="+demoteReasonBallotDied)
	return &demoteHook{Argv: r.set.OnDemote, Env: env, Timeout: r.set.HookTimeout, Wrap: r.set.WrapChildLogs,
		LogFormat: r.set.LogFormat}
}

// startHook runs a hook; the promote hook runs under the leader's lease l,
// like the command.
func (r *runner) startHook(c *candidate, l *lease, name string, argv []string, role, reason string) (*child, error) {
	env := append(r.childEnv(c), "BALLOT_ROLE="+role)
	if reason != "" {
		env = append(env, "BALLOT_DEMOTE_REASON="+reason)
	}
	pending := l != nil && l.takePending() // decided with the handoff (releaseWhenTaken)
	hook, err := startChild(r.log, childSpec{Argv: argv, Env: env, Wrap: r.set.WrapChildLogs, Grace: r.set.StopGracePeriod,
		Deadline: r.keeperDeadline(l), Handoff: handoffFor(c, l), Demote: r.keeperDemote(c), StartLimit: r.set.HookTimeout})
	if err != nil {
		return nil, err
	}
	releaseWhenTaken(hook, l, pending)
	if hook.pid == 0 {
		<-hook.Done()
		r.log.Error("cannot execute the "+name+" hook", "command", argv[0], "reason", hook.Exit().Reason, "exit_code", hook.Exit().Code)
		return hook, nil
	}
	r.log.Info(name+" hook started", logEvHookStarted.attr(), "hook", name, "pid", hook.pid, "command", argv[0])
	r.mu.Lock()
	r.current = hook
	r.mu.Unlock()
	go func() { <-hook.Done(); r.forget(hook) }()
	return hook, nil
}
