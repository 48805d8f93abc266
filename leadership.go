package main

// The life of a candidate running a command, top to bottom (candidacy):
//
//   joining   → a session and a proposal (on-election-failure decides what a
//               failure means)
//   following → wait until our proposal is the lowest, then take the baton
//   leading   → the leader's work, run once's or run cron's (strategy.go,
//               cron.go), under a lease, with the leadership's context and
//               its view (leading.go); on-child-success/error decide what
//               a run's end means; connection loss and session expiry stop it
//   resigning → the command is gone and reaped, then the proposal is deleted
//               (or, the leadership lost, the session is ended)
//
// Every transition is logged once at info.

import (
	"context"
	"errors"
	"path"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/zookeeper"
)

// verdict is what follows a step of a candidacy.
type verdict struct {
	next step
	code int // ballot's exit code, with exitBallot
}

type step int

const (
	goOn         step = iota // the candidacy goes on
	standAgain               // this candidacy is over: a new one begins
	exitBallot               // ballot exits with code
	runUnelected             // on-election-failure=run-anyway: run the command without an election
)

func exitWith(code int) verdict { return verdict{next: exitBallot, code: code} }
func rejoin() verdict           { return verdict{next: standAgain} }

// leaderEnd is why a leadership ends, as the leader's work reports it.
type leaderEnd struct {
	how outcome   // what ended it; leaderResigns: the leader's own choice
	ex  childExit // the last run's end: ballot's exit code after a stop

	// With leaderResigns:
	reason  string  // command-exited, promote-failed, once-key-run, ...
	then    verdict // stand again or exit
	backoff bool    // before standing again, back off if ex ended quickly

	keyClaimed bool // --once-key: this ballot recorded the key (onceWork.lead)
}

// endedBy is a leadership ended by something else than the leader's
// choice (supervise's outcome); the command is already gone.
func endedBy(how outcome, ex childExit) leaderEnd { return leaderEnd{how: how, ex: ex} }

// resignation is a leadership the leader itself ends.
func resignation(reason string, then verdict) leaderEnd {
	return leaderEnd{how: leaderResigns, reason: reason, then: then}
}

// reelection is a resignation to stand again, after backing off if ex
// (the run that made the leader resign) ended quickly.
func reelection(reason string, ex childExit) leaderEnd {
	return leaderEnd{how: leaderResigns, reason: reason, then: rejoin(), ex: ex, backoff: true}
}

// run is `ballot run once` and `ballot run cron`. It returns ballot's exit
// code.
func (r *runner) run() int {
	metricsStop, metricsDone := make(chan struct{}), make(chan struct{})
	r.metrics.start(metricsStop, metricsDone)
	defer func() {
		r.dropSpare()
		if !r.sharedSession() { // a crontab's process closes the shared one
			r.hold.close()
		}
		r.runEndHooks.Wait() // each bounded by --hook-timeout; killed on a second signal
		r.ping.flush()
		// A resignation does not wait for a keeper's own exit once it has
		// reported its tree reaped (child.await); ballot's exit does.
		if !r.sharedSession() { // a crontab's process waits once, for all
			awaitKeepers(time.Second)
		}
		close(metricsStop)
		<-metricsDone // ballot_up 0 is written before ballot exits
	}()
	work := r.work
	for {
		if v := r.candidacy(work); v.next == exitBallot {
			return v.code
		}
	}
}

