package main

// run cron: the elected leader runs the command at each scheduled time.
//
// At most once per scheduled time, across failovers: before a run starts,
// the leader records its scheduled time in <base>/cron in one multi-op that
// also checks its own proposal node still exists (so only the live leader's
// session can write). A scheduled time is run only if it is later than the
// recorded one, so neither a new leader nor a clock step can run it twice.
// A leader that dies between recording and starting loses that run.
//
// With --retries N, a failed, timed-out or lost run of the latest scheduled
// time is attempted again, up to N+1 attempts in all: the attempt number is
// in the same fenced record (so a new leader goes on counting), each end is
// recorded there too, and no attempt starts once the next time is due.

import (
	"context"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
	"ballot/internal/zookeeper"
)

const onTimeTolerance = time.Second

// --overlap: what a time due while the previous run goes on gets.
const (
	overlapSkip    = "skip"
	overlapQueue   = "queue"
	overlapReplace = "replace"
	overlapAllow   = "allow"
)

// overlapLimitMax bounds --overlap-limit: every run is a process tree and
// a keeper on the leader's host.
const overlapLimitMax = 100

// autoStartingDeadline caps --starting-deadline auto, the default. A missed
// time is only ever the latest one due, so it is run at the latest before
// the next is due; the cap keeps a daily job missed through a long outage
// from starting at an unexpected hour. It is far above what a failover
// costs (T + 3T/4 after a host's death: 70 s at ZooKeeper's largest
// default session timeout, 20 ticks of 2 s) and a rolling restart of the
// candidates or of ZooKeeper (minutes).
const autoStartingDeadline = time.Hour

// cronState is what a cron leader knows of the record.
type cronState struct {
	path    string
	last    time.Time // last recorded scheduled time; zero if none
	version int32     // of the record node; -1 when it does not exist
	rec     cronRecord
}

// How an attempt ended, in the record (--retries).
const (
	cronSucceeded = "succeeded"
	cronFailed    = "failed"
)

// retryDelayCap bounds the growing delay between attempts: a nightly job
// retried with --retry-delay 1m waits 1, 2, 4, 8, 10, 10 … minutes.
const retryDelayCap = 10 * time.Minute

// retryDelay is the wait after attempt k failed: d doubled k-1 times, at
// most retryDelayCap (or d itself, if larger).
func retryDelay(d time.Duration, k int) time.Duration {
	limit := max(d, retryDelayCap)
	for ; k > 1 && d < limit; k-- {
		d *= 2
	}
	return min(d, limit)
}

// The cron record is read and written by the view (leadershipView), in
// the leader's session, the writes fenced by its proposal.

// readCronRecord reads <base>/cron, waiting out connection blips.
func (v *leadershipView) readCronRecord() (cronState, error) {
	r, c := v.r, v.c
	// With --slots, each slot runs each scheduled time once: its own record.
	st := cronState{path: c.basePath + "/" + slotName(cronName, c.slot), version: -1}
	for {
		b, stat, err := c.s.Conn.Get(st.path)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return st, nil
		case err == nil:
			var rec cronRecord
			if len(b) > 0 {
				if err := jsonlite.Unmarshal(b, &rec); err != nil {
					r.log.Warn("the cron record cannot be read; treating it as empty", "path", st.path, "error", err)
				}
			}
			st.last, st.version, st.rec = rec.ScheduledTime, stat.Version, rec
			return st, nil
		}
		if err := c.retryAfter(err, r.stopping); err != nil {
			return st, err
		}
	}
}

