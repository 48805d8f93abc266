package main

// ballot trigger: a run of a run cron election now, asked for from any
// host (kubectl create job --from=cronjob, nomad job periodic force).
//
//   <base>/trigger  persistent: the request (triggerRecord)
//
// The leader watches it with its other controls (no write at rest). It
// consumes the request in the fenced multi-op that creates the run's
// history entry: delete the request (its version), create the entry, check
// the leader's proposal. So each request runs at most once, through any
// failover: a leader that dies before the write leaves the request to its
// successor, one that dies after it loses the run, as with a scheduled
// time. A request while a trigger is pending joins it: one run for both.

import (
	"ballot/internal/jsonlite"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
)

// startTriggered runs the pending trigger request, if any, under
// --overlap and pause; over reports that the leadership ends with end.
func (cl *cronLeader) startTriggered(now time.Time) (end leaderEnd, over bool) {
	r, v := cl.r, cl.v
	t := v.trigger()
	if t == nil || t.czxid == cl.triggerDone {
		return end, false
	}
	// The request's age on ZooKeeper's clock (its ctime is): the last
	// renewal's reading, moved on by this host's boot clock.
	zkNow := now
	if reading, ok := v.zooKeeperClock(); ok {
		zkNow = reading.mtime.Add(time.Duration(bootNow() - reading.sent))
	}
	skip := ""
	switch {
	case zkNow.Sub(t.ctime) > triggerValidity:
		skip = "the trigger request expired: nobody ran it within " + triggerValidity.String()
	case v.paused() != nil:
		skip = "the election was paused"
	case cl.cmd != nil && r.set.Overlap == overlapQueue:
		return end, false // it runs when the run going on ends
	case cl.cmd != nil && r.set.Overlap == overlapReplace:
	case cl.cmd != nil:
		skip = "the previous run was still going"
	}
	if skip != "" {
		r.log.Info("triggered run skipped: "+skip, logEvRunSkipped.attr(), "skip", "trigger", "by", t.rec.By)
		e := v.skipEntry(now, now, 1, skip)
		e.Trigger = &t.rec
		cl.consumeTrigger(t, e)
		return end, false
	}
	if !v.awaitFresh() {
		if r.stopRequested() {
			return endedBy(stopRequested, childExit{}), true
		}
		return endedBy(leaseLost, childExit{}), true
	}
	if cl.cmd != nil { // --overlap replace
		v.endAs(endStopped, "replaced by a triggered run (--overlap replace)")
		ex, how := cl.cmd.Stop(syscall.SIGTERM, r.set.StopGracePeriod, v.killBy())
		r.log.Info("scheduled run replaced by a triggered run (--overlap replace)", logEvCommandStopped.attr(),
			"reason", "overlap-replace", "how", how, "exit_code", ex.Code)
		r.forget(cl.cmd)
		v.publishRunEnd(ex)
		v.writeRunEnd(ex)
		cl.cmd, cl.runDeadline, cl.trig = nil, time.Time{}, nil
	}
	at := now.UTC()
	e := v.newRunEntry(historyCron)
	e.ScheduledTime, e.Trigger = &at, &t.rec
	if !cl.consumeTrigger(t, e) {
		return end, false
	}
	if !v.fresh() {
		r.log.Warn("lease lost while recording the triggered run; this run is lost", "by", t.rec.By)
		return endedBy(leaseLost, childExit{}), true
	}
	r.setSpare(cl.idle)
	cl.idle = nil
	r.log.Info("triggered run starting (ballot trigger)", logEvTriggered.attr(), "by", t.rec.By,
		"requested_at", t.rec.At.Format(time.RFC3339Nano))
	cl.w.scheduled, cl.w.attempt = at, 0
	cmd, err := v.startCommand()
	if err != nil {
		r.log.Error("ballot failed", "error", err)
		return resignation("ballot-failed", exitWith(exitFailure)), true
	}
	cl.cmd, cl.runFor, cl.timedOut, cl.trig = cmd, at, false, &t.rec
	v.publish(func(d *proposalData) { d.HandoverMayCome = true })
	cl.runDeadline = time.Time{}
	if r.set.Timeout > 0 {
		cl.runDeadline = time.Now().Add(r.set.Timeout)
	}
	return end, false
}

