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
	"os"
	"strconv"
	"syscall"
	"time"

	"ballot/internal/keeper"
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
func (r *runner) keeperDemote(c *candidate) *keeper.DemoteHook {
	if c == nil || !c.demoteOwed || len(r.set.OnDemote) == 0 {
		return nil
	}
	env := append(r.childEnv(c), "BALLOT_ROLE=follower", "BALLOT_DEMOTE_REASON="+keeper.DemoteReasonBallotDied)
	return &keeper.DemoteHook{Argv: r.set.OnDemote, Env: env, Timeout: r.set.HookTimeout, Wrap: r.set.WrapChildLogs,
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
	if l != nil {
		l.checkIn() // as for the command (startCommand)
	}
	r.mu.Lock()
	r.current = hook
	r.mu.Unlock()
	go func() { <-hook.Done(); r.forget(hook) }()
	return hook, nil
}

// runEnded is told the end of each run of run cron or --once-key, once,
// as its history entry says (candidate.runEnded): it queues the end's
// ping (--ping-url) and starts the on-run-end hook.
//
// The hook runs beside the leadership, not under it: started and waited
// for in the background, so it never delays the next scheduled time, a
// retry, a renewal or a handover, and a lease lost meanwhile does not
// stop it. It only reports a run that is
// over; it is not the job, so it needs no fencing, and a hook that a lost
// lease killed would lose the very news of that loss. It is bounded by
// --hook-timeout instead, and ballot waits for it before it exits
// (runEndHooks).
func (r *runner) runEnded(c *candidate, e historyEntry) {
	what := "fail" // healthchecks.io: a failure without an exit code (or timed out, yet 0)
	if e.ExitCode != nil && (*e.ExitCode != 0 || e.succeeded()) {
		what = strconv.Itoa(*e.ExitCode)
	}
	r.ping.send(what, []byte(e.Output))
	if len(r.set.OnRunEnd) == 0 {
		return
	}
	env, file := r.runEndEnv(c, e)
	r.runEndHooks.Add(1)
	go func() { // even its start (a keeper's fork and exec) is off the leader's path
		defer r.runEndHooks.Done()
		defer removeFile(file)
		r.runEndHook(env)
	}()
}

// runEndHook runs the on-run-end hook with env, bounded by --hook-timeout.
func (r *runner) runEndHook(env []string) {
	hook, err := startChild(r.log, childSpec{Argv: r.set.OnRunEnd, Env: env, Wrap: r.set.WrapChildLogs, Grace: r.set.StopGracePeriod,
		StartLimit: r.set.HookTimeout})
	if err != nil {
		r.log.Error("cannot start the on-run-end hook", "error", err)
		r.metrics.HookFailed("on-run-end")
		return
	}
	if hook.pid == 0 {
		<-hook.Done()
		r.log.Error("cannot execute the on-run-end hook", "command", r.set.OnRunEnd[0], "reason", hook.Exit().Reason, "exit_code", hook.Exit().Code)
		r.metrics.HookFailed("on-run-end")
		return
	}
	r.log.Info("on-run-end hook started", logEvHookStarted.attr(), "hook", "on-run-end", "pid", hook.pid, "command", r.set.OnRunEnd[0])
	t := time.NewTimer(r.set.HookTimeout)
	defer t.Stop()
	timedOut := false
	select {
	case <-hook.Done():
	case <-t.C:
		hook.Stop(syscall.SIGTERM, r.set.StopGracePeriod, nil)
		r.log.Warn("on-run-end hook timed out", "timeout", r.set.HookTimeout)
		timedOut = true
	case <-r.hurry:
		hook.Kill()
	}
	ex := hook.Exit()
	if timedOut || !ex.Success() {
		r.log.Warn("on-run-end hook failed", logEvHookEnded.attr(), "hook", "on-run-end", "exit_code", ex.Code, "duration", ex.Duration.Round(time.Millisecond))
		r.metrics.HookFailed("on-run-end")
		return
	}
	r.log.Info("on-run-end hook ended", logEvHookEnded.attr(), "hook", "on-run-end", "exit_code", ex.Code, "duration", ex.Duration.Round(time.Millisecond))
}

// runEndEnv is the on-run-end hook's environment: the command's, and the
// run's outcome; file is the output tail's file ("": none), for the caller
// to remove once the hook is over.
func (r *runner) runEndEnv(c *candidate, e historyEntry) (env []string, file string) {
	env = r.childEnv(c)
	code, attempt, dur, sched := "", 1, "", ""
	if e.ExitCode != nil {
		code = strconv.Itoa(*e.ExitCode)
	}
	if e.Attempt > 0 {
		attempt = e.Attempt
	}
	if e.DurationMs != nil {
		dur = strconv.FormatFloat(float64(*e.DurationMs)/1000, 'f', 3, 64)
	}
	if e.ScheduledTime != nil {
		sched = e.ScheduledTime.In(r.set.Timezone).Format(time.RFC3339)
	}
	env = append(env, "BALLOT_RUN_RESULT="+runResult(e), "BALLOT_EXIT_CODE="+code, "BALLOT_SCHEDULED_TIME="+sched,
		"BALLOT_ATTEMPT="+strconv.Itoa(attempt), "BALLOT_DURATION="+dur, "BALLOT_RUN_ENDED="+e.Ended)
	if e.Key != "" {
		env = append(env, "BALLOT_ONCE_KEY="+e.Key)
	}
	if f, err := os.CreateTemp("", "ballot-output-*"); err == nil {
		_, werr := f.WriteString(e.Output)
		if cerr := f.Close(); werr == nil && cerr == nil {
			file = f.Name()
		} else {
			removeFile(f.Name())
		}
	}
	return append(env, "BALLOT_OUTPUT_FILE="+file), file
}

// runResult is BALLOT_RUN_RESULT: success or failure for a command that
// ended by itself (or could not be executed), else how it was ended.
func runResult(e historyEntry) string {
	switch {
	case e.succeeded():
		return "success"
	case e.Ended == endExited:
		return "failure"
	}
	return e.Ended
}

func removeFile(name string) {
	if name != "" {
		_ = os.Remove(name)
	}
}
