package main

// The standby: the next in line proves, with a write, that its proposal is
// still in line, so that it can start on credit when the leader hands it
// the baton (baton.go, "handed over") instead of waiting for its own take:
// one quorum write on a clean handover's critical path instead of two. It
// proves only while a handover may come, as its leader's proposal data
// says (handoverMayCome): an election at rest writes only its leader's
// renewals. A handover that comes unannounced (the leader's command ended
// at once, ballot killed) finds no recent proof, and the successor takes
// the baton first: one write more on that handover's critical path.

import (
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
)

// standbyProofDiv: the next in line sends a proof every T/4. A proof's
// credit is W = 3T/4 from its send; the command is asked to stop T/16 +
// T/8 before that, and credit is used only with T/8 of it left for the
// take's answer (creditFloorDiv): a proof at most T/4 + a round trip old
// leaves 5T/16 - ρ, so a handover finds credit unless renewals would be
// slow anyway. Every T/2 would halve these writes but leave a handover
// without credit about one time in eight.
const standbyProofDiv = 4

// standBy starts the prover, once per proposal; it ends when the
// candidate leads or leaves the line. It proves only while proveWhile
// says a handover may come: at rest, the next in line writes nothing.
func (c *candidate) standBy() {
	c.standbyOnce.Do(func() {
		c.log.Info("next in line: standing by; proves its place whenever a handover may come, to start at once when handed the baton", logEvStandingBy.attr(), "proposal", c.node)
		go c.proveInLine()
		if c.onStandby != nil {
			c.onStandby()
		}
	})
}

// endStandby stops the proofs: a leader's renewals, or nothing, replace them.
func (c *candidate) endStandby() {
	c.standbyStop.Do(func() { close(c.standbyEnd) })
}

// proveWhile says whether proofs are wanted now. The next in line wants
// them while its leader says a handover may come (handoverMayCome); the
// first in line waiting behind a leader's baton always (baton.go).
func (c *candidate) proveWhile(want bool) {
	if c.proving.Swap(want) != want {
		ping(c.proofKick)
	}
}

// handoverMayCome reads the leader's proposal data, as the next in line
// watches it: a handover may come while it says so (a run cron command
// runs, a stop, a step-down or a preemption is under way), while it
// resigns, while its health check fails, or while it plans to hand over
// to us. Data that cannot be read (another version, another tool) counts
// as a handover that may come: proving costs writes, not safety.
func handoverMayCome(raw []byte, us string) bool {
	d, _ := parseProposalData(raw)
	if d == nil {
		return true
	}
	return d.HandoverMayCome || d.State == stateResigning ||
		(d.Health != nil && (!d.Health.Healthy || d.Health.ConsecutiveFailures > 0)) ||
		(d.Preempt != nil && d.Preempt.Proposal == us)
}

// proveInLine sends, while proofs are wanted, a multi-op that only checks
// our proposal every T/4: ZooKeeper commits it as a write (in order, at a
// leader with its quorum, with our session alive there) without changing
// anything or waking any watch. When proofs become wanted, the first goes
// out at once unless the last is less than T/4 old.
func (c *candidate) proveInLine() {
	var next time.Time // when the next proof is due (zero: at once)
	for {
		var t *time.Timer
		if c.proving.Load() {
			d := time.Until(next)
			if d <= 0 {
				if !c.prove() {
					return
				}
				next = time.Now().Add(c.s.Timeout() / standbyProofDiv)
				continue
			}
			t = time.NewTimer(d)
		}
		if !c.awaitProofDue(t) {
			return
		}
	}
}

// awaitProofDue waits for t (nil: none) or a change of proveWhile; false
// once proofs are no longer needed.
func (c *candidate) awaitProofDue(t *time.Timer) bool {
	var tick <-chan time.Time
	if t != nil {
		defer t.Stop()
		tick = t.C
	}
	select {
	case <-tick:
	case <-c.proofKick:
	case <-c.standbyEnd:
		return false
	case <-c.done:
		return false
	case <-c.s.Lost():
		return false
	}
	return true
}

// prove sends one proof; false once our proposal is out of line (the
// follower finds out itself) or proofs are no longer needed.
func (c *candidate) prove() bool {
	if isClosed(c.standbyEnd) || isClosed(c.done) || c.s.IsLost() {
		return false
	}
	sent := bootNow()
	res, err := c.s.Writer().Write(&zk.CheckVersionRequest{Path: c.node, Version: -1}) // off the grid: at once
	switch {
	case err == nil:
		c.proofRTT.Store(int64(bootNow() - sent))
		if c.proof.Swap(int64(sent)) == 0 {
			c.log.Debug("next in line: its place proven, ready to start at once when the leader hands over", "proposal", c.node)
			c.pub.update(func(d *proposalData) { d.Standby = true }) // a leader hands over for --priority only to one ready
		}
	case len(res) == 1 && errors.Is(res[0].Error, zk.ErrNoNode):
		return false
	}
	return true
}
