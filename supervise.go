package main

// Supervising a leader: its command (or none) under the lease, until the
// command ends or something ends the leadership.

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"ballot/internal/bootclock"
)

// supervision is one call of supervise.
type supervision struct {
	r    *runner
	c    *candidate
	l    *lease
	cmd  *child // nil: a leader without a command, until wake
	done <-chan struct{}
	// beside: run cron --overlap allow, the earlier runs still going
	// beside cmd: under the same lease, stopped with it; one of them
	// ending wakes supervision (wakeUp).
	beside     []*child
	besideDone chan struct{}
	wake       time.Time
	// guard: the lease is enforced (not on-connection-loss=ignore); a stop
	// for any reason must then end before it (killBy).
	guard  bool
	killBy func() time.Time
}

// supervise watches a leader's command (or a leader without one, cmd nil,
// until wake) and returns why it stopped. Whatever it returns, the command
// is gone and reaped, unless it returns wakeUp.
func (r *runner) supervise(c *candidate, l *lease, cmd *child, wake time.Time) outcome {
	return r.superviseRuns(c, l, cmd, nil, wake)
}

// superviseRuns is supervise with runs beside cmd (--overlap allow).
func (r *runner) superviseRuns(c *candidate, l *lease, cmd *child, beside []*child, wake time.Time) outcome {
	// A cron leader between runs runs nothing under its lease, which
	// lapses (lease.Rest): nothing to stop when it ends, and the next run
	// starts only on a fresh one (cronLeader.start, lease.AwaitFresh).
	between := cmd == nil && r.rules.scheduled
	s := &supervision{r: r, c: c, l: l, cmd: cmd, wake: wake, guard: r.set.OnConnectionLoss != lossIgnore && !between}
	if s.guard {
		s.killBy = l.supervisedKillBy
	}
	if cmd != nil {
		s.done = cmd.Done()
	}
	if len(beside) > 0 {
		s.beside, s.besideDone = beside, make(chan struct{})
		quit := make(chan struct{})
		defer close(quit)
		var once sync.Once
		for _, b := range beside {
			go func() {
				select {
				case <-b.Done():
					once.Do(func() { close(s.besideDone) })
				case <-quit:
				}
			}()
		}
	}
	for {
		if how, over := s.checkLease(); over {
			return how
		}
		if how, over := s.preempting(); over {
			return how
		}
		if how, over := s.await(); over {
			return how
		}
	}
}

// checkLease checks in, tells the keeper the lease's end, then checks it
// first, so a host that was frozen past its lease stops the command first
// thing on resume. On the safety path the kill comes before any log line:
// a log write can block (a stalled journal).
func (s *supervision) checkLease() (outcome, bool) {
	l := s.l
	l.checkIn()
	if !s.guard {
		return noOutcome, false
	}
	if s.cmd != nil {
		s.cmd.SetDeadline(leaseKillTimes(l)) // the keeper kills by then unless told later
	}
	for _, b := range s.beside {
		b.SetDeadline(leaseKillTimes(l))
	}
	switch st, left := l.standing(l.clock.now()); st {
	case leaseExpired:
		s.kill("lease expired")
		s.r.log.Warn("lease expired: ZooKeeper may already have elected another leader", logEvLeaseExpired.attr(), "late_by", (-left).Round(time.Millisecond))
		return leaseLost, true
	case leaseRunningOut:
		last, _ := l.Renewals()
		s.r.log.Warn("lease running out: ZooKeeper has not answered the renewals; stopping the command while the lease still leaves it its grace period", logEvLeaseRunningOut.attr(),
			"lease_left", left.Round(time.Millisecond), "last_renewal", last.Round(time.Millisecond),
			"connected", s.c.s.Connected())
		s.stop("lease running out", l.supervisedKillBy)
		return leaseLost, true
	}
	return noOutcome, false
}

// pastLease: a ballot woken after its lease ended reports that first,
// whatever else it learns on waking (the command is already dead).
func (s *supervision) pastLease() bool {
	if !s.guard {
		return false
	}
	st, _ := s.l.standing(s.l.clock.now())
	return st == leaseExpired
}

