package main

// A run cron leader's clock against ZooKeeper's.
//
// The cron record only moves forward: a time is run only if it is later
// than the recorded one. A leader whose wall clock was stepped forward
// would record a future time, and every leader would then skip each run
// until that time (nothing twice, but runs lost). So a time is recorded
// only if it is not ahead of ZooKeeper's clock by more than
// clockAheadLimit. ZooKeeper's clock is read from the leader's own writes:
// a lease renewal's mtime is the ZooKeeper leader's clock when it committed
// the renewal, and that mtime plus the time since the renewal was sent (on
// this host's boot clock, which a wall clock step does not move) is at
// least ZooKeeper's clock now, whatever the round trip took.

import (
	"errors"
	"fmt"
	"time"
)

// clockAheadLimit: how far ahead of ZooKeeper's clock a scheduled time may
// be recorded. The round trip is already on the safe side (see above), so
// what is left is the offset between two NTP-synchronised clocks (the
// ZooKeeper leader's and this host's: milliseconds, and NTP steps a clock
// off by more than 128 ms) and mtime's whole milliseconds. 2 s is far above
// that, and small for what it allows: a run started up to 2 s early, whose
// record holds back no other scheduled time (whole seconds, the next one
// at least a second later, is run if due after it).
const clockAheadLimit = 2 * time.Second

// aheadOfZooKeeper is how far t is, at least, ahead of ZooKeeper's clock
// at now (boot clock); negative when behind.
func aheadOfZooKeeper(t time.Time, r zkClockReading, now bootTime) time.Duration {
	// mtime has whole milliseconds: one more is on the safe side.
	return t.Sub(r.mtime.Add(time.Duration(now-r.sent) + time.Millisecond))
}

// clockAheadError: the scheduled time is ahead of ZooKeeper's clock.
type clockAheadError struct{ by time.Duration }

func (e *clockAheadError) Error() string {
	return fmt.Sprintf("this host's clock is ahead of ZooKeeper's by %s at least", e.by.Round(time.Millisecond))
}

// checkClock returns a *clockAheadError if the scheduled time t is ahead of
// ZooKeeper's clock by more than clockAheadLimit. Before the lease's first
// renewal is answered it waits for it (renewals go every T/8).
func (r *runner) checkClock(c *candidate, t time.Time) error {
	l := r.lease.Load()
	if l == nil {
		return nil // not leading under a lease: nothing is recorded
	}
	reading, ok := l.ZooKeeperClock()
	if !ok {
		wait := time.NewTimer(l.timeout)
		defer wait.Stop()
		for ; !ok; reading, ok = l.ZooKeeperClock() {
			select {
			case <-l.renewed:
			case <-wait.C:
				return errors.New("no lease renewal answered: ZooKeeper's clock is unknown")
			case <-c.s.Lost():
				return errSessionLost
			case <-r.stopping:
				return errStopped
			}
		}
	}
	if ahead := aheadOfZooKeeper(t, reading, bootNow()); ahead > clockAheadLimit {
		return &clockAheadError{by: ahead}
	}
	return nil
}

// refusedAhead reports whether err refused the scheduled time due as ahead
// of ZooKeeper's clock; it then logs and counts the skip, and the leader
// goes on to the next time.
func (cl *cronLeader) refusedAhead(due time.Time, err error) bool {
	var ahead *clockAheadError
	if !errors.As(err, &ahead) {
		return false
	}
	r := cl.r
	r.log.Warn("scheduled run skipped: this host's clock is ahead of ZooKeeper's; the time is not recorded (recorded, it would make every leader skip the runs until then)", logEvRunSkipped.attr(), "skip", "clock-ahead",
		"scheduled_time", r.fmtTime(due), "ahead_by", ahead.by.Round(time.Millisecond), "limit", clockAheadLimit)
	r.metrics.CronSkipped("clock-ahead")
	cl.skipped = due
	return true
}
