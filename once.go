package main

// run once --once-key: a job started by every host's own scheduler (crontab,
// systemd timers) runs at most once per key across the election, whoever
// starts it and whenever.
//
//   <base>/once/<key>          persistent: who ran KEY, when, how it ended
//   <base>/once/<key>/running  ephemeral: the runner's session, while it runs
//
// The leader records KEY in the multi-op that also checks its proposal and
// the baton still exist, before it starts the command; a candidate that
// finds KEY recorded (when it starts, while it waits in line, or when
// elected) exits 0 without running anything. At most once, not exactly
// once: a runner whose session ends before the run finishes leaves KEY
// "started, unfinished", and only --once-retry-unfinished runs it again,
// once that session is gone (its "running" node with it).

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
	"ballot/internal/zookeeper"
)

const (
	onceKeyMax = 200 // bytes; a ZooKeeper node name stays well within limits
	// exitBusy: run once --no-wait found another candidate leading
	// (EX_TEMPFAIL: "try again later").
	exitBusy = 75
)

// onceNodeName escapes a key into a node name: letters, digits, '-', '_'
// and (but first) '.' stay; anything else is %XX, so "/" and "." or ".."
// cannot form a path.
func onceNodeName(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.' && i > 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func oncePath(base, key string) string { return onceDir(base) + "/" + onceNodeName(key) }

// readOnce reads KEY's record: nil if KEY was never recorded; running
// reports whether the runner's session still lives.
func readOnce(conn *zk.Conn, base, key string) (rec *onceRecord, version int32, running bool, err error) {
	p := oncePath(base, key)
	raw, st, err := conn.Get(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, 0, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	rec = &onceRecord{}
	if jsonlite.Unmarshal(raw, rec) != nil {
		rec = &onceRecord{Key: key, CandidateID: "(unreadable record)"}
	}
	running, _, err = conn.Exists(p + "/running")
	return rec, st.Version, running, err
}

// claimOnce records KEY for this leader, in one multi-op with checks that
// its proposal and the baton exist. claimed is false, with the record,
// when KEY was run (or is running) already; true with the record written
// (nil when only read back after a lost answer).
func claimOnce(c *candidate, key string, retry onceRetry, stop <-chan struct{}) (claimed bool, prior *onceRecord, err error) {
	h := leaderHistory(c)
	listed := make(chan struct{}) // the history's listing, sent along: no round trip more
	go func() { h.listHistory(); close(listed) }()
	_, err = c.s.Conn.Create(onceDir(c.basePath), nil, 0, c.s.ACL)
	<-listed
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return false, nil, zookeeper.Failed(err, "create", onceDir(c.basePath))
	}
	p := oncePath(c.basePath, key)
	for attempt := 0; attempt < 10; attempt++ {
		rec, version, running, err := readOnce(c.s.Conn, c.basePath, key)
		if err != nil {
			if err := c.retryAfter(err, stop); err != nil {
				return false, nil, err
			}
			continue
		}
		session := zookeeper.SessionHex(c.s.ID())
		if rec != nil && rec.Proposal == c.node && rec.Session == session && running {
			// Our own claim, whose answer was lost (below): it landed.
			c.log.Info("the once key was recorded; only the answer was lost", "once_key", key)
			h.adoptOwnEntry(func(e historyEntry) bool { return e.Kind == historyOnce && e.Key == key })
			pruneOnce(c)
			return true, rec, nil
		}
		if rec != nil && (running || !retry.allows(rec)) {
			return false, rec, nil
		}
		host, _ := os.Hostname()
		mine := onceRecord{Key: key, CandidateID: c.id, Host: host, PID: os.Getpid(), Proposal: c.node,
			Session: session, FencingToken: c.token, Attempt: 1, StartedAt: time.Now().UTC()}
		if retry.retries > 0 {
			mine.Attempts = retry.retries + 1
		}
		ops := []any{&zk.CheckVersionRequest{Path: c.node, Version: -1}, &zk.CheckVersionRequest{Path: c.batonPath(), Version: -1}}
		if rec == nil {
			data, _ := jsonlite.Marshal(mine)
			ops = append(ops, &zk.CreateRequest{Path: p, Data: data, Acl: c.s.ACL})
		} else {
			mine.Attempt = rec.Attempt + 1
			data, _ := jsonlite.Marshal(mine)
			ops = append(ops, &zk.SetDataRequest{Path: p, Data: data, Version: version})
		}
		ops = append(ops, &zk.CreateRequest{Path: p + "/running", Acl: c.s.ACL, Flags: zk.FlagEphemeral})
		entry := h.newRunEntry(historyOnce)
		entry.Key = key
		if mine.Attempts > 0 {
			entry.Attempt, entry.Attempts = mine.Attempt, mine.Attempts
		}
		if op := h.historyCreate(entry); op != nil {
			ops = append(ops, op) // the run's history entry, in the same fenced write
		}
		res, err := c.s.Conn.Multi(ops...)
		if err == nil {
			h.created(res, 4, entry)
			switch {
			case rec != nil && rec.FinishedAt != nil:
				c.log.Info("retrying the once key: the previous attempt failed", logEvRetrying.attr(), "once_key", key,
					"attempt", mine.Attempt, "of", mine.Attempts, "previous_by", rec.CandidateID)
			case rec != nil && mine.Attempts > 0:
				c.log.Info("retrying the once key: the previous attempt was lost with its runner", logEvRetrying.attr(), "once_key", key,
					"attempt", mine.Attempt, "of", mine.Attempts, "previous_by", rec.CandidateID)
			case rec != nil:
				c.log.Warn("running a key whose earlier run never finished (--once-retry-unfinished)", "once_key", key, "earlier", rec.String())
			}
			pruneOnce(c)
			return true, &mine, nil
		}
		if zookeeper.Retryable(err) || errors.Is(err, zk.ErrSessionExpired) {
			// The answer was lost, not necessarily the claim: read the
			// record back once online (above). A lost session ends the
			// claim with errSessionLost: see clearLostClaim.
			if err := c.retryAfter(err, stop); err != nil {
				return false, nil, err
			}
			continue
		}
		switch i := failedOp(res); {
		case i == 0 && errors.Is(res[0].Error, zk.ErrNoNode):
			return false, nil, errProposalGone
		case i == 1:
			return false, nil, &nodeLostError{"baton"}
		case i >= 2 && (errors.Is(res[i].Error, zk.ErrNodeExists) || errors.Is(res[i].Error, zk.ErrBadVersion)):
			// Recorded meanwhile: read it again.
		default:
			return false, nil, fmt.Errorf("cannot record the once key in %s: %w", p, err)
		}
	}
	return false, nil, fmt.Errorf("cannot record the once key in %s: it keeps changing", p)
}

// finishOnce records how the run of KEY ended; best effort (a lost
// session leaves KEY "started, unfinished"). It reports whether it did.
func finishOnce(c *candidate, key string, ex childExit) bool {
	h := leaderHistory(c)
	p := oncePath(c.basePath, key)
	raw, st, err := c.s.Conn.Get(p)
	if err != nil {
		c.log.Warn("cannot record the end of the run", "once_key", key, "error", err)
		return false
	}
	var rec onceRecord
	_ = jsonlite.Unmarshal(raw, &rec)
	now, code := time.Now().UTC(), ex.Code
	rec.FinishedAt, rec.ExitCode, rec.TimedOut = &now, &code, ex.TimedOut
	data, _ := jsonlite.Marshal(rec)
	ops := []any{&zk.SetDataRequest{Path: p, Data: data, Version: st.Version}, &zk.DeleteRequest{Path: p + "/running", Version: -1}}
	hist := h.historyEndOps(ex) // the history's end of the run, in the same write
	if _, err := c.s.Conn.Multi(append(ops, hist...)...); err == nil {
		h.ended(hist)
		return true
	}
	if _, err := c.s.Conn.Multi(ops...); err != nil {
		c.log.Warn("cannot record the end of the run", "once_key", key, "error", err)
		h.writeRunEnd(ex)
		return false
	}
	h.writeRunEnd(ex)
	return true
}

// pruneOnce deletes the oldest finished keys beyond onceKeep. An
// unfinished key stays until it is retried (--once-retry-unfinished) or
// cleared by hand: deleted, it could run again. A key still running (its
// node has a child) cannot be deleted anyway.
func pruneOnce(c *candidate) {
	dir := onceDir(c.basePath)
	names, _, err := c.s.Conn.Children(dir)
	if err != nil || len(names) <= onceKeep {
		return
	}
	type aged struct {
		name  string
		czxid int64
	}
	var keys []aged
	for _, n := range names {
		if ok, st, err := c.s.Conn.Exists(dir + "/" + n); err == nil && ok {
			keys = append(keys, aged{n, st.Czxid})
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].czxid < keys[j].czxid })
	for _, k := range keys[:max(0, len(keys)-onceKeep)] {
		raw, st, err := c.s.Conn.Get(dir + "/" + k.name)
		var rec onceRecord
		if err != nil || jsonlite.Unmarshal(raw, &rec) != nil || rec.FinishedAt == nil {
			continue
		}
		_ = c.s.Conn.Delete(dir+"/"+k.name, st.Version) // unless retried since
	}
}

