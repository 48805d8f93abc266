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
// A leader that resigns may hand the baton over to a named successor,
// which starts on credit (handover.go); it gives it back in one multi-op
// (release.go).

import (
	"errors"
	"fmt"
	"os"
	"path"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
	"ballot/internal/zookeeper"
)

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

// leaderPath is the leader node of this candidate's slot (leader-k with
// --slots, slot k > 0).
func (c *candidate) leaderPath() string { return c.basePath + "/" + slotName(leaderName, c.slot) }

func (c *candidate) handoverRecord(state string) handoverRecord {
	host, _ := os.Hostname()
	return handoverRecord{State: state, Slot: c.slot, CandidateID: c.id, Host: host, PID: os.Getpid(),
		Proposal: c.node, Session: zookeeper.SessionHex(c.s.ID()), SessionTimeoutMs: c.s.Timeout().Milliseconds(),
		BatonWaitMs: recordedWaitMs(c.s.Timeout()), FencingToken: c.token, At: time.Now().UTC()}
}

func (c *candidate) handoverData(state string) []byte {
	b, _ := jsonlite.Marshal(c.handoverRecord(state))
	return b
}

// batonData is the baton's data as a renewal writes it: the take's record
// and how the renewals go, for ballot info (the node's mtime dates the
// last renewal on ZooKeeper's clock).
func (c *candidate) batonData(last, largest, lease time.Duration) []byte {
	b, _ := jsonlite.Marshal(batonRecord{handoverRecord: c.handoverRecord(handoverTaken),
		LastRenewalMs: last.Milliseconds(), LargestRenewalMs: largest.Milliseconds(),
		LeaseMs: lease.Milliseconds(), RenewEveryMs: (c.s.Timeout() / renewEveryDiv).Milliseconds()})
	return b
}

// oneBaton is the holding of an election without --slots: one baton,
// handed to a named successor, and a note left when the proposal goes.
type oneBaton struct{ c *candidate }

// othersAhead: another proposal is first in line, or, first by
// --priority, a leader may still hold the baton, or have handed it over
// to one that starts on credit.
func (b oneBaton) othersAhead(line []string) bool {
	c := b.c
	if len(line) > 0 && c.basePath+"/"+line[0] != c.node {
		return true
	}
	held, owner, herr := c.batonHolder()
	ahead := herr == nil && held && owner != c.s.ID()
	if h, herr := c.readHandover(); !ahead && herr == nil && h.parsed && h.rec.State == handoverHanded && !c.handedToUs(h) {
		ok, _, _ := c.s.Conn.Exists(h.rec.Successor)
		ahead = ok
	}
	return ahead
}

func (oneBaton) handsOver() bool                          { return true }
func (oneBaton) logged() []any                            { return nil }
func (oneBaton) slotShown() (slots, slot int, shown bool) { return 0, 0, false }

// leaseStart is how a lease begins: the hard end of its first write, and,
// for a handover on credit, the take still to be sent (pending).
type leaseStart struct {
	end     bootTime
	pending *handoverSeen
	// ctl, read while the baton was taken, and quit, which ends it with
	// the lease.
	ctl  *controls
	quit chan struct{}
	// shared: the session serves other elections too (a crontab's jobs),
	// which must outlive this lease's trouble (lease.endOwn).
	shared bool
}

