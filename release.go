package main

// Giving the baton back: the release ops that go into the multi-op that
// deletes a leader's proposal (naming a successor, or not), and what is
// tried again when part of that multi-op fails; on a session other
// elections share, deleting this candidacy's nodes alone. Steps, not
// state: functions of the candidate, the same for one baton and a slot
// (whom a release names is the holding's, successor); the note is one
// baton's.

import (
	"bytes"
	"errors"
	"path"
	"slices"
	"time"

	"ballot/internal/zookeeper"

	"github.com/go-zookeeper/zk"
)

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
func releaseOps(c *candidate, to handTo) []any {
	if !c.baton.held() {
		return nil
	}
	if to.proposal != "" {
		return []any{
			&zk.CheckVersionRequest{Path: to.proposal, Version: -1},
			&zk.SetDataRequest{Path: c.handoverPath(), Data: handedData(c, to), Version: c.baton.version},
			&zk.DeleteRequest{Path: c.batonPath(), Version: -1},
		}
	}
	return []any{
		&zk.SetDataRequest{Path: c.handoverPath(), Data: c.handoverData(handoverReleased), Version: c.baton.version},
		&zk.DeleteRequest{Path: c.batonPath(), Version: -1},
	}
}

// retire runs a leader's or candidate's last writes in one multi-op, which
// deletes the proposal. What someone else already deleted is dropped and
// the rest tried again; if the proposal itself is gone, or the handover
// record changed under us, the release is dropped and released reports
// false: the caller must end the session, so that a baton of ours, if any
// is left, goes with it. unanswered is the record's data of an earlier
// release whose answer was lost (the fast path's), nil if none.
func retireMulti(c *candidate, ops []any, unanswered [][]byte) (released bool, err error) {
	released = true
	var reconnectBy time.Time        // one wait for the session, from the first drop
	sent := slices.Clone(unanswered) // what our attempts wrote to the handover record
	dropped := len(unanswered) > 0   // an attempt's answer was lost: it may have landed
	for attempt := 0; len(ops) > 0; attempt++ {
		if attempt == 5 {
			return false, errors.New("giving up after 5 attempts")
		}
		sent = append(sent, recordWrites(c, ops)...)
		res, merr := c.s.Conn.Multi(ops...)
		if merr == nil {
			break
		}
		i := failedOp(res)
		if reconnectBy.IsZero() {
			reconnectBy = time.Now().Add(c.s.Timeout())
		}
		if i < 0 && zookeeper.Retryable(merr) && !errors.Is(merr, zk.ErrClosing) && awaitReconnect(c, reconnectBy) {
			// The connection dropped with the answer (its member paused
			// or cut off): the session lives on, reconnected to another
			// member. The same ops again are fenced as the first were:
			// they land, or fail on what the first already did (pruned
			// below). Ending the session instead would drop the baton
			// unreleased, and the next leader would wait W for nothing.
			dropped = true
			continue
		}
		if i < 0 {
			return false, merr
		}
		if d, ok := ops[i].(*zk.DeleteRequest); ok && dropped && d.Path == c.node && errors.Is(res[i].Error, zk.ErrNoNode) {
			// Our proposal is gone: the attempt whose answer was lost
			// may have landed, deleting it with the release.
			if proof := earlierLanded(c, sent); proof != "" {
				c.log.Info("already withdrawn: the earlier attempt's answer was lost with the connection", "proposal", c.node, "proof", proof)
				break
			}
		}
		var keepRelease, retry bool
		if ops, keepRelease, retry = pruneRetire(c, ops, i, res[i].Error); !retry {
			return false, merr
		}
		released = released && keepRelease
	}
	c.baton.givenBack()
	return released, nil
}

// recordWrites are the handover record's data ops would write.
func recordWrites(c *candidate, ops []any) (data [][]byte) {
	for _, o := range ops {
		if o, ok := o.(*zk.SetDataRequest); ok && o.Path == c.handoverPath() {
			data = append(data, o.Data)
		}
	}
	return data
}

// earlierLanded tells, after a resend found our proposal gone, whether an
// earlier attempt of ours, its answer lost, had landed, and how that is
// known ("" if it is not: the caller goes on as after any deletion of
// our proposal). Read on this session after the resend's answer, so no
// older than it: our proposal cannot come back, nor can a baton of ours
// be made without it.
func earlierLanded(c *candidate, sent [][]byte) string {
	if c.s.IsLost() || c.baton.maybe() || c.baton.hold == batonPending {
		return "" // gone with the session, or a baton of ours may exist
	}
	seen := retireSeen{held: c.baton.held(), take: c.baton.version}
	if seen.held {
		raw, st, err := c.s.Conn.Get(c.handoverPath())
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return ""
		}
		if err == nil {
			seen.rec, seen.recVersion, seen.recOK = raw, st.Version, true
		}
		raw, st, err = c.s.Conn.Get(c.batonPath())
		switch {
		case errors.Is(err, zk.ErrNoNode):
		case err != nil:
			return ""
		default:
			seen.batonOurs = st.EphemeralOwner == c.s.ID() && namesProposal(raw, c.node)
		}
	}
	if c.s.IsLost() {
		return "" // the reads may have been a replacement session's
	}
	return landedProof(seen, sent)
}

