package main

// The baton: a leader holds it from before its promote hook and command
// until after they are gone, so a successor never starts while anything of
// its predecessor may still run.
//
//   <base>/baton     ephemeral: held by the leader (its session); each
//                    lease renewal rewrites its data (lease.go)
//   <base>/handover  persistent: the last take or release of the baton
//   <base>           its data records the longest batonWait any leader
//                    of this election has used (electionRecord)
//
// Being the lowest proposal is not enough to act: a leader whose proposal
// was deleted by someone else (an operator's cleanup) is still alive and
// must first notice and stop its command; its baton stays until then.
//
// A successor takes the baton in one multi-op that also checks its own
// proposal still exists and records the take in the handover record. A
// leader gives it back in the multi-op that deletes its proposal, marking
// the record released: the proposal's delete fences the release, since no
// successor can hold the baton while our proposal is in line. A baton that
// vanished while the record still says taken was dropped: the holder's
// session ended (expired, or closed with ballot gone) or someone deleted
// it. Its holder may then still be running on a lease that outlives the
// baton: a successor waits batonWait before it takes over, unless the
// holder releases it meanwhile.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-zookeeper/zk"
)

// batonWait is W: how long a successor waits after finding the baton
// dropped by a holder whose session timeout was t. Whatever dropped it
// (the session's expiry, a deletion), that came after the holder's last
// renewal was sent, and the holder's command is dead by that send time +
// W (lease.go): so it is dead by the time the successor, which saw the
// baton gone no earlier than it went, has waited W. 3T/4 leaves the
// leader's renewals room to ride through a stalled or slow ZooKeeper
// (README, "How the election works"); a host that dies costs T + W.
func batonWait(t time.Duration) time.Duration { return t * 3 / 4 }

// recordedWaitMs is W as the records carry it, in whole milliseconds,
// rounded up: a successor must never wait less than the holder's lease
// counts with.
func recordedWaitMs(t time.Duration) int64 {
	return int64((batonWait(t) + time.Millisecond - 1) / time.Millisecond)
}

func batonPath(base string) string    { return base + "/" + batonName }
func handoverPath(base string) string { return base + "/" + handoverName }

func (c *candidate) batonPath() string    { return batonPath(c.basePath) }
func (c *candidate) handoverPath() string { return handoverPath(c.basePath) }

func (c *candidate) handoverRecord(state string) handoverRecord {
	host, _ := os.Hostname()
	return handoverRecord{State: state, CandidateID: c.id, Host: host, PID: os.Getpid(),
		Proposal: c.node, Session: fmt.Sprintf("0x%x", c.s.ID()), SessionTimeoutMs: c.s.Timeout().Milliseconds(),
		BatonWaitMs: recordedWaitMs(c.s.Timeout()), FencingToken: c.token, At: time.Now().UTC()}
}

func (c *candidate) handoverData(state string) []byte {
	b, _ := json.Marshal(c.handoverRecord(state))
	return b
}

// batonData is the baton's data as a renewal writes it: the take's record
// and how the renewals go, for ballot info (the node's mtime dates the
// last renewal on ZooKeeper's clock).
func (c *candidate) batonData(last, largest, lease time.Duration) []byte {
	b, _ := json.Marshal(batonRecord{handoverRecord: c.handoverRecord(handoverTaken),
		LastRenewalMs: last.Milliseconds(), LargestRenewalMs: largest.Milliseconds(),
		LeaseMs: lease.Milliseconds(), RenewEveryMs: (c.s.Timeout() / renewEveryDiv).Milliseconds()})
	return b
}

// takeBaton waits until the baton is free and takes it. It returns the send
// time of the write that took it: the lease starts there.
//
// A missing handover record is treated as a dropped baton, even by the
// candidate that just created the election path: someone may have deleted
// the whole election (deleteall) under a leader that is still running.
func (c *candidate) takeBaton(stop <-chan struct{}) (bootTime, error) {
	var drop droppedWait
	announced := "" // the last wait logged
	for {
		if c.s.isLost() {
			return 0, errSessionLost
		}
		h, err := c.readHandover()
		if err != nil {
			if err := c.retryAfter(err, stop); err != nil {
				return 0, err
			}
			continue
		}
		dropped, wait, err := c.droppedTake(h)
		if err != nil {
			if err := c.retryAfter(err, stop); err != nil {
				return 0, err
			}
			continue
		}
		if dropped != "" {
			free, err := c.waitOutDrop(h, dropped, wait, &drop, &announced, stop)
			if err != nil {
				return 0, err
			}
			if !free {
				continue
			}
		}
		sent, taken, err := c.tryTake(h, &announced, stop)
		if err != nil || taken {
			return sent, err
		}
	}
}

