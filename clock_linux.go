package main

// The boot clock: CLOCK_BOOTTIME, which keeps counting while the host is
// suspended, unlike Go's monotonic clock; the lease and the keeper's kill
// time are readings of it.

import (
	"syscall"
	"unsafe"
)

// Clock ids of clock_gettime(2) (linux/time.h), the same on every
// architecture. The syscall package has SYS_CLOCK_GETTIME per architecture
// but neither id, and time.Now's monotonic reading is CLOCK_MONOTONIC,
// which stops while the machine is suspended.
const (
	clockMonotonic = 1
	clockBoottime  = 7 // Linux 2.6.39 and later
)

// bootClock reads CLOCK_BOOTTIME (see bootTime in lease.go).
var bootClock = func() func() bootTime {
	read := func(id uintptr) (bootTime, bool) {
		var ts syscall.Timespec
		_, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, id, uintptr(unsafe.Pointer(&ts)), 0)
		return bootTime(ts.Nano()), e == 0
	}
	if _, ok := read(clockBoottime); ok {
		return func() bootTime { t, _ := read(clockBoottime); return t }
	}
	// Kernels before 2.6.39: the monotonic clock, which the keeper reads too.
	return func() bootTime { t, _ := read(clockMonotonic); return t }
}()
