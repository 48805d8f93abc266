package main

// ballot's version: `ballot version`, the starting log line, the proposal
// node's data, --ping-url's User-Agent.

// Set at build time with -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = "unknown"
)
