package main

// The keeper process (internal/keeper) is ballot re-executed with
// keeper.Arg first (child.go starts it; main dispatches here before
// anything else): it gets ballot's exit codes, log format and events, and
// how to date a release record, which are package main's.

import (
	"io"
	"time"

	"ballot/internal/jsonlite"
	"ballot/internal/keeper"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

func keeperMain(args []string) int {
	return keeper.Main(args, keeper.Config{
		Usage: exitUsage, Failure: exitFailure, NotFound: exitNotFound, NotExecutable: exitNotExecutable,
		NewLogger: func(w io.Writer, format string) *slog.Logger {
			return newLogger(w, format, slog.LevelInfo)
		},
		HookStarted:  logEvHookStarted.attr(),
		HookEnded:    logEvHookEnded.attr(),
		StampRelease: stampRelease,
	})
}

// stampRelease dates the release record now, as the keeper writes it.
func stampRelease(h *zookeeper.Handoff) {
	var rec handoverRecord
	if h.ReleasePath == "" || jsonlite.Unmarshal(h.ReleaseData, &rec) != nil {
		return
	}
	rec.At = time.Now().UTC()
	h.ReleaseData, _ = jsonlite.Marshal(rec)
}
