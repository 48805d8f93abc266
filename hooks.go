package main

// Promote and demote hooks, and health-gated candidacy.
//
// Order on every path: elected → on-promote → command → (leader node
// published) … command stopped and reaped → leader node removed →
// on-demote → proposal deleted. The demote hook runs before the proposal
// goes, so a "make this host secondary" hook finishes before the next
// leader's "make this host primary" starts — except when the connection is
// lost, where the proposal cannot be deleted and the hook is best effort.

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
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

// health runs the health check every interval. A candidate is healthy after
// a passing check and unhealthy after health-failures failing ones in a row;
// before the first check it is not healthy, so it never stands untested.
type health struct {
	r *runner

	mu       sync.Mutex
	healthy  bool
	failures int
	last     time.Time
	bad      chan struct{} // closed when the candidate turns unhealthy
	good     chan struct{} // closed when it turns healthy
}

func newHealth(r *runner) *health {
	h := &health{r: r, bad: make(chan struct{}), good: make(chan struct{})}
	go h.loop()
	return h
}

func (h *health) loop() {
	for {
		ok := h.check()
		h.mu.Lock()
		h.last = time.Now()
		switch {
		case ok:
			h.failures = 0
			if !h.healthy {
				h.healthy = true
				close(h.good)
				h.bad = make(chan struct{})
				h.r.log.Info("health check passes: standing for election")
			}
		default:
			h.failures++
			if h.healthy && h.failures >= h.r.set.HealthFailures {
				h.healthy = false
				close(h.bad)
				h.good = make(chan struct{})
				h.r.log.Warn("health check failed: withdrawing from the election", logEvUnhealthy.attr(), "consecutive_failures", h.failures)
			}
		}
		h.mu.Unlock()
		h.r.publishHealth()
		select {
		case <-time.After(h.r.set.HealthInterval):
		case <-h.r.stopping:
			return
		}
	}
}

// check runs the health check once, killed with its process group at the
// health timeout.
func (h *health) check() bool {
	argv := h.r.set.HealthCheck
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "BALLOT_CANDIDATE_ID="+h.r.set.CandidateID, "BALLOT_ELECTION_PATH="+h.r.set.BasePath)
	cmd.SysProcAttr = newGroupAttr(syscall.SIGKILL)
	// Pipes, not /dev/null, which a minimal appliance image may lack.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), io.Discard, io.Discard
	cmd.WaitDelay = time.Second // a background process holding the pipes must not hold up the check
	if err := cmd.Start(); err != nil {
		h.r.log.Warn("health check cannot start", "error", err)
		return false
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(h.r.set.HealthTimeout)
	defer t.Stop()
	select {
	case err := <-done:
		if err != nil {
			h.r.log.Debug("health check failed", "error", err)
		}
		return err == nil
	case <-t.C:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		h.r.log.Debug("health check timed out", "timeout", h.r.set.HealthTimeout)
		return false
	}
}

// Bad is closed when the candidate turns unhealthy (nil without a check:
// never closed).
func (h *health) Bad() <-chan struct{} {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.bad
}

func (h *health) Healthy() bool {
	if h == nil {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.healthy
}

// WaitHealthy blocks until the candidate is healthy; false if stopped first.
func (h *health) WaitHealthy(stop <-chan struct{}) bool {
	if h == nil {
		return true
	}
	h.mu.Lock()
	good, healthy := h.good, h.healthy
	h.mu.Unlock()
	if healthy {
		return true
	}
	select {
	case <-good:
		return true
	case <-stop:
		return false
	}
}

func (h *health) status() *healthStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	return &healthStatus{Healthy: h.healthy, ConsecutiveFailures: h.failures, LastCheck: h.last}
}

// publishHealth puts the health state into the current proposal, if any.
func (r *runner) publishHealth() {
	r.mu.Lock()
	c := r.cand
	r.mu.Unlock()
	if c != nil && r.health != nil {
		st := r.health.status()
		c.pub.update(func(d *proposalData) { d.Health = st })
	}
}
