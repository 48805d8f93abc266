package main

// The errors every layer may meet, defined at the bottom so that a lower
// layer never names a higher one to compare with them.

import (
	"errors"

	"ballot/internal/zookeeper"
)

var (
	errSessionLost  = zookeeper.ErrSessionLost // the ZooKeeper layer's waits end with these two
	errProposalGone = errors.New("proposal node is gone")
	errStopped      = zookeeper.ErrStopped
)

// Why a follower left the line: the cause of its context (followContext),
// whose end its waits see as errStopped.
var (
	errStopSignal   = errors.New("stop requested")
	errUnhealthy    = errors.New("health check failing")
	errOnceKeyRun   = errors.New("the once key was run by another candidate")
	errWaitTimedOut = errors.New("not elected within --wait-timeout")
)

// nodeLostError says the proposal or the baton is gone or not ours.
type nodeLostError struct{ what string }

func (e *nodeLostError) Error() string { return "our " + e.what + " node was deleted" }
