//go:build !linux

package main

// Stand-ins for proc_linux.go and clock_linux.go, so that ballot compiles
// on other systems (an editor or go vet on a Mac) and says plainly there
// that it does not run: main checks checkPlatform first.

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"time"
)

func checkPlatform() error {
	return fmt.Errorf("ballot runs on Linux only (this build is for GOOS=%s)", runtime.GOOS)
}

func becomeSubreaper() {}

func newGroupAttr(syscall.Signal) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func isTerminal(uintptr) bool { return false }

func unreadBytes(uintptr) int { return 0 }

type procEntry struct{ pid, ppid int }

func listProcs() []procEntry { return nil }

var clockStart = time.Now()

var bootClock = func() bootTime { return bootTime(time.Since(clockStart)) }

type bootAlarm struct{}

func newBootAlarm(syscall.Signal) (*bootAlarm, error) { return nil, errors.ErrUnsupported }

func (*bootAlarm) Set(bootTime) error { return errors.ErrUnsupported }
func (*bootAlarm) Close() error       { return nil }