// consumeTrigger deletes the request and creates its history entry e in
// one fenced multi-op; false if it did not happen (someone else changed the
// request, or the leadership is gone).
func (cl *cronLeader) consumeTrigger(t *triggerRequest, e historyEntry) bool {
	cl.triggerDone = t.czxid // whatever happens, never twice
	taken, again := cl.v.consumeTrigger(t, e)
	if again {
		cl.triggerDone = 0
	}
	return taken
}

// consumeTrigger is cronLeader.consumeTrigger's write, the view's; again:
// the write did not land, the request is to be taken again.
func (v *leadershipView) consumeTrigger(t *triggerRequest, e historyEntry) (taken, again bool) {
	c := v.c
	h := leaderHistory(c)
	p := c.basePath + "/" + triggerName
	ops := []any{&zk.CheckVersionRequest{Path: c.node, Version: -1}, &zk.DeleteRequest{Path: p, Version: t.version}}
	if op := h.historyCreate(e); op != nil {
		ops = append(ops, op)
	}
	res, err := c.s.Conn.Multi(ops...)
	if err == nil {
		switch {
		case len(res) < 3:
		case e.Kind == historySkip:
			h.names = append(h.names, res[2].String[len(historyDir(c.basePath))+1:])
		default:
			h.created(res, 2, e)
		}
		return true, false
	}
	if errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion) {
		// Taken by another slot's leader, or withdrawn by its trigger.
		v.r.log.Debug("the trigger request went before this leader took it", "error", err)
		return false, false
	}
	if !zookeeper.Retryable(err) || c.s.WaitOnline(v.r.stopping) != nil {
		v.r.log.Warn("cannot take the trigger request", "error", err)
		return false, false
	}
	// The answer was lost: the write may have happened. Synced first: a
	// follower behind the leader could still show the request.
	_, _ = c.s.Conn.Sync(p)
	ok, st, err := c.s.Conn.Exists(p)
	switch {
	case err != nil:
	case ok && st.Czxid == t.czxid:
		// The same request is still there: the multi, all or nothing,
		// did not land. Taken again at the next look.
		return false, true
	case !ok && e.Kind != historySkip:
		h.adoptOwnEntry(func(o historyEntry) bool { return o.Trigger != nil && o.Trigger.ID == t.rec.ID })
		return h.open != nil && h.open.entry.Trigger != nil && h.open.entry.Trigger.ID == t.rec.ID, false
	}
	return false, false
}

// onlyRunOnce says whether candidates are in line and every one that
// says its mode runs run once.
func (s *electionSnapshot) onlyRunOnce() bool {
	once := false
	for _, n := range s.proposals {
		if n.data == nil || n.data.Mode != cmdRunOnce {
			return false
		}
		once = true
	}
	return once
}

// led says whether a candidate in line holds a baton: a leader.
func (s *electionSnapshot) led() bool {
	for _, n := range s.proposals {
		if _, ok := s.holderSlot(n); ok {
			return true
		}
	}
	return false
}

func newTriggerID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// triggerReport is what `ballot trigger --output json` prints: the
// request, and with --wait how its run went.
type triggerReport struct {
	Election string        `json:"election"`
	Request  triggerRecord `json:"request"` // the request this trigger made or joined
	// Joined: a request was pending; this trigger waits for its run.
	Joined bool `json:"joined"`
	// Led: a candidate led when the request was written (without one it
	// waits for a leader, an hour at most).
	Led bool `json:"led"`
	// Outcome: asked (no --wait); with --wait: ended (the run ended, run
	// says how), skipped (recorded as skipped: run.reason), not-taken (no
	// leader took the request in time; withdrawn if this trigger made it),
	// timeout (the run did not end within --wait), missing (taken, but its
	// run is not in the history).
	Outcome string `json:"outcome"`
	// Run: with --wait, the run's history entry as `history --output json`
	// prints it (node, candidateId, startedAt, endedAt, exitCode, ended…).
	Run     *historyItem `json:"run,omitempty"`
	Message string       `json:"message,omitempty"` // what the human output says last
}

