package main

// run cron --overlap allow: a time due while the previous run goes on
// starts beside it, on the leader's host only, up to --overlap-limit runs.
// Each run is recorded and fenced as any run is (its own record write and
// history entry); all go under the one lease and stop together when the
// leadership ends (supervision's beside). The newest is cronLeader.cmd; the
// earlier ones wait in cronLeader.beside.
//
// The keeper of each run kills its tree should ballot die; but a keeper
// that then ended ballot's session would let a successor start while
// another keeper may still be reaping its tree. So while two runs or more
// go, no keeper knows the session (orderForget): it expires, T later. A
// session shared by several jobs (run crontab) stays known, without the
// release: the last keeper done with it closes it, after every keeper's
// tree is reaped (internal/keeper/keepershare.go).

import (
	"sync"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/keeper"
)

// besideRun is a run going on beside the newest one.
type besideRun struct {
	cmd         *child
	runFor      time.Time
	runDeadline time.Time
	timedOut    bool
	hist        runEntryState
}

// runEntryState is a run's part of the candidate's history state, kept
// aside while another run is the one going on.
type runEntryState struct {
	open           *openEntry
	ending, reason string
	overlap        *historyEntry
}

func (h historyWriter) stashRun() runEntryState {
	e := runEntryState{h.open, h.ending, h.reason, h.overlap}
	h.open, h.ending, h.reason, h.overlap = nil, "", "", nil
	return e
}

func (h historyWriter) unstashRun(e runEntryState) {
	h.open, h.ending, h.reason, h.overlap = e.open, e.ending, e.reason, e.overlap
}

// allow starts due beside the runs going on, or skips it at the limit.
func (cl *cronLeader) allow(due time.Time) (end leaderEnd, over bool) {
	r := cl.r
	if p := cl.v.paused(); p != nil {
		r.log.Info("scheduled run skipped: the election is paused (ballot resume to resume)", logEvRunSkipped.attr(), "skip", "paused",
			"scheduled_time", r.fmtTime(due), "reason", p.Reason, "by", p.By)
		r.metrics.CronSkipped("paused")
		cl.v.skippedWhileRunning(due, "the election was paused")
		cl.skipped = due
		return end, false
	}
	if n := 1 + len(cl.beside); n >= r.set.OverlapLimit {
		r.log.Info("scheduled run skipped: --overlap-limit runs are going", logEvRunSkipped.attr(), "skip", "overlap-limit",
			"scheduled_time", r.fmtTime(due), "running", n, "limit", r.set.OverlapLimit)
		r.metrics.CronSkipped("overlap-limit")
		cl.v.skippedWhileRunning(due, "--overlap-limit runs were going")
		cl.skipped = due
		return end, false
	}
	// Told before the new keeper exists: a keeper reads every order
	// ballot wrote before it acts on ballot's death.
	// A keeper that did not take the order (its pipe full: stopped)
	// would end the session at ballot's death, the new run's tree alive:
	// the time is skipped instead.
	if !cl.forgot {
		if !cl.cmd.tellForget() {
			r.log.Warn("scheduled run skipped: the running run's keeper did not take the order to forget the session", logEvRunSkipped.attr(),
				"skip", "overlap", "scheduled_time", r.fmtTime(due))
			r.metrics.CronSkipped("overlap")
			cl.v.skippedWhileRunning(due, "the running run's keeper did not answer")
			cl.skipped = due
			return end, false
		}
		cl.forgot = true
	}
	r.log.Info("scheduled run starting beside the run going on (--overlap allow)", "scheduled_time", r.fmtTime(due),
		"running_since", r.fmtTime(cl.runFor), "runs", 2+len(cl.beside))
	cl.beside = append(cl.beside, &besideRun{cmd: cl.cmd, runFor: cl.runFor, runDeadline: cl.runDeadline, timedOut: cl.timedOut,
		hist: cl.v.stashRun()})
	cl.cmd, cl.runDeadline = nil, time.Time{}
	cl.trig = nil // a triggered run goes on beside; the new one is scheduled, and its end counts for --retries
	w := cl.w
	w.beside = true
	end, over = cl.start(due, 1)
	w.beside = false
	if !over && cl.cmd == nil {
		cl.popBeside() // not started: the newest run going is the current one again
	}
	return end, over
}

// besideCmds are the runs going on beside cl.cmd.
func (cl *cronLeader) besideCmds() []*child {
	if len(cl.beside) == 0 {
		return nil
	}
	cmds := make([]*child, len(cl.beside))
	for i, b := range cl.beside {
		cmds[i] = b.cmd
	}
	return cmds
}

// popBeside makes the newest run beside the current one, once the current
// one ended; false if none goes. The last run going is told the session
// again: its keeper alone may end it now.
func (cl *cronLeader) popBeside() bool {
	n := len(cl.beside)
	if n == 0 || cl.cmd != nil {
		return false
	}
	b := cl.beside[n-1]
	cl.beside = cl.beside[:n-1]
	cl.cmd, cl.runFor, cl.runDeadline, cl.timedOut = b.cmd, b.runFor, b.runDeadline, b.timedOut
	// The runner's current command again: signals are forwarded to it,
	// and the lease counts it as a command running (busy), so checked in
	// first, as a command's start does: the run that ended may have taken
	// its records' writes longer than renewals allow since the last one.
	cl.v.checkIn()
	cl.r.mu.Lock()
	cl.r.current = cl.cmd
	cl.r.mu.Unlock()
	cl.v.unstashRun(b.hist)
	cl.retell()
	return true
}