// recordCron writes the scheduled time t about to run (its run starting
// at start), only if this leader's proposal still exists and nobody wrote
// the record since it was read, and only if the start is not ahead of
// ZooKeeper's clock (checkClock).
func (v *leadershipView) recordCron(st *cronState, t, start time.Time, attempt int) error {
	r, c := v.r, v.c
	rec := cronRecord{ScheduledTime: t, StartedAt: time.Now().UTC(), CandidateID: c.id,
		Proposal: c.node, FencingToken: c.token}
	rec.Host, _ = os.Hostname()
	if r.set.Retries > 0 {
		rec.Attempt, rec.Attempts = attempt, r.set.Retries+1
	}
	data, _ := jsonlite.Marshal(rec)
	if err := r.checkClock(c, start); err != nil {
		return err
	}
	h := leaderHistory(c)
	entry := h.newRunEntry(historyCron)
	entry.ScheduledTime = timePtr(t)
	entry.Attempt, entry.Attempts = rec.Attempt, rec.Attempts
	for {
		ops := []any{&zk.CheckVersionRequest{Path: c.node, Version: -1}}
		if st.version < 0 {
			ops = append(ops, &zk.CreateRequest{Path: st.path, Data: data, Acl: c.s.ACL})
		} else {
			ops = append(ops, &zk.SetDataRequest{Path: st.path, Data: data, Version: st.version})
		}
		if op := h.historyCreate(entry); op != nil {
			ops = append(ops, op) // the run's history entry, in the same fenced write
		}
		res, err := c.s.Conn.Multi(ops...)
		if err == nil {
			h.created(res, 2, entry)
			st.last, st.rec = t, rec
			if st.version < 0 {
				st.version = 0
			} else {
				st.version++
			}
			return nil
		}
		if !zookeeper.Retryable(err) {
			return zookeeper.Error(err, "write", st.path)
		}
		// The answer was lost: the write may have happened. Read it back.
		if err := c.s.WaitOnline(r.stopping); err != nil {
			return err
		}
		b, stat, gerr := c.s.Conn.Get(st.path)
		if gerr == nil {
			var got cronRecord
			if jsonlite.Unmarshal(b, &got) == nil && got.ScheduledTime.Equal(t) && got.Proposal == c.node && got.Attempt == rec.Attempt {
				st.last, st.version, st.rec = t, stat.Version, got
				h.adoptOwnEntry(func(e historyEntry) bool {
					return e.Kind == historyCron && e.ScheduledTime != nil && e.ScheduledTime.Equal(t) && e.Attempt == rec.Attempt
				})
				return nil
			}
			st.version = stat.Version
		}
	}
}

// cronWork is run cron's part of a leadership: the promote hook, then the
// command at each scheduled time, until something ends the leadership.
type cronWork struct {
	r         *runner
	sched     schedule
	scheduled time.Time     // the scheduled time of the run being started
	attempt   int           // and its attempt, with --retries (0 without)
	offset    time.Duration // --spread: each run starts this long after its time (spreadOffset)
	beside    bool          // it starts beside another run (--overlap allow)
}

// The leadership's end reaches run cron's leader through supervision
// (v.supervise, v.superviseRuns), which watches its context.
func (w *cronWork) lead(_ context.Context, v leaderView) leaderEnd {
	r := w.r
	if len(r.set.OnPromote) > 0 {
		how, ex := v.runPromote()
		if how != childEnded {
			return endedBy(how, childExit{}) // the command never ran, as for run once
		}
		if !ex.Success() && r.set.OnChildError != policyIgnore {
			if r.set.OnChildError == policyExit {
				r.log.Info("exiting as on-child-* says", logEvChildPolicy.attr(), "policy", policyExit, "exit_code", ex.Code)
				return resignation("promote-failed", exitWith(ex.Code))
			}
			// reelect, and rerun: stand again, which runs the hook again
			return reelection("promote-failed", ex)
		}
	}
	v.publishLeader()
	st, err := v.readCronRecord()
	if errors.Is(err, errStopped) {
		return endedBy(stopRequested, childExit{})
	}
	if err != nil {
		return endedBy(sessionLost, childExit{})
	}
	if !st.last.IsZero() {
		r.log.Info("last scheduled run recorded", "scheduled_time", st.last.In(r.set.Timezone).Format(time.RFC3339))
	}
	v.listHistory()
	// The skips and runs recorded below check the baton: after a
	// handover's take, and not at all if it failed.
	if v.awaitTake(); !v.fresh() {
		return endedBy(leaseLost, childExit{})
	}
	cl := &cronLeader{r: r, w: w, v: v, st: st}
	defer cl.dropIdle()
	for {
		cl.reapBeside()
		msg, ev := v.handoverLine()
		if to := v.preemptTo(); to != "" && cl.cmd == nil && (ev != logEvSpreading || len(cl.beside) == 0) {
			// Between runs, before the next starts: a run that ends right
			// at the next tick must not put the handover off. Spreading
			// (run crontab) waits for the runs beside too: never during one.
			r.log.Info(msg, ev.attr(), "successor", to)
			v.unpublishLeader()
			return endedBy(preempted, childExit{})
		}
		now := time.Now()
		// A job run crontab's reload removed starts nothing more (not even
		// a time --overlap replace would stop its run for); once its runs
		// have ended by themselves, it leaves.
		leaving := isClosed(r.leaving)
		if leaving && cl.cmd == nil && len(cl.beside) == 0 {
			return endedBy(stopRequested, childExit{})
		}
		if !leaving {
			if end, over := cl.startDue(now); over {
				cl.stopBeside(end.how)
				return end
			}
			// After the scheduled time: a trigger obeys --overlap with its run.
			if end, over := cl.startTriggered(now); over {
				return end
			}
		}
		wake, end, over := cl.nextWake(now)
		if over {
			cl.stopBeside(end.how)
			return end
		}
		if leaving { // no time to start: the run's --timeout, and a look now and then
			wake = now.Add(5 * time.Second)
			if !cl.runDeadline.IsZero() && cl.runDeadline.Before(wake) {
				wake = cl.runDeadline
			}
		}
		var how outcome
		if cl.cmd == nil {
			cl.keepIdle()
			wake = cl.restUntil(now, wake)
		}
		if cl.cmd != nil && cl.cmd.pid == 0 {
			how = childEnded
		} else {
			how = v.superviseRuns(cl.cmd, cl.besideCmds(), wake)
		}
		switch how {
		case wakeUp:
			cl.timeOut()
			continue
		case childEnded:
		default:
			ex := childExit{}
			if cl.cmd != nil {
				ex = cl.cmd.Exit()
				r.forget(cl.cmd)
			}
			cl.endBeside(how) // stopped with it
			return endedBy(how, ex)
		}
		if end, over := cl.runEnded(); over {
			return end
		}
	}
}

