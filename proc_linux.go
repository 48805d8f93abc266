package main

// What only Linux offers ballot itself: the terminal ioctl of the PID-1
// init, and the boot id. The keeper's process supervision (a child subreaper, a signal on
// the parent's death, /proc) is in internal/keeper/proc_linux.go.
// platform_other.go has the stand-ins that let other systems compile
// ballot (for editors and vet), which then refuses to run there.

import (
	"os"
	"strings"
	"sync"
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

// bootIDPath is the kernel's random id of this boot: a new one at every
// boot, the same for every process until then.
const bootIDPath = "/proc/sys/kernel/random/boot_id"

// hostBootID is this host's boot id, read once (the first need is at the
// start: a candidate asks before it proposes); "" if it cannot be read.
// drain --until-reboot lasts while it stays the same (drain.go).
var hostBootID = sync.OnceValue(func() string { return readBootID(bootIDPath) })

// readBootID reads a boot id file: its one line, or "" if there is none.
func readBootID(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
