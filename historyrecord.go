package main

// The run history's records (history.go writes them, history_read.go
// shows them): their nodes, their format, a leadership's view of them, and
// reading the newest back.

import (
	"errors"
	"sort"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
	"ballot/internal/zookeeper"
)

const (
	historyName   = "history"
	historyPrefix = "run-"
	// historyKeep is how many entries an election keeps: a daily job's
	// hundred days, an hourly job's four.
	historyKeep = 100
	// historyOutputMax bounds --history-output-bytes. The entry is written
	// in the multi-op that ends the run, with at most a few small entries
	// (closeLeftOpen's are open, so without output): JSON escapes a control
	// character in 6 bytes, so 64 KiB of output is at most 384 KiB of
	// entry, well under ZooKeeper's 1 MiB jute.maxbuffer.
	historyOutputMax = 64 << 10
	// historyFormat is the entries' format version; a reader shows
	// entries of a newer format as far as it understands them.
	historyFormat = 1
)

// How a run ended (historyEntry.Ended). JSON spells them with hyphens,
// the human output with spaces.
const (
	endExited         = "exited"          // the command ended by itself, with its exit code
	endKilled         = "killed"          // the command died of a signal ballot did not send (OOM killer, kill -9)
	endTimedOut       = "timed-out"       // stopped by --timeout
	endLeadershipLost = "leadership-lost" // stopped because the lease, session or proposal was lost, or its leader died mid-run
	endPaused         = "paused"          // stopped by ballot pause
	endStopped        = "stopped"         // stopped by ballot's own stop (SIGTERM), a step-down or a failing health check
	endSkipped        = "skipped"         // kind skip: a scheduled time not run
)

// Kinds of entries.
const (
	historyCron = "cron"
	historyOnce = "once"
	historySkip = "skip"
)

// historyEntry is the data of one history node. Times are the leader's
// clock; the node's mtime is ZooKeeper's time of the last write (the end).
type historyEntry struct {
	Format        int        `json:"format"`
	Kind          string     `json:"kind"`                    // cron, once, skip
	ScheduledTime *time.Time `json:"scheduledTime,omitempty"` // cron; skip: the first time skipped
	LastSkipped   *time.Time `json:"lastSkipped,omitempty"`   // skip: the last time skipped
	Skipped       int        `json:"skipped,omitempty"`       // skip: how many times (0: unknown)
	Key           string     `json:"key,omitempty"`           // once
	CandidateID   string     `json:"candidateId"`
	Host          string     `json:"host,omitempty"`
	FencingToken  int64      `json:"fencingToken"`
	StartedAt     *time.Time `json:"startedAt,omitempty"`
	EndedAt       *time.Time `json:"endedAt,omitempty"`
	DurationMs    *int64     `json:"durationMs,omitempty"`
	ExitCode      *int       `json:"exitCode,omitempty"`
	Ended         string     `json:"ended,omitempty"`    // "" while it runs; see end* above
	Reason        string     `json:"reason,omitempty"`   // why it was skipped or stopped
	ClosedBy      string     `json:"closedBy,omitempty"` // a successor that closed it: its candidate id
	Slot          int        `json:"slot,omitempty"`     // --slots: the slot that ran it
	Attempt       int        `json:"attempt,omitempty"`  // --retries: this attempt (1, 2, …) of Attempts
	Attempts      int        `json:"attempts,omitempty"` // --retries + 1
	Output        string     `json:"output,omitempty"`   // the last --history-output-bytes of its output

	// run cron: a run (or skip) ballot trigger asked for (trigger.go)
	Trigger *triggerRecord `json:"trigger,omitempty"`
}

// succeeded: a run that exited 0 by itself.
func (e *historyEntry) succeeded() bool {
	return e.Ended == endExited && e.ExitCode != nil && *e.ExitCode == 0
}

func historyDir(base string) string { return base + "/" + historyName }

// historyState is what a leadership knows of the history.
type historyState struct {
	names   []string // entries as listed when elected and written since, oldest first; nil: not listed
	open    *openEntry
	skip    *openEntry // the last skip written, extended while the same reason goes on
	ending  string     // set before a run's end is written, when the end is not the command's own
	reason  string
	overlap *historyEntry // run cron: times skipped while the run goes on, written with its end
	settled bool          // the entries earlier leaderships left open were looked for
}

// openEntry is an entry this leadership wrote and may still rewrite.
type openEntry struct {
	path    string
	version int32
	entry   historyEntry
	told    bool // its end was told to c.tell.runEnded
}

// historyItem is one history entry as read, with what a reader adds.
type historyItem struct {
	Node string `json:"node"`
	historyEntry
	// State: "ended", "running" (its leader holds the baton), or
	// "unfinished" (its leader is gone; the next leader records it as
	// leadership-lost).
	State      string `json:"state"`
	EndedAgoMs *int64 `json:"endedAgoMs,omitempty"` // now - the node's mtime (ZooKeeper's clock), once ended
	ParseError string `json:"parseError,omitempty"`

	mtime int64
}

// readHistory reads the newest entries, newest first, until it has limit
// of them or enough(item) says so; nil when the election has none.
func readHistory(conn *zk.Conn, base string, limit int, enough func(*historyItem) bool) ([]*historyItem, error) {
	dir := historyDir(base)
	names, _, err := conn.Children(dir)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, zookeeper.Error(err, "read", dir)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] > names[j] }) // newest first (see sortStrings)
	var items []*historyItem
	for _, n := range names {
		if len(items) >= limit {
			break
		}
		raw, st, err := conn.Get(dir + "/" + n)
		if errors.Is(err, zk.ErrNoNode) {
			continue // pruned meanwhile
		}
		if err != nil {
			return nil, zookeeper.Error(err, "read", dir+"/"+n)
		}
		it := &historyItem{Node: n, mtime: st.Mtime}
		if err := jsonlite.Unmarshal(raw, &it.historyEntry); err != nil {
			it.ParseError = err.Error()
		}
		items = append(items, it)
		if enough != nil && enough(it) {
			break
		}
	}
	return items, nil
}