// candidacy is one candidate's whole life, for run once and run cron
// alike: join, follow, take the baton, lead (work's part), then resign or
// lose the leadership. It says whether ballot stands again or exits.
func (r *runner) candidacy(work leaderWork) verdict {
	defer r.dropSpare() // a keeper started ahead and not used
	if r.stopRequested() {
		return exitWith(exitOK)
	}
	r.enter(phaseJoining)
	c, v := r.join()
	switch {
	case v.next == runUnelected:
		r.enter(phaseUnelected)
		return r.afterUnelected(r.runUnelected())
	case v.next != goOn:
		return v
	}
	if v := r.beforeFollowing(c); v.next != goOn {
		return v
	}
	r.enter(phaseFollowing)
	start, v := r.follow(c)
	if v.next != goOn {
		return v
	}
	l, over := r.elected(c, start) // enters phaseLeading, the lease held
	end := endedBy(steppedDown, childExit{})
	if l.ctl.Drained() {
		// Drained while it took the baton: it hands over, nothing started.
		r.log.Info("drained (ballot drain): handing over before starting anything", logEvDrained.attr())
	} else {
		// The work gets the leadership's context and its view, not c and l.
		end = work.lead(l.ended, &leadershipView{r: r, c: c, l: l})
	}
	// The command is gone: nothing runs under the lease any more. The
	// session, alive, holds the baton through the demote hook until the
	// release; renewals would only count a long hook as stuck supervision.
	l.Stop()
	over()
	r.alarm.Set(0)
	l.awaitTake()
	return r.endLeadership(c, end)
}

// join makes a proposal, in the current session or a new one. Without
// one, the verdict says what next: exit, or run-anyway.
func (r *runner) join() (*candidate, verdict) {
	backoff := time.Second
	for {
		if !r.health.Healthy() {
			r.log.Info("waiting for a passing health check before standing for election", logEvHealthWait.attr())
			if !r.health.WaitHealthy(r.stopping) {
				return nil, exitWith(exitOK)
			}
		}
		var err error
		if r.sess != nil && r.sharedSession() && r.sess.IsLost() {
			r.sess = nil // lost under another job: the holder has a new one
		}
		if r.sess == nil {
			r.sess, err = r.hold.get(r.stopping)
		}
		if err == nil {
			var c *candidate
			// A drained candidate waits here, without a proposal (drain.go).
			if err = r.awaitUndrained(r.sess); err == nil {
				c, err = propose(r.log, r.sess, r.set.BasePath, r.set.CandidateID, r.set.Command, r.set.Priority, r.set.Slots, r.stopping)
			}
			if err == nil {
				c.tell.runEnded = func(e historyEntry) { r.runEnded(c, e) }
				c.tell.lineChanged = r.lineChanged
				c.triggers = r.rules.triggered
				r.setCandidate(c)
				r.publishHealth()
				r.work.proposed(c)
				if r.joined != nil {
					r.joined()
				}
				return c, verdict{}
			}
			if errors.Is(err, errStopped) {
				return nil, exitWith(exitOK)
			}
			if errors.Is(err, errSessionLost) {
				// Lost between dialing and proposing (say, while waiting to
				// be healthy): not an election failure; start afresh.
				r.log.Info("session lost before the proposal was made; starting a new one", "reason", r.sess.LostReason())
				r.dropSessionIfLost()
				continue
			}
			r.dropSessionIfLost()
		}
		if r.stopRequested() {
			return nil, exitWith(exitOK)
		}
		switch r.set.OnElectionFailure {
		case electionExit:
			r.log.Error("cannot join the election; exiting (on-election-failure=exit)", "error", err)
			return nil, exitWith(exitFailure)
		case electionRunAnyway:
			r.log.Error("cannot join the election: RUNNING THE COMMAND WITHOUT ELECTION; mutual exclusion is given up (on-election-failure=run-anyway)", "error", err)
			return nil, verdict{next: runUnelected}
		}
		r.log.Warn("cannot join the election; retrying", logEvJoinRetry.attr(), "error", err, "retry_in", backoff)
		select {
		case <-time.After(backoff):
		case <-r.stopping:
			return nil, exitWith(exitOK)
		}
		if backoff < 10*time.Second {
			backoff *= 2
		}
	}
}