// watchOnce returns a channel closed once KEY is recorded (by another
// candidate, while this one waits in line), and a function to stop
// watching.
func watchOnce(c *candidate, key string) (<-chan struct{}, func()) {
	seen, quit := make(chan struct{}), make(chan struct{})
	go func() {
		for {
			ok, _, ev, err := c.s.Conn.ExistsW(oncePath(c.basePath, key))
			switch {
			case err == nil && ok:
				close(seen)
				return
			case err != nil:
				if !zookeeper.Retryable(err) || c.s.WaitOnline(quit) != nil {
					return
				}
				continue
			}
			select {
			case <-ev:
			case <-quit:
				return
			case <-c.s.Lost():
				return
			}
		}
	}()
	var once bool
	return seen, func() {
		if !once {
			once = true
			close(quit)
		}
	}
}

// onceRetry is what makes a recorded KEY run again: --once-retry-unfinished
// (an unfinished run, any number of times) and --retries (a failed,
// timed-out or unfinished one, up to retries+1 attempts in all, counted in
// the record).
type onceRetry struct {
	unfinished bool
	retries    int
}

func (r *runner) onceRetry() onceRetry {
	return onceRetry{unfinished: r.set.OnceRetryUnfinished, retries: r.set.Retries}
}

// attemptsLeft: rec was recorded with --retries and had fewer attempts
// than allowed. A record written without --retries has no count to go on.
func (o onceRetry) attemptsLeft(rec *onceRecord) bool {
	return o.retries > 0 && rec.Attempts > 0 && rec.Attempt < o.retries+1
}

