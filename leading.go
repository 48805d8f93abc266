package main

// A leadership as the leader's work sees it: as client-go's
// OnStartedLeading gets a context and nothing of the elector, a mode's
// work (strategy.go, cron.go) gets the leadership's context and
// leaderView, what it may do while it leads, not the candidate and the
// lease it rests on. The checks stay where they were: the lease's before a
// command starts (fresh), the fenced multi-ops of the records.

import "time"

// leaderView is what a mode's work may do while it leads.
type leaderView interface {
	// The lease: may the leader still act?
	fresh() bool          // renewed lately: a command may start (lease.Fresh)
	awaitTake()           // a handover's take answered: what checks the baton comes after it
	paused() *pauseRecord // ballot pause, as last read; nil when not paused

	// The command and the hooks, supervised under the lease.
	runPromote() (outcome, childExit)
	startCommand() (*child, error)
	supervise(cmd *child, wake time.Time) outcome // cmd nil: hold the lead until wake
	waitOutPause(p *pauseRecord) outcome
	killBy() func() time.Time // the lease's kill time for a stop's grace period; nil: none

	// What the leader publishes and records.
	publishLeader()
	publishRunEnd(ex childExit)
	endAs(ending, reason string) // how the run's history entry ends, when the run's end is written
	proposal() string
	readyToTakeOver() (id string, ok bool) // the next in line may lead now (--rerun-limit)

	// --once-key's record: written in multi-ops that check the proposal
	// and the baton (once.go).
	claimOnce(key string, retry onceRetry) (claimed bool, prior *onceRecord, err error)
	readOnce(key string) (rec *onceRecord, running bool, err error)
	finishOnce(key string, ex childExit) bool
	finishOnceRun(ex childExit, reason string)
	onceDone(how string) // logs who ran the key
}

// leadershipView is leaderView's one implementation: the candidate that leads
// and its lease, for the runner's services.
type leadershipView struct {
	r *runner
	c *candidate
	l *lease
}

func (v *leadershipView) fresh() bool          { return v.l.Fresh() }
func (v *leadershipView) awaitTake()           { v.l.awaitTake() }
func (v *leadershipView) paused() *pauseRecord { return v.l.ctl.Paused() }

func (v *leadershipView) runPromote() (outcome, childExit) { return v.r.runPromote(v.c, v.l) }
func (v *leadershipView) startCommand() (*child, error)    { return v.r.startCommand(v.c, v.l) }
func (v *leadershipView) supervise(cmd *child, wake time.Time) outcome {
	return v.r.supervise(v.c, v.l, cmd, wake)
}
func (v *leadershipView) waitOutPause(p *pauseRecord) outcome { return v.r.waitOutPause(v.c, v.l, p) }
func (v *leadershipView) killBy() func() time.Time            { return v.r.killByFor(v.l) }

func (v *leadershipView) publishLeader()                        { v.r.publishLeader(v.c) }
func (v *leadershipView) publishRunEnd(ex childExit)            { v.r.publishRunEnd(v.c, ex) }
func (v *leadershipView) endAs(ending, reason string)           { v.c.endAs(ending, reason) }
func (v *leadershipView) proposal() string                      { return v.c.node }
func (v *leadershipView) readyToTakeOver() (id string, ok bool) { return v.c.readyToTakeOver() }

func (v *leadershipView) claimOnce(key string, retry onceRetry) (bool, *onceRecord, error) {
	return v.c.claimOnce(key, retry, v.r.stopping)
}
func (v *leadershipView) readOnce(key string) (*onceRecord, bool, error) {
	rec, _, running, err := readOnce(v.c.s.Conn, v.c.basePath, key)
	return rec, running, err
}
func (v *leadershipView) finishOnce(key string, ex childExit) bool { return v.c.finishOnce(key, ex) }
func (v *leadershipView) finishOnceRun(ex childExit, reason string) {
	v.r.finishOnceRun(v.c, ex, reason)
}
func (v *leadershipView) onceDone(how string) { v.r.logOnceDone(v.c, how) }
