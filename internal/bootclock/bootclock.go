// Package bootclock is the boot clock, CLOCK_BOOTTIME, which keeps
// counting while the host is suspended, unlike Go's monotonic clock: the
// lease and the keeper's kill time are readings of it, so a deadline
// passes between ballot and its keeper as a number. And alarms on it that
// the kernel delivers whatever state the process is in.
package bootclock

import "time"

// Time is a reading of CLOCK_BOOTTIME. The lease is kept on it, not on
// the monotonic clock of Go's time package, which stops while the machine
// is suspended (and, on some hypervisors, while a VM is paused): ZooKeeper's
// clock runs on meanwhile, and a lease must not look fresh on resume.
type Time time.Duration

// KeeperAlarms are the keeper's kernel alarms for kill time at and
// backstop (0: none): the wake-up, twice the backstop's distance before
// at, so that a keeper stopped while ballot renewed has the time to read
// the renewals it missed, and re-arm, before its backstop; and the
// backstop, never before at (0 then: a backstop must never beat the
// keeper to the kill). Here, below both: the keeper arms them, and the
// lease's terms are checked against them.
func KeeperAlarms(at, backstop Time) (wake, stop Time) {
	if at == 0 || backstop < at {
		backstop = 0
	}
	wake = at
	if backstop > at {
		wake = at - 2*(backstop-at)
	}
	return wake, backstop
}
