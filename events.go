package main

// The events ballot logs: a stable name, event=<name>, on the log line of
// each state change and notable happening (no extra line: the line that
// already says it in words carries it). The names are an API, on purpose:
// operators alert on them and the end-to-end tests wait for them; the
// messages beside them are for people and may be reworded. "Log events"
// (docs/operating.md) lists them; a test checks that it lists every one.

import "ballot/internal/slog"

// logEvent is the name of one kind of log line (watch has events of its
// own, the ev* constants of watch_events.go).
type logEvent string

// A candidate's life, in order (leadership.go's phases).
const (
	logEvStarting        logEvent = "starting"          // ballot starts: its version and mode
	logEvJoinRetry       logEvent = "join-retry"        // cannot join the election (on-election-failure retry)
	logEvHealthWait      logEvent = "health-wait"       // waiting for a passing health check before joining
	logEvUnhealthy       logEvent = "unhealthy"         // the health check failed: withdrawing
	logEvJoined          logEvent = "joined"            // a proposal is made: in line, with a fencing token
	logEvFollowing       logEvent = "following"         // waiting in line; place_in_line, predecessor
	logEvStandingBy      logEvent = "standing-by"       // next in line: proves its place whenever a handover may come
	logEvKeeperReady     logEvent = "keeper-ready"      // (debug) a keeper started ahead of its command
	logEvBatonWait       logEvent = "baton-wait"        // first in line, waiting for the last holder's baton
	logEvNamedWait       logEvent = "named-wait"        // the baton was handed to another candidate in line: waiting for its take
	logEvRevoked         logEvent = "handover-revoked"  // that candidate did not take it within W: the handover is revoked
	logEvWithdrew        logEvent = "withdrew"          // the proposal is withdrawn: reason=unhealthy|stop|drained
	logEvSlotsMismatch   logEvent = "slots-mismatch"    // --slots differs from a candidate's already in line: exit 2
	logEvHandedOver      logEvent = "handed-over"       // the baton was handed to us: starting on credit
	logEvBatonTaken      logEvent = "baton-taken"       // the baton is ours
	logEvElected         logEvent = "elected"           // leading: proposal, fencing_token, lease_left
	logEvAcknowledged    logEvent = "acknowledged"      // the leader node is written
	logEvHolding         logEvent = "holding"           // leading without a command (hooks only)
	logEvHookStarted     logEvent = "hook-started"      // hook=on-promote|on-demote|on-run-end
	logEvHookEnded       logEvent = "hook-ended"        // hook=on-promote|on-demote|on-run-end, exit_code
	logEvCommandStarted  logEvent = "command-started"   // pid
	logEvCommandEnded    logEvent = "command-ended"     // exit_code, duration
	logEvCommandStopped  logEvent = "command-stopped"   // ballot stopped it: reason, how
	logEvTimedOut        logEvent = "timed-out"         // --timeout: the command was stopped
	logEvChildPolicy     logEvent = "child-policy"      // after a run: policy=exit|ignore|rerun (--on-child-*)
	logEvRunStarting     logEvent = "run-starting"      // run cron: a scheduled time is run
	logEvMissedRun       logEvent = "missed-run"        // run cron: a missed time is run, within --starting-deadline
	logEvRunSkipped      logEvent = "run-skipped"       // run cron: skip=overlap|overlap-limit|paused|missed|clock-ahead
	logEvRunQueued       logEvent = "run-queued"        // run cron --overlap queue: a time waits for the run going on
	logEvRetrying        logEvent = "retrying"          // run cron, --once-key: a further attempt of a failed or lost run: attempt, of
	logEvRerunLimit      logEvent = "rerun-limit"       // run once --rerun-limit reached: outcome=handed-over|restarted-here
	logEvStepDown        logEvent = "step-down"         // ballot step-down named this leader
	logEvPreemptPlanned  logEvent = "preempt-planned"   // a higher --priority is in line: successor, at
	logEvPreempting      logEvent = "preempting"        // handing over to it (--preempt-after)
	logEvPaused          logEvent = "paused"            // ballot pause: the lead kept, nothing run
	logEvResumed         logEvent = "resumed"           // ballot resume
	logEvLeaseRunningOut logEvent = "lease-running-out" // renewals unanswered: the command is stopped
	logEvLeaseExpired    logEvent = "lease-expired"     // the lease ran out: another leader may be elected
	logEvLeadershipLost  logEvent = "leadership-lost"   // the proposal or baton was taken by someone else
	logEvSessionLost     logEvent = "session-lost"      // the session expired while leading
	logEvResigning       logEvent = "resigning"         // giving the leadership up: reason
	logEvRejoining       logEvent = "rejoining"         // standing again as a new candidate: reason
	logEvReleasedNote    logEvent = "released-note"     // our proposal was deleted: the command gone, a note says so to the successor
	logEvNoteFound       logEvent = "note-found"        // the last holder left that note: the baton is taken at once, no wait
	logEvLeaseAtRest     logEvent = "lease-at-rest"     // (debug) run cron between runs: no renewal until just before the next run
	logEvDrained         logEvent = "drained"           // ballot drain named this candidate: out of the line until undrained
	logEvUndrained       logEvent = "undrained"         // ballot undrain: standing again
	logEvTriggered       logEvent = "triggered"         // run cron: a run asked for by ballot trigger starts: by, requested_at
)

// run crontab's process (crontabrun.go); each job's lines are the above,
// with job=<name>.
const (
	logEvReloaded      logEvent = "reloaded"       // SIGHUP: the jobs reloaded: joined, left, changed
	logEvReloadRefused logEvent = "reload-refused" // SIGHUP: the file is bad; the jobs go on as they were
	logEvSpreading     logEvent = "spreading"      // a job's leader hands over between runs: this host leads more than its share
)

// logEvPhase (debug) is each change of leadership.go's phase, the state a
// candidate is in: phase=joining|following|leading|leading-paused|
// resigning|leadership-lost|unelected, and the one it was in.
const logEvPhase logEvent = "phase"

// The collector at rest (restmem.go), at debug.
const (
	logEvMemoryAtRest logEvent = "memory-at-rest" // quiet for restQuiet: the GC percent lowered, free pages returned
	logEvMemoryBusy   logEvent = "memory-busy"    // activity after a rest: the GC percent as before
)

// ZooKeeper's connection and ballot's signals.
const (
	logEvDisconnected  logEvent = "disconnected"   // the connection to a server is lost (the session may live)
	logEvReconnected   logEvent = "reconnected"    // connected again
	logEvSignalIgnored logEvent = "signal-ignored" // SIGTSTP and its kin: ballot does not stop
)

// attr is the event as a log attribute: log.Info("…", logEvElected.attr(), …).
func (e logEvent) attr() slog.Attr { return slog.String("event", string(e)) }
