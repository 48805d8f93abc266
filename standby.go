package main

// The standby: the next in line proves, with a write, that its proposal is
// still in line, so that it can start on credit when the leader hands it
// the baton (baton.go, "handed over") instead of waiting for its own take:
// one quorum write on a clean handover's critical path instead of two.

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

// standBy starts the proofs, once per proposal; they end when the
// candidate leads or leaves the line.
func (c *candidate) standBy() {
	c.standbyOnce.Do(func() {
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

// proveInLine sends a multi-op that only checks our proposal: ZooKeeper
// commits it as a write (in order, at a leader with its quorum, with our
// session alive there) without changing anything or waking any watch.
func (c *candidate) proveInLine() {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-c.standbyEnd:
			return
		case <-c.done:
			return
		case <-c.s.lost:
			return
		}
		sent := bootNow()
		res, err := c.s.conn.Multi(&zk.CheckVersionRequest{Path: c.node, Version: -1})
		switch {
		case err == nil:
			c.proofRTT.Store(int64(bootNow() - sent))
			if c.proof.Swap(int64(sent)) == 0 {
				c.log.Info("next in line: ready to start at once when the leader hands over", logEvStandingBy.attr(), "proposal", c.node)
				c.pub.update(func(d *proposalData) { d.Standby = true }) // a leader hands over for --priority only to one ready
			}
		case len(res) == 1 && errors.Is(res[0].Error, zk.ErrNoNode):
			return // out of line: the follower finds out itself
		}
		t.Reset(c.s.Timeout() / standbyProofDiv)
	}
}