// skipDueDuringRun says and records a time that came due while the run
// went, its end seen first (both were ready at once), as startDue says
// an overlap under --overlap skip: the run's end is recorded after the
// time, so a successor (or this leader's next round) skips it as
// overlapped, and without this line nobody would have said so.
func (cl *cronLeader) skipDueDuringRun(now time.Time) {
	r := cl.r
	if r.set.Overlap != overlapSkip || cl.cmd == nil {
		return
	}
	due, err := cl.w.latestStarted(now)
	if err != nil || !due.After(cl.st.last) || !due.After(cl.skipped) || !due.After(cl.runFor) {
		return
	}
	cl.skipOverlapped(due)
}

// skipOverlapped says, counts and records a time skipped because the run
// going on was still going at it (--overlap skip).
func (cl *cronLeader) skipOverlapped(due time.Time) {
	r := cl.r
	r.log.Info("scheduled run skipped: the previous run is still going", logEvRunSkipped.attr(), "skip", "overlap",
		"scheduled_time", r.fmtTime(due), "running_since", r.fmtTime(cl.runFor))
	r.metrics.CronSkipped("overlap")
	cl.v.skippedWhileRunning(due, "the previous run was still going")
	cl.skipped = due
}

// cronLeader is what a cron leader keeps track of while it leads.
type cronLeader struct {
	r *runner
	w *cronWork
	v leaderView

	st          cronState
	cmd         *child
	runFor      time.Time // the scheduled time of the run going on
	runDeadline time.Time // when a run is stopped by --timeout
	timedOut    bool
	announced   time.Time // the next time already logged
	skipped     time.Time // the latest time already logged as skipped
	idle        *idleKeeper
	idleFailed  bool      // the failure to start one is logged
	lastEnd     time.Time // when the run recorded before this leadership ended (overlapped)
	lastEndRead bool
	queued      time.Time // --overlap queue: the time waiting for the run going on

	// ballot trigger (trigger.go): the run going on is a triggered one
	// (nil: a scheduled one); the last request taken, by its czxid.
	trig        *triggerRecord
	triggerDone int64
	beside      []*besideRun // --overlap allow: earlier runs still going beside cmd, oldest first
	forgot      bool         // their keepers were told to forget the session (cronallow.go)
}

// keepIdle keeps a keeper between runs (keeperidle.go), once the baton's
// take is settled: it must know how to give the baton back.
func (cl *cronLeader) keepIdle() {
	r := cl.r
	if cl.idle != nil || cl.v.takePending() {
		return
	}
	k, err := cl.v.startIdleKeeper()
	if k == nil && err == nil {
		return // a shared session's jobs keep none (keeperidle.go)
	}
	if err != nil {
		if !cl.idleFailed {
			r.log.Warn("cannot start a keeper between runs; should ballot die now, the baton goes with its session", "error", err)
			cl.idleFailed = true
		}
		return
	}
	cl.idle = k
	r.log.Debug("a keeper stands by between runs: should ballot die, it gives the baton back", logEvKeeperReady.attr())
}