// follow waits in line until this proposal is the lowest, then takes the
// baton (or, handed over to us, has its take pending). It returns how the
// lease starts, or a verdict that ends the candidacy.
func (r *runner) follow(c *candidate) (leaseStart, verdict) {
	r.notify.Ready("following")
	c.tell.following = func(place int, lowestProposal string) { r.notifyFollowing(c, place, lowestProposal) }
	if r.rules.prestart {
		c.standby.onStart = func() { go r.prestartKeeper() }
	}
	// Under ignore a command must outlive a lost connection; a take on
	// credit whose answer stays lost would end it: take first.
	c.standby.noCredit = r.set.OnConnectionLoss == lossIgnore
	line, release := r.followContext(c)
	standDown := line.Done()
	// The election's record, read while waiting, not when elected: one
	// round trip fewer between the predecessor's release and our command.
	_, _ = c.readElection()
	err := c.awaitLeadership(standDown)
	var start leaseStart
	if err == nil {
		// The controls are read with the handover record, not after the
		// take: one round trip fewer before the command.
		quit, read := make(chan struct{}), make(chan *controls, 1)
		go func() { read <- watchControls(c.s, &c.proposalFacts, quit) }()
		start, err = c.takeBaton(standDown)
		start.ctl, start.quit = <-read, quit
		if err != nil {
			close(quit)
		}
	}
	c.standby.stop()
	release()
	if errors.Is(err, errStopped) {
		err = r.whyStandDown(line)
	}
	var mismatch *slotsMismatchError
	switch {
	case err == nil:
		return start, verdict{}
	case errors.As(err, &mismatch):
		c.withdraw()
		r.log.Error("refusing to stand: "+mismatch.Error(), logEvSlotsMismatch.attr(), "exit_code", exitUsage)
		return leaseStart{}, exitWith(exitUsage)
	case errors.Is(err, errWaitTimedOut):
		c.withdraw()
		r.log.Info("not elected within --wait-timeout: gave up waiting in line", "wait_timeout", r.set.WaitTimeout, "exit_code", exitBusy)
		return leaseStart{}, exitWith(exitBusy)
	case errors.Is(err, errOnceKeyRun):
		c.withdraw()
		r.logOnceDone(c, "another candidate ran it while this one waited in line")
		return leaseStart{}, exitWith(exitOK)
	case errors.Is(err, errUnhealthy):
		if !c.withdraw() {
			r.endSession(c)
		}
		r.setCandidate(nil)
		r.log.Info("withdrew from the election while unhealthy", logEvWithdrew.attr(), "reason", "unhealthy", "proposal", c.node)
		return leaseStart{}, rejoin()
	case errors.Is(err, errDrained):
		if !c.withdraw() {
			r.endSession(c)
		}
		r.setCandidate(nil)
		r.log.Info("withdrew from the election: drained (ballot drain)", logEvWithdrew.attr(), "reason", "drained", "proposal", c.node)
		return leaseStart{}, rejoin()
	case errors.Is(err, errStopSignal):
		c.withdraw()
		r.log.Info("withdrew from the election", logEvWithdrew.attr(), "reason", "stop", "proposal", c.node)
		return leaseStart{}, exitWith(exitOK)
	}
	r.log.Info("candidacy ended", "reason", r.why(err))
	if c.baton.maybe() {
		r.endSession(c) // a baton of ours may exist: it goes with the session
	}
	r.dropSessionIfLost()
	return leaseStart{}, rejoin()
}

// whyStandDown tells why a follower left the line: its context's cause,
// but a stop signal wins over --wait-timeout and the health check, which
// may have fired first.
func (r *runner) whyStandDown(line context.Context) error {
	why := context.Cause(line)
	if r.stopRequested() && !errors.Is(why, errOnceKeyRun) {
		return errStopSignal
	}
	return why
}

// elected is the edge from follower to leader, once the baton is taken:
// the lease starts, the proposal node says so. over ends the leadership's
// context once the leader lets the lease go (leadershipContext).
func (r *runner) elected(c *candidate, start leaseStart) (l *lease, over func()) {
	busy := func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.current != nil
	}
	start.shared = r.sharedSession()
	l = holdLease(c, start, r.set.StopGracePeriod, busy, r.set.OnConnectionLoss != lossIgnore)
	over = leadershipContext(c, l)
	r.become(phaseLeading, change{c: c, l: l})
	if r.set.PreemptAfter > 0 && r.rules.preempts && c.hold().handsOver() {
		go r.watchPreemption(c, l, r.set.PreemptAfter)
	}
	return l, over
}