// handoverSeen is the handover record as a take found it.
type handoverSeen struct {
	raw    []byte
	stat   *zk.Stat
	exists bool
	parsed bool // its data is a handoverRecord
	rec    handoverRecord
}

func (c *candidate) readHandover() (*handoverSeen, error) {
	raw, stat, err := c.s.conn.Get(c.handoverPath())
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, err
	}
	h := &handoverSeen{raw: raw, stat: stat, exists: err == nil}
	h.parsed = h.exists && json.Unmarshal(raw, &h.rec) == nil
	return h, nil
}

// droppedTake names a take that was never released, by another session
// (or a missing record, see takeBaton), and how long its holder's lease
// may still run: "" when there is none.
func (c *candidate) droppedTake(h *handoverSeen) (dropped string, wait time.Duration, err error) {
	mine := h.parsed && h.rec.Session == fmt.Sprintf("0x%x", c.s.ID())
	switch {
	case h.exists && !mine && h.parsed && h.rec.State != handoverReleased:
		return string(h.raw), h.rec.holderWait(c.s.Timeout()), nil
	case h.exists && !mine && !h.parsed:
		// Overwritten by someone: whose take it was is unknown.
		e, err := c.readElection()
		if err != nil {
			return "", 0, err
		}
		return string(h.raw), max(batonWait(c.s.Timeout()), time.Duration(e.rec.BatonWaitMs)*time.Millisecond), nil
	case !h.exists:
		// Whoever held the baton last, its record is gone: wait the
		// longest W any leader of this election recorded (mixed session
		// timeouts), at least our own.
		e, err := c.readElection()
		if err != nil {
			return "", 0, err
		}
		return "(no handover record)", max(batonWait(c.s.Timeout()), time.Duration(e.rec.BatonWaitMs)*time.Millisecond), nil
	}
	return "", 0, nil
}

// holderWait is W for the holder of a take record: as recorded, or from
// its session timeout (records of older ballots), or ours (unparsable).
func (r handoverRecord) holderWait(own time.Duration) time.Duration {
	switch {
	case r.BatonWaitMs > 0:
		return time.Duration(r.BatonWaitMs) * time.Millisecond
	case r.SessionTimeoutMs > 0:
		return batonWait(time.Duration(r.SessionTimeoutMs) * time.Millisecond)
	}
	return batonWait(own)
}

// electionSeen is the election path's own record, as last read.
type electionSeen struct {
	rec     electionRecord
	version int32
	ours    bool // empty or ballot's: ballot may write it
}

// readElection reads the election path's record.
func (c *candidate) readElection() (*electionSeen, error) {
	raw, st, err := c.s.conn.Get(c.basePath)
	if err != nil {
		return nil, err
	}
	e := &electionSeen{version: st.Version, ours: len(raw) == 0}
	if len(raw) > 0 {
		// Ours only if it holds nothing else: other data is left alone.
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		e.ours = d.Decode(&e.rec) == nil
	}
	c.election = e
	return e, nil
}

// droppedWait is the dropped take already waited for, across rounds.
type droppedWait struct {
	take  string
	until bootTime
}

// waitOutDrop waits, once the baton is seen gone, for whatever the
// dropped take's holder may still run. free is true once the take may go
// ahead; false means read the record again.
func (c *candidate) waitOutDrop(h *handoverSeen, dropped string, wait time.Duration, drop *droppedWait, announced *string, stop <-chan struct{}) (free bool, err error) {
	held, _, err := c.batonHolder()
	if err != nil {
		return false, c.retryAfter(err, stop)
	}
	if held {
		return false, c.waitHeld(announced, stop)
	}
	if drop.take != dropped {
		// The wait counts from the moment the baton is seen gone, which
		// is no earlier than the moment it went.
		drop.take, drop.until = dropped, bootNow()+bootTime(wait)
		who := "an unknown holder"
		if h.parsed {
			who = fmt.Sprintf("%s (proposal %s, session %s)", h.rec.CandidateID, h.rec.Proposal, h.rec.Session)
		}
		if !h.exists {
			who = "nobody on record (the record is missing: a new election, or someone deleted it)"
		}
		c.log.Info("waiting for the baton: its last holder dropped it without releasing it; waiting until anything it may still run has been stopped by its own lease",
			"holder", who, "wait", wait.Round(time.Millisecond))
		c.pub.update(func(d *proposalData) { d.State = stateWaitingForBaton })
	}
	if bootNow() < drop.until {
		return false, c.waitDropped(drop.until, h.exists, stop)
	}
	return true, nil
}

