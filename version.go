package main

// ballot's version, which the log, the proposal and --ping-url tell.

// Set at build time with -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = "unknown"
)