// leadershipContext ends a leadership's context (the lease's ended) with
// its cause, as followContext does a follower's: the lease ends it itself
// when the proposal or the baton goes (lose); here, when the session is
// lost, and, by over, once the leader lets the lease go. Each of these
// undoes the leadership whatever the leader does: supervision kills the
// command at once (supervise.go, leadershipEnded). A stop signal and a
// failing health check are not causes: they ask the leader to end it,
// with the command's grace period, and the health check may pass again
// before supervision looks.
func leadershipContext(c *candidate, l *lease) (over func()) {
	whenFirst(func(i int) {
		if i == 0 {
			l.endWith(sessionLostCause(c.s.LostReason()))
		}
	}, c.s.Lost(), l.ended.Done())
	return func() { l.endWith(errLeadershipOver) }
}

// endLeadership ends a leadership as end says: a resignation (the
// leader's choice, a stop, a step-down, a failing health check) or a loss
// (lease, session or proposal gone), as its outcome means (endMeanings,
// outcome.go; planEnd). The command is already gone.
func (r *runner) endLeadership(c *candidate, end leaderEnd) verdict {
	r.closeRun(c, end)
	p := planEnd(end, end.keyClaimed)
	if !p.resigns {
		return r.lostLeadership(c, p.reason, end)
	}
	switch {
	case p.preempted:
		r.metrics.Preempted()
	case p.finishOnce:
		clearStepDown(c.s, &c.proposalFacts)
		r.finishOnceRun(c, end.ex, p.reason)
	}
	v := r.resign(c, p.reason, p.then)
	if p.clearStepDown {
		clearStepDown(c.s, &c.proposalFacts)
	}
	if p.backoff {
		r.backOff(end.ex)
	}
	return v
}

// endPlan is how endLeadership ends a leadership, decided by planEnd.
type endPlan struct {
	resigns bool    // resign in order; otherwise the leadership is lost
	reason  string  // in the resigning or leadership-lost line, and to the demote hook
	then    verdict // after resigning: stand again, or exit with a code
	backoff bool    // after resigning, back off if the last run ended quickly

	preempted bool // counted in ballot_preemptions_total first
	// finishOnce: a once key's run cut short by a step-down is finished:
	// the request is cleared and the run recorded before resigning.
	finishOnce bool
	// clearStepDown: a step-down request naming us is cleared after
	// resigning.
	clearStepDown bool
}

// planEnd decides, from end and whether this ballot claimed a once key,
// how its leadership ends (endLeadership does it).
func planEnd(end leaderEnd, onceClaimed bool) endPlan {
	m := end.how.meaning()
	p := endPlan{resigns: m.resigns, reason: m.reason, then: rejoin()}
	if m.exits {
		p.then = exitWith(end.ex.Code)
	}
	switch {
	case !m.resigns:
		p.then = verdict{} // lostLeadership decides
	case end.how == leaderResigns:
		p.reason, p.then, p.backoff = end.reason, end.then, end.backoff
	case end.how == preempted:
		p.preempted = true
	case end.how == steppedDown && onceClaimed:
		// A once key's run cut short by a step-down is finished: ballot
		// exits with its code, as after any once run.
		p.finishOnce, p.then = true, exitWith(end.ex.Code)
	case end.how == steppedDown:
		p.clearStepDown = true
	}
	return p
}

// finishOnceRun records a --once-key run an operator cut short (pause,
// step-down) as finished with the command's code; ballot then exits with
// it, as after any once run.
func (r *runner) finishOnceRun(c *candidate, ex childExit, reason string) {
	if reason == "paused" {
		leaderHistory(c).endAs(paused.ending())
	} else {
		leaderHistory(c).endAs(steppedDown.ending())
	}
	finishOnce(c, r.set.OnceKey, ex)
	r.log.Info("once key run stopped by an operator; exiting with the command's exit code", "once_key", r.set.OnceKey,
		"reason", reason, "exit_code", ex.Code)
}

