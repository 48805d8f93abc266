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
//
// Handed over: a leader that resigns names its successor, the first other
// proposal in line, in the release (checked in the same multi-op, so it
// was in line then). The named successor may start its command at once,
// on credit, and take the baton meanwhile, when it holds a proof of its
// own: a write it sent, answered before it read the release, that checked
// its proposal (whoever may be named sends one every T/4, standby.go).
// Nobody else may take the baton while that successor is in line and the
// record names it (waitForNamed): others wait until its proposal is gone —
// whatever removed it (its session's expiry, a deletion) comes after the
// proof in ZooKeeper's order — or until they revoke the handover, a write
// after the read that gave the credit; then they wait the record's W. So
// the successor's first lease ends at (proof sent) + W, with W no longer
// than the record says; its take, once answered, renews it as any renewal
// does. A take that fails ends the leadership at once. Only the named
// proposal may treat a handed-over record as its own: the predecessor's
// session, which may stand again, may not. A successor that is not the
// oldest proposal in line (a higher --priority went ahead of older ones)
// gets no credit (noCredit): ballots older than priorities, which do not
// wait for a named successor, then find its baton taken first.

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

// The baton and handover record of the slot this candidate takes or holds
// (slot 0 but with --slots: slots.go).
func (c *candidate) batonPath() string    { return c.basePath + "/" + slotName(batonName, c.slot) }
func (c *candidate) handoverPath() string { return c.basePath + "/" + slotName(handoverName, c.slot) }

func (c *candidate) handoverRecord(state string) handoverRecord {
	host, _ := os.Hostname()
	return handoverRecord{State: state, Slot: c.slot, CandidateID: c.id, Host: host, PID: os.Getpid(),
		Proposal: c.node, Session: fmt.Sprintf("0x%x", c.s.ID()), SessionTimeoutMs: c.s.Timeout().Milliseconds(),
		BatonWaitMs: recordedWaitMs(c.s.Timeout()), FencingToken: c.token, At: time.Now().UTC()}
}

func (c *candidate) handoverData(state string) []byte {
	b, _ := json.Marshal(c.handoverRecord(state))
	return b
}

