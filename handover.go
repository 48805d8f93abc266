package main

// Handed over (the baton: baton.go): a leader that resigns names its
// successor, the first other proposal in line, in the release (checked in
// the same multi-op, so it was in line then). The named successor may start its command at once,
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
//
// The named successor's steps (its credit, its take on credit) are one
// baton's (oneBaton): a slot is never handed over. The release that names
// it and the wait of the others are steps of any take (slot 0, handed
// over by a ballot older than slots, too): functions of the candidate.

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/jsonlite"
	"ballot/internal/zookeeper"
)

// handedData is the release that names a successor. Its W is the longest
// this leader knows of (its own, the election's record): what anyone
// waits should that successor vanish, and the most its credit may use.
func handedData(c *candidate, to handTo) []byte {
	rec := c.handoverRecord(handoverHanded)
	rec.Successor, rec.NoCredit = to.proposal, to.noCredit
	if c.election != nil {
		rec.BatonWaitMs = max(rec.BatonWaitMs, c.election.rec.BatonWaitMs)
	}
	b, _ := jsonlite.Marshal(rec)
	return b
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
func (b oneBaton) credit(h *handoverSeen, proof bootTime) (end bootTime, ok bool) {
	c := b.c
	if c.standby.noCredit || !c.handedToUs(h) || h.rec.NoCredit || proof == 0 || c.election == nil || h.rec.BatonWaitMs <= 0 {
		return 0, false
	}
	return creditTerms(c.s.Timeout(), h.rec.BatonWaitMs, proof, bootTime(c.standby.rtt.Load()), bootNow())
}

// creditTerms is the credit a proof sent at proof gives, with session
// timeout t, the record's W (ms), the proof's round trip rtt, at now.
func creditTerms(t time.Duration, recordWaitMs int64, proof, rtt, now bootTime) (end bootTime, ok bool) {
	w := min(batonWait(t), time.Duration(recordWaitMs)*time.Millisecond)
	end = proof + bootTime(w)
	// The most the lease's kill margin and the stop's grace take off it;
	// the take's answer, a round trip away (as the last proof's), must
	// come with T/8 to spare.
	stopAt := end - bootTime(t/killMarginDiv) - bootTime(t/graceOwedDiv)
	return end, now+bootTime(t/creditFloorDiv)+rtt <= stopAt
}

// takeHandedOver is a handover's take, sent while the command starts on
// credit (lease.go). A take that fails ends the leadership. One whose
// answer is lost (a reconnect) is looked for, and sent again if it was not
// applied, while fresh says the credit lasts: a hiccup that cannot expire
// the session must not cost the command.
func (b oneBaton) takeHandedOver(h *handoverSeen, fresh func() bool, quit <-chan struct{}) (sent bootTime, err error) {
	c := b.c
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
		case i >= 0 || !zookeeper.Retryable(err):
			return 0, fmt.Errorf("cannot take the baton handed over to us: %w", zookeeper.Error(err, "create", c.batonPath()))
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
			if err := c.s.WaitOnline(quit); err != nil {
				return 0, err
			}
			if mine, h, err = b.findOwnTake(); err == nil {
				break
			}
			if !zookeeper.Retryable(err) {
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
func (b oneBaton) findOwnTake() (mine bool, h *handoverSeen, err error) {
	c := b.c
	held, owner, err := c.batonHolder()
	if err != nil {
		return false, nil, err
	}
	if held && owner != c.s.ID() {
		return false, nil, fmt.Errorf("the baton handed over to us is held by session %s", zookeeper.SessionHex(owner))
	}
	if h, err = c.readHandover(); err != nil {
		return false, nil, err
	}
	if held {
		if !h.parsed || h.rec.State != handoverTaken || h.rec.Proposal != c.node || h.rec.Session != zookeeper.SessionHex(c.s.ID()) {
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

// handTo is whom a release names, and whether it may start on credit.
type handTo struct {
	proposal string // full path; "": nobody
	noCredit bool
}

// successor, with one baton, is whom a leader hands it to: the first
// other proposal in line as its lease's watch last saw it. Credit goes with it only if it
// is also the oldest other proposal: sequence numbers only grow, so any
// proposal older than it was created before it and would have been seen;
// a ballot older than priorities waits as the oldest only, and never for a
// named successor (the take then goes first).
func (b oneBaton) successor() handTo {
	c := b.c
	p := c.line.seen.Load()
	if p == nil {
		return handTo{}
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

// note counts W from now when the record is one not seen before: the
// first sight of a handover starts the wait for its successor, and a
// record rewritten meanwhile (another handover) starts it again.
func (n *namedWait) note(record string, w time.Duration, now bootTime) {
	if n.record != record {
		n.record, n.revokeAt = record, now+bootTime(w)
	}
}

// revokeDue: the successor has had W since the record was first seen.
func (n *namedWait) revokeDue(now bootTime) bool { return now >= n.revokeAt }

// waitForNamed waits while the handover record names another proposal that
// is still in line: it may be running on credit, or about to. waited is
// true when the record is to be read again; false once that proposal is
// gone (the wait for a dropped take follows, from now). A successor that
// has not taken the baton within W of our first seeing the record (it is
// stopped, or did not learn it was named) has its handover revoked: a
// write after the read that could give it credit, so that its credit ends
// before ours begins plus W.
func waitForNamed(c *candidate, h *handoverSeen, seen *namedWait, announced *string, stop <-chan struct{}) (waited bool, err error) {
	if !h.parsed || h.rec.State != handoverHanded || c.handedToUs(h) || h.rec.Successor == "" {
		return false, nil
	}
	ok, gone, err := c.s.WatchNode(h.rec.Successor)
	if err != nil {
		return true, c.retryAfter(err, stop)
	}
	if !ok {
		return false, nil
	}
	seen.note(string(h.raw), h.rec.holderWait(c.s.Timeout()), bootNow())
	if seen.revokeDue(bootNow()) {
		rec := h.rec
		rec.State, rec.RevokedBy, rec.At = handoverRevoked, c.id, time.Now().UTC()
		b, _ := jsonlite.Marshal(rec)
		if _, err := c.s.Conn.Set(c.handoverPath(), b, h.stat.Version); err != nil && !errors.Is(err, zk.ErrBadVersion) {
			return true, c.retryAfter(err, stop)
		} else if err == nil {
			c.log.Warn("the candidate the baton was handed over to has not taken it; revoked the handover, waiting out what it may have started",
				logEvRevoked.attr(), "successor", h.rec.Successor)
		}
		return true, nil
	}
	_, _, changed, err := c.s.Conn.GetW(c.handoverPath())
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
	case <-c.s.Lost():
		return true, errSessionLost
	case <-stop:
		return true, errStopped
	}
	return true, nil
}