// resign ends a leadership in order: the leader node goes, the demote hook
// runs (the command is already gone), then the proposal is deleted so the
// next candidate leads at once. When then exits ballot, the session is
// closed too.
func (r *runner) resign(c *candidate, reason string, then verdict) verdict {
	r.become(phaseResigning, change{c: c, reason: reason})
	exiting := then.next == exitBallot
	left := true
	if !(len(r.set.OnDemote) == 0 && r.withdrawWithLeaderNode(c)) {
		published := c.lead.published
		r.unpublishLeader(c)
		if c.lead.ops != nil {
			// Observers should see the leader node go before the next
			// leader is elected; off the supervision path, waiting a
			// little is fine.
			c.lead.flush(c.s.Timeout()/2, c.s.Lost(), c.done.C)
		}
		r.demote(c, reason)
		if left = c.withdraw(leaderNodeLeft(c, published)...); !left && !exiting {
			r.endSession(c) // or the unconfirmed proposal would stay in line
		}
	}
	c.demoteOwed = false
	r.setCandidate(nil)
	if exiting && !(r.sharedSession() && left) { // the others' session stays
		r.endSession(c)
	}
	return then
}

// lostLeadership handles a leader that lost its lease, session or proposal:
// the command is already gone; rejoin or exit per on-connection-loss.
func (r *runner) lostLeadership(c *candidate, reason string, end leaderEnd) verdict {
	r.become(phaseLost, change{c: c, reason: reason})
	r.demote(c, reason)
	r.setCandidate(nil)
	r.releaseLost(c)
	c.pub.stop()
	c.retire()
	// Whatever happened, this session cannot be trusted any more: a new one
	// gives a new proposal and a new fencing token.
	r.endSession(c)
	next := afterLoss(r.stopRequested(), r.set.OnConnectionLoss, end.keyClaimed)
	switch next {
	case lossExitsOnStop:
		// A stop signal came while the command was being stopped.
		return exitWith(end.ex.Code)
	case lossExitsByPolicy:
		r.log.Error("leadership lost; exiting (on-connection-loss=exit)", "reason", reason)
		if r.lostClaim != "" {
			r.log.Error("the once key may stand started, unfinished, though the command never ran (its claim's answer was lost): run again with --once-retry-unfinished, or clear it (docs/cron.md: clearing a once key)",
				"once_key", r.set.OnceKey, "proposal", r.lostClaim)
		}
		return exitWith(exitFailure)
	case lossExitsOnceRun:
		r.log.Error("leadership lost during a once-key run; exiting: the key stays started, unfinished", "reason", reason, "once_key", r.set.OnceKey)
		return exitWith(exitFailure)
	}
	r.log.Info("rejoining the election as a new candidate", logEvRejoining.attr(), "reason", reason)
	return rejoin()
}

// afterLossStep is what follows a lost leadership (afterLoss).
type afterLossStep int

const (
	lossRejoins       afterLossStep = iota // stand again as a new candidate
	lossExitsOnStop                        // a stop signal came: exit with the last run's code
	lossExitsByPolicy                      // on-connection-loss=exit: exit 125
	lossExitsOnceRun                       // a once key's run was cut short: exit 125, the key unfinished
)

// afterLoss decides what follows a lost leadership: a stop signal first,
// then on-connection-loss=exit, then a once key's run (never run again by
// this ballot); otherwise stand again.
func afterLoss(stopping bool, onLoss lossPolicy, onceClaimed bool) afterLossStep {
	switch {
	case stopping:
		return lossExitsOnStop
	case onLoss == lossExit:
		return lossExitsByPolicy
	case onceClaimed:
		return lossExitsOnceRun
	}
	return lossRejoins
}