// takeTurn is takeBaton with one baton: it waits until the baton is free
// and takes it, or, handed over to us with credit left, returns the take
// to send (pending) while the command starts.
//
// A missing handover record is treated as a dropped baton, even by the
// candidate that just created the election path: someone may have deleted
// the whole election (deleteall) under a leader that is still running.
func (b oneBaton) takeTurn(stop <-chan struct{}) (leaseStart, error) {
	c := b.c
	var drop droppedWait
	var named namedWait
	announced := "" // the last wait logged
	for {
		if c.s.IsLost() {
			return leaseStart{}, errSessionLost
		}
		// Only a proof answered before the record is read may give credit:
		// its commit then comes before any revocation of the handover
		// (waitForNamed) that the read did not see.
		proof, _ := c.standby.lastProof()
		h, err := c.readHandover()
		if err != nil {
			if err := c.retryAfter(err, stop); err != nil {
				return leaseStart{}, err
			}
			continue
		}
		if end, ok := b.credit(h, proof); ok {
			c.log.Info("baton handed over to us: starting on credit while the take goes out", logEvHandedOver.attr(),
				"proposal", c.node, "credit_left", time.Duration(end-bootNow()).Round(time.Millisecond))
			return leaseStart{end: end, pending: h}, nil
		}
		if waited, err := waitForNamed(c, h, &named, &announced, stop); err != nil {
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
		sent, taken, err := b.tryTake(h, &announced, stop)
		if taken && dropped != "" {
			go b.clearNotes() // the record they were for is replaced by ours
		}
		if err != nil || taken {
			return leaseStart{end: sent + bootTime(batonWait(c.s.Timeout()))}, err
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
	raw, stat, err := c.s.Conn.Get(c.handoverPath())
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, err
	}
	h := parseHandover(raw)
	h.stat, h.exists = stat, err == nil
	h.parsed = h.exists && h.parsed
	return h, nil
}

// handedToUs reports a release that names this proposal.
func (c *candidate) handedToUs(h *handoverSeen) bool {
	return h.parsed && h.rec.State == handoverHanded && h.rec.Successor == c.node
}

// namesProposal says whether a node's data (a baton, a take record, a
// leader node) names proposal: on a session several elections share, the
// owner alone does not say which candidacy a node is of.
func namesProposal(raw []byte, proposal string) bool {
	var r struct {
		Proposal string `json:"proposal"`
	}
	return jsonlite.Unmarshal(raw, &r) == nil && r.Proposal == proposal
}

// ownBaton reads whether the baton is this candidacy's: this session's and
// naming our proposal (another candidacy of the election on this session,
// a crontab's job added again, is the session's too); version fences a
// delete of it.
func (c *candidate) ownBaton() (mine bool, version int32, err error) {
	raw, st, err := c.s.Conn.Get(c.batonPath())
	if errors.Is(err, zk.ErrNoNode) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	return st.EphemeralOwner == c.s.ID() && namesProposal(raw, c.node), st.Version, nil
}

// parseHandover reads a handover record's data.
func parseHandover(raw []byte) *handoverSeen {
	h := &handoverSeen{raw: raw, exists: raw != nil}
	h.parsed = jsonlite.Unmarshal(raw, &h.rec) == nil
	return h
}

// droppedTake names a take that was never released, by another session
// (or a missing record, see takeBaton), and how long its holder's lease
// may still run: "" when there is none.
func (c *candidate) droppedTake(h *handoverSeen) (dropped string, wait time.Duration, err error) {
	mine := h.parsed && h.rec.Session == zookeeper.SessionHex(c.s.ID()) && h.rec.Proposal == c.node
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
	raw, st, err := c.s.Conn.Get(c.basePath)
	if err != nil {
		return nil, err
	}
	e := &electionSeen{version: st.Version, ours: len(raw) == 0}
	if len(raw) > 0 {
		// Ours only if it holds nothing else: other data is left alone.
		e.rec, e.ours = parseElectionRecord(raw)
	}
	c.election = e
	return e, nil
}

// droppedWait is the dropped take already waited for, across rounds.
type droppedWait struct {
	take  string
	until bootTime
	// The note of the record's holder watched for (noteSubject), and its
	// watch: set once per holder, it fires when the note is written.
	// noted: that note was seen, read or its creation's event; once
	// written it stays true (release.go), so it is not read again.
	noteFor string
	note    <-chan zk.Event
	noted   bool
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
		// A holder whose proposal is gone (an operator deleted it) ends
		// its session once its note is written: look for the note while
		// it still holds the baton, so that the baton's end finds it
		// known (its creation's event comes first: ZooKeeper's order),
		// one read fewer after it. Not while its proposal is in line: a
		// watch on a note that never comes would stay (issue 37).
		if who := noteSubject(h); who != "" {
			if inLine, _, err := c.s.Conn.Exists(who); err == nil && !inLine {
				if _, err := c.holderEnded(h, drop); err != nil {
					return false, c.retryAfter(err, stop)
				}
			}
		}
		return false, c.waitHeld(announced, stop)
	}
	if ended, err := c.holderEnded(h, drop); err != nil {
		return false, c.retryAfter(err, stop)
	} else if ended {
		c.log.Info("the baton's last holder lost its proposal and left a note that its command is gone: taking the baton at once", logEvNoteFound.attr(),
			"holder", noteSubject(h))
		return true, nil
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
		msg := "waiting for the baton: its last holder dropped it without releasing it; waiting until anything it may still run has been stopped by its own lease"
		if !h.exists {
			// Most likely a first start: nothing was dropped; say what
			// the wait is for, without alarm.
			msg = fmt.Sprintf("a new election (no handover record yet): waiting %s once, in case the record was deleted under a leader that may still run something under its lease",
				wait.Round(time.Millisecond))
		}
		c.log.Info(msg, logEvBatonWait.attr(), "holder", who, "wait", wait.Round(time.Millisecond))
		c.pub.update(func(d *proposalData) { d.State = stateWaitingForBaton })
	}
	if bootNow() < drop.until {
		return false, oneBaton{c}.waitDropped(drop.until, h.exists, drop, stop)
	}
	return true, nil
}

// holderEnded reports that the holder the record h names left its note
// (release.go): its leadership ended, its command is gone. The first look
// for a holder's note watches for it, so that a note written during the
// wait ends the wait. One baton only: a slot's holder leaves no note.
func (c *candidate) holderEnded(h *handoverSeen, drop *droppedWait) (bool, error) {
	who := noteSubject(h)
	if who == "" {
		return false, nil
	}
	note := releasedPath(c.basePath, path.Base(who))
	if drop.noteFor == note {
		if drop.noted {
			return true, nil
		}
		select {
		case ev, ok := <-drop.note:
			if ok && ev.Type == zk.EventNodeCreated {
				drop.noted = true
				return true, nil
			}
			// Ended otherwise (the session's watches lost): arm it again.
		default:
			ok, _, err := c.s.Conn.Exists(note)
			drop.noted = ok
			return ok, err
		}
	}
	// Not watched yet, or the watch fired (a watch fires once): arm it.
	ok, _, ev, err := c.s.Conn.ExistsW(note)
	if err != nil {
		return false, err
	}
	drop.noteFor, drop.note, drop.noted = note, ev, ok
	return ok, nil
}

// tryTake creates the baton and marks the record taken, in one multi-op
// that checks our proposal still exists, and records our W in the
// election's record if it is the longest yet. taken is false when the
// round must start again (the baton was held, a record changed, the
// answer was lost).
func (b oneBaton) tryTake(h *handoverSeen, announced *string, stop <-chan struct{}) (sent bootTime, taken bool, err error) {
	c := b.c
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
	case zookeeper.Retryable(err) || errors.Is(err, zk.ErrSessionExpired):
		// The multi may have been applied: a baton of ours is found on
		// the next round (the take fails with "exists", waitHeld sees it
		// is ours). Until then, leaving the election must end the
		// session, or that baton would stall it.
		c.baton.answerLost(c.slot)
		return 0, false, c.retryAfter(err, stop)
	}
	return 0, false, fmt.Errorf("cannot take the baton %s: %w", c.batonPath(), zookeeper.Error(err, "create", c.batonPath()))
}

