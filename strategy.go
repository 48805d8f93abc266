package main

// The mode, run once or run cron, chosen once at start, and what a leader
// does while it leads under run once: where the two modes differ.

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"time"

	"ballot/internal/jsonlite"
)

// leaderWork is the mode, run once or run cron, chosen once at start
// (newLeaderWork) with its rules (runRules): nothing else asks which mode
// runs. Its methods are where the modes differ: before leading (what a
// proposal publishes, what a follower checks), and a leader's part of a
// candidacy, between elected and resigning.
type leaderWork interface {
	// lead runs the promote hook and the command while ctx lasts (it ends
	// with the leadership, its cause saying why: leadershipContext), with
	// what v lets it do, and reports why the leadership ends; candidacy
	// resigns or gives it up.
	lead(ctx context.Context, v leaderView) leaderEnd
	// proposed publishes the mode's part of a new proposal.
	proposed(c *candidate)
	// beforeFollowing checks a new proposal before it waits in line;
	// a verdict other than goOn ends the candidacy.
	beforeFollowing(c *candidate) verdict
	// whileFollowing is what ends the wait in line early (nil: nothing),
	// and unwatch stops watching.
	whileFollowing(c *candidate) (done <-chan struct{}, unwatch func())
	// runEnv is the mode's part of the command's environment.
	runEnv() []string
	// scheduledTime is the scheduled time of the run being started; zero
	// for a mode without one.
	scheduledTime() time.Time
}

// runRules are what the runner needs to know of the mode's runs, fixed
// with the mode (newLeaderWork).
type runRules struct {
	// scheduled: run cron's runs. A run, once started, is never cut short
	// by a pause or a preemption (later times are skipped, the handover
	// waits for its end); between runs nothing runs under the lease, which
	// lapses (lease.Rest).
	scheduled bool
	records   bool // the history records its runs; --on-run-end and --ping-url report them
	prestart  bool // the next in line starts a keeper ahead for its command
	preempts  bool // --preempt-after may cut a run short to hand over
	triggered bool // ballot trigger asks its leader for runs (trigger.go)
}

// newLeaderWork chooses the mode: run cron with a schedule, run once
// otherwise (with or without --once-key).
func newLeaderWork(r *runner, sched schedule) (leaderWork, runRules) {
	if cs, ok := sched.(cronSchedule); ok && cs.expr != strings.Join(strings.Fields(r.set.Schedule), " ") {
		// H fields: say what they became, the same on every candidate.
		r.log.Info("the schedule's H fields are hashed from the election's path", "schedule", r.set.Schedule, "as", cs.expr)
	}
	if sched != nil {
		w := &cronWork{r: r, sched: sched, offset: spreadOffset(r.set.BasePath, r.set.Spread)}
		return w, runRules{scheduled: true, records: true, preempts: true, triggered: true}
	}
	// A once key's run is never cut short to hand over: it runs once.
	keyed := r.set.OnceKey != ""
	return &onceWork{r: r, keyed: keyed}, runRules{records: keyed, prestart: len(r.set.Args) > 0, preempts: !keyed}
}

// onceWork is run once's: the promote hook, then the command, run again or
// not as on-child-* says, until something ends the leadership.
type onceWork struct {
	r       *runner
	keyed   bool // --once-key
	claimed bool // --once-key: this ballot recorded the key
	attempt int  // --once-key --retries: the attempt claimed (0 without --retries)

	failures     []time.Time // --rerun-limit: this host's failures within the window
	beyond       int         // failures past the limit with nobody ready to take over
	sitsOutUntil time.Time   // --rerun-limit handed over: published in each proposal until then
}

func (w *onceWork) lead(ctx context.Context, v leaderView) leaderEnd {
	end := w.leadRuns(ctx, v)
	end.keyClaimed = w.claimed
	return end
}