// releaseLost gives the baton back after a lost leadership, on the session
// that holds it, if that session still answers: the command is gone, so a
// successor need not wait for this leader's lease to run out, nor for the
// session's expiry. A session that is reconnecting — ballot resumed from a
// stop, or its machine from a suspend, past its lease but before ZooKeeper
// expired the session; a reconnect keeps the session's id or the session
// counts as lost — is waited for, up to T/2: a lease that ran out leaves
// the session little more than that. The release is fenced as any
// (releaseOps); if it cannot be made because someone else deleted our
// proposal, a note says the leadership ended instead (leaveReleasedNote).
// Otherwise the session is closed below and the baton goes with it,
// dropped.
func (r *runner) releaseLost(c *candidate) {
	if !c.baton.held() || c.s.IsLost() {
		return
	}
	version := c.baton.version // of our take: the note is only for a record still at it
	done := make(chan struct{})
	go func() {
		defer close(done)
		for attempt := 0; attempt < 5 && !c.s.IsLost(); attempt++ {
			// The proposal goes too: the session is about to end anyway.
			released, err := retireMulti(c, append([]any{&zk.DeleteRequest{Path: c.node, Version: -1}}, releaseOps(c, handTo{})...), nil)
			switch {
			case err == nil && released:
				r.log.Info("baton given back", "proposal", c.node)
				return
			case err == nil:
				// Our proposal was gone (or the record changed): no
				// release; the note, if the record is still ours.
				if ok, err := c.leaveReleasedNote(version); ok {
					r.log.Info("our proposal was deleted: the command is gone, left a note so that the next leader need not wait for the baton",
						logEvReleasedNote.attr(), "note", releasedPath(c.basePath, path.Base(c.node)))
				} else if err != nil {
					r.log.Warn("cannot leave the note that this leadership ended; the next leader waits for the dropped baton", "error", err)
				}
				return
			case !zookeeper.Retryable(err):
				return
			}
			if c.s.WaitOnline(nil) != nil {
				return
			}
		}
	}()
	t := time.NewTimer(c.s.Timeout() / 2)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-r.hurry:
	}
}

func (r *runner) why(err error) string {
	if errors.Is(err, errSessionLost) && r.sess != nil {
		return r.sess.LostReason()
	}
	return err.Error()
}

func (r *runner) dropSessionIfLost() {
	if r.sess != nil && r.sess.IsLost() {
		r.hold.drop(r.sess)
		r.sess = nil
	}
}

// endSession closes the current session, and c's nodes go with it; the
// next candidacy opens a new one. A shared session (a crontab's) serves
// other jobs' elections: only c's election ends (leaveElection).
func (r *runner) endSession(c *candidate) {
	if r.sess == nil {
		return
	}
	switch {
	case !r.sharedSession():
		r.hold.drop(r.sess)
	case c != nil && c.s == r.sess:
		r.leaveElection(c)
	case r.sess.IsLost():
		r.hold.drop(r.sess) // never a live one: the other jobs stand on it
	}
	r.sess = nil
}

// leaveElection deletes, on a shared session, what its end would have
// deleted of c's election (leaveOwn, release.go), retried while the session
// lives: a flapping connection cannot end it, and ending it would stop
// every job's command. Should that fail otherwise (an ACL, a deleted
// election path), the session ends after all, the safe side: every job
// on it stands again. On the process's stop it gives up: the process
// closes the session.
func (r *runner) leaveElection(c *candidate) {
	for try := 0; ; try++ {
		if c.s.IsLost() {
			r.hold.drop(c.s)
			return
		}
		err := leaveOwn(c)
		if err == nil {
			return
		}
		// Retryable, or our nodes changing under our reads (leaveOwn
		// reads again a few times itself): again, from T/8 apart.
		if zookeeper.Retryable(err) || errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNodeExists) {
			if werr := c.s.WaitOnline(r.procStop); errors.Is(werr, zookeeper.ErrStopped) {
				return
			}
			if try > 0 {
				t := time.NewTimer(c.s.Timeout() / 8)
				select {
				case <-t.C:
				case <-r.procStop:
					t.Stop()
					return
				case <-c.s.Lost():
					t.Stop()
				}
			}
			continue
		}
		r.log.Warn("cannot delete this job's proposal or baton on the shared session; ending the session so they go (every job stands again)",
			"proposal", c.node, "error", err)
		r.hold.drop(c.s)
		return
	}
}

func (r *runner) setCandidate(c *candidate) {
	r.mu.Lock()
	r.cand = c
	r.mu.Unlock()
}