// dropIdle ends the keeper between runs: before a run's keeper starts,
// and when the leadership ends.
func (cl *cronLeader) dropIdle() {
	cl.idle.stop()
	cl.idle = nil
}

// restUntil lets the lease lapse between runs (lease.Rest): no write
// while nothing runs. It is taken again armAhead before the next start:
// the next scheduled time (cl.announced) or a retry's, so that its answer
// is in before the run is due; wake is moved up to that moment.
func (cl *cronLeader) restUntil(now, wake time.Time) time.Time {
	v := cl.v
	if v.takePending() {
		return wake
	}
	if v.paused() != nil {
		// Paused: every time due is skipped, so none needs the lease
		// (a resume before one takes it in start, a round trip late).
		v.rest()
		return wake
	}
	next := cl.announced
	if !next.IsZero() {
		next = cl.w.startOf(next) // --spread
	}
	if retry, ok := cl.retryAt(); ok && v.paused() == nil && retry.Before(next) {
		next = retry
	}
	at := next.Add(-cl.armAhead())
	if next.IsZero() || !now.Before(at) {
		v.arm()
		return wake
	}
	v.rest()
	if at.Before(wake) {
		wake = at
	}
	return wake
}

// armAhead is how long before a scheduled time the lease is taken again:
// T/16, or twice the largest round trip a renewal took if longer (a slow
// link), at most T/4. The take is one quorum write; its answer, a round
// trip later, must be in before the run is due, or the run starts late by
// what is missing. Earlier would buy nothing (the lease is renewed every
// T/8 from the take on, so a run starts with 9T/16 − ρ of lease before its
// SIGTERM point however early it was taken) and cost a renewal more per
// T/8.
func (cl *cronLeader) armAhead() time.Duration {
	t := cl.v.timeout()
	_, largest := cl.v.renewals()
	return min(max(t/16, 2*largest), t/4)
}

// startDue starts the latest scheduled time if it is due, not run yet and
// not to be skipped. over reports that the leadership ends with end.
func (cl *cronLeader) startDue(now time.Time) (end leaderEnd, over bool) {
	r, v := cl.r, cl.v
	due, err := cl.w.latestStarted(now)
	if err == nil && cl.cmd == nil && due.Equal(cl.st.last) {
		return cl.retryDue(now, due)
	}
	if err != nil || !due.After(cl.st.last) || !due.After(cl.skipped) || due.Equal(cl.runFor) {
		return end, false
	}
	late := now.Sub(cl.w.startOf(due)) // late from its start: --spread moves catch-up and deadlines too
	switch {
	case cl.cmd != nil && r.set.Overlap == overlapQueue:
		if due.Equal(cl.queued) {
			break
		}
		if !cl.queued.IsZero() {
			r.log.Info("scheduled run skipped: a later time is queued in its place", logEvRunSkipped.attr(), "skip", "overlap",
				"scheduled_time", r.fmtTime(cl.queued), "queued", r.fmtTime(due))
			r.metrics.CronSkipped("overlap")
			v.skippedWhileRunning(cl.queued, "a later time was queued in its place")
		}
		r.log.Info("scheduled run queued: it starts when the previous run ends (--overlap queue)", logEvRunQueued.attr(),
			"scheduled_time", r.fmtTime(due), "running_since", r.fmtTime(cl.runFor))
		cl.queued = due
	case cl.cmd != nil && r.set.Overlap == overlapReplace:
		return cl.replace(due)
	case cl.cmd != nil && r.set.Overlap == overlapAllow:
		return cl.allow(due)
	case cl.cmd != nil:
		cl.skipOverlapped(due)
	case v.paused() == nil && (due.Equal(cl.queued) || (r.set.Overlap == overlapQueue && cl.overlapped(due))):
		// Queued behind a run (this leader's, or its predecessor's
		// when that one resigned after it): however late, it was not
		// missed.
		r.log.Info("queued scheduled run starting", "scheduled_time", r.fmtTime(due), "late_by", late.Round(time.Millisecond))
		cl.queued = time.Time{}
		return cl.start(due, 1)
	case r.set.Overlap != overlapQueue && r.set.Overlap != overlapAllow && cl.overlapped(due):
		// The last recorded run, an earlier leader's, was still going at
		// due: that leader skipped due as an overlap (its history says so,
		// with the run's end). A missed time it is not.
		cl.skipped = due
	case late >= onTimeTolerance && cl.st.last.IsZero() && (late >= r.set.StartingDeadline || r.set.CatchUpDefault):
		// Nothing was ever recorded: this time was not missed by a
		// failover, the election is simply new. (An explicit deadline
		// runs it, as it always did.)
		cl.skipped = due
	case late >= onTimeTolerance && late >= r.set.StartingDeadline:
		reason := "missed and --starting-deadline 0 skips missed times"
		switch {
		case r.set.CatchUpDefault:
			reason = "missed by more than the default starting-deadline (1h)"
		case r.set.StartingDeadline > 0:
			reason = "missed by more than the starting-deadline"
		}
		cl.w.logMissed(laterOf(cl.st.last, cl.skipped), due, late, reason)
		cl.recordMissed(due, reason)
		r.metrics.CronSkipped("missed")
		cl.skipped = due
	case v.paused() != nil:
		p := v.paused()
		r.log.Info("scheduled run skipped: the election is paused (ballot resume to resume)", logEvRunSkipped.attr(), "skip", "paused",
			"scheduled_time", r.fmtTime(due), "reason", p.Reason, "by", p.By)
		r.metrics.CronSkipped("paused")
		v.recordSkip(due, due, 1, "the election was paused")
		cl.skipped = due
	default:
		if !cl.st.last.IsZero() {
			cl.w.logMissed(laterOf(cl.st.last, cl.skipped), due, late, "")
			cl.recordMissed(due, "")
		}
		return cl.start(due, 1)
	}
	return end, false
}

