package main

// The run history: every run of run cron and of a --once-key job, and the
// scheduled times run cron skipped, as the leaders recorded them.
//
//   <base>/history                  persistent
//   <base>/history/run-<10 digits>  persistent sequential: one entry (historyEntry)
//
// A run's entry is created in the fenced multi-op that records the run
// before it starts (cron.go's record, once.go's claim): only the live
// leader's session can create one. When the run ends, the same leader
// rewrites it with how it ended, only if nobody changed it since (its
// version). A leader that dies mid-run leaves its entry open; the next
// leader closes it as "leadership-lost": it holds the baton, so nothing of
// that leadership still runs. Each leader lists the entries once when it
// starts, and deletes the oldest past historyKeep in the write that ends a
// run.

import (
	"errors"
	"os"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// historyWriter is the run history as one leadership writes it: what it
// knows of the entries (kept in the candidate, historyState), where and
// as whom it writes them, each write fenced by its proposal (node).
type historyWriter struct {
	*historyState
	*proposalFacts // basePath, id, node, token
	s              *zookeeper.Session
	log            *slog.Logger
	slot           int                // the slot led (--slots)
	told           func(historyEntry) // each run's end, once (candidateTold.runEnded)
}

// leaderHistory is c's run history, as it leads.
func leaderHistory(c *candidate) historyWriter {
	return historyWriter{&c.history, &c.proposalFacts, c.s, c.log, c.slot, c.tell.runEnded}
}

// listHistory lists the entries, creating the history node if missing:
// once per leadership, before its first run is recorded.
func (h historyWriter) listHistory() {
	if h.names != nil {
		return
	}
	dir := historyDir(h.basePath)
	names, _, err := h.s.Conn.Children(dir)
	if errors.Is(err, zk.ErrNoNode) {
		_, err = h.s.Conn.Create(dir, nil, 0, h.s.ACL)
		if errors.Is(err, zk.ErrNodeExists) {
			err = nil
		}
		names = nil
	}
	if err != nil {
		h.log.Warn("cannot read the run history; runs are not recorded in it", "path", dir, "error", err)
		return
	}
	sortStrings(names) // sequence numbers of equal width
	h.names = append(make([]string, 0, len(names)+1), names...)
}

// newRunEntry is the entry of a run about to start.
func (h historyWriter) newRunEntry(kind string) historyEntry {
	host, _ := os.Hostname()
	now := time.Now().UTC()
	return historyEntry{Format: historyFormat, Kind: kind, CandidateID: h.id, Host: host, FencingToken: h.token, StartedAt: &now, Slot: h.slot}
}

// historyCreate is the op that creates entry e, to be added to a fenced
// multi-op; nil when the history could not be listed.
func (h historyWriter) historyCreate(e historyEntry) *zk.CreateRequest {
	if h.names == nil {
		return nil
	}
	data, _ := jsonlite.Marshal(e)
	return &zk.CreateRequest{Path: historyDir(h.basePath) + "/" + historyPrefix, Data: data, Acl: h.s.ACL, Flags: zk.FlagSequence}
}

// created notes the entry a multi-op created (res[i]) as the run going on.
func (h historyWriter) created(res []zk.MultiResponse, i int, e historyEntry) {
	if i < 0 || i >= len(res) || res[i].String == "" {
		return
	}
	h.open = &openEntry{path: res[i].String, entry: e}
	h.skip = nil
	h.ending, h.reason = "", ""
	h.names = append(h.names, res[i].String[len(historyDir(h.basePath))+1:])
}

// adoptOwnEntry finds, after a write whose answer was lost but which
// landed, the entry it created: the newest open one of this leadership
// that matches. Without it the run's end would never be recorded, and the
// entry would stay open for good: successors close only entries newer than
// the newest closed run, and this one is soon older than that.
func (h historyWriter) adoptOwnEntry(match func(historyEntry) bool) {
	if h.names == nil {
		return // the history could not be listed: nothing was created
	}
	if o := h.findOpenEntry(h.token, match); o != nil {
		h.open = o
		h.skip = nil
		h.ending, h.reason = "", ""
	}
}

// findOpenEntry is the newest open entry of the leadership with fencing
// token token that matches, among the newest ten; nil if none.
func (h historyWriter) findOpenEntry(token int64, match func(historyEntry) bool) *openEntry {
	dir := historyDir(h.basePath)
	names, _, err := h.s.Conn.Children(dir)
	if err != nil {
		return nil
	}
	sortStrings(names)
	for i, looked := len(names)-1, 0; i >= 0 && looked < 10; i, looked = i-1, looked+1 {
		raw, st, err := h.s.Conn.Get(dir + "/" + names[i])
		var e historyEntry
		if err != nil || jsonlite.Unmarshal(raw, &e) != nil || e.FencingToken != token || e.Ended != "" || !match(e) {
			continue
		}
		return &openEntry{path: dir + "/" + names[i], version: st.Version, entry: e}
	}
	return nil
}

// runEndOf is when the newest run of scheduled time t (this slot's) ended,
// as its history entry says: among the newest five entries (the skips of
// that run are written after it); zero if not found or unfinished.
func (h historyWriter) runEndOf(t time.Time) time.Time {
	dir := historyDir(h.basePath)
	for i, looked := len(h.names)-1, 0; i >= 0 && looked < 5; i, looked = i-1, looked+1 {
		raw, _, err := h.s.Conn.Get(dir + "/" + h.names[i])
		var e historyEntry
		if err != nil || jsonlite.Unmarshal(raw, &e) != nil || e.Kind != historyCron || e.Slot != h.slot {
			continue
		}
		if e.ScheduledTime != nil && e.ScheduledTime.Equal(t) && e.EndedAt != nil {
			return *e.EndedAt
		}
		return time.Time{}
	}
	return time.Time{}
}

// endAs says how the run going on ended when it was stopped (not for a run
// that ended by itself): paused, stopped, timed-out, leadership-lost.
func (h historyWriter) endAs(ending, reason string) {
	if h.open != nil && h.ending == "" {
		h.ending, h.reason = ending, reason
	}
}

// endingOf is how a run ended by itself: exited, or killed when the
// command died of a signal.
func endingOf(ex childExit) string {
	if ex.Started && ex.Code > 128 && ex.Code <= 128+64 {
		return endKilled
	}
	return endExited
}

// historyEndOps are the ops that record the end of the run going on (ex),
// close the entries of earlier leaderships left open, create the entry of
// the times skipped while it ran, and delete the oldest entries past
// historyKeep. Empty when no run is open.
func (h historyWriter) historyEndOps(ex childExit) []any {
	o := h.open
	if o == nil {
		return nil
	}
	ops := []any{h.endOp(o, h.ending, h.reason, ex)}
	ops = append(ops, h.closeLeftOpen()...)
	if sk := h.overlap; sk != nil {
		data, _ := jsonlite.Marshal(sk)
		ops = append(ops, &zk.CreateRequest{Path: historyDir(h.basePath) + "/" + historyPrefix, Data: data, Acl: h.s.ACL, Flags: zk.FlagSequence})
	}
	if extra := len(h.names) - historyKeep; extra > 0 {
		for _, n := range h.names[:extra] {
			ops = append(ops, &zk.DeleteRequest{Path: historyDir(h.basePath) + "/" + n, Version: -1})
		}
	}
	return ops
}

// endOp is the op that records the end of o (ex; ending and reason when
// it was stopped), telling c.tell.runEnded once.
func (h historyWriter) endOp(o *openEntry, ending, reason string, ex childExit) *zk.SetDataRequest {
	e := o.entry
	now := time.Now().UTC()
	e.EndedAt = &now
	if ex.Started || ex.Code != 0 {
		d := ex.Duration.Milliseconds()
		code := ex.Code
		e.DurationMs, e.ExitCode = &d, &code
	}
	e.Ended, e.Reason = ending, reason
	if e.Ended == "" {
		e.Ended = endingOf(ex)
	}
	if !ex.Started && e.Ended == endExited {
		e.Reason = ex.Reason // the command could not be executed
	}
	e.Output = ex.Output
	if !o.told && h.told != nil {
		// Told before the write, which may wait out a partition: the
		// hook's news is the run's end, not the history's.
		o.told = true
		h.told(e)
	}
	data, _ := jsonlite.Marshal(e)
	o.entry = e
	return &zk.SetDataRequest{Path: o.path, Data: data, Version: o.version}
}

// closeLeftOpen returns the ops that close the newest entries of earlier
// leaderships still open: their leader died mid-run (this one holds the
// baton, so nothing of theirs runs; with --slots, only this slot's). It reads newest first, past skips,
// and stops at the first run that is closed; once per leadership.
func (h historyWriter) closeLeftOpen() []any {
	if h.settled {
		return nil
	}
	h.settled = true
	var ops []any
	dir := historyDir(h.basePath)
	for i := len(h.names) - 1; i >= 0 && len(ops) < 5; i-- {
		p := dir + "/" + h.names[i]
		if h.open != nil && p == h.open.path {
			continue
		}
		raw, st, err := h.s.Conn.Get(p)
		if err != nil {
			break
		}
		var e historyEntry
		switch {
		case jsonlite.Unmarshal(raw, &e) != nil:
			continue
		case e.Kind == historySkip || e.FencingToken == h.token || e.Slot != h.slot:
			continue // skips are never open; ours: an answer lost with the connection; another slot's: its holder may run
		case e.Ended != "":
			return ops
		}
		e.Ended, e.ClosedBy = endLeadershipLost, h.id
		e.Reason = "its leader's session ended before the run's end was recorded; how the command ended is unknown"
		data, _ := jsonlite.Marshal(e)
		ops = append(ops, &zk.SetDataRequest{Path: p, Data: data, Version: st.Version})
	}
	return ops
}

// ended notes that the ops of historyEndOps were written: the run is over,
// the deleted entries are gone.
func (h historyWriter) ended(ops []any) {
	h.open, h.overlap = nil, nil
	h.ending, h.reason = "", ""
	var deleted int
	for _, op := range ops {
		if _, ok := op.(*zk.DeleteRequest); ok {
			deleted++
		}
	}
	h.names = h.names[deleted:]
}

// writeRunEnd records the end of the run going on, fenced by this
// leader's proposal. When that fails (a predecessor's entry changed, the
// proposal is gone), it writes the end of its own entry alone, if nobody
// changed that.
func (h historyWriter) writeRunEnd(ex childExit) {
	ops := h.historyEndOps(ex)
	if len(ops) == 0 {
		return
	}
	_, err := h.s.Conn.Multi(append([]any{&zk.CheckVersionRequest{Path: h.node, Version: -1}}, ops...)...)
	if err != nil && len(ops) > 1 {
		_, err = h.s.Conn.Multi(ops[0])
		ops = ops[:1]
		if err == nil {
			// Something else changed the history (an entry to delete was
			// gone): list it again, or the bound would never be kept.
			defer func() { h.names = nil; h.listHistory() }()
		}
	}
	if err != nil {
		h.log.Warn("cannot record the end of the run in the history", "path", h.open.path, "error", err)
		h.open = nil
		return
	}
	h.ended(ops)
}

// recordSkip records a skipped scheduled time (or the range from..due),
// fenced by the proposal. Skips for the same reason in a row extend one
// entry, so a long pause does not push the runs out of the history.
func (h historyWriter) recordSkip(from, due time.Time, count int, reason string) {
	if h.names == nil {
		return
	}
	if sk := h.skip; sk != nil && sk.entry.Reason == reason {
		e := sk.entry
		d := due.UTC()
		e.LastSkipped, e.Skipped = &d, e.Skipped+count
		data, _ := jsonlite.Marshal(e)
		if _, err := h.s.Conn.Multi(&zk.CheckVersionRequest{Path: h.node, Version: -1},
			&zk.SetDataRequest{Path: sk.path, Data: data, Version: sk.version}); err == nil {
			sk.entry, sk.version = e, sk.version+1
			return
		}
	}
	e := h.skipEntry(from, due, count, reason)
	res, err := h.s.Conn.Multi(&zk.CheckVersionRequest{Path: h.node, Version: -1}, h.historyCreate(e))
	if err != nil {
		h.log.Debug("cannot record the skipped time in the history", "error", err)
		return
	}
	h.skip = &openEntry{path: res[1].String, entry: e}
	h.names = append(h.names, res[1].String[len(historyDir(h.basePath))+1:])
}

func (h historyWriter) skipEntry(from, due time.Time, count int, reason string) historyEntry {
	host, _ := os.Hostname()
	f, d := from.UTC(), due.UTC()
	e := historyEntry{Format: historyFormat, Kind: historySkip, ScheduledTime: &f, Skipped: count, CandidateID: h.id,
		Host: host, FencingToken: h.token, Ended: endSkipped, Reason: reason}
	if !d.Equal(f) {
		e.LastSkipped = &d
	}
	return e
}

// skippedWhileRunning notes a scheduled time skipped because the run is
// still going; the entry is written with the run's end.
func (h historyWriter) skippedWhileRunning(due time.Time, reason string) {
	if h.open == nil {
		return
	}
	if sk := h.overlap; sk != nil {
		d := due.UTC()
		sk.LastSkipped, sk.Skipped = &d, sk.Skipped+1
		return
	}
	e := h.skipEntry(due, due, 1, reason)
	h.overlap = &e
}

// countTimes counts the scheduled times from first to last (at most 10000;
// 0 when the schedule cannot say).
func countTimes(s schedule, first, last time.Time) int {
	n := 0
	for t := first; !t.After(last) && n < 10000; n++ {
		next, err := s.Next(t)
		if err != nil || !next.After(t) {
			return 0
		}
		t = next
	}
	return n
}

// closeRun records the end of a run that a leadership's end stopped (not
// one that ended by itself: its end is written already). After a loss the
// session may not answer: the write waits a quarter of the session
// timeout at most; the next leader closes the entry otherwise.
func (r *runner) closeRun(c *candidate, end leaderEnd) {
	h := leaderHistory(c)
	if h.open == nil {
		return
	}
	if ending, reason := end.how.ending(); ending != "" {
		h.endAs(ending, reason)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.writeRunEnd(end.ex)
	}()
	select {
	case <-done:
	case <-time.After(c.s.Timeout() / 4):
		c.log.Warn("the end of the run was not recorded in time; the next leader records it as leadership-lost")
	}
}

// recordMissed records in the history the scheduled times after the last
// one run that nobody ran: those before due, and due itself when it is
// skipped too (reason non-empty).
func (cl *cronLeader) recordMissed(due time.Time, reason string) {
	last := laterOf(cl.st.last, cl.skipped)
	if last.IsZero() {
		return
	}
	first, err := cl.w.sched.Next(last)
	if err != nil {
		return
	}
	upTo := due
	if reason == "" {
		if !first.Before(due) {
			return
		}
		reason = "missed: no leader ran it"
		if upTo, err = cl.w.sched.Latest(due.Add(-time.Nanosecond)); err != nil {
			return
		}
	}
	cl.v.recordSkip(first, upTo, countTimes(cl.w.sched, first, upTo), reason)
}
