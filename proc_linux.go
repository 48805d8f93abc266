package main

// What only Linux offers ballot itself: the terminal ioctl of the PID-1
// init. The keeper's process supervision (a child subreaper, a signal on
// the parent's death, /proc) is in internal/keeper/proc_linux.go.
// platform_other.go has the stand-ins that let other systems compile
// ballot (for editors and vet), which then refuses to run there.

import (
	"syscall"
	"unsafe"
)

// checkPlatform reports why ballot cannot run on this system: on Linux,
// it can.
func checkPlatform() error { return nil }

// isTerminal reports whether fd is a terminal: TCGETS (tcgetattr)
// succeeds on it. The syscall package has TCGETS per architecture (mips
// differs from the rest).
func isTerminal(fd uintptr) bool {
	var tio syscall.Termios
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&tio)))
	return e == 0
}