// await waits for the next event; over reports that supervision ends with
// how.
func (s *supervision) await() (how outcome, over bool) {
	r, c, l := s.r, s.c, s.l
	if s.guard {
		// Go's timers stop with a suspended machine, the lease's clock
		// does not: the boot alarm wakes us on resume.
		r.alarm.Set(l.stopAt())
	}
	var timeout <-chan time.Time
	if next, ok := s.waitLimit(); ok {
		t := time.NewTimer(next)
		defer t.Stop()
		timeout = t.C
	}
	var stepped <-chan struct{}
	if !s.wake.IsZero() {
		stepped = wallSteps.stepped() // the wake is a wall-clock time
	}
	stopping := r.stopping
	if s.finishing() {
		stopping = r.procStop // a removed job's runs end by themselves
	}
	select {
	case <-s.done:
		if s.pastLease() {
			// The keeper killed it when the lease ran out (ballot was
			// stopped): that is a lost leadership, not a command's end.
			r.log.Warn("lease expired: the keeper stopped the command; ZooKeeper may already have elected another leader", logEvLeaseExpired.attr())
			return leaseLost, true
		}
		return childEnded, true
	case <-s.besideDone:
		// A run beside ended: the caller records it (a lease that ran
		// out is found by checkLease on the next call).
		return wakeUp, true
	case <-l.renewed:
	case <-r.alarm.C:
	case <-timeout:
		if !s.wake.IsZero() && !time.Now().Before(s.wake) {
			return wakeUp, true
		}
	case <-stepped:
		return wakeUp, true // the caller reads the wall clock afresh
	case <-l.ended.Done():
		return s.leadershipEnded(context.Cause(l.ended))
	case <-c.s.Lost():
		// leadershipContext ends the leadership on this too, through the
		// process's wait dispatcher; a running command's kill does not
		// wait for it.
		l.endWith(sessionLostCause(c.s.LostReason()))
		return s.leadershipEnded(context.Cause(l.ended))
	case <-l.ctl.Changed():
		return s.controlsChanged()
	case <-r.health.Bad():
		s.announce()
		r.unpublishLeader(c)
		s.stop("unhealthy", s.killBy)
		return unhealthy, true
	case <-stopping:
		if s.finishing() { // removed meanwhile: wait again, for procStop
			return noOutcome, false
		}
		s.announce()
		r.unpublishLeader(c)
		s.each(func(cmd *child) { r.stopChild(cmd, s.killBy) })
		return stopRequested, true
	}
	return noOutcome, false
}

// waitLimit is how long await may wait with nothing happening; false:
// until something happens. Answered renewals wake it (l.renewed);
// unanswered ones wake nobody, so while something runs under the lease it
// wakes within the T/4 that renewals allow between check-ins, yet later
// than the next answer (leaseterms.go). With nothing running (a cron
// leader between runs) renewals need no check-in (lease.supervised), so
// only the next run's time wakes it: a crontab's 100 leaders at rest woke
// about 100 times a second for nothing.
func (s *supervision) waitLimit() (time.Duration, bool) {
	l := s.l
	next, ok := time.Duration(0), false
	limit := func(d time.Duration) {
		if !ok || d < next {
			next, ok = d, true
		}
	}
	if s.cmd != nil || len(s.beside) > 0 {
		limit(l.nextCheckIn())
	}
	if s.guard {
		limit(time.Until(l.StopBy()))
		limit(time.Until(l.KillBy()))
	}
	if !s.wake.IsZero() {
		limit(time.Until(s.wake))
	}
	return next, ok
}

// finishing: the job was removed (crontab's reload) while a run goes on,
// which ends by itself unless the process stops.
func (s *supervision) finishing() bool {
	return isClosed(s.r.leaving) && !isClosed(s.r.procStop) && (s.cmd != nil || len(s.beside) > 0)
}

// leadershipEnded acts on the end of the leadership's context: someone
// is undoing this leadership (our proposal or baton deleted, the session
// lost), so the command is killed at once, no grace period, before any
// log line. A ballot resumed past its lease says so first, whatever the
// cause (lossOf).
func (s *supervision) leadershipEnded(cause error) (outcome, bool) {
	how := lossOf(cause, s.pastLease())
	switch how {
	case noOutcome:
		return noOutcome, false // resumed past the lease: say so first (checkLease)
	case proposalGone:
		s.kill(cause.Error())
		s.r.log.Warn(cause.Error()+" by someone else: leadership lost", logEvLeadershipLost.attr(), "proposal", s.c.node)
	case sessionLost:
		s.kill("session lost")
		s.r.log.Warn("ZooKeeper session lost while leading", logEvSessionLost.attr(), "reason", s.c.s.LostReason())
	default:
		// Not while supervising (the lease is let go after it): the
		// safe side, as for a lost lease.
		s.kill(cause.Error())
		s.r.log.Warn("leadership ended while supervising: "+cause.Error(), logEvLeadershipLost.attr(), "proposal", s.c.node)
	}
	return how, true
}

// lossOf is the outcome of a leadership whose context ended with cause:
// noOutcome when the lease ran out before (pastLease), which checkLease
// reports first; otherwise what cause stands for (outcomeOf).
func lossOf(cause error, pastLease bool) outcome {
	if pastLease {
		return noOutcome
	}
	return outcomeOf(cause)
}

// controlsChanged acts on ballot step-down and pause.
func (s *supervision) controlsChanged() (outcome, bool) {
	r, ctl := s.r, s.l.ctl
	switch {
	case ctl.SteppingDown() || ctl.Drained():
		if ctl.Drained() {
			r.log.Info("drained (ballot drain): handing over, then out of the line until ballot undrain", logEvDrained.attr())
		} else {
			r.log.Info("asked to step down (ballot step-down): handing over", logEvStepDown.attr())
		}
		s.announce()
		r.unpublishLeader(s.c)
		s.stop("step-down", s.killBy)
		return steppedDown, true
	case ctl.Paused() != nil && s.cmd != nil && !r.rules.scheduled:
		r.log.Info("election paused (ballot pause): stopping the command, keeping the lead", "reason", ctl.Paused().Reason)
		s.stop("paused", s.killBy)
		return paused, true
	case r.phase == phasePaused:
		return controlsChanged, true
	case r.rules.triggered && ctl.Trigger() != nil && r.phase == phaseLeading:
		return wakeUp, true // the cron leader takes the request (trigger.go)
	}
	return noOutcome, false
}