// retireSeen is what earlierLanded read: the baton we held (take: the
// handover record's version after our take), the record, and whether
// the baton is still ours.
type retireSeen struct {
	held       bool
	take       int32
	rec        []byte
	recVersion int32
	recOK      bool
	batonOurs  bool
}

// landedProof decides earlierLanded from what it read, sent being the
// record's data our attempts wrote.
//   - "proposal": no baton was held; our proposal was all there was to
//     delete.
//   - "record": the record holds what one of our attempts wrote; those
//     bytes (our proposal, session, time) are written by nothing else,
//     and they went in one multi-op with our proposal's and the baton's
//     deletes.
//   - "successor": the record moved past our take and the baton is not
//     ours: a take was made since, which needed our baton gone (by our
//     release, or an operator's deletes with our proposal's); either way
//     nothing of ours is left for the session's end to delete.
//
// Anything else (the record still at our take, a baton of ours) is not
// proof: the session ends, as after any deletion of our proposal.
func landedProof(s retireSeen, sent [][]byte) string {
	switch {
	case !s.held:
		return "proposal"
	case s.recOK && slices.ContainsFunc(sent, func(b []byte) bool { return bytes.Equal(b, s.rec) }):
		return "record"
	case s.recOK && s.recVersion > s.take && !s.batonOurs:
		return "successor"
	}
	return ""
}

// awaitReconnect waits until the session is connected again, until by at
// most (the session's timeout from the first drop: by then it has expired,
// and its nodes are gone anyway); false if it is lost or still offline.
// Lost is asked last: go-zookeeper may connect a replacement session after
// an expiry, which is not ours to write on.
func awaitReconnect(c *candidate, by time.Time) bool {
	stop := make(chan struct{})
	t := time.AfterFunc(time.Until(by), func() { close(stop) })
	defer t.Stop()
	return c.s.WaitOnline(stop) == nil && !c.s.IsLost()
}

// pruneRetire decides what follows when operation i of a retire multi-op
// failed with err: the operations to try again (retry), and whether the
// release may stay among them. A delete of what someone else already
// deleted is dropped; once the proposal itself is gone, or the handover
// record changed under us, so is the release.
func pruneRetire(c *candidate, ops []any, i int, err error) (rest []any, keepRelease, retry bool) {
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
				return withoutRelease(c, rest), false, true // not in line any more: the baton may not be ours to give
			}
			return rest, true, true
		}
	case *zk.SetDataRequest:
		if op.Path == c.handoverPath() {
			return withoutRelease(c, ops), false, true
		}
	}
	return ops, true, false
}

// withoutRelease is ops without the baton's release (releaseOps).
func withoutRelease(c *candidate, ops []any) []any {
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

// The released note. A leader whose proposal someone else deleted cannot
// give the baton back: the release is fenced by the proposal's delete
// (releaseOps), and its own session's end would leave the baton dropped,
// for the successor to wait W. Once its command's whole tree is gone
// (the keeper reported it reaped), it writes <base>/released/<proposal>
// instead: "the leadership of this proposal has ended: its command is gone,
// and it runs nothing again" (its candidacy is over, its proposal gone). That is
// true forever, whenever the note is written, written twice or read. A
// successor that finds the baton gone trusts it only when the handover
// record says the baton was taken by, or handed to, that very proposal
// (noteSubject): then nothing of the record's holder can run, and it takes
// at once. docs/design.md, "Handovers in one write", derives why no
// command can overlap.

// releasedPath is the note of the proposal named name (the last element of
// its path: a random id and a sequence number, never reused).
func releasedPath(base, name string) string {
	return base + "/" + releasedDirName + "/" + name
}

// leaveNote, with one baton, writes the note of this candidate's
// proposal, which is gone, with its command: only while the handover record is still at the
// version of our take (version), or the note would be needed by nobody and
// left behind. written reports that it exists (written before, and its
// answer lost: it exists too).
func (b oneBaton) leaveNote(version int32) (written bool, err error) {
	c := b.c
	note := releasedPath(c.basePath, path.Base(c.node))
	ops := []any{&zk.CheckVersionRequest{Path: c.handoverPath(), Version: version},
		&zk.CreateRequest{Path: note, Data: c.handoverData(handoverReleased), Acl: c.s.ACL}}
	for attempt := 0; attempt < 3; attempt++ {
		res, err := c.s.Conn.Multi(ops...)
		switch i := failedOp(res); {
		case err == nil:
			return true, nil
		case i == 0:
			return false, nil // the record changed: a successor took the baton, nobody needs the note
		case i == 1 && errors.Is(res[1].Error, zk.ErrNodeExists):
			return true, nil
		case i == 1 && errors.Is(res[1].Error, zk.ErrNoNode):
			// The first note of this election: its directory, once.
			if _, err := c.s.Conn.Create(path.Dir(note), nil, 0, c.s.ACL); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return false, err
			}
		default:
			return false, err
		}
	}
	return false, errors.New("giving up after 3 attempts")
}