func (w *onceWork) leadRuns(ctx context.Context, v leaderView) leaderEnd {
	r := w.r
	promoted := len(r.set.OnPromote) == 0
	for {
		if r.stopRequested() {
			return endedBy(stopRequested, childExit{})
		}
		if p := v.paused(); p != nil && len(r.set.Args) > 0 {
			if how := v.waitOutPause(p); how != controlsChanged {
				return endedBy(how, childExit{})
			}
			continue
		}
		if !promoted {
			how, ex := v.runPromote()
			switch {
			case how == paused:
				continue // the hook runs again on resume
			case how != childEnded:
				return endedBy(how, childExit{}) // the command never ran
			case ex.Success() || r.set.OnChildError == policyIgnore:
				promoted = true
			default:
				// A failing promote hook is a command error.
				if end, over := w.afterRun(v, ex, "promote-failed"); over {
					return end
				}
				continue
			}
		}
		if len(r.set.Args) == 0 {
			// Hooks only: hold the leadership until something ends it.
			v.publishLeader()
			r.log.Info("holding leadership (no command; hooks only)", logEvHolding.attr())
			return endedBy(v.supervise(nil, time.Time{}), childExit{})
		}
		ex, end, over := w.runCommand(ctx, v)
		switch {
		case over:
			return end
		case end.how == paused:
			continue
		}
		if w.keyed {
			// Once per key: record how it ended, exit with its code.
			// Retried only once its end is recorded: the count goes on from it.
			if v.finishOnce(r.set.OnceKey, ex) && w.attempt > 0 && !ex.Success() && w.attempt < r.set.Retries+1 {
				r.log.Info("once key run failed; it will be retried", "once_key", r.set.OnceKey, "exit_code", ex.Code,
					"attempt", w.attempt, "of", r.set.Retries+1, "retry_in", retryDelay(r.set.RetryDelay, w.attempt))
				continue // claim the key again, after the delay (claimKey)
			}
			r.log.Info("once key run; exiting with the command's exit code", "once_key", r.set.OnceKey, "exit_code", ex.Code)
			return resignation("command-exited", exitWith(ex.Code))
		}
		if end, over := w.afterRun(v, ex, "command-exited"); over {
			return end
		}
	}
}

// runCommand runs the command once, on a fresh lease, after recording
// --once-key's key. over reports that the leadership ends with end;
// otherwise the command ended by itself (ex), or was paused (end.how).
func (w *onceWork) runCommand(ctx context.Context, v leaderView) (ex childExit, end leaderEnd, over bool) {
	r := w.r
	if !v.fresh() {
		// Never start a command on a lease that may be gone (the
		// host was frozen, or the connection dropped, just now).
		return ex, endedBy(leaseLost, childExit{}), true
	}
	if w.keyed {
		if end, over := w.claimKey(ctx, v); over {
			return ex, end, true
		}
	}
	cmd, err := v.startCommand()
	if err != nil {
		r.log.Error("ballot failed", "error", err)
		return ex, resignation("ballot-failed", exitWith(exitFailure)), true
	}
	how, timedOut := childEnded, false
	if cmd.pid != 0 {
		v.publishLeader()
		how, timedOut = w.superviseRun(v, cmd)
	}
	ex = cmd.Exit()
	if timedOut {
		ex.TimedOut = true
		v.endAs(endTimedOut, "--timeout "+r.set.Timeout.String()) // the run history says so
		if ex.Code == 0 {
			ex.Code = exitFailure // a timed-out run is an error, whatever its status
		}
	}
	v.publishRunEnd(ex)
	end, over = w.runEnded(v, ex, how)
	return ex, end, over
}

// claimKey records --once-key's key before the command runs. over
// reports that the leadership ends with end instead: the key was run
// already, or cannot be recorded, or the lease is gone meanwhile.
func (w *onceWork) claimKey(ctx context.Context, v leaderView) (end leaderEnd, over bool) {
	r, key := w.r, w.r.set.OnceKey
	// The claim checks the baton: it must not overtake a handover's
	// take (its answer cannot come before the take's anyway).
	if v.awaitTake(); !v.fresh() {
		return endedBy(leaseLost, childExit{}), true
	}
	if end, over := w.awaitRetry(ctx, v); over {
		return end, true
	}
	claimed, mine, err := v.claimOnce(key, r.onceRetry())
	switch {
	case err != nil:
		return w.claimFailed(v, err), true
	case !claimed:
		v.onceDone("found when elected")
		return resignation("once-key-run", exitWith(exitOK)), true
	}
	w.claimed = true
	if w.attempt = 0; mine != nil && mine.Attempts > 0 {
		w.attempt = mine.Attempt
	}
	if !v.fresh() {
		// The record waited out a partition: the key is taken
		// (so never run twice) but not run.
		r.log.Warn("lease lost while recording the once key; this run is lost", "once_key", key)
		return endedBy(leaseLost, childExit{}), true
	}
	return leaderEnd{}, false
}

// awaitRetry waits out the delay before a further attempt of a failed
// --once-key run (--retries): after this leader's own failed attempt, or
// one of a runner that stopped during its delay. over reports that the
// leadership ends meanwhile.
func (w *onceWork) awaitRetry(ctx context.Context, v leaderView) (end leaderEnd, over bool) {
	r := w.r
	if r.set.Retries == 0 {
		return end, false
	}
	rec, running, err := v.readOnce(r.set.OnceKey)
	if err != nil || rec == nil || running || !r.onceRetry().allows(rec) {
		return end, false // claimOnce decides
	}
	wait := time.Until(r.onceRetry().retryAt(rec, r.set.RetryDelay))
	if wait <= 0 {
		return end, false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return end, false
	case <-r.stopping:
		return endedBy(stopRequested, childExit{}), true
	case <-ctx.Done():
		return endedBy(outcomeOf(context.Cause(ctx)), childExit{}), true
	}
}