// tryTake creates the baton and marks the record taken, in one multi-op
// that checks our proposal still exists, and records our W in the
// election's record if it is the longest yet. taken is false when the
// round must start again (the baton was held, a record changed, the
// answer was lost).
func (c *candidate) tryTake(h *handoverSeen, announced *string, stop <-chan struct{}) (sent bootTime, taken bool, err error) {
	if c.election == nil {
		if _, err := c.readElection(); err != nil {
			return 0, false, c.retryAfter(err, stop)
		}
	}
	ops := []any{&zk.CheckVersionRequest{Path: c.node, Version: -1},
		&zk.CreateRequest{Path: c.batonPath(), Data: c.handoverData(handoverTaken), Acl: c.s.acl, Flags: zk.FlagEphemeral}}
	if h.exists {
		ops = append(ops, &zk.SetDataRequest{Path: c.handoverPath(), Data: c.handoverData(handoverTaken), Version: h.stat.Version})
	} else {
		ops = append(ops, &zk.CreateRequest{Path: c.handoverPath(), Data: c.handoverData(handoverTaken), Acl: c.s.acl})
	}
	w := recordedWaitMs(c.s.Timeout())
	record := c.election.ours && w > c.election.rec.BatonWaitMs
	if record {
		b, _ := json.Marshal(electionRecord{BatonWaitMs: w})
		ops = append(ops, &zk.SetDataRequest{Path: c.basePath, Data: b, Version: c.election.version})
	}
	sent = bootNow()
	res, err := c.s.conn.Multi(ops...)
	if err == nil {
		c.handoverVersion = 0
		if h.exists && res[2].Stat != nil {
			c.handoverVersion = res[2].Stat.Version
		}
		if record && res[3].Stat != nil {
			c.election.rec.BatonWaitMs, c.election.version = w, res[3].Stat.Version
		}
		c.holdsBaton, c.maybeBaton = true, false
		c.log.Info("baton taken", "proposal", c.node)
		return sent, true, nil
	}
	switch i := failedOp(res); {
	case i == 0 && errors.Is(res[0].Error, zk.ErrNoNode):
		return 0, false, errProposalGone
	case i == 1 && errors.Is(res[1].Error, zk.ErrNodeExists):
		return 0, false, c.waitHeld(announced, stop)
	case i == 2 && (errors.Is(res[2].Error, zk.ErrBadVersion) || errors.Is(res[2].Error, zk.ErrNoNode) || errors.Is(res[2].Error, zk.ErrNodeExists)):
		// The record changed or appeared meanwhile: read it again.
		return 0, false, nil
	case i == 3 && errors.Is(res[3].Error, zk.ErrBadVersion):
		c.election = nil // another leader recorded its W meanwhile
		return 0, false, nil
	case retryable(err) || errors.Is(err, zk.ErrSessionExpired):
		// The multi may have been applied: a baton of ours is found on
		// the next round (the take fails with "exists", waitHeld sees it
		// is ours). Until then, leaving the election must end the
		// session, or that baton would stall it.
		c.maybeBaton = true
		return 0, false, c.retryAfter(err, stop)
	}
	return 0, false, fmt.Errorf("cannot take the baton %s: %w", c.batonPath(), zkError(err, "create", c.batonPath()))
}

// waitHeld waits while another session holds the baton; a baton of this
// session's own (an ambiguous take that did happen) is released first.
func (c *candidate) waitHeld(announced *string, stop <-chan struct{}) error {
	held, owner, ev, err := c.batonWatch()
	if err != nil {
		return c.retryAfter(err, stop)
	}
	if !held {
		return nil
	}
	if owner == c.s.ID() {
		// Ours, from a take whose answer was lost: nothing runs under it.
		// Checked against our proposal, so that a delete the client sends
		// late, on a new session, cannot remove a successor's baton.
		if _, err := c.s.conn.Multi(&zk.CheckVersionRequest{Path: c.node, Version: -1},
			&zk.DeleteRequest{Path: c.batonPath(), Version: -1}); err == nil {
			c.maybeBaton = false
		}
		return nil
	}
	if *announced != fmt.Sprintf("held 0x%x", owner) {
		*announced = fmt.Sprintf("held 0x%x", owner)
		holder := fmt.Sprintf("session 0x%x", owner)
		if b, _, err := c.s.conn.Get(c.batonPath()); err == nil {
			var rec handoverRecord
			if json.Unmarshal(b, &rec) == nil {
				holder = fmt.Sprintf("%s (proposal %s, session %s)", rec.CandidateID, rec.Proposal, rec.Session)
			}
		}
		c.log.Info("waiting for the baton: the previous leader still holds it (its session lives); it gives it back once its command is gone", "holder", holder)
		c.pub.update(func(d *proposalData) { d.State = stateWaitingForBaton })
	}
	for {
		select {
		case e := <-ev:
			if e.Type != zk.EventNodeDataChanged {
				return nil
			}
			// The holder's lease renewal: it still holds the baton.
			if held, _, ev, err = c.batonWatch(); err != nil || !held {
				return nil
			}
		case <-c.s.lost:
			return errSessionLost
		case <-stop:
			return errStopped
		}
	}
}

