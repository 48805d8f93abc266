package main

// The baton: a leader holds it from before its promote hook and command
// until after they are gone, so a successor never starts while anything of
// its predecessor may still run.
//
//   <base>/baton     ephemeral: held by the leader (its session)
//   <base>/handover  persistent: the last take or release of the baton
//
// Being the lowest proposal is not enough to act: a leader whose proposal
// was deleted by someone else (an operator's cleanup) is still alive and
// must first notice and stop its command; its baton stays until then.
//
// A successor takes the baton in one multi-op that also checks its own
// proposal still exists and records the take in the handover record. A
// leader gives it back in the multi-op that deletes its proposal, marking
// the record released. A baton that vanished while the record still says
// taken was dropped: the holder's session ended (expired, or closed with
// ballot gone) or someone deleted it. Its holder may then still be running
// on a lease that outlives the baton: a successor waits batonWait before
// it takes over, unless the holder releases it meanwhile.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-zookeeper/zk"
)

// batonWait is how long a successor waits after finding the baton dropped
// by a holder whose session timeout was t. The holder's command is gone by
// then, whatever ended the baton:
//   - its session expired: its lease ended before the expiry (lease.go);
//   - its ZooKeeper member was deposed but answered syncs until it noticed,
//     up to 1.5 × tickTime after the new quorum started counting its
//     session afresh: its kill is due at most 3T/8 after the expiry
//     (tickTime ≤ T/2);
//   - someone deleted it while its holder was cut off: the holder's last
//     renewal was sent before the deletion, so its kill is due at most 5T/8
//     later (the lease ends T after the renewal before that, sent at least
//     T/4 earlier, minus the T/8 margin);
//   - before its first renewal, a holder kills at its take + T/2, and the
//     take came before the session's end.
func batonWait(t time.Duration) time.Duration { return t * 3 / 4 }

func batonPath(base string) string    { return base + "/" + batonName }
func handoverPath(base string) string { return base + "/" + handoverName }

func (c *candidate) batonPath() string    { return batonPath(c.basePath) }
func (c *candidate) handoverPath() string { return handoverPath(c.basePath) }

func (c *candidate) handoverData(state string) []byte {
	host, _ := os.Hostname()
	b, _ := json.Marshal(handoverRecord{State: state, CandidateID: c.id, Host: host, PID: os.Getpid(),
		Proposal: c.node, Session: fmt.Sprintf("0x%x", c.s.ID()), SessionTimeoutMs: c.s.Timeout().Milliseconds(),
		FencingToken: c.token, At: time.Now().UTC()})
	return b
}

// takeBaton waits until the baton is free and takes it. It returns the send
// time of the write that took it: the lease starts there.
//
// A missing handover record is treated as a dropped baton (someone may
// have deleted it, with the baton, under a leader that is cut off), except
// by the candidate that created the election path itself, on which nobody
// can have led before. wary is set when this candidate saw its own proposal
// deleted by someone else: then even a path it created again proves
// nothing (the whole election may have been deleted under a running
// leader).
func (c *candidate) takeBaton(stop <-chan struct{}, wary bool) (bootTime, error) {
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
		if dropped, wait := c.droppedTake(h, wary); dropped != "" {
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
func (c *candidate) droppedTake(h *handoverSeen, wary bool) (dropped string, wait time.Duration) {
	mine := h.parsed && h.rec.Session == fmt.Sprintf("0x%x", c.s.ID())
	wait = batonWait(c.s.Timeout())
	switch {
	case h.exists && !mine && (!h.parsed || h.rec.State != handoverReleased):
		if h.parsed && h.rec.SessionTimeoutMs > 0 {
			wait = batonWait(time.Duration(h.rec.SessionTimeoutMs) * time.Millisecond)
		}
		return string(h.raw), wait
	case !h.exists && (wary || !c.createdElection):
		return "(no handover record)", wait
	}
	return "", wait
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
// that checks our proposal still exists. taken is false when the round
// must start again (the baton was held, the record changed, the answer was
// lost).
func (c *candidate) tryTake(h *handoverSeen, announced *string, stop <-chan struct{}) (sent bootTime, taken bool, err error) {
	sent = bootNow()
	ops := []any{&zk.CheckVersionRequest{Path: c.node, Version: -1},
		&zk.CreateRequest{Path: c.batonPath(), Data: c.handoverData(handoverTaken), Acl: c.s.acl, Flags: zk.FlagEphemeral}}
	if h.exists {
		ops = append(ops, &zk.SetDataRequest{Path: c.handoverPath(), Data: c.handoverData(handoverTaken), Version: h.stat.Version})
	} else {
		ops = append(ops, &zk.CreateRequest{Path: c.handoverPath(), Data: c.handoverData(handoverTaken), Acl: c.s.acl})
	}
	res, err := c.s.conn.Multi(ops...)
	if err == nil {
		c.handoverVersion = 0
		if h.exists && res[2].Stat != nil {
			c.handoverVersion = res[2].Stat.Version
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
	select {
	case <-ev:
		return nil
	case <-c.s.lost:
		return errSessionLost
	case <-stop:
		return errStopped
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
// baton since: its version is ours), and the baton goes.
func (c *candidate) releaseOps() []any {
	if !c.holdsBaton {
		return nil
	}
	return []any{
		&zk.SetDataRequest{Path: c.handoverPath(), Data: c.handoverData(handoverReleased), Version: c.handoverVersion},
		&zk.DeleteRequest{Path: c.batonPath(), Version: -1},
	}
}

// retire runs a leader's or candidate's last writes in one multi-op. What
// someone else already deleted is dropped and the rest tried again; if the
// handover record changed under us, the release is dropped and released
// reports false: the caller must end the session, so that a baton of ours,
// if any is left, goes with it.
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
		switch op := ops[i].(type) {
		case *zk.DeleteRequest:
			if errors.Is(res[i].Error, zk.ErrNoNode) || errors.Is(res[i].Error, zk.ErrBadVersion) {
				ops = append(ops[:i:i], ops[i+1:]...)
				continue
			}
		case *zk.SetDataRequest:
			if op.Path == c.handoverPath() {
				released = false
				var keep []any
				for _, o := range ops {
					if d, ok := o.(*zk.DeleteRequest); ok && d.Path == c.batonPath() {
						continue
					}
					if o != op {
						keep = append(keep, o)
					}
				}
				ops = keep
				continue
			}
		}
		return false, merr
	}
	c.holdsBaton = false
	return released, nil
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