// retell gives the handoff back to the one run left (orderForget undone):
// every other tree is reaped.
func (cl *cronLeader) retell() {
	if len(cl.beside) > 0 || !cl.forgot || cl.cmd == nil {
		return
	}
	cl.forgot = false
	cl.v.retell(cl.cmd)
}

func (v *leadershipView) retell(cmd *child) {
	if h := handoffFor(v.c, v.l); h != nil {
		cmd.tellHandoff(h)
	}
	if d := v.r.keeperDemote(v.c); d != nil {
		cmd.tell(keeper.DemoteOrder(d))
	}
}

// reapBeside records the end of each run beside that ended.
func (cl *cronLeader) reapBeside() {
	r, v := cl.r, cl.v
	kept := cl.beside[:0]
	for _, b := range cl.beside {
		select {
		case <-b.cmd.Done():
		default:
			kept = append(kept, b)
			continue
		}
		ex := b.cmd.Exit()
		r.forget(b.cmd)
		if b.timedOut && ex.Code == 0 {
			ex.Code = exitFailure
		}
		attrs := []any{logEvCommandEnded.attr(), "scheduled_time", r.fmtTime(b.runFor), "exit_code", ex.Code,
			"duration", ex.Duration.Round(time.Millisecond), "timed_out", b.timedOut}
		if ex.Code == 0 {
			r.log.Info("scheduled run ended", attrs...)
		} else {
			r.log.Warn("scheduled run ended", append(attrs, lastLineAttr(ex)...)...)
		}
		if b.timedOut {
			ex.Started = false
		}
		if ex.Success() {
			r.metrics.CronSucceeded(b.runFor)
		}
		cur := v.stashRun()
		v.unstashRun(b.hist)
		v.writeRunEnd(ex)
		v.stashRun()
		v.unstashRun(cur)
	}
	clear(cl.beside[len(kept):])
	cl.beside = kept
	cl.retell()
}

// timeOutBeside stops each run beside that outlived --timeout.
func (cl *cronLeader) timeOutBeside() {
	r := cl.r
	for _, b := range cl.beside {
		if b.runDeadline.IsZero() || time.Now().Before(b.runDeadline) {
			continue
		}
		ex, stopped := b.cmd.Stop(syscall.SIGTERM, r.set.StopGracePeriod, cl.v.killBy())
		r.log.Warn("run timed out", logEvTimedOut.attr(), "scheduled_time", r.fmtTime(b.runFor), "timeout", r.set.Timeout, "how", stopped, "exit_code", ex.Code)
		if b.hist.open != nil && b.hist.ending == "" {
			b.hist.ending, b.hist.reason = endTimedOut, "--timeout "+r.set.Timeout.String()
		}
		b.timedOut, b.runDeadline = true, time.Time{}
	}
}

// stopBeside stops the runs beside as the leadership ends otherwise than
// in supervision (a start or a record that failed, the schedule's end):
// killed at once when the leadership is lost, else with the grace period.
func (cl *cronLeader) stopBeside(how outcome) {
	if len(cl.beside) == 0 {
		return
	}
	lost := how == leaseLost || how == sessionLost || how == proposalGone
	var wg sync.WaitGroup
	for _, b := range cl.beside {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if lost {
				b.cmd.Kill()
			} else {
				cl.r.stopChild(b.cmd, cl.v.killBy())
			}
		}()
	}
	wg.Wait()
	cl.endBeside(how)
}

// endBeside records the end of the runs beside, stopped with the
// leadership: in one fenced write, waiting a quarter of the session
// timeout at most (after a loss the session may not answer; the next
// leader closes the entries then), like closeRun for the current run.
func (cl *cronLeader) endBeside(how outcome) {
	ending, reason := how.ending()
	if ending == "" {
		ending, reason = endStopped, "the leadership ended"
	}
	for _, b := range cl.beside {
		cl.r.forget(b.cmd)
	}
	cl.v.endRunsBeside(cl.beside, ending, reason)
	cl.beside = nil
}

// endRunsBeside writes the end of each run of beside in one fenced write
// (endBeside).
func (v *leadershipView) endRunsBeside(beside []*besideRun, ending, reason string) {
	c := v.c
	ops := []any{&zk.CheckVersionRequest{Path: c.node, Version: -1}}
	for _, b := range beside {
		if o := b.hist.open; o != nil {
			ops = append(ops, leaderHistory(c).endOp(o, ending, reason, b.cmd.Exit()))
		}
	}
	if len(ops) == 1 {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := c.s.Conn.Multi(ops...)
		if err != nil {
			// The proposal is gone: each entry's own version fences its
			// end, as writeRunEnd does for the current run.
			_, err = c.s.Conn.Multi(ops[1:]...)
		}
		if err != nil {
			c.log.Warn("cannot record the end of the runs beside in the history", "error", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(c.s.Timeout() / 4):
		c.log.Warn("the end of the runs beside was not recorded in time; the next leader records them as leadership-lost")
	}
}