// noteSubject is the proposal whose note a successor may trust for the
// record h: the holder of a take, or the successor a release named (a
// handover, revoked or not, whose successor is gone). "" for anything
// else: a release, an unknown or missing record.
func noteSubject(h *handoverSeen) string {
	if !h.parsed {
		return ""
	}
	switch h.rec.State {
	case handoverTaken:
		return h.rec.Proposal
	case handoverHanded, handoverRevoked:
		return h.rec.Successor
	}
	return ""
}

// clearNotes deletes the notes left in the election, once our take has
// replaced the record they were for: a note is only ever needed while the
// record names its proposal. Off the critical path; one that fails to go
// stays until the next take after a dropped baton.
func (b oneBaton) clearNotes() {
	c := b.c
	dir := c.basePath + "/" + releasedDirName
	names, _, err := c.s.Conn.Children(dir)
	if err != nil {
		return
	}
	for _, n := range names {
		_ = c.s.Conn.Delete(dir+"/"+n, -1)
	}
}

// dropOwnBaton deletes this candidacy's baton alone, its proposal gone
// (an operator): as the session's end would, for a session the other
// elections keep. Fenced as leaveOwn's deletes are: the handover record
// read first, then the baton's owner, data (naming our proposal) and
// version. nil once no baton of ours is left.
func dropOwnBaton(c *candidate) error {
	recOK, rec, err := c.s.Conn.Exists(c.handoverPath())
	if err != nil {
		return err
	}
	raw, st, err := c.s.Conn.Get(c.batonPath())
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.EphemeralOwner != c.s.ID() || !namesProposal(raw, c.node) {
		return nil
	}
	ops := append([]any{&zk.DeleteRequest{Path: c.batonPath(), Version: st.Version}}, recordFence(c, c.handoverPath(), recOK, rec)...)
	res, err := c.s.Conn.Multi(ops...)
	if failedOp(res) == 0 && errors.Is(res[0].Error, zk.ErrNoNode) {
		return nil // gone meanwhile
	}
	return err
}

// recordFence fails a multi if a take changed the handover record since
// it was read: a version check, or, the record absent when read, its
// create and delete in the same multi (no change; NodeExists once any
// take has made it). Without it a lone delete, queued across an expiry
// and sent on go-zookeeper's replacement session, could meet a
// successor's baton or leader node made again at the version ours had.
func recordFence(c *candidate, record string, recOK bool, rec *zk.Stat) []any {
	if recOK {
		return []any{&zk.CheckVersionRequest{Path: record, Version: rec.Version}}
	}
	return []any{&zk.CreateRequest{Path: record, Acl: c.s.ACL}, &zk.DeleteRequest{Path: record, Version: 0}}
}

// leaveOwn deletes what the end of the session would delete of this
// election, and nothing of another's: for a session that serves several
// elections (a crontab's jobs). The proposal goes, and the baton and the
// leader node if they are this candidacy's: each one's owner and data
// (naming our proposal) are read first, and its version, read with it,
// and the handover record's, read before, fence its delete, so a node
// dropped and made again by another meanwhile is left alone. A
// successor that finds the baton gone waits W, as after the session's
// end. nil once neither is left.
func leaveOwn(c *candidate) error {
	c.pub.stop()
	c.retire()
	slot := c.slot
	if k := c.baton.lostSlot(); k >= 0 {
		slot = k
	}
	baton, record := c.basePath+"/"+slotName(batonName, slot), c.basePath+"/"+slotName(handoverName, slot)
	for try := 0; ; try++ {
		var ops []any
		// Read first: a successor's take after it changes it, and fails
		// our multi; one before it made the nodes we read its own.
		recOK, rec, err := c.s.Conn.Exists(record)
		if err != nil {
			return err
		}
		if ok, _, err := c.s.Conn.Exists(c.node); err != nil {
			return err
		} else if ok {
			ops = append(ops, &zk.DeleteRequest{Path: c.node, Version: -1})
		}
		fenced := false
		for _, p := range []string{baton, c.leaderPath()} {
			raw, st, err := c.s.Conn.Get(p)
			if errors.Is(err, zk.ErrNoNode) {
				continue
			}
			if err != nil {
				return err
			}
			// Ours: this session's and naming our proposal (another
			// candidacy on this session would be the session's too).
			if st.EphemeralOwner == c.s.ID() && namesProposal(raw, c.node) {
				ops = append(ops, &zk.DeleteRequest{Path: p, Version: st.Version})
				if !fenced {
					// And no take since the read: a baton or leader node
					// made again restarts at a version ours had.
					fenced = true
					ops = append(ops, recordFence(c, record, recOK, rec)...)
				}
			}
		}
		if len(ops) > 0 {
			_, err = c.s.Conn.Multi(ops...)
		}
		if err == nil {
			c.baton.givenBack()
			c.baton.ownGone()
			return nil
		}
		// Changed between the read and the delete: read again.
		if try == 4 || !(errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrBadVersion) || errors.Is(err, zk.ErrNodeExists)) {
			return err
		}
	}
}