// Trigger outcomes (triggerReport.Outcome).
const (
	triggerAsked    = "asked"
	triggerEnded    = "ended"
	triggerSkipped  = "skipped"
	triggerNotTaken = "not-taken"
	triggerTimeout  = "timeout"
	triggerMissing  = "missing"
)

// triggerOut writes trigger's output: human lines as they come, or one
// JSON report at the end; failures go to stderr either way.
type triggerOut struct {
	json bool
	out  io.Writer
	rep  triggerReport
}

// say is a line of human output.
func (o *triggerOut) say(format string, a ...any) {
	o.rep.Message = fmt.Sprintf(format, a...)
	if !o.json {
		fmt.Fprintln(o.out, o.rep.Message)
	}
}

// fail is a line on stderr, and the report's message.
func (o *triggerOut) fail(format string, a ...any) {
	o.rep.Message = fmt.Sprintf(format, a...)
	fmt.Fprintln(os.Stderr, "ballot: trigger: "+o.rep.Message)
}

// done prints the JSON report, if asked for, and returns code.
func (o *triggerOut) done(code int) int {
	if o.json {
		_ = jsonlite.Encode(o.out, o.rep, "  ", true)
	}
	return code
}

// runTrigger is `ballot trigger`: ask the leader of a run cron election to
// run its command now; with --wait, wait for that run's end and exit with
// its code.
func runTrigger(set *Settings, acc *zookeeper.Access, log *slog.Logger, out io.Writer) int {
	conn := dialOperator(set, acc, log, "cannot reach ZooKeeper")
	if conn == nil {
		return exitFailure
	}
	defer conn.Close()
	// A run once election would keep the request unread for good.
	if s, err := readElection(conn, set.BasePath); err == nil && s.onlyRunOnce() {
		fmt.Fprintf(os.Stderr, "ballot: trigger: %s is a run once election; trigger asks run cron leaders only (nothing written)\n", set.BasePath)
		return exitNo
	}
	p := set.BasePath + "/" + triggerName
	rec := triggerRecord{ID: newTriggerID(), By: operator(), At: time.Now().UTC()}
	data, _ := jsonlite.Marshal(rec)
	_, err := conn.Create(p, data, 0, acc.ACL)
	if errors.Is(err, zk.ErrNoNode) {
		if err = zookeeper.CreateParents(conn, set.BasePath, acc.ACL); err == nil {
			_, err = conn.Create(p, data, 0, acc.ACL)
		}
	}
	joined := false
	if errors.Is(err, zk.ErrNodeExists) {
		// A request is pending: this one is the same run.
		var raw []byte
		if raw, _, err = conn.Get(p); err == nil {
			joined = jsonlite.Unmarshal(raw, &rec) == nil
		}
		if errors.Is(err, zk.ErrNoNode) { // taken meanwhile: ask again
			rec.ID, rec.At = newTriggerID(), time.Now().UTC()
			data, _ = jsonlite.Marshal(rec)
			_, err = conn.Create(p, data, 0, acc.ACL)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "ballot: trigger: %v\n", zookeeper.Failed(err, "write", p))
		return exitFailure
	}
	o := &triggerOut{json: set.Output == "json", out: out,
		rep: triggerReport{Election: set.BasePath, Request: rec, Joined: joined, Led: true, Outcome: triggerAsked}}
	_, st, _ := conn.Get(p)
	if joined {
		o.say("a run of %s was already asked for by %s: waiting for that one", set.BasePath, rec.By)
	} else {
		o.say("asked for a run of %s", set.BasePath)
	}
	if s, err := readElection(conn, set.BasePath); err == nil && !s.led() {
		o.rep.Led = false
		o.say("no candidate leads %s now: the run starts when one does, if within %s", set.BasePath, triggerValidity)
	}
	if set.Wait <= 0 {
		return o.done(exitOK)
	}
	return o.done(awaitTriggered(conn, set, p, st, rec.ID, !joined, o))
}

