package main

// Before and while a candidate waits in line: --once-key and --no-wait
// checks, and what makes a follower leave the line.

import (
	"context"
	"fmt"
	"time"
)

// beforeFollowing is run once per proposal: the mode's checks first
// (--once-key: a key already run ends ballot, exit 0); with --no-wait,
// another leader ends it (exit 75).
func (r *runner) beforeFollowing(c *candidate) verdict {
	if v := r.work.beforeFollowing(c); v.next != goOn {
		return v
	}
	if r.set.NoWait {
		children, _, err := c.s.Conn.Children(c.basePath)
		line := sortedProposals(children)
		if err == nil && c.hold().othersAhead(line) {
			c.withdraw()
			leader := "(the baton's holder)"
			if len(line) > 0 && c.basePath+"/"+line[0] != c.node {
				leader = c.basePath + "/" + line[0]
			}
			r.log.Info("another candidate leads: not waiting in line (--no-wait)", "leader_proposal", leader, "exit_code", exitBusy)
			return exitWith(exitBusy)
		}
	}
	return verdict{}
}

// logOnceDone says who ran --once-key's key, and that this ballot runs
// nothing.
func (r *runner) logOnceDone(c *candidate, how string) {
	rec, _, running, err := readOnce(c.s.Conn, c.basePath, r.set.OnceKey)
	what := "unknown (the record cannot be read)"
	if err == nil && rec != nil {
		what = rec.String()
		if rec.FinishedAt == nil && running {
			what += ", still running"
		} else if rec.FinishedAt == nil {
			what += " (its runner's session ended: see --once-retry-unfinished)"
		}
	}
	msg := "once key already run: exiting without running anything"
	if how != "" {
		msg += " (" + how + ")"
	}
	r.log.Info(msg, "once_key", r.set.OnceKey, "run", what)
}

// followContext is cancelled when a follower must leave the line, its
// cause saying why: a stop signal (errStopSignal), the health check
// failing (errUnhealthy), what the mode watches (errOnceKeyRun: --once-key's
// key recorded by another candidate while this one waits), ballot drain
// (errDrained), or --wait-timeout (errWaitTimedOut). release ends the
// watches.
func (r *runner) followContext(c *candidate) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	var bad, seen <-chan struct{}
	unwatch := func() {}
	if r.work != nil { // unit tests follow without a mode
		seen, unwatch = r.work.whileFollowing(c)
	}
	if r.health != nil {
		bad = r.health.Bad()
	}
	var drained <-chan struct{}
	undrain := func() {}
	if c != nil { // unit tests follow without a candidate
		drained, undrain = watchDrain(c.s, c.basePath, r.set.CandidateID)
	}
	var timer *time.Timer
	if r.set.WaitTimeout > 0 {
		timer = time.AfterFunc(r.set.WaitTimeout, func() { cancel(errWaitTimedOut) })
	}
	whenFirst(func(i int) {
		if cause := []error{errStopSignal, errUnhealthy, errOnceKeyRun, errDrained, nil}[i]; cause != nil {
			cancel(cause)
		}
	}, r.stopping, bad, seen, drained, ctx.Done())
	return ctx, func() {
		cancel(nil)
		unwatch()
		undrain()
		if timer != nil {
			timer.Stop()
		}
	}
}

// notifyFollowing tells systemd this candidate's place and who leads: the
// lowest proposal's candidate (it may not have acknowledged yet with the
// leader node).
func (r *runner) notifyFollowing(c *candidate, place int, lowestProposal string) {
	if r.notify.conn == nil {
		return
	}
	leader := lowestProposal
	if b, _, err := c.s.Conn.Get(lowestProposal); err == nil {
		if d, _ := parseProposalData(b); d != nil {
			leader = d.CandidateID
		}
	}
	r.notify.Status(fmt.Sprintf("following, %s in line", ordinal(place)) + statusLine("", leader, 0))
}