// waitDropped sleeps until the end of the wait for a dropped baton, or
// until the handover record changes (its holder released it after all).
func (c *candidate) waitDropped(until bootTime, exists bool, stop <-chan struct{}) error {
	var changed <-chan zk.Event
	if exists {
		_, _, ev, err := c.s.conn.GetW(c.handoverPath())
		if err == nil {
			changed = ev
		}
	}
	t := time.NewTimer(time.Duration(until - bootNow()))
	defer t.Stop()
	select {
	case <-t.C:
	case <-changed:
	case <-c.s.lost:
		return errSessionLost
	case <-stop:
		return errStopped
	}
	return nil
}

func (c *candidate) batonHolder() (held bool, owner int64, err error) {
	ok, st, err := c.s.conn.Exists(c.batonPath())
	if err != nil || !ok {
		return false, 0, err
	}
	return true, st.EphemeralOwner, nil
}

func (c *candidate) batonWatch() (held bool, owner int64, ev <-chan zk.Event, err error) {
	ok, st, ev, err := c.s.conn.ExistsW(c.batonPath())
	if err != nil || !ok {
		return false, 0, ev, err
	}
	return true, st.EphemeralOwner, ev, nil
}

// releaseOps give the baton back, for the multi-op that deletes the
// proposal: the handover record says released (only if nobody took the
// baton since: its version is ours), and the baton goes. The proposal's
// delete in the same multi-op fences them: while our proposal is in line
// nobody else can have taken the baton, whatever the record's version says
// (an operator may have deleted the record, and a successor re-created it
// at version 0, the version of our own create).
func (c *candidate) releaseOps() []any {
	if !c.holdsBaton {
		return nil
	}
	return []any{
		&zk.SetDataRequest{Path: c.handoverPath(), Data: c.handoverData(handoverReleased), Version: c.handoverVersion},
		&zk.DeleteRequest{Path: c.batonPath(), Version: -1},
	}
}

// retire runs a leader's or candidate's last writes in one multi-op, which
// deletes the proposal. What someone else already deleted is dropped and
// the rest tried again; if the proposal itself is gone, or the handover
// record changed under us, the release is dropped and released reports
// false: the caller must end the session, so that a baton of ours, if any
// is left, goes with it.
func (c *candidate) retireMulti(ops []any) (released bool, err error) {
	released = true
	for attempt := 0; len(ops) > 0; attempt++ {
		if attempt == 5 {
			return false, errors.New("giving up after 5 attempts")
		}
		res, merr := c.s.conn.Multi(ops...)
		if merr == nil {
			break
		}
		i := failedOp(res)
		if i < 0 {
			return false, merr
		}
		var keepRelease, retry bool
		if ops, keepRelease, retry = c.pruneRetire(ops, i, res[i].Error); !retry {
			return false, merr
		}
		released = released && keepRelease
	}
	c.holdsBaton = false
	return released, nil
}

// pruneRetire decides what follows when operation i of a retire multi-op
// failed with err: the operations to try again (retry), and whether the
// release may stay among them. A delete of what someone else already
// deleted is dropped; once the proposal itself is gone, or the handover
// record changed under us, so is the release.
func (c *candidate) pruneRetire(ops []any, i int, err error) (rest []any, keepRelease, retry bool) {
	switch op := ops[i].(type) {
	case *zk.DeleteRequest:
		if errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion) {
			rest = append(ops[:i:i], ops[i+1:]...)
			if op.Path == c.node {
				return c.withoutRelease(rest), false, true // not in line any more: the baton may not be ours to give
			}
			return rest, true, true
		}
	case *zk.SetDataRequest:
		if op.Path == c.handoverPath() {
			return c.withoutRelease(ops), false, true
		}
	}
	return ops, true, false
}

// withoutRelease is ops without the baton's release (releaseOps).
func (c *candidate) withoutRelease(ops []any) []any {
	var keep []any
	for _, o := range ops {
		switch o := o.(type) {
		case *zk.DeleteRequest:
			if o.Path == c.batonPath() {
				continue
			}
		case *zk.SetDataRequest:
			if o.Path == c.handoverPath() {
				continue
			}
		}
		keep = append(keep, o)
	}
	return keep
}

// failedOp is the index of the operation that failed a multi-op (the
// server marks those before it OK, those after it with a runtime
// inconsistency), -1 if none did: the request itself failed.
func failedOp(res []zk.MultiResponse) int {
	for i, r := range res {
		if r.Error != nil {
			return i
		}
	}
	return -1
}