// overlapped reports whether the last recorded run ended after due (read
// once per leadership, from the record with --retries, else from the run's
// history entry): due came while it was going.
func (cl *cronLeader) overlapped(due time.Time) bool {
	if cl.st.last.IsZero() {
		return false
	}
	if !cl.lastEndRead {
		cl.lastEndRead = true
		if e := cl.st.rec.EndedAt; e != nil {
			cl.lastEnd = *e
		} else {
			cl.lastEnd = cl.v.runEndOf(cl.st.last)
		}
	}
	return cl.lastEnd.After(cl.w.startOf(due))
}

// retryAt is when the recorded scheduled time may be attempted again
// (--retries); ok is false when it may not: it succeeded, it runs here, it
// had all its attempts, or it was recorded without --retries (no end was
// recorded then, so a lost run cannot be told from a finished one).
func (cl *cronLeader) retryAt() (at time.Time, ok bool) {
	rec, n := cl.st.rec, cl.r.set.Retries
	if n == 0 || cl.cmd != nil || rec.Attempts == 0 || rec.Attempt >= n+1 || rec.Ended == cronSucceeded ||
		cl.st.last.IsZero() || cl.skipped.Equal(cl.st.last) {
		return at, false
	}
	if rec.Ended == "" || rec.EndedAt == nil {
		return at, true // lost with its leader (or stopped with the lead): at once
	}
	return rec.EndedAt.Add(retryDelay(cl.r.set.RetryDelay, rec.Attempt)), true
}

// retryDue starts the next attempt of the recorded time due (still the
// latest: the next time is not due) once its delay has passed.
func (cl *cronLeader) retryDue(now, due time.Time) (end leaderEnd, over bool) {
	r := cl.r
	at, ok := cl.retryAt()
	if !ok || now.Before(at) || cl.v.paused() != nil {
		return end, false
	}
	prev := cl.st.rec
	why := "the previous attempt failed"
	if prev.Ended == "" {
		why = "the previous attempt was lost with its leader"
	}
	r.log.Info("retrying the scheduled time: "+why, logEvRetrying.attr(), "scheduled_time", r.fmtTime(due),
		"attempt", prev.Attempt+1, "of", r.set.Retries+1, "previous_by", prev.CandidateID)
	return cl.start(due, prev.Attempt+1)
}

// replace stops the run going on (--overlap replace: SIGTERM, the grace
// period, SIGKILL; everything reaped), records its end, and starts due.
func (cl *cronLeader) replace(due time.Time) (end leaderEnd, over bool) {
	r, v := cl.r, cl.v
	v.endAs(endStopped, "replaced by the run of "+r.fmtTime(due)+" (--overlap replace)")
	ex, how := cl.cmd.Stop(syscall.SIGTERM, r.set.StopGracePeriod, v.killBy())
	r.log.Info("scheduled run replaced: the previous run is stopped for the next (--overlap replace)", logEvCommandStopped.attr(),
		"reason", "overlap-replace", "how", how, "scheduled_time", r.fmtTime(cl.runFor), "next", r.fmtTime(due), "exit_code", ex.Code)
	r.forget(cl.cmd)
	v.publishRunEnd(ex)
	v.writeRunEnd(ex)
	cl.cmd, cl.runDeadline = nil, time.Time{}
	return cl.start(due, 1)
}

