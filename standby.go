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
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// standbyProofDiv: the next in line sends a proof every T/4. A proof's
// credit is W = 3T/4 from its send; the command is asked to stop T/16 +
// T/8 before that, and credit is used only with T/8 of it left for the
// take's answer (creditFloorDiv): a proof at most T/4 + a round trip old
// leaves 5T/16 - ρ, so a handover finds credit unless renewals would be
// slow anyway. Every T/2 would halve these writes but leave a handover
// without credit about one time in eight.
const standbyProofDiv = 4

// standby is one proposal's proofs that it is in line, and whether a
// handed-over baton may start on their credit.
type standby struct {
	log       *slog.Logger
	s         *zookeeper.Session
	w         *zookeeper.Writer // the election's writes, through the session (internal/zookeeper/writes.go)
	node      string            // the proposal it proves
	candidacy <-chan struct{}   // closed when the candidacy is over
	proven    func()            // told once, when its place is first proven (it publishes that it is ready)
	onStart   func()            // told once, when next in line (a keeper started ahead); nil: nobody
	noCredit  bool              // on-connection-loss=ignore: no start on credit (its take could end the command)

	proof     atomic.Int64 // bootTime: send time of the last answered proof in line
	rtt       atomic.Int64 // its round trip (ns)
	startOnce sync.Once
	end       chan struct{} // closed when proofs are no longer needed
	endOnce   sync.Once
	proving   atomic.Bool   // proofs wanted now: a handover may come (proveWhile)
	kick      chan struct{} // pinged when proving changes
	next      time.Time     // when the next proof is due (zero: at once); proveInLine's, one at a time
}

func newStandby(log *slog.Logger, s *zookeeper.Session, w *zookeeper.Writer, node string, candidacy <-chan struct{}, proven func()) *standby {
	return &standby{log: log, s: s, w: w, node: node, candidacy: candidacy, proven: proven,
		end: make(chan struct{}), kick: make(chan struct{}, 1)}
}

// start starts the prover, once per proposal; it ends when the
// candidate leads or leaves the line. It proves only while proveWhile
// says a handover may come: at rest, the next in line writes nothing.
func (b *standby) start() {
	b.startOnce.Do(func() {
		b.log.Info("next in line: standing by; proves its place whenever a handover may come, to start at once when handed the baton", logEvStandingBy.attr(), "proposal", b.node)
		go b.proveInLine()
		if b.onStart != nil {
			b.onStart()
		}
	})
}

// stop stops the proofs: a leader's renewals, or nothing, replace them.
func (b *standby) stop() {
	b.endOnce.Do(func() { close(b.end) })
}

// proveWhile says whether proofs are wanted now. The next in line wants
// them while its leader says a handover may come (handoverMayCome); the
// first in line waiting behind a leader's baton always (baton.go).
func (b *standby) proveWhile(want bool) {
	if b.proving.Swap(want) != want {
		ping(b.kick)
	}
}

// lastProof is the send time of the last answered proof (0: none), and
// its round trip.
func (b *standby) lastProof() (sent bootTime, rtt time.Duration) {
	return bootTime(b.proof.Load()), time.Duration(b.rtt.Load())
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
//
// At rest (no proofs wanted) it keeps no goroutine: it waits through
// whenFirst, and a kick starts it again (issue 34: a crontab's next in
// line of each job kept one).
func (b *standby) proveInLine() {
	for {
		var t *time.Timer
		if b.proving.Load() {
			d := time.Until(b.next)
			if d <= 0 {
				if !b.prove() {
					return
				}
				b.next = time.Now().Add(b.s.Timeout() / standbyProofDiv)
				continue
			}
			t = time.NewTimer(d)
		} else {
			// A kick after the load above waits in kick (buffered): the
			// wait sees it.
			whenFirst(func(i int) {
				if i == 0 {
					b.proveInLine()
				}
			}, b.kick, b.end, b.candidacy, b.s.Lost())
			return
		}
		if !b.awaitProofDue(t) {
			return
		}
	}
}

// awaitProofDue waits for t (nil: none) or a change of proveWhile; false
// once proofs are no longer needed.
func (b *standby) awaitProofDue(t *time.Timer) bool {
	var tick <-chan time.Time
	if t != nil {
		defer t.Stop()
		tick = t.C
	}
	select {
	case <-tick:
	case <-b.kick:
	case <-b.end:
		return false
	case <-b.candidacy:
		return false
	case <-b.s.Lost():
		return false
	}
	return true
}

// prove sends one proof; false once our proposal is out of line (the
// follower finds out itself) or proofs are no longer needed.
func (b *standby) prove() bool {
	if isClosed(b.end) || isClosed(b.candidacy) || b.s.IsLost() {
		return false
	}
	sent := bootNow()
	res, err := b.w.Write(&zk.CheckVersionRequest{Path: b.node, Version: -1}) // not leading, off the grid: at once
	switch {
	case err == nil:
		b.rtt.Store(int64(bootNow() - sent))
		if b.proof.Swap(int64(sent)) == 0 {
			b.log.Debug("next in line: its place proven, ready to start at once when the leader hands over", "proposal", b.node)
			b.proven()
		}
	case len(res) == 1 && errors.Is(res[0].Error, zk.ErrNoNode):
		return false
	}
	return true
}
