package main

// A leadership as the leader's work sees it: as client-go's
// OnStartedLeading gets a context and nothing of the elector, a mode's
// work (strategy.go, cron.go) gets the leadership's context and
// leaderView, what it may do while it leads, not the candidate and the
// lease it rests on. The checks stay where they were: the lease's before a
// command starts (fresh, awaitFresh), the fenced multi-ops of the records.

import "time"

// leaderView is what a mode's work may do while it leads.
type leaderView interface {
	leaseView
	runView
	recordView
	onceRecords
	cronRecords
}

// leaseView: may the leader still act?
type leaseView interface {
	fresh() bool       // renewed lately: a command may start (lease.Fresh)
	awaitFresh() bool  // take the lease again after a rest and wait for its answer; false: lost, or stopped
	awaitTake()        // a handover's take answered: what checks the baton comes after it
	takePending() bool // a handover's take not answered yet
	rest()             // between runs: no renewals while nothing runs (lease.Rest)
	arm()              // renewals again, ahead of a run
	renewals() (last, largest time.Duration)
	timeout() time.Duration                 // the session timeout, T
	paused() *pauseRecord                   // ballot pause, as last read; nil when not paused
	trigger() *triggerRequest               // ballot trigger's request, as last read; nil for none
	zooKeeperClock() (zkClockReading, bool) // the last renewal's reading of ZooKeeper's clock
	preemptTo() string                      // the candidate to hand over to (--preempt-after, run crontab's spread); "" for none
	handoverLine() (string, logEvent)       // what the log says of that handover
	checkIn()                               // supervision takes on a command another way than by starting it (a run beside becoming the current one)
}

// runView: the command and the hooks, supervised under the lease.
type runView interface {
	runPromote() (outcome, childExit)
	startCommand() (*child, error)
	startBeside() (*child, error)                 // a run beside others (--overlap allow): its keeper never ends the session
	supervise(cmd *child, wake time.Time) outcome // cmd nil: hold the lead until wake
	superviseRuns(cmd *child, beside []*child, wake time.Time) outcome
	retell(cmd *child) // the one run left learns the session and the demote hook again (cronallow.go)
	waitOutPause(p *pauseRecord) outcome
	killBy() func() time.Time // the lease's kill time for a stop's grace period; nil: none
	startIdleKeeper() (*idleKeeper, error)
}

// recordView: what the leader publishes, and the run history.
type recordView interface {
	publishLeader()
	unpublishLeader()
	publish(f func(*proposalData)) // in the proposal node, folded with other updates
	publishRunEnd(ex childExit)
	proposal() string
	readyToTakeOver() (id string, ok bool) // the next in line may lead now (--rerun-limit)

	listHistory()
	newRunEntry(kind string) historyEntry
	skipEntry(from, due time.Time, count int, reason string) historyEntry
	stashRun() runEntryState // the run's history entry kept aside while another runs (cronallow.go)
	unstashRun(h runEntryState)
	endAs(ending, reason string) // how the run's history entry ends, when its end is written
	writeRunEnd(ex childExit)
	runEndOf(t time.Time) time.Time
	recordSkip(from, due time.Time, count int, reason string)
	skippedWhileRunning(due time.Time, reason string)
}

// onceRecords: --once-key's record, written in multi-ops that check the
// proposal and the baton (once.go).
type onceRecords interface {
	claimOnce(key string, retry onceRetry) (claimed bool, prior *onceRecord, err error)
	readOnce(key string) (rec *onceRecord, running bool, err error)
	finishOnce(key string, ex childExit) bool
	finishOnceRun(ex childExit, reason string)
	onceDone(how string) // logs who ran the key
}

// cronRecords: run cron's record, the trigger request, the runs beside,
// their writes fenced by the proposal (cron.go, trigger.go, cronallow.go).
type cronRecords interface {
	readCronRecord() (cronState, error)
	recordCron(st *cronState, t, start time.Time, attempt int) error
	recordCronEnd(st *cronState)
	consumeTrigger(t *triggerRequest, e historyEntry) (taken, again bool)
	endRunsBeside(beside []*besideRun, ending, reason string)
}

// leadershipView is leaderView's one implementation: the candidate that
// leads and its lease, for the runner's services.
type leadershipView struct {
	r *runner
	c *candidate
	l *lease
}