// start records the scheduled time due (its attempt-th attempt), then runs
// it, on a fresh lease.
func (cl *cronLeader) start(due time.Time, attempt int) (end leaderEnd, over bool) {
	r, v := cl.r, cl.v
	// The lease lapses between runs (restUntil): take it again, one
	// renewal, and wait for its answer. The record checks the baton:
	// after a handover's take too.
	if !v.awaitFresh() {
		if r.stopRequested() {
			return endedBy(stopRequested, childExit{}), true
		}
		return endedBy(leaseLost, childExit{}), true
	}
	if err := v.recordCron(&cl.st, due, cl.w.startOf(due), attempt); err != nil {
		if errors.Is(err, errStopped) {
			return endedBy(stopRequested, childExit{}), true
		}
		if cl.refusedAhead(due, err) {
			return end, false
		}
		r.log.Warn("cannot record the scheduled time; not running it", "scheduled_time", r.fmtTime(due), "error", err)
		return endedBy(sessionLost, childExit{}), true
	}
	if !v.fresh() {
		// The write may have waited out a partition: the time is
		// recorded (so never run twice) but not run.
		r.log.Warn("lease lost while recording the scheduled time; this run is lost", "scheduled_time", r.fmtTime(due))
		return endedBy(leaseLost, childExit{}), true
	}
	// The keeper between runs runs this one: no keeper to start, and
	// never two.
	r.setSpare(cl.idle)
	cl.idle = nil
	cmd, err := cl.w.startScheduled(v, due, cl.st.rec.Attempt)
	if err != nil {
		r.log.Error("ballot failed", "error", err)
		return resignation("ballot-failed", exitWith(exitFailure)), true
	}
	cl.cmd, cl.runFor, cl.timedOut = cmd, due, false
	// While it runs a handover may come (the run's end under reelect, the
	// leader's death): its next in line proves its place meanwhile.
	v.publish(func(d *proposalData) { d.HandoverMayCome = true })
	cl.runDeadline = time.Time{}
	if r.set.Timeout > 0 {
		cl.runDeadline = time.Now().Add(r.set.Timeout)
	}
	return end, false
}

// nextWake announces the next scheduled time and says when to wake for
// it. over reports that the schedule has ended, and the leadership with it.
func (cl *cronLeader) nextWake(now time.Time) (wake time.Time, end leaderEnd, over bool) {
	r := cl.r
	next, err := cl.w.nextStarting(now, cl.st.last)
	if err != nil {
		r.log.Error("the schedule has no more times; exiting", "error", err)
		if cl.cmd != nil {
			r.stopChild(cl.cmd, cl.v.killBy())
		}
		return wake, resignation("schedule-ended", exitWith(exitOK)), true
	}
	if !next.Equal(cl.announced) {
		cl.announced = next
		cl.w.announce(cl.v, next)
	}
	// Wake at the next time and the run's deadline; a stepped wall clock
	// wakes supervision too (wallSteps). While runs go, at least every few
	// seconds as well: the times due meanwhile (--overlap) are read off
	// the wall clock.
	wake = laterOf(cl.w.startOf(next), now)
	if d := now.Add(5 * time.Second); d.Before(wake) && (cl.cmd != nil || len(cl.beside) > 0) {
		wake = d
	}
	if at, ok := cl.retryAt(); ok && cl.v.paused() == nil && at.Before(wake) {
		wake = laterOf(at, now)
	}
	if !cl.runDeadline.IsZero() && cl.runDeadline.Before(wake) {
		wake = cl.runDeadline
	}
	for _, b := range cl.beside {
		if !b.runDeadline.IsZero() && b.runDeadline.Before(wake) {
			wake = b.runDeadline
		}
	}
	return wake, end, false
}

// timeOut stops a run that outlived --timeout.
func (cl *cronLeader) timeOut() {
	r := cl.r
	if cl.cmd != nil && !cl.runDeadline.IsZero() && !time.Now().Before(cl.runDeadline) {
		ex, stopped := cl.cmd.Stop(syscall.SIGTERM, r.set.StopGracePeriod, cl.v.killBy())
		r.log.Warn("run timed out", logEvTimedOut.attr(), "scheduled_time", r.fmtTime(cl.runFor), "timeout", r.set.Timeout, "how", stopped, "exit_code", ex.Code)
		cl.v.endAs(endTimedOut, "--timeout "+r.set.Timeout.String())
		cl.timedOut = true
		cl.runDeadline = time.Time{}
	}
	cl.timeOutBeside()
}

