package main

// Health-gated candidacy: --health-check decides whether this candidate
// stands for election.

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"ballot/internal/keeper"
)

// health runs the health check every interval. A candidate is healthy after
// a passing check and unhealthy after health-failures failing ones in a row;
// before the first check it is not healthy, so it never stands untested.
type health struct {
	r *runner
	// publish puts each result into the proposals: r's, or, for run
	// crontab's one check of the host, every job's.
	publish func()

	mu       sync.Mutex
	healthy  bool
	failures int
	last     time.Time
	bad      chan struct{} // closed when the candidate turns unhealthy
	good     chan struct{} // closed when it turns healthy
}

func newHealth(r *runner) *health { return newSharedHealth(r, r.publishHealth) }

// newSharedHealth is a check whose results publish tells; r gives its
// settings, its log and its stop.
func newSharedHealth(r *runner, publish func()) *health {
	h := &health{r: r, publish: publish, bad: make(chan struct{}), good: make(chan struct{})}
	go h.loop()
	return h
}

func (h *health) loop() {
	for {
		h.record(h.check(), time.Now())
		h.publish()
		select {
		case <-time.After(h.r.set.HealthInterval):
		case <-h.r.stopping:
			return
		}
	}
}

// record counts one check's result, made at now: healthy again at once on
// a pass, unhealthy after health-failures fails in a row.
func (h *health) record(ok bool, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = now
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
}

// check runs the health check once, killed with its process group at the
// health timeout.
func (h *health) check() bool {
	argv := h.r.set.HealthCheck
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "BALLOT_CANDIDATE_ID="+h.r.set.CandidateID, "BALLOT_ELECTION_PATH="+h.r.set.BasePath)
	cmd.SysProcAttr = keeper.NewGroupAttr(syscall.SIGKILL)
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
