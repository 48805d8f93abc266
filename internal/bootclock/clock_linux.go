package bootclock

// The boot clock on Linux: clock_gettime and POSIX timers by raw system
// calls (no cgo).

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

// bootClockID is the clock Now reads, and Alarm arms.
var bootClockID = func() uintptr {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockBoottime, uintptr(unsafe.Pointer(&ts)), 0); e == 0 {
		return clockBoottime
	}
	// Kernels before 2.6.39: the monotonic clock, which the keeper reads too.
	return clockMonotonic
}()

// Now reads CLOCK_BOOTTIME. A raw system
// call: it never blocks, and the scheduler's bookkeeping of a blocking one
// (which also wakes the runtime's monitor thread) would cost more than the
// read, several times per renewal.
func Now() Time {
	var ts syscall.Timespec
	_, _, _ = syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, bootClockID, uintptr(unsafe.Pointer(&ts)), 0)
	return Time(ts.Nano())
}

// sigevent is struct sigevent of timer_create(2) as the kernel reads it
// (include/uapi/asm-generic/siginfo.h; mips only sets the preamble's size,
// which comes to the same): sigev_value, a union of an int and a pointer,
// so pointer-sized, then the signal and how to notify, padded to 64 bytes.
// The value is never read, so its byte order does not matter.
type sigevent struct {
	value  uintptr
	signo  int32
	notify int32
	_      [64 - unsafe.Sizeof(uintptr(0)) - 8]byte
}

const (
	sigevSignal  = 0 // SIGEV_SIGNAL: send sigev_signo to the process
	timerAbstime = 1 // TIMER_ABSTIME of timer_settime(2)
)

// itimerspec is the kernel's struct itimerspec for the timer_settime the
// syscall package names: syscall.Timespec has the matching widths per
// architecture (32-bit seconds on 32-bit ones, enough for an uptime).
type itimerspec struct {
	interval, value syscall.Timespec
}

// Alarm is a POSIX timer on the boot clock that sends the process a
// signal at a set moment. The kernel delivers it however the process
// fares: SIGCONT wakes it from a stop, SIGKILL ends it even stopped, and
// time the host spent suspended counts, where Go's timers would not.
type Alarm struct {
	id int32 // the kernel's timer_t
}

// NewAlarm makes a disarmed alarm that will send sig.
func NewAlarm(sig syscall.Signal) (*Alarm, error) {
	ev := sigevent{signo: int32(sig), notify: sigevSignal}
	a := &Alarm{}
	_, _, e := syscall.RawSyscall(syscall.SYS_TIMER_CREATE, bootClockID, uintptr(unsafe.Pointer(&ev)), uintptr(unsafe.Pointer(&a.id)))
	if e != 0 {
		return nil, e
	}
	return a, nil
}

// Set arms the alarm for boot-clock moment at (at once if it has passed);
// 0 disarms it.
func (a *Alarm) Set(at Time) error {
	var it itimerspec
	if at > 0 {
		it.value = syscall.NsecToTimespec(int64(at))
	}
	_, _, e := syscall.RawSyscall6(syscall.SYS_TIMER_SETTIME, uintptr(a.id), timerAbstime, uintptr(unsafe.Pointer(&it)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// Close deletes the alarm; it can no longer fire.
func (a *Alarm) Close() error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_TIMER_DELETE, uintptr(a.id), 0, 0); e != 0 {
		return e
	}
	return nil
}