// take sends the take's multi-op: it creates the baton and marks the
// record taken, checks our proposal still exists, and records our W in
// the election's record if it is the longest yet. c.election is read.
func (c *candidate) take(h *handoverSeen) (sent bootTime, res []zk.MultiResponse, err error) {
	ops := []any{&zk.CheckVersionRequest{Path: c.node, Version: -1},
		&zk.CreateRequest{Path: c.batonPath(), Data: c.handoverData(handoverTaken), Acl: c.s.ACL, Flags: zk.FlagEphemeral}}
	if h.exists {
		ops = append(ops, &zk.SetDataRequest{Path: c.handoverPath(), Data: c.handoverData(handoverTaken), Version: h.stat.Version})
	} else {
		ops = append(ops, &zk.CreateRequest{Path: c.handoverPath(), Data: c.handoverData(handoverTaken), Acl: c.s.ACL})
	}
	w := recordedWaitMs(c.s.Timeout())
	record := c.election.ours && w > c.election.rec.BatonWaitMs
	if record {
		b, _ := jsonlite.Marshal(electionRecord{BatonWaitMs: w})
		ops = append(ops, &zk.SetDataRequest{Path: c.basePath, Data: b, Version: c.election.version})
	}
	sent = bootNow()
	res, err = c.s.Conn.Multi(ops...)
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
	c.log.Info("baton taken", append([]any{logEvBatonTaken.attr(), "proposal", c.node}, c.hold().logged()...)...)
	return sent, res, nil
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
		mine, version, err := c.ownBaton()
		if err != nil {
			return c.retryAfter(err, stop)
		}
		if mine {
			// Ours, from a take whose answer was lost: nothing runs under
			// it. Checked against our proposal, so that a delete the client
			// sends late, on a new session, cannot remove a successor's
			// baton; and at the version read.
			if _, err := c.s.Conn.Multi(&zk.CheckVersionRequest{Path: c.node, Version: -1},
				&zk.DeleteRequest{Path: c.batonPath(), Version: version}); err == nil {
				c.baton.ownGone()
			}
			return nil
		}
		// Another candidacy of this election on our session (a crontab's
		// job, added again while its removed runner ends): waited for as
		// any holder is.
	}
	// First in line behind a leader (a higher --priority went ahead of
	// it): its release will name us. It proves its place all along: the
	// leader hands over for --preempt-after only to one ready (preempt.go).
	c.standby.start()
	c.standby.proveWhile(true)
	if *announced != "held "+zookeeper.SessionHex(owner) {
		*announced = "held " + zookeeper.SessionHex(owner)
		holder := "session " + zookeeper.SessionHex(owner)
		if b, _, err := c.s.Conn.Get(c.batonPath()); err == nil {
			var rec handoverRecord
			if jsonlite.Unmarshal(b, &rec) == nil {
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
		case <-c.s.Lost():
			return errSessionLost
		case <-stop:
			return errStopped
		}
	}
}