func (v *leadershipView) fresh() bool                             { return v.l.Fresh() }
func (v *leadershipView) awaitFresh() bool                        { return v.l.AwaitFresh(v.r.stopping) }
func (v *leadershipView) awaitTake()                              { v.l.awaitTake() }
func (v *leadershipView) takePending() bool                       { return v.l.takePending() }
func (v *leadershipView) rest()                                   { v.l.Rest() }
func (v *leadershipView) arm()                                    { v.l.Arm() }
func (v *leadershipView) renewals() (last, largest time.Duration) { return v.l.Renewals() }
func (v *leadershipView) timeout() time.Duration                  { return v.c.s.Timeout() }
func (v *leadershipView) paused() *pauseRecord                    { return v.l.ctl.Paused() }
func (v *leadershipView) preemptTo() string                       { return v.l.ctl.PreemptTo() }
func (v *leadershipView) handoverLine() (string, logEvent)        { return v.l.ctl.handoverLine() }
func (v *leadershipView) trigger() *triggerRequest                { return v.l.ctl.Trigger() }
func (v *leadershipView) zooKeeperClock() (zkClockReading, bool)  { return v.l.ZooKeeperClock() }

func (v *leadershipView) runPromote() (outcome, childExit) { return v.r.runPromote(v.c, v.l) }
func (v *leadershipView) startCommand() (*child, error)    { return v.r.startCommand(v.c, v.l, false) }
func (v *leadershipView) startBeside() (*child, error)     { return v.r.startCommand(v.c, v.l, true) }
func (v *leadershipView) supervise(cmd *child, wake time.Time) outcome {
	return v.r.supervise(v.c, v.l, cmd, wake)
}
func (v *leadershipView) superviseRuns(cmd *child, beside []*child, wake time.Time) outcome {
	return v.r.superviseRuns(v.c, v.l, cmd, beside, wake)
}
func (v *leadershipView) waitOutPause(p *pauseRecord) outcome { return v.r.waitOutPause(v.c, v.l, p) }
func (v *leadershipView) killBy() func() time.Time            { return v.r.killByFor(v.l) }
func (v *leadershipView) checkIn()                            { v.l.checkIn() }
func (v *leadershipView) startIdleKeeper() (*idleKeeper, error) {
	return startIdleKeeper(handoffFor(v.c, v.l), v.r.keeperDemote(v.c), v.r.set.WrapChildLogs)
}

func (v *leadershipView) publishLeader()                        { v.r.publishLeader(v.c) }
func (v *leadershipView) unpublishLeader()                      { v.r.unpublishLeader(v.c) }
func (v *leadershipView) publish(f func(*proposalData))         { v.c.pub.update(f) }
func (v *leadershipView) publishRunEnd(ex childExit)            { v.r.publishRunEnd(v.c, ex) }
func (v *leadershipView) proposal() string                      { return v.c.node }
func (v *leadershipView) readyToTakeOver() (id string, ok bool) { return readyToTakeOver(v.c) }

func (v *leadershipView) listHistory() { leaderHistory(v.c).listHistory() }
func (v *leadershipView) newRunEntry(kind string) historyEntry {
	return leaderHistory(v.c).newRunEntry(kind)
}
func (v *leadershipView) skipEntry(from, due time.Time, count int, reason string) historyEntry {
	return leaderHistory(v.c).skipEntry(from, due, count, reason)
}
func (v *leadershipView) stashRun() runEntryState        { return leaderHistory(v.c).stashRun() }
func (v *leadershipView) unstashRun(h runEntryState)     { leaderHistory(v.c).unstashRun(h) }
func (v *leadershipView) endAs(ending, reason string)    { leaderHistory(v.c).endAs(ending, reason) }
func (v *leadershipView) writeRunEnd(ex childExit)       { leaderHistory(v.c).writeRunEnd(ex) }
func (v *leadershipView) runEndOf(t time.Time) time.Time { return leaderHistory(v.c).runEndOf(t) }
func (v *leadershipView) recordSkip(from, due time.Time, count int, reason string) {
	leaderHistory(v.c).recordSkip(from, due, count, reason)
}
func (v *leadershipView) skippedWhileRunning(due time.Time, reason string) {
	leaderHistory(v.c).skippedWhileRunning(due, reason)
}

func (v *leadershipView) claimOnce(key string, retry onceRetry) (bool, *onceRecord, error) {
	return claimOnce(v.c, key, retry, v.r.stopping)
}
func (v *leadershipView) readOnce(key string) (*onceRecord, bool, error) {
	rec, _, running, err := readOnce(v.c.s.Conn, v.c.basePath, key)
	return rec, running, err
}
func (v *leadershipView) finishOnce(key string, ex childExit) bool { return finishOnce(v.c, key, ex) }
func (v *leadershipView) finishOnceRun(ex childExit, reason string) {
	v.r.finishOnceRun(v.c, ex, reason)
}
func (v *leadershipView) onceDone(how string) { v.r.logOnceDone(v.c, how) }
