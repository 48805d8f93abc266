package main

// ballot's exit codes, which every command and the keeper return.

// exit codes of ballot itself
const (
	exitOK = 0
	// exitNo: step-down and leader could not do what was asked (no
	// leader, nobody to take over, not in time); nothing failed.
	exitNo      = 1
	exitUsage   = 2
	exitFailure = 125
	// The shell's codes for a command that cannot run, checked before
	// ballot joins the election (and by the keeper at exec).
	exitNotExecutable = 126
	exitNotFound      = 127
)