// claimFailed ends a leadership whose claim of the once key failed with
// err, as its outcome says (outcomeOf); the command has not run.
func (w *onceWork) claimFailed(v leaderView, err error) leaderEnd {
	r, key := w.r, w.r.set.OnceKey
	switch how := outcomeOf(err); how {
	case stopRequested:
		// Stopped before the key was known to be ours: a stop
		// before the command ran, not a failure. A claim whose answer
		// was lost may have landed, though: then the key is started,
		// unfinished, and the other candidates will not run it.
		r.log.Warn("stopped while recording the once key; if the record was written, the key stays started and unfinished (--once-retry-unfinished runs it again)",
			"once_key", key)
		return endedBy(how, childExit{})
	case sessionLost:
		// The claim's answer was lost with the session: it may have
		// landed. Stand again; the next candidacy clears our record
		// first (clearLostClaim), then claims the key anew.
		r.lostClaim = v.proposal()
		r.log.Warn("session lost while recording the once key; the command has not run: standing again", "once_key", key)
		return endedBy(how, childExit{})
	}
	r.log.Error("cannot record the once key; not running the command", "once_key", key, "error", err)
	return resignation("once-key-failed", exitWith(exitFailure))
}

// superviseRun supervises a started command until it ends, or --timeout
// stops it (timedOut), or something else ends supervision (how).
func (w *onceWork) superviseRun(v leaderView, cmd *child) (how outcome, timedOut bool) {
	r := w.r
	var deadline time.Time // --timeout
	if r.set.Timeout > 0 {
		deadline = time.Now().Add(r.set.Timeout)
	}
	how = v.supervise(cmd, deadline)
	if how == wakeUp {
		how, timedOut = childEnded, w.timeOut(v, cmd)
	}
	r.forget(cmd)
	return how, timedOut
}

// runEnded says what a run's end (how, ex) means: the command ended by
// itself (not over), was paused (not over, end.how; a once key's run is
// finished by it), or the leadership ends (over).
func (w *onceWork) runEnded(v leaderView, ex childExit, how outcome) (end leaderEnd, over bool) {
	r := w.r
	switch how {
	case childEnded:
		r.logEnd(ex)
		return leaderEnd{}, false
	case paused:
		if w.claimed {
			v.finishOnceRun(ex, "paused")
			return resignation("paused", exitWith(ex.Code)), true
		}
		return endedBy(paused, ex), false
	}
	return endedBy(how, ex), true
}

// timeOut stops a command that outlived --timeout, as run cron stops a
// run: SIGTERM, SIGKILL after the grace period (never past the lease).
// It reports false if the command had ended by itself meanwhile.
func (w *onceWork) timeOut(v leaderView, cmd *child) bool {
	r := w.r
	select {
	case <-cmd.Done():
		return false
	default:
	}
	ex, stopped := cmd.Stop(syscall.SIGTERM, r.set.StopGracePeriod, v.killBy())
	r.log.Warn("command timed out", logEvTimedOut.attr(), "timeout", r.set.Timeout, "how", stopped, "exit_code", ex.Code)
	return true
}

// afterRun applies on-child-success / on-child-error to a run (of the
// command, or of a failing promote hook) that ended by itself. over
// reports that the leadership ends with end; otherwise run again.
func (w *onceWork) afterRun(v leaderView, ex childExit, reason string) (end leaderEnd, over bool) {
	r := w.r
	policy := r.policyFor(ex)
	resign, resigns := afterRunPlan(policy, ex, reason)
	switch {
	case resigns && policy == policyExit:
		r.log.Info("exiting as on-child-* says", logEvChildPolicy.attr(), "policy", policy, "exit_code", ex.Code)
		return resign, true
	case resigns:
		return resign, true
	case policy == policyIgnore:
		r.log.Info("keeping leadership without the command (policy ignore)", logEvChildPolicy.attr(), "policy", policyIgnore)
		return endedBy(v.supervise(nil, time.Time{}), childExit{}), true
	case policy == policyRerun:
		var limited time.Duration
		if !ex.Success() && r.set.RerunLimit.set() {
			if end, over := w.rerunLimited(v, &limited); over {
				return end, true
			}
		}
		d := limited
		if d > 0 {
			d = max(d, r.backoffFor(ex)) // the quick runs' count goes on
			r.log.Info("past --rerun-limit with nobody ready to take over: waiting before the next run", "wait", d)
		} else {
			d = r.rerunWait(ex)
		}
		if d > 0 {
			if how := v.supervise(nil, time.Now().Add(d)); how != wakeUp {
				return endedBy(how, ex), true
			}
		}
		r.log.Info("running the command again (policy rerun)", logEvChildPolicy.attr(), "policy", policyRerun)
	}
	return leaderEnd{}, false
}