// allows reports whether KEY, recorded as rec and not running, may run
// again now or after a delay (retryAt).
func (o onceRetry) allows(rec *onceRecord) bool {
	if rec.FinishedAt == nil {
		return o.unfinished || o.attemptsLeft(rec)
	}
	return onceFailed(rec) && o.attemptsLeft(rec)
}

// retryAt is when a failed attempt may be followed by the next: its end
// plus the delay; an unfinished one (lost with its runner) at once.
func (o onceRetry) retryAt(rec *onceRecord, delay time.Duration) time.Time {
	if rec == nil || rec.FinishedAt == nil {
		return time.Time{}
	}
	return rec.FinishedAt.Add(retryDelay(delay, rec.Attempt))
}

// onceFailed: a finished run that did not exit 0 by itself.
func onceFailed(rec *onceRecord) bool {
	return rec.ExitCode == nil || *rec.ExitCode != 0 || rec.TimedOut
}

// beforeFollowing: with --once-key, a key already run ends ballot (exit
// 0). With --once-retry-unfinished, a key still running is waited for in
// line: once its runner's session is gone, this candidate may lead and
// retry it (or find it finished).
func (w *onceWork) beforeFollowing(c *candidate) verdict {
	r := w.r
	if !w.keyed {
		return verdict{}
	}
	r.clearLostClaim(c)
	rec, _, _, err := readOnce(c.s.Conn, c.basePath, r.set.OnceKey)
	if err == nil && rec != nil && !r.onceRetry().allows(rec) {
		c.withdraw()
		r.logOnceDone(c, "")
		return exitWith(exitOK)
	}
	return verdict{}
}

// whileFollowing: with --once-key, the key recorded by another candidate
// while this one waits ends the wait. With --once-retry-unfinished or
// --retries the candidate keeps its place instead: the key may yet need a
// retry, which it decides once elected.
func (w *onceWork) whileFollowing(c *candidate) (done <-chan struct{}, unwatch func()) {
	r := w.r
	if !w.keyed || r.set.OnceRetryUnfinished || r.set.Retries > 0 {
		return nil, func() {}
	}
	return watchOnce(c, r.set.OnceKey)
}