// waitDropped sleeps until the end of the wait for a dropped baton, or
// until the handover record changes (its holder released it after all),
// or the holder's note is written (drop.note). The note's creation event,
// consumed here, is remembered (drop.noted): a note seen stays trusted
// even if deleted before the next round reads it.
func (b oneBaton) waitDropped(until bootTime, exists bool, drop *droppedWait, stop <-chan struct{}) error {
	c := b.c
	var changed <-chan zk.Event
	if exists {
		_, _, ev, err := c.s.Conn.GetW(c.handoverPath())
		if err == nil {
			changed = ev
		}
	}
	t := time.NewTimer(time.Duration(until - bootNow()))
	defer t.Stop()
	select {
	case <-t.C:
	case <-changed:
	case ev, ok := <-drop.note:
		if ok && ev.Type == zk.EventNodeCreated {
			drop.noted = true
		} else {
			drop.noteFor = "" // ended otherwise: holderEnded arms it again
		}
		// Consumed (a watch fires once, then its channel is closed): a
		// round that does not arm it again must not wake on it at once.
		drop.note = nil
	case <-c.s.Lost():
		return errSessionLost
	case <-stop:
		return errStopped
	}
	return nil
}

func (c *candidate) batonHolder() (held bool, owner int64, err error) {
	ok, st, err := c.s.Conn.Exists(c.batonPath())
	if err != nil || !ok {
		return false, 0, err
	}
	return true, st.EphemeralOwner, nil
}

func (c *candidate) batonWatch() (held bool, owner int64, ev <-chan zk.Event, err error) {
	ok, st, ev, err := c.s.Conn.ExistsW(c.batonPath())
	if err != nil || !ok {
		return false, 0, ev, err
	}
	return true, st.EphemeralOwner, ev, nil
}
