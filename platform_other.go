//go:build !linux

package main

// Stand-ins for proc_linux.go, so that ballot compiles on other systems
// (an editor or go vet on a Mac) and says plainly there that it does not
// run: main checks checkPlatform first.

import (
	"fmt"
	"runtime"
)

func checkPlatform() error {
	return fmt.Errorf("ballot runs on Linux only (this build is for GOOS=%s)", runtime.GOOS)
}

func isTerminal(uintptr) bool { return false }

// hostBootID: no boot id elsewhere (drain --until-reboot then cannot be
// given for this host).
func hostBootID() string { return "" }

func readBootID(string) string { return "" }