// preempting hands over to a preferred candidate once the leader decided
// to (preempt.go); run cron's leader only between runs. Checked on every
// round, since a decision made during a cron run waits for its end.
func (s *supervision) preempting() (outcome, bool) {
	to := s.l.ctl.PreemptTo()
	if to == "" || ((s.cmd != nil || len(s.beside) > 0) && s.r.rules.scheduled) {
		return 0, false
	}
	msg, ev := s.l.ctl.handoverLine()
	s.r.log.Info(msg, ev.attr(), "successor", to)
	s.announce()
	s.r.unpublishLeader(s.c)
	s.stop("preempted", s.killBy)
	return preempted, true
}

// announceHandover tells the next in line at once that a handover may
// come, before the command's grace period: it proves its place meanwhile
// (standby.go), so that it may start on credit when handed the baton.
func (r *runner) announceHandover(c *candidate) {
	c.pub.urgent(func(d *proposalData) { d.HandoverMayCome = true })
}

// announce announces a handover before a command's stop (its grace
// period leaves the next in line the time to prove its place); without a
// command the resignation follows at once and announces itself
// (transition.go, resigning).
func (s *supervision) announce() {
	if s.cmd != nil || len(s.beside) > 0 {
		s.r.announceHandover(s.c)
	}
}

// stop stops the command: SIGTERM, the grace period (never past killBy),
// then SIGKILL.
func (s *supervision) stop(reason string, killBy func() time.Time) {
	s.each(func(cmd *child) {
		ex, how := cmd.Stop(syscall.SIGTERM, s.r.set.StopGracePeriod, killBy)
		s.r.log.Info("command stopped", logEvCommandStopped.attr(), "reason", reason, "how", how, "exit_code", ex.Code)
	})
}

// kill kills the command at once.
func (s *supervision) kill(reason string) {
	s.each(func(cmd *child) {
		ex := cmd.Kill()
		s.r.log.Info("command stopped", logEvCommandStopped.attr(), "reason", reason, "how", "killed at once", "exit_code", ex.Code)
	})
}

// each does f to the command and to every run beside it, all at once: a
// grace period each would add up. It returns once every f has.
func (s *supervision) each(f func(*child)) {
	if len(s.beside) == 0 {
		if s.cmd != nil {
			f(s.cmd)
		}
		return
	}
	var wg sync.WaitGroup
	for _, cmd := range append([]*child{s.cmd}, s.beside...) {
		if cmd == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(cmd)
		}()
	}
	wg.Wait()
}

// waitOutPause holds a paused leadership, running nothing, until the
// election is resumed (controlsChanged) or the leadership ends otherwise.
func (r *runner) waitOutPause(c *candidate, l *lease, p *pauseRecord) outcome {
	r.become(phasePaused, change{c: c, pause: p})
	for {
		how := r.supervise(c, l, nil, time.Time{})
		if how == controlsChanged && l.ctl.Paused() != nil {
			continue // the controls changed, the election still paused
		}
		// Whatever ends the pause, the leader leaves it: resumed, or
		// leading until its leadership ends.
		r.become(phaseLeading, change{c: c, pause: p, resumed: how == controlsChanged})
		return how
	}
}

// stopChild stops the command for a stop signal: the same signal, the grace
// period (never past killBy), then SIGKILL; a second signal kills at once.
func (r *runner) stopChild(cmd *child, killBy func() time.Time) childExit {
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-r.hurry:
			cmd.Kill()
		case <-done:
		}
	}()
	sig := syscall.SIGTERM
	if r.stopRequested() {
		sig = r.stopSig // written before stopping was closed
	}
	r.notify.ExtendTimeout(r.set.StopGracePeriod + 5*time.Second)
	ex, how := cmd.Stop(sig, r.set.StopGracePeriod, killBy)
	r.log.Info("command stopped", logEvCommandStopped.attr(), "how", how, "exit_code", ex.Code)
	return ex
}

// wakeAlarm wakes supervision at a moment on the boot clock: Go's timers
// do not count time the host spent suspended, a kernel alarm on
// CLOCK_BOOTTIME does (it fires at once on resume). SIGALRM is ballot's
// own: nothing else in it uses the signal.
type wakeAlarm struct {
	a *bootclock.Alarm // nil if the kernel would not make one: Go's timers alone
	C <-chan os.Signal // nil without an alarm: never ready
}

func newWakeAlarm() *wakeAlarm {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGALRM) // before the alarm can fire
	a, err := bootclock.NewAlarm(syscall.SIGALRM)
	if err != nil {
		signal.Stop(ch)
		return &wakeAlarm{}
	}
	return &wakeAlarm{a: a, C: ch}
}

func (w *wakeAlarm) Set(at bootTime) {
	if w.a != nil {
		_ = w.a.Set(at)
	}
}
