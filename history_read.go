package main

// Reading the run history (history.go): `ballot history`, and the last run
// that info and check show.

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// settle fills in what a reader adds: the state, and ages on ZooKeeper's
// clock. running holds the fencing tokens of the batons' holders (one per
// slot with --slots).
func settleHistory(items []*historyItem, running map[int64]bool, now time.Time) {
	for _, it := range items {
		switch {
		case it.ParseError != "":
			it.State = "unknown"
		case it.Ended != "":
			it.State = "ended"
			a := ageMs(now, it.mtime)
			it.EndedAgoMs = &a
		case running[it.FencingToken]:
			it.State = "running"
		default:
			it.State = "unfinished"
		}
	}
}

// batonTokens are the fencing tokens of the leaders holding a baton (one
// per slot with --slots).
func batonTokens(s *electionSnapshot) map[int64]bool {
	tokens := map[int64]bool{}
	if s == nil {
		return tokens
	}
	for _, b := range s.batons() {
		var br batonRecord
		if b != nil && jsonlite.Unmarshal(b.raw, &br) == nil {
			tokens[br.FencingToken] = true
		}
	}
	return tokens
}

// lastRun is the newest entry that is a run (not a skip).
func lastRun(items []*historyItem) *historyItem {
	for _, it := range items {
		if it.Kind != historySkip && it.ParseError == "" {
			return it
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// ballot history.

type historyReport struct {
	Election string         `json:"election"`
	ReadAt   time.Time      `json:"readAt"`
	Clock    string         `json:"clock"` // local: this host's (readers never write; older versions: zookeeper)
	Keep     int            `json:"keep"`  // entries kept at most
	Entries  []*historyItem `json:"entries"`
	Notes    []string       `json:"notes"`
}

// readElectionWith reads the election and what else a reader needs from
// the same session, within the connect wait: info, history and check all
// read this way, and fail with the same words.
func readElectionWith(set *Settings, acc *zookeeper.Access, log *slog.Logger, more func(*zk.Conn, *electionSnapshot) error) (*electionSnapshot, time.Time, error) {
	var s *electionSnapshot
	now, err := readWith(set, acc, log, "the election "+set.BasePath, func(conn *zk.Conn, _ func()) (err error) {
		s, err = readElection(conn, set.BasePath)
		if err == nil && s.exists && more != nil {
			err = more(conn, s)
		}
		return err
	})
	if err != nil {
		return nil, now, err
	}
	return s, now, nil
}

// readWith runs read in a reader's session and is the time it ended on
// this host's clock. read fails with "no answer" once the connect wait
// passes with no answer: from its start, or from its last call of alive
// (a reader of many elections calls it as each is read). Its error says
// what could not be read.
func readWith(set *Settings, acc *zookeeper.Access, log *slog.Logger, what string, read func(conn *zk.Conn, alive func()) error) (time.Time, error) {
	conn, err := zookeeper.DialReader(acc, set.SessionTimeout, log, nil, nil)
	if err != nil {
		return time.Time{}, err
	}
	done, answered := make(chan error, 1), make(chan struct{}, 1)
	go func() { done <- read(conn, func() { ping(answered) }) }()
	wait := zookeeper.ConnectWait(set.SessionTimeout)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case err = <-done:
		case <-answered:
			if !timer.Stop() {
				<-timer.C // go.mod's go 1.22: a fired timer keeps its value
			}
			timer.Reset(wait)
			continue
		case <-timer.C:
			err = fmt.Errorf("no answer within %s", wait)
		}
		if err != nil {
			go conn.Close()
			return time.Time{}, fmt.Errorf("cannot read %s from ZooKeeper %s: %v", what, strings.Join(set.ZooKeeperServers, ","), err)
		}
		now := readClock()
		conn.Close()
		return now, nil
	}
}

// runHistory is `ballot history`: 0, or 125 when ZooKeeper cannot be read.
func runHistory(set *Settings, acc *zookeeper.Access, log *slog.Logger, w io.Writer) int {
	var items []*historyItem
	s, now, err := readElectionWith(set, acc, log, func(conn *zk.Conn, _ *electionSnapshot) (err error) {
		items, err = readHistory(conn, set.BasePath, set.Limit, nil)
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballot: history: "+err.Error())
		return exitFailure
	}
	settleHistory(items, batonTokens(s), now)
	rep := &historyReport{Election: set.BasePath, ReadAt: now.UTC(), Clock: "local", Keep: historyKeep,
		Entries: append([]*historyItem{}, items...), Notes: []string{}}
	switch {
	case !s.exists:
		rep.Notes = append(rep.Notes, set.BasePath+" does not exist")
	case len(items) == 0:
		rep.Notes = append(rep.Notes, "no runs recorded")
	}
	if set.Output == "json" {
		if err := writeJSON(w, rep); err != nil {
			fmt.Fprintln(os.Stderr, "ballot: history: "+err.Error())
			return exitFailure
		}
		return 0
	}
	writeHistoryHuman(w, rep)
	if set.ShowOutput {
		writeHistoryOutput(w, rep.Entries)
	}
	return 0
}

// writeHistoryHuman prints one line per entry, newest first.
func writeHistoryHuman(w io.Writer, rep *historyReport) {
	fmt.Fprintf(w, "# %s: newest first, %d kept at most; times UTC\n", rep.Election, rep.Keep)
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "# %s\n", n)
	}
	if len(rep.Entries) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintln(&b, "STARTED\tRUN\tCANDIDATE\tTOKEN\tENDED\tEXIT\tTOOK\tNOTE")
	for _, it := range rep.Entries {
		fmt.Fprintln(&b, strings.Join(historyColumns(it), "\t"))
	}
	for _, l := range strings.SplitAfter(alignColumns(b.String()), "\n") {
		if l != "" {
			fmt.Fprintln(w, strings.TrimRight(l, " \n"))
		}
	}
}