// handedData is the release that names a successor. Its W is the longest
// this leader knows of (its own, the election's record): what anyone
// waits should that successor vanish, and the most its credit may use.
func (c *candidate) handedData(to handTo) []byte {
	rec := c.handoverRecord(handoverHanded)
	rec.Successor, rec.NoCredit = to.proposal, to.noCredit
	if c.election != nil {
		rec.BatonWaitMs = max(rec.BatonWaitMs, c.election.rec.BatonWaitMs)
	}
	b, _ := json.Marshal(rec)
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

// leaseStart is how a lease begins: the hard end of its first write, and,
// for a handover on credit, the take still to be sent (pending).
type leaseStart struct {
	end     bootTime
	pending *handoverSeen
	// ctl, read while the baton was taken, and quit, which ends it with
	// the lease.
	ctl  *controls
	quit chan struct{}
}

// takeBaton waits until the baton is free and takes it, or, handed over
// to us with credit left, returns the take to send (pending) while the
// command starts.
//
// A missing handover record is treated as a dropped baton, even by the
// candidate that just created the election path: someone may have deleted
// the whole election (deleteall) under a leader that is still running.
func (c *candidate) takeBaton(stop <-chan struct{}) (leaseStart, error) {
	if c.slots > 1 {
		return c.takeSlot(stop)
	}
	var drop droppedWait
	var named namedWait
	announced := "" // the last wait logged
	for {
		if c.s.isLost() {
			return leaseStart{}, errSessionLost
		}
		// Only a proof answered before the record is read may give credit:
		// its commit then comes before any revocation of the handover
		// (waitForNamed) that the read did not see.
		proof := bootTime(c.proof.Load())
		h, err := c.readHandover()
		if err != nil {
			if err := c.retryAfter(err, stop); err != nil {
				return leaseStart{}, err
			}
			continue
		}
		if end, ok := c.credit(h, proof); ok {
			c.log.Info("baton handed over to us: starting on credit while the take goes out", logEvHandedOver.attr(),
				"proposal", c.node, "credit_left", time.Duration(end-bootNow()).Round(time.Millisecond))
			return leaseStart{end: end, pending: h}, nil
		}
		if waited, err := c.waitForNamed(h, &named, &announced, stop); err != nil {
			return leaseStart{}, err
		} else if waited {
			continue
		}
		dropped, wait, err := c.droppedTake(h)
		if err != nil {
			if err := c.retryAfter(err, stop); err != nil {
				return leaseStart{}, err
			}
			continue
		}
		if dropped != "" {
			free, err := c.waitOutDrop(h, dropped, wait, &drop, &announced, stop)
			if err != nil {
				return leaseStart{}, err
			}
			if !free {
				continue
			}
		}
		sent, taken, err := c.tryTake(h, &announced, stop)
		if err != nil || taken {
			return leaseStart{end: sent + bootTime(batonWait(c.s.Timeout()))}, err
		}
	}
}

// handedToUs reports a release that names this proposal.
func (c *candidate) handedToUs(h *handoverSeen) bool {
	return h.parsed && h.rec.State == handoverHanded && h.rec.Successor == c.node
}

// creditFloorDiv: a handover starts on credit only with a round trip and
// T/8 of it left before the command would be asked to stop, for the take's
// answer; with less, the take goes first, as for any take.
const creditFloorDiv = 8

// credit is the lease a successor the record names may start on before
// its take is answered: the send time of its last proof in line (answered
// before the record was read) plus W, the smaller of its own and the
// record's (which is what everyone else waits, should it vanish). ok is
// false without a proof, with a record that gives no credit, or with too
// little of it left.
func (c *candidate) credit(h *handoverSeen, proof bootTime) (end bootTime, ok bool) {
	if c.noCredit || !c.handedToUs(h) || h.rec.NoCredit || proof == 0 || c.election == nil || h.rec.BatonWaitMs <= 0 {
		return 0, false
	}
	t := c.s.Timeout()
	w := min(batonWait(t), time.Duration(h.rec.BatonWaitMs)*time.Millisecond)
	end = proof + bootTime(w)
	// The most the lease's kill margin and the stop's grace take off it;
	// the take's answer, a round trip away (as the last proof's), must
	// come with T/8 to spare.
	stopAt := end - bootTime(t/killMarginDiv) - bootTime(t/graceOwedDiv)
	rtt := bootTime(c.proofRTT.Load())
	return end, bootNow()+bootTime(t/creditFloorDiv)+rtt <= stopAt
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
	h := parseHandover(raw)
	h.stat, h.exists = stat, err == nil
	h.parsed = h.exists && h.parsed
	return h, nil
}

// parseHandover reads a handover record's data.
func parseHandover(raw []byte) *handoverSeen {
	h := &handoverSeen{raw: raw, exists: raw != nil}
	h.parsed = json.Unmarshal(raw, &h.rec) == nil
	return h
}

// droppedTake names a take that was never released, by another session
// (or a missing record, see takeBaton), and how long its holder's lease
// may still run: "" when there is none.
func (c *candidate) droppedTake(h *handoverSeen) (dropped string, wait time.Duration, err error) {
	mine := h.parsed && h.rec.Session == fmt.Sprintf("0x%x", c.s.ID())
	if h.parsed && (h.rec.State == handoverHanded || h.rec.State == handoverRevoked) {
		// Ours only if it names this proposal. Named to another, which
		// is no longer in line or whose handover was revoked
		// (waitForNamed), it may have started on credit: wait as for a
		// dropped take.
		mine = c.handedToUs(h)
	}
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
		c.log.Info("waiting for the baton: its last holder dropped it without releasing it; waiting until anything it may still run has been stopped by its own lease", logEvBatonWait.attr(),
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
	sent, res, err := c.take(h)
	if err == nil {
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
		c.baton.answerLost(c.slot)
		return 0, false, c.retryAfter(err, stop)
	}
	return 0, false, fmt.Errorf("cannot take the baton %s: %w", c.batonPath(), zkError(err, "create", c.batonPath()))
}

// take sends the take's multi-op: it creates the baton and marks the
// record taken, checks our proposal still exists, and records our W in
// the election's record if it is the longest yet. c.election is read.
func (c *candidate) take(h *handoverSeen) (sent bootTime, res []zk.MultiResponse, err error) {
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
	res, err = c.s.conn.Multi(ops...)
	if err != nil {
		return sent, res, err
	}
	var version int32 // our create's
	if h.exists && res[2].Stat != nil {
		version = res[2].Stat.Version
	}
	if record && res[3].Stat != nil {
		c.election.rec.BatonWaitMs, c.election.version = w, res[3].Stat.Version
	}
	c.baton.took(c.slot, version)
	if c.slots > 1 {
		c.log.Info("baton taken", logEvBatonTaken.attr(), "proposal", c.node, "slot", c.slot, "slots", c.slots)
	} else {
		c.log.Info("baton taken", logEvBatonTaken.attr(), "proposal", c.node)
	}
	return sent, res, nil
}

// takeHandedOver is a handover's take, sent while the command starts on
// credit (lease.go). A take that fails ends the leadership. One whose
// answer is lost (a reconnect) is looked for, and sent again if it was not
// applied, while fresh says the credit lasts: a hiccup that cannot expire
// the session must not cost the command.
func (c *candidate) takeHandedOver(h *handoverSeen, fresh func() bool, quit <-chan struct{}) (sent bootTime, err error) {
	var lost bootTime // the first take whose answer was lost: it may be the one applied
	for {
		s, res, err := c.take(h)
		i := failedOp(res)
		switch {
		case err == nil:
			return s, nil
		case i == 0 && errors.Is(res[0].Error, zk.ErrNoNode):
			return 0, &nodeLostError{"proposal"}
		case i == 1 && errors.Is(res[1].Error, zk.ErrNodeExists) && lost != 0:
			// An earlier take of ours may have been applied after all.
		case i == 3 && errors.Is(res[3].Error, zk.ErrBadVersion) && fresh():
			// Another leader recorded its W in the election's record since
			// we read it (while following): nothing was applied, a multi-op
			// being atomic. Read it again and take again.
			if _, err := c.readElection(); err != nil {
				return 0, fmt.Errorf("cannot read the election's record: %w", err)
			}
			continue
		case i >= 0 || !retryable(err):
			return 0, fmt.Errorf("cannot take the baton handed over to us: %w", zkError(err, "create", c.batonPath()))
		default:
			if lost == 0 {
				lost = s
			}
			c.baton.answerLost(c.slot)
		}
		var mine bool
		for {
			if !fresh() {
				return 0, errors.New("the take's answer was lost, and the credit ran out before it was found")
			}
			if err := c.s.waitOnline(quit); err != nil {
				return 0, err
			}
			if mine, h, err = c.findOwnTake(); err == nil {
				break
			}
			if !retryable(err) {
				return 0, err
			}
		}
		if mine {
			return lost, nil // counted from the earliest take that may have been applied
		}
	}
}

// findOwnTake looks, after a take's answer was lost, for the baton held by
// our session and the record of our take. Not found, it returns the record
// to take again from, which must still hand the baton to us.
func (c *candidate) findOwnTake() (mine bool, h *handoverSeen, err error) {
	held, owner, err := c.batonHolder()
	if err != nil {
		return false, nil, err
	}
	if held && owner != c.s.ID() {
		return false, nil, fmt.Errorf("the baton handed over to us is held by session 0x%x", owner)
	}
	if h, err = c.readHandover(); err != nil {
		return false, nil, err
	}
	if held {
		if !h.parsed || h.rec.State != handoverTaken || h.rec.Proposal != c.node || h.rec.Session != fmt.Sprintf("0x%x", c.s.ID()) {
			return false, nil, fmt.Errorf("our baton exists but the handover record is not our take: %s", h.raw)
		}
		c.baton.took(c.slot, h.stat.Version)
		c.log.Info("baton taken (its answer was lost; found on the next connection)", logEvBatonTaken.attr(), "proposal", c.node)
		return true, nil, nil
	}
	if !c.handedToUs(h) {
		return false, nil, fmt.Errorf("the handover record no longer hands the baton to us: %s", h.raw)
	}
	return false, h, nil
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
			c.baton.ownGone()
		}
		return nil
	}
	// First in line behind a leader (a higher --priority went ahead of
	// it): its release will name us.
	c.standBy()
	if *announced != fmt.Sprintf("held 0x%x", owner) {
		*announced = fmt.Sprintf("held 0x%x", owner)
		holder := fmt.Sprintf("session 0x%x", owner)
		if b, _, err := c.s.conn.Get(c.batonPath()); err == nil {
			var rec handoverRecord
			if json.Unmarshal(b, &rec) == nil {
				holder = fmt.Sprintf("%s (proposal %s, session %s)", rec.CandidateID, rec.Proposal, rec.Session)
			}
		}
		c.log.Info("waiting for the baton: the previous leader still holds it (its session lives); it gives it back once its command is gone", logEvBatonWait.attr(), "holder", holder)
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
//
// to, when it names a proposal, is named in the record (handed over), and
// checked to be in line in the same multi-op; retireMulti drops the name
// if it is not.
func (c *candidate) releaseOps(to handTo) []any {
	if !c.baton.held() {
		return nil
	}
	if to.proposal != "" {
		return []any{
			&zk.CheckVersionRequest{Path: to.proposal, Version: -1},
			&zk.SetDataRequest{Path: c.handoverPath(), Data: c.handedData(to), Version: c.baton.version},
			&zk.DeleteRequest{Path: c.batonPath(), Version: -1},
		}
	}
	return []any{
		&zk.SetDataRequest{Path: c.handoverPath(), Data: c.handoverData(handoverReleased), Version: c.baton.version},
		&zk.DeleteRequest{Path: c.batonPath(), Version: -1},
	}
}

// handTo is whom a release names, and whether it may start on credit.
type handTo struct {
	proposal string // full path; "": nobody
	noCredit bool
}

// successor is whom a leader hands the baton to: the first other proposal
// in line as its lease's watch last saw it. Credit goes with it only if it
// is also the oldest other proposal: sequence numbers only grow, so any
// proposal older than it was created before it and would have been seen;
// a ballot older than priorities waits as the oldest only, and never for a
// named successor (the take then goes first).
func (c *candidate) successor() handTo {
	p := c.lineSeen.Load()
	if p == nil || c.slots > 1 {
		return handTo{} // --slots: a plain release, whoever is next takes it (slots.go)
	}
	var to handTo
	oldest := int64(-1)
	for _, n := range sortedProposals(*p) {
		full := c.basePath + "/" + n
		if full == c.node {
			continue
		}
		seq, _ := proposalSeq(n)
		if to.proposal == "" {
			to.proposal, oldest = full, seq
		}
		if seq < oldest {
			to.noCredit = true
		}
	}
	return to
}

// namedWait is the handover to another candidate already waited for.
type namedWait struct {
	record   string
	revokeAt bootTime
}

// waitForNamed waits while the handover record names another proposal that
// is still in line: it may be running on credit, or about to. waited is
// true when the record is to be read again; false once that proposal is
// gone (the wait for a dropped take follows, from now). A successor that
// has not taken the baton within W of our first seeing the record (it is
// stopped, or did not learn it was named) has its handover revoked: a
// write after the read that could give it credit, so that its credit ends
// before ours begins plus W.
func (c *candidate) waitForNamed(h *handoverSeen, seen *namedWait, announced *string, stop <-chan struct{}) (waited bool, err error) {
	if !h.parsed || h.rec.State != handoverHanded || c.handedToUs(h) || h.rec.Successor == "" {
		return false, nil
	}
	ok, _, gone, err := c.s.conn.ExistsW(h.rec.Successor)
	if err != nil {
		return true, c.retryAfter(err, stop)
	}
	if !ok {
		return false, nil
	}
	if seen.record != string(h.raw) {
		seen.record, seen.revokeAt = string(h.raw), bootNow()+bootTime(h.rec.holderWait(c.s.Timeout()))
	}
	if bootNow() >= seen.revokeAt {
		rec := h.rec
		rec.State, rec.RevokedBy, rec.At = handoverRevoked, c.id, time.Now().UTC()
		b, _ := json.Marshal(rec)
		if _, err := c.s.conn.Set(c.handoverPath(), b, h.stat.Version); err != nil && !errors.Is(err, zk.ErrBadVersion) {
			return true, c.retryAfter(err, stop)
		} else if err == nil {
			c.log.Warn("the candidate the baton was handed over to has not taken it; revoked the handover, waiting out what it may have started",
				logEvRevoked.attr(), "successor", h.rec.Successor)
		}
		return true, nil
	}
	_, _, changed, err := c.s.conn.GetW(c.handoverPath())
	if err != nil {
		return true, c.retryAfter(err, stop)
	}
	if *announced != "named "+string(h.raw) {
		*announced = "named " + string(h.raw)
		c.log.Info("waiting for the baton: it was handed over to another candidate, which is taking it", logEvNamedWait.attr(), "successor", h.rec.Successor)
		c.pub.update(func(d *proposalData) { d.State = stateWaitingForBaton })
	}
	t := time.NewTimer(time.Duration(seen.revokeAt - bootNow()))
	defer t.Stop()
	select {
	case <-gone:
	case <-changed:
	case <-t.C:
	case <-c.s.lost:
		return true, errSessionLost
	case <-stop:
		return true, errStopped
	}
	return true, nil
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
	c.baton.givenBack()
	return released, nil
}

// pruneRetire decides what follows when operation i of a retire multi-op
// failed with err: the operations to try again (retry), and whether the
// release may stay among them. A delete of what someone else already
// deleted is dropped; once the proposal itself is gone, or the handover
// record changed under us, so is the release.
func (c *candidate) pruneRetire(ops []any, i int, err error) (rest []any, keepRelease, retry bool) {
	switch op := ops[i].(type) {
	case *zk.CheckVersionRequest:
		if op.Path != c.node && errors.Is(err, zk.ErrNoNode) {
			// The named successor left the line: release to nobody.
			rest = append(ops[:i:i], ops[i+1:]...)
			for j, o := range rest {
				if o, ok := o.(*zk.SetDataRequest); ok && o.Path == c.handoverPath() {
					released := *o
					released.Data = c.handoverData(handoverReleased)
					rest[j] = &released
				}
			}
			return rest, true, true
		}
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
		case *zk.CheckVersionRequest:
			if o.Path != c.node {
				continue // the successor's: nothing is handed over
			}
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
