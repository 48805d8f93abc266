package keeper

// The idle keeper: a keeper with no command yet. Two uses:
//   - the next in line of run once starts one ahead (prestartKeeper), and
//     its command, when it leads, runs on it (a run order): no keeper's
//     start on a handover's critical path. Until then it knows nothing of
//     the session, so should ballot die it gives nothing back;
//   - a cron leader keeps one between runs, told the session and the
//     release. Should ballot die then (SIGKILL, OOM), the keeper does at
//     once what it does after a command (keeperend.go): the on-demote hook,
//     then the baton given back and the session closed, so the next leader
//     starts in milliseconds instead of after the session's expiry and the
//     dropped baton's wait (T + W, 8.75 s at T = 5 s). The next run starts
//     on it, so there is never a moment with two keepers (a release while a
//     command may still run) or none.
//
// This is the keeper's side; ballot's is keeperidle.go in package main.

import (
	"os"
	"time"

	"ballot/internal/bootclock"
)

// IdleLine is the idle keeper's first report.
const IdleLine = "idle"

// RunOrder is a "run" line: what argv would have said, and the command's
// own environment (BALLOT_*), which an idle keeper could not know when it
// started.
type RunOrder struct {
	Grace          time.Duration
	Kill, Backstop bootclock.Time
	Argv, Env      []string
	started        chan struct{} // closed once the tree exists, or its start failed
}

// standIdle is the keeper's side: report, carry out orders until "run"
// (it returns the order), or "bye" or EOF (ballot died: the demote hook
// and the release; it returns nil).
func (k *keeper) standIdle(control *os.File) *RunOrder {
	k.tree = &tree{reaped: true} // nothing to signal yet
	k.runs = make(chan *RunOrder, 1)
	runs := k.runs
	k.report(IdleLine)
	if k.rest == nil { // tests set their own
		k.rest = newIdleRest()
	}
	go k.obey(control)
	DropStartPages() // set up and reported: what start-up mapped is not needed again
	go k.rest.loop()
	select {
	case o := <-runs:
		k.rest.stop() // a command's keeper from here on: never at rest
		return o
	case <-k.over:
		k.rest.stop()
	}
	k.mu.Lock()
	died := !k.bye
	k.mu.Unlock()
	if died {
		k.afterBallot(true)
	}
	return nil
}

// adopt takes on what a run order says in place of argv: the grace and
// the first deadline. Later deadline orders wait in the pipe until the
// command's tree exists (obey), so none of them is overwritten by this one.
func (k *keeper) adopt(o *RunOrder) {
	k.grace = o.Grace
	k.dl.set(o.Kill, o.Backstop)
}
