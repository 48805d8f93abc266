package main

// Why a leadership ended, in one vocabulary: an outcome, and what each
// outcome means for the end of a leadership (resign or lose it, the reason
// operators read, the run history's ending), one row per outcome; and
// which outcome an error met while leading, or the cause that ended a
// leadership's context, stands for (outcomeOf).

import (
	"errors"
	"fmt"
)

// outcome is why a leader stopped supervising, or (leaderResigns) that the
// leader ends its leadership itself. Its zero value is that nothing
// happened, so a forgotten assignment is not read as the command's end.
type outcome int

// The outcomes, and where each comes from, so that "why did this
// leadership end" is read here. In supervise.go: checkLease (leaseLost:
// the lease ran out, or runs out), leadershipEnded (the leadership's
// context ended: proposalGone, sessionLost; the command killed at once),
// await (stopRequested, unhealthy: the command stopped with its grace
// period; childEnded, wakeUp), controlsChanged and preempting
// (steppedDown, paused, preempted). Before a command starts: a lease no
// longer fresh (leaseLost), the errors of a claim or a record
// (outcomeOf). The leader's own choices: leaderResigns (strategy.go,
// cron.go).
const (
	noOutcome       outcome = iota // nothing happened: supervision goes on
	childEnded                     // the command (or hook) ended by itself
	leaseLost                      // the lease ran out, or was not fresh for a start
	sessionLost                    // the session ended (expired, closed, stuck)
	proposalGone                   // our proposal or baton deleted, or a baton handed to us not taken
	stopRequested                  // a stop signal
	unhealthy                      // the health check failed
	wakeUp                         // supervise's wake time came (--timeout, a backoff, a cron tick)
	steppedDown                    // ballot step-down named this leadership
	preempted                      // a candidate of higher --priority is ready (preempt.go)
	paused                         // ballot pause: the command was stopped, the lead kept
	controlsChanged                // while waiting out a pause: the controls changed
	leaderResigns                  // not from supervise: a policy, a once key, a failure
	outcomes                       // not an outcome: the number of them, for endMeanings
)

// endMeaning is what an outcome means when it ends a leadership.
type endMeaning struct {
	// resigns: the leader ends its leadership in order (the proposal
	// deleted, the next candidate leads at once); otherwise the leadership
	// is lost and the session ended with it.
	resigns bool
	// exits: after resigning, ballot exits with the last run's code
	// instead of standing again.
	exits bool
	// reason is why, in the resigning or leadership-lost line, the notify
	// status and the demote hook's environment; a leader's own resignation
	// (leaderResigns) brings its own.
	reason string
	// ending and endingWhy are how a run the end stopped ended, for the run
	// history; none for a leader's own resignation (its run ended by itself
	// and is written already).
	ending, endingWhy string
}

// endMeanings: what ends a leadership, one row per outcome. The outcomes
// that do not end one (noOutcome, childEnded, wakeUp, controlsChanged,
// paused) are never a leadership's end; should one reach endLeadership, it
// is taken as a lost connection, the safe side: the session goes too.
var endMeanings = [outcomes]endMeaning{
	noOutcome:       {reason: "connection-lost", ending: endLeadershipLost, endingWhy: "connection lost"},
	childEnded:      {reason: "connection-lost", ending: endLeadershipLost, endingWhy: "connection lost"},
	leaseLost:       {reason: "connection-lost", ending: endLeadershipLost, endingWhy: "lease lost"},
	sessionLost:     {reason: "session-expired", ending: endLeadershipLost, endingWhy: "session expired"},
	proposalGone:    {reason: "proposal-deleted", ending: endLeadershipLost, endingWhy: "proposal deleted"},
	stopRequested:   {resigns: true, exits: true, reason: "stop-requested", ending: endStopped, endingWhy: "ballot was asked to stop"},
	unhealthy:       {resigns: true, reason: "unhealthy", ending: endStopped, endingWhy: "the health check failed"},
	wakeUp:          {reason: "connection-lost", ending: endLeadershipLost, endingWhy: "connection lost"},
	steppedDown:     {resigns: true, reason: "step-down", ending: endStopped, endingWhy: "step-down"},
	preempted:       {resigns: true, reason: "preempted", ending: endStopped, endingWhy: "handed over to a candidate of higher --priority"},
	paused:          {reason: "connection-lost", ending: endPaused, endingWhy: "ballot pause"},
	controlsChanged: {reason: "connection-lost", ending: endLeadershipLost, endingWhy: "connection lost"},
	leaderResigns:   {resigns: true},
}

// meaning is what how means when it ends a leadership.
func (how outcome) meaning() endMeaning {
	if how < 0 || how >= outcomes {
		return endMeanings[noOutcome]
	}
	return endMeanings[how]
}

// ending is how a run stopped by how ended, for the history.
func (how outcome) ending() (ending, reason string) {
	m := how.meaning()
	return m.ending, m.endingWhy
}

// Why a leadership's context ended (leadershipContext, leadership.go),
// besides a stop of the candidacy (errStopped, errStopSignal).
var (
	// errLeadershipOver: the leader let its lease go (candidacy), after
	// its work ended; supervision has returned by then.
	errLeadershipOver = errors.New("the leadership is over")
)

// proposalGoneError: our proposal or our baton was deleted, or a baton
// handed over to us could not be taken (lease.go, lose); why says which.
type proposalGoneError struct{ why string }

func (e *proposalGoneError) Error() string { return e.why }

// sessionLostCause is the cause of a leadership ended by its session's
// loss: errSessionLost, with why.
func sessionLostCause(why string) error { return fmt.Errorf("%w: %s", errSessionLost, why) }

// outcomeOf is the outcome that err, met while leading or ending a
// leadership's context, stands for. Anything it does not know is a lost
// lease, the safe side: the leadership is given up with its session.
func outcomeOf(err error) outcome {
	var gone *proposalGoneError
	var lostNode *nodeLostError
	switch {
	case err == nil:
		return noOutcome
	case errors.Is(err, errStopped), errors.Is(err, errStopSignal):
		return stopRequested // first, as every caller checked it
	case errors.Is(err, errSessionLost):
		return sessionLost
	case errors.As(err, &gone), errors.As(err, &lostNode), errors.Is(err, errProposalGone):
		return proposalGone
	case errors.Is(err, errUnhealthy):
		return unhealthy
	}
	return leaseLost
}
