//go:build !linux

package keeper

// Stand-ins for proc_linux.go, so that ballot compiles on other systems
// (an editor or go vet on a Mac); it says there that it runs on Linux only.

import "syscall"

func becomeSubreaper() {}

func NewGroupAttr(syscall.Signal) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func unreadBytes(uintptr) int { return 0 }

type procEntry struct{ pid, ppid int }

func listProcs() []procEntry { return nil }

func DropStartPages() {}