// runEnded records the end of a run and applies on-child-success /
// on-child-error: exit and reelect end the leadership (over); rerun and
// ignore stay leader for the next scheduled time.
func (cl *cronLeader) runEnded() (end leaderEnd, over bool) {
	r := cl.r
	cl.skipDueDuringRun(time.Now())
	ex := cl.cmd.Exit()
	r.forget(cl.cmd)
	cl.v.publishRunEnd(ex)
	if len(cl.beside) == 0 {
		cl.v.publish(func(d *proposalData) { d.HandoverMayCome = false })
	}
	cl.v.writeRunEnd(ex)
	cl.cmd, cl.runDeadline = nil, time.Time{}
	latest := cl.runFor.Equal(cl.st.last)
	if cl.timedOut && ex.Code == 0 {
		ex.Code = exitFailure
	}
	if ex.Started {
		attrs := []any{logEvCommandEnded.attr(), "scheduled_time", r.fmtTime(cl.runFor), "exit_code", ex.Code,
			"duration", ex.Duration.Round(time.Millisecond), "timed_out", cl.timedOut}
		if ex.Code == 0 {
			r.log.Info("scheduled run ended", attrs...)
		} else {
			// A failure stands out at a glance, and in --quiet.
			r.log.Warn("scheduled run ended", append(attrs, lastLineAttr(ex)...)...)
		}
	}
	if cl.timedOut {
		ex.Started = false // a timed-out run is an error, whatever its status
	}
	if ex.Success() {
		r.metrics.CronSucceeded(cl.runFor)
	}
	if cl.trig != nil {
		cl.trig = nil // the record's --retries count scheduled times only
	} else if latest {
		cl.recordEnd(ex.Success()) // an earlier time (--overlap allow) is never retried: a later one is due
	}
	if cl.popBeside() {
		// --overlap allow: on-child-* applies when the last run going ends.
		return end, false
	}
	switch policy := r.policyFor(ex); policy {
	case policyExit:
		r.log.Info("exiting as on-child-* says", logEvChildPolicy.attr(), "policy", policy, "exit_code", ex.Code)
		return resignation("command-exited", exitWith(ex.Code)), true
	case policyReelect:
		// No back-off here: the next run waits for its scheduled time.
		return resignation("command-exited", rejoin()), true
	}
	return end, false
}

// recordEnd writes how the attempt ended into the record (--retries only):
// a new leader must tell a failed attempt (retried after its delay) from
// a successful one (never retried) and from one lost with its leader (no
// end: retried at once). Fenced like the record itself.
func (cl *cronLeader) recordEnd(ok bool) {
	r, st := cl.r, &cl.st
	if r.set.Retries == 0 || st.rec.Attempts == 0 {
		return
	}
	now := time.Now().UTC()
	st.rec.Ended, st.rec.EndedAt = cronFailed, &now
	if ok {
		st.rec.Ended = cronSucceeded
	}
	cl.v.recordCronEnd(st)
	switch {
	case ok:
	case st.rec.Attempt < r.set.Retries+1:
		r.log.Info("scheduled run failed; it will be retried", "scheduled_time", r.fmtTime(st.last),
			"attempt", st.rec.Attempt, "of", r.set.Retries+1, "retry_in", retryDelay(r.set.RetryDelay, st.rec.Attempt))
	default:
		r.log.Warn("scheduled run failed; no attempt left", "scheduled_time", r.fmtTime(st.last), "attempts", st.rec.Attempt)
	}
}

// recordCronEnd writes st's record, its end set (recordEnd), fenced like
// the record itself.
func (v *leadershipView) recordCronEnd(st *cronState) {
	r, c := v.r, v.c
	data, _ := jsonlite.Marshal(st.rec)
	for try := 0; ; try++ {
		_, err := c.s.Conn.Multi(&zk.CheckVersionRequest{Path: c.node, Version: -1},
			&zk.SetDataRequest{Path: st.path, Data: data, Version: st.version})
		if err == nil {
			st.version++
			break
		}
		if zookeeper.Retryable(err) && try < 3 && c.s.WaitOnline(r.stopping) == nil {
			// The answer was lost: the write may have happened.
			if b, stat, gerr := c.s.Conn.Get(st.path); gerr == nil {
				var got cronRecord
				if jsonlite.Unmarshal(b, &got) == nil && got.Ended == st.rec.Ended && got.Attempt == st.rec.Attempt && got.ScheduledTime.Equal(st.last) {
					st.version = stat.Version
					break
				}
			}
			continue
		}
		r.log.Warn("cannot record how the attempt ended; the next leader counts it as lost and retries it",
			"scheduled_time", r.fmtTime(st.last), "attempt", st.rec.Attempt, "error", err)
		break
	}
}