// writeHistoryOutput prints, under the table, the output tail of each
// entry that has one, newest first, each line indented.
func writeHistoryOutput(w io.Writer, items []*historyItem) {
	for _, it := range items {
		if it.Output == "" {
			continue
		}
		c := historyColumns(it)
		fmt.Fprintf(w, "\n# output of %s (%s, started %s, exit %s), its last %d bytes:\n", it.Node, c[1], c[0], c[5], len(it.Output))
		for _, l := range strings.Split(strings.TrimRight(it.Output, "\n"), "\n") {
			fmt.Fprintln(w, "  "+strings.TrimRight(l, "\r"))
		}
	}
}

// lastLine is the last non-empty line of a run's output tail, for check.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\r\n\t "), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = strings.ToValidUTF8(l[:200], "") + "…"
	}
	return l
}

// historyColumns is one entry as history's human output shows it.
func historyColumns(it *historyItem) []string {
	if it.ParseError != "" {
		return []string{"-", it.Node, "-", "-", "unknown", "-", "-", "cannot be read: " + it.ParseError}
	}
	started, run, exit, took := "-", it.Kind, "-", "-"
	if it.StartedAt != nil {
		started = it.StartedAt.UTC().Format("2006-01-02 15:04:05")
	}
	switch it.Kind {
	case historyCron:
		if it.ScheduledTime != nil {
			run = "cron " + it.ScheduledTime.UTC().Format("15:04:05")
		}
	case historyOnce:
		run = "once " + it.Key
	case historySkip:
		if it.ScheduledTime != nil {
			started = it.ScheduledTime.UTC().Format("2006-01-02 15:04:05")
		}
		run = "skip"
		if it.Skipped > 1 {
			run = fmt.Sprintf("skip ×%d", it.Skipped)
		}
	}
	if it.ExitCode != nil {
		exit = fmt.Sprint(*it.ExitCode)
	}
	if it.DurationMs != nil {
		took = fmtMs(*it.DurationMs)
	}
	ended := strings.ReplaceAll(it.Ended, "-", " ")
	if it.Ended == "" {
		ended = it.State
	}
	cand := it.CandidateID
	if it.Host != "" && it.Host != it.CandidateID {
		cand += "@" + it.Host
	}
	note := it.Reason
	if it.Trigger != nil {
		if it.Kind == historyCron && it.ScheduledTime != nil {
			run = "trigger " + it.ScheduledTime.UTC().Format("15:04:05")
		}
		note = strings.TrimSuffix("triggered by "+it.Trigger.By+"; "+note, "; ")
	}
	if it.Slot > 0 {
		note = strings.TrimSuffix(fmt.Sprintf("slot %d; %s", it.Slot, note), "; ")
	}
	if it.Attempts > 0 {
		note = strings.TrimSuffix(fmt.Sprintf("attempt %d of %d; %s", it.Attempt, it.Attempts, note), "; ")
	}
	if it.LastSkipped != nil {
		note = strings.TrimPrefix(note+"; until "+it.LastSkipped.UTC().Format("2006-01-02 15:04:05"), "; ")
	}
	if it.ClosedBy != "" {
		note = "recorded by " + it.ClosedBy + ": " + note
	}
	return []string{started, run, cand, fmt.Sprint(it.FencingToken), ended, exit, took, note}
}