// awaitTriggered is trigger --wait once asked: on watches, until the
// request is taken, then until its history entry says how the run ended.
// At the deadline the request is withdrawn if this trigger made it (own):
// one that joined it leaves it to its maker.
func awaitTriggered(conn *zk.Conn, set *Settings, p string, st *zk.Stat, id string, own bool, o *triggerOut) int {
	deadline := time.NewTimer(set.Wait)
	defer deadline.Stop()
	// Taken: the request is gone (or replaced by a newer one).
	for taken := false; !taken; {
		ok, now, ev, err := conn.ExistsW(p)
		switch {
		case err != nil:
			o.fail("%v", zookeeper.Failed(err, "read", p))
			return exitFailure
		case !ok || st == nil || now.Czxid != st.Czxid:
			taken = true
			continue
		}
		select {
		case <-ev:
		case <-deadline.C:
			o.rep.Outcome = triggerNotTaken
			if !own {
				o.fail("no leader took the request within %s", set.Wait)
				return exitNo
			}
			// Only our request: one consumed and another's created since
			// would have the same version.
			if cur, err := existsStat(conn, p); err == nil && cur != nil && cur.Czxid == st.Czxid && conn.Delete(p, cur.Version) == nil {
				o.fail("no leader took the request within %s; it is withdrawn", set.Wait)
				return exitNo
			}
			o.rep.Outcome = triggerTimeout
			o.fail("the run did not end within %s", set.Wait)
			return exitNo
		}
	}
	// Its entry: created in the write that took the request, so among the
	// newest; then watched until the run's end rewrites it.
	entry := ""
	var node string
	for {
		if entry == "" {
			items, err := readHistory(conn, set.BasePath, 20, func(it *historyItem) bool { return it.Trigger != nil && it.Trigger.ID == id })
			if err != nil {
				o.fail("%v", err)
				return exitFailure
			}
			if n := len(items); n > 0 && items[n-1].Trigger != nil && items[n-1].Trigger.ID == id {
				node = items[n-1].Node
				entry = historyDir(set.BasePath) + "/" + node
			} else {
				o.rep.Outcome = triggerMissing
				o.fail("the request was taken, but its run is not in the history (withdrawn by another trigger --wait?)")
				return exitNo
			}
		}
		raw, _, ev, err := conn.GetW(entry)
		if err != nil {
			o.fail("%v", zookeeper.Failed(err, "read", entry))
			return exitFailure
		}
		it := &historyItem{Node: node, State: "running"}
		_ = jsonlite.Unmarshal(raw, &it.historyEntry)
		if it.Ended != "" || it.Kind == historySkip {
			it.State = "ended"
		}
		o.rep.Run = it
		switch {
		case it.Kind == historySkip:
			o.rep.Outcome = triggerSkipped
			o.fail("the run was skipped: %s", it.Reason)
			return exitNo
		case it.Ended != "" && it.ExitCode != nil:
			o.rep.Outcome = triggerEnded
			o.say("the run on %s ended (%s) with exit code %d", it.CandidateID, it.Ended, *it.ExitCode)
			return *it.ExitCode
		case it.Ended != "":
			o.rep.Outcome = triggerEnded
			o.say("the run on %s ended: %s", it.CandidateID, it.Ended)
			return exitNo
		}
		select {
		case <-ev:
		case <-deadline.C:
			o.rep.Outcome = triggerTimeout
			o.fail("the run did not end within %s", set.Wait)
			return exitNo
		}
	}
}

// existsStat is the stat of the node at p; nil when there is none.
func existsStat(conn *zk.Conn, p string) (*zk.Stat, error) {
	ok, st, err := conn.Exists(p)
	if err != nil || !ok {
		return nil, err
	}
	return st, nil
}