// afterRunPlan is afterRun's decision, without its effects: under exit
// and reelect, policy (on-child-success or on-child-error, as policyFor
// chose for ex) resigns, and resign is how (exit: with the run's code;
// reelect: stand again, after backing off if the run ended quickly).
// Under ignore and rerun the leader keeps the lead.
func afterRunPlan(policy childPolicy, ex childExit, reason string) (resign leaderEnd, resigns bool) {
	switch policy {
	case policyExit:
		return resignation(reason, exitWith(ex.Code)), true
	case policyReelect:
		return reelection(reason, ex), true
	}
	return leaderEnd{}, false
}

// rerunLimited counts a failure that on-child-error rerun would rerun
// against --rerun-limit. Past the limit, it hands over (over: resign and
// stand again, sitting out for the window) when the next in line is ready
// to lead; else it says how long to pause before rerunning here (wait).
func (w *onceWork) rerunLimited(v leaderView, wait *time.Duration) (end leaderEnd, over bool) {
	r, lim, now := w.r, w.r.set.RerunLimit, time.Now()
	w.failures = append(recentFailures(w.failures, now, lim.Window), now)
	if len(w.failures) <= lim.N {
		w.beyond = 0
		return end, false
	}
	if next, ok := v.readyToTakeOver(); ok {
		until := now.Add(lim.Window)
		w.sitsOutUntil, w.beyond = until, 0
		r.log.Warn("rerun limit reached: handing over to the next in line; this host sits out until the window has passed",
			logEvRerunLimit.attr(), "outcome", "handed-over", "failures", len(w.failures), "window", lim.Window,
			"successor", next, "sits_out_until", until.UTC().Format(time.RFC3339))
		r.metrics.RerunLimit("handed-over", until)
		return resignation("rerun-limit", rejoin()), true
	}
	w.beyond++
	*wait = rerunPause(w.beyond, lim.Window)
	if w.beyond == 1 {
		r.log.Warn("rerun limit reached, but no candidate in line is ready to take over: restarting here, with a growing pause",
			logEvRerunLimit.attr(), "outcome", "restarted-here", "failures", len(w.failures), "window", lim.Window, "successor", "none", "wait", *wait)
		r.metrics.RerunLimit("restarted-here", time.Time{})
	}
	return end, false
}

// recentFailures drops the failures older than window before now.
func recentFailures(fs []time.Time, now time.Time, window time.Duration) []time.Time {
	i := 0
	for i < len(fs) && !fs[i].After(now.Add(-window)) {
		i++
	}
	return fs[i:]
}

// rerunPause is the pause before the k-th rerun past --rerun-limit with
// nobody to hand over to: 1 s, doubling, at most 1 min or the window.
func rerunPause(k int, window time.Duration) time.Duration {
	return min(time.Second<<min(k-1, 10), time.Minute, window)
}

// readyToTakeOver: the next in line, as the lease's watch last saw it, is
// waiting, healthy and not sitting out itself, so --rerun-limit may hand
// over to it (id: its candidate id).
func readyToTakeOver(c *candidate) (id string, ok bool) {
	first, _ := c.line.firstOther(c.basePath, c.node)
	if first == "" {
		return "", false
	}
	raw, _, err := c.s.Conn.Get(first)
	var d proposalData
	if err != nil || jsonlite.Unmarshal(raw, &d) != nil {
		return "", false
	}
	waiting := d.State == stateFollowing || d.State == stateWaitingForBaton
	healthy := d.Health == nil || d.Health.Healthy
	sitting := d.SitsOutUntil != nil && d.SitsOutUntil.After(time.Now())
	return d.CandidateID, waiting && healthy && !sitting
}

// proposed says in a new proposal that this candidate sits out
// (--rerun-limit handed over less than its window ago).
func (w *onceWork) proposed(c *candidate) {
	if !time.Now().Before(w.sitsOutUntil) {
		return
	}
	until := w.sitsOutUntil.UTC()
	// At once, not folded nor a second after the create: the leader it
	// handed over to may reach its own limit within that second.
	c.pub.urgent(func(d *proposalData) { d.SitsOutUntil = &until })
	w.r.log.Info("standing again at the end of the line, sitting out: no leader that reaches its --rerun-limit hands over to this host before then",
		"sits_out_until", until.Format(time.RFC3339))
}

func (w *onceWork) runEnv() []string {
	if w.attempt > 0 {
		return []string{"BALLOT_ATTEMPT=" + strconv.Itoa(w.attempt)} // --once-key --retries
	}
	return nil
}

func (w *onceWork) scheduledTime() time.Time { return time.Time{} }