func (w *cronWork) startScheduled(v leaderView, t time.Time, attempt int) (*child, error) {
	r := w.r
	if attempt > 0 {
		r.log.Info("scheduled run starting", logEvRunStarting.attr(), "scheduled_time", r.fmtTime(t), "late_by", time.Since(w.startOf(t)).Round(time.Millisecond),
			"attempt", attempt, "of", r.set.Retries+1)
	} else {
		r.log.Info("scheduled run starting", logEvRunStarting.attr(), "scheduled_time", r.fmtTime(t), "late_by", time.Since(w.startOf(t)).Round(time.Millisecond))
	}
	w.scheduled, w.attempt = t, attempt
	r.metrics.CronRun(t)
	if w.beside {
		return v.startBeside()
	}
	return v.startCommand()
}

// logMissed says which scheduled times after last nobody ran: those before
// due, and due itself when it is skipped too (reason non-empty).
func (w *cronWork) logMissed(last, due time.Time, late time.Duration, reason string) {
	r := w.r
	if last.IsZero() {
		last = due.Add(-time.Nanosecond)
	}
	first, err := w.sched.Next(last)
	if err != nil {
		first = due
	}
	switch {
	case reason != "":
		r.log.Info("missed scheduled times skipped", logEvRunSkipped.attr(), "skip", "missed", "reason", reason, "from", r.fmtTime(first), "to", r.fmtTime(due), "late_by", late.Round(time.Millisecond))
	case first.Before(due):
		r.log.Info("missed scheduled times skipped: no leader ran them; only the latest is run", logEvRunSkipped.attr(), "skip", "missed", "from", r.fmtTime(first), "before", r.fmtTime(due))
	}
	if reason == "" && late >= onTimeTolerance {
		r.log.Info("running a missed scheduled time (within the starting-deadline)", logEvMissedRun.attr(), "scheduled_time", r.fmtTime(due), "late_by", late.Round(time.Millisecond))
	}
}

func (r *runner) fmtTime(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.In(r.set.Timezone).Format(time.RFC3339)
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// startOf is when the run of the scheduled time t starts: --spread's
// offset after it.
func (w *cronWork) startOf(t time.Time) time.Time { return t.Add(w.offset) }

// latestStarted is the last scheduled time whose run starts at or before now.
func (w *cronWork) latestStarted(now time.Time) (time.Time, error) {
	return w.sched.Latest(now.Add(-w.offset))
}

// nextStarting is the first scheduled time after last whose run starts
// after now.
func (w *cronWork) nextStarting(now, last time.Time) (time.Time, error) {
	return w.sched.Next(laterOf(now.Add(-w.offset), last))
}

// announce logs the next scheduled time and publishes it for info, with
// its start when --spread moves it.
func (w *cronWork) announce(v leaderView, next time.Time) {
	r, start := w.r, w.startOf(next)
	nr := &scheduledNext{Time: next.Format(time.RFC3339)}
	attrs := []any{"scheduled_time", r.fmtTime(next), "in", time.Until(start).Round(time.Millisecond)}
	if w.offset > 0 {
		nr.StartsAt = start.Format(time.RFC3339)
		attrs = append(attrs, "starts_at", r.fmtTime(start), "spread_offset", w.offset)
	}
	r.log.Info("next run due", attrs...)
	v.publish(func(d *proposalData) { d.NextRun = nr })
}

// run cron's leader is chosen by its schedule: nothing for it to publish
// or check before it leads.
func (w *cronWork) proposed(*candidate)                                 {}
func (w *cronWork) beforeFollowing(*candidate) verdict                  { return verdict{} }
func (w *cronWork) whileFollowing(*candidate) (<-chan struct{}, func()) { return nil, func() {} }

func (w *cronWork) runEnv() []string {
	env := []string{"BALLOT_SCHEDULED_TIME=" + w.scheduled.In(w.r.set.Timezone).Format(time.RFC3339)}
	if w.attempt > 0 {
		env = append(env, "BALLOT_ATTEMPT="+strconv.Itoa(w.attempt)) // --retries
	}
	return env
}

func (w *cronWork) scheduledTime() time.Time { return w.scheduled }
