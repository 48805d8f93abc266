package main

// The lease: how long a leader may still act. Its end is the earliest
// moment a successor could start; the command must be gone a margin before
// it, by ballot's hand or, if ballot cannot act (stopped, hung, killed), by
// the keeper's (keeper.go).
//
// A renewal is one quorum write: a multi-op that checks the proposal and
// rewrites the baton's data. ZooKeeper commits it only at a leader that
// has its quorum (a deposed ZooKeeper leader cannot), and only while the
// session lives there and both nodes exist. So once renewal b is answered,
// whatever ends this leadership — the session's expiry, a deletion of the
// proposal or the baton — comes after b in ZooKeeper's order, hence after b
// was sent. A successor waits batonWait (W) after seeing the baton dropped,
// or for its release, which comes only once everything here is gone. So
// nothing can start elsewhere before (b sent) + W: that is the lease's end,
// whatever tickTime, syncLimit or ping schedule the ensemble has. The take
// of the baton is such a write too, so the first lease counts from it.
//
// Renewals are sent every T/8 whether or not earlier ones were answered:
// on a slow link the lease then trails the clock by one round trip, not
// by several. The command is asked to stop only when the lease left falls
// to the grace it is owed; a slow renewal costs nothing until then. The
// lease in docs/design.md derives what that rides through; leaseterms.go holds the
// arithmetic, and checks it.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/zookeeper"
)

type lease struct {
	c          *candidate
	leaseTerms       // T, W and the grace (leaseterms.go)
	clock      clock // the system's; unit tests set their own

	mu        sync.Mutex
	end       bootTime   // the hard end: the latest (send time + W) of the writes that succeeded
	inFlight  []bootTime // send times of renewals not answered yet
	latency   time.Duration
	maxLat    time.Duration
	slowSince bootTime       // an unanswered renewal was reported slow; 0: none
	zkClock   zkClockReading // ZooKeeper's clock, from the last renewal (cronclock.go)

	checkedIn atomic.Int64 // bootTime of supervision's last check-in
	// busy reports that a command or hook runs under the lease: only then
	// must supervision check in for renewals to vouch.
	busy func() bool
	// enforced: not on-connection-loss=ignore. Only then does a lease
	// that ran out with supervision stuck end the session: under ignore
	// nothing kills the command at the lease's end.
	enforced bool
	// shared: the session serves other elections too; a lease that ends
	// its leadership itself deletes only its own nodes (endOwn).
	shared bool

	renewed  chan struct{} // pinged on every renewal
	answered chan struct{} // pinged on every answer (room in flight)
	gone     chan struct{} // closed when the proposal or the baton is gone
	goneOnce sync.Once
	goneWhy  string
	// ended is this leadership's lifetime; its cause says why it ended
	// (leadershipContext, leadership.go). lose ends it.
	ended    context.Context
	endWith  context.CancelCauseFunc
	quit     chan struct{}
	quitOnce sync.Once

	ctl *controls // ballot pause and step-down, for this leadership

	// resting: a cron leader between runs, nothing running under the
	// lease, sends no renewals and lets the lease lapse (Rest, Arm).
	resting      bool
	armedAt      bootTime      // when Arm last resumed renewals from rest
	lastAnswered bootTime      // the send time of the latest renewal answered for us
	wakeRenew    chan struct{} // pinged by Arm: renew at once

	pending *handoverSeen      // a handover's take still to send: the lease runs on credit until it is answered
	taken   chan struct{}      // closed once no take is pending (the candidate's baton state settled)
	release *zookeeper.Handoff // after a handover's take: what the keeper needs to give the baton back
	sent    bootTime           // send time of the take (renewals are scheduled from it)
}

// holdLease starts the lease of c's leadership from start: the take's,
// or a handover's credit with the take still to send. busy and enforced:
// see the lease's fields.
func holdLease(c *candidate, start leaseStart, stopGrace time.Duration, busy func() bool, enforced bool) *lease {
	t := c.s.Timeout()
	if start.quit == nil {
		start.quit = make(chan struct{})
	}
	ended, endWith := context.WithCancelCause(context.Background())
	l := &lease{
		c:          c,
		leaseTerms: newLeaseTerms(t, stopGrace),
		end:        start.end,
		pending:    start.pending,
		taken:      make(chan struct{}),
		busy:       busy,
		enforced:   enforced,
		shared:     start.shared,
		renewed:    make(chan struct{}, 1),
		wakeRenew:  make(chan struct{}, 1),
		answered:   make(chan struct{}, 1),
		gone:       make(chan struct{}),
		ended:      ended,
		endWith:    endWith,
		quit:       start.quit,
	}
	l.checkIn()
	if l.pending == nil {
		l.sent = start.end - bootTime(l.wait)
		close(l.taken)
	} else {
		c.baton.sendingOnCredit()
	}
	go l.renewLoop()
	go l.watch()
	// Read before anything starts (a paused election runs nothing): with
	// the handover record (follow), or here.
	l.ctl = start.ctl
	if l.ctl == nil {
		l.ctl = watchControls(c.s, &c.proposalFacts, l.quit)
	}
	return l
}

// checkIn says supervision is alive (supervise's loop, a stop's grace
// period): renewals vouch only for a leader that watches its command.
func (l *lease) checkIn() { l.checkedIn.Store(int64(l.clock.now())) }

// nextCheckIn is how long supervision may wait before its next
// check-in, counted from its last one: a wait begun late (a keeper order
// that blocked a while) must not push the check-in past its limit.
func (l *lease) nextCheckIn() time.Duration {
	return max(l.superviseEvery()-time.Duration(l.clock.now()-bootTime(l.checkedIn.Load())), 0)
}

func (l *lease) supervised(now bootTime) bool {
	if l.busy != nil && !l.busy() {
		return true // nothing to watch: waits on ZooKeeper (a claim, a record) are no stall
	}
	return now-bootTime(l.checkedIn.Load()) < bootTime(l.checkInWithin())
}

func (l *lease) renewLoop() {
	if l.pending != nil && !l.takeHandedBaton() {
		return
	}
	every := bootTime(l.timeout / renewEveryDiv)
	// From the take's send, not its answer: on a slow link the first
	// renewal must not trail the lease by a round trip more than the rest.
	// On the session's grid, which a lone lease starts at that send: the
	// renewals of all its elections fall on the same ticks, never later
	// than every T/8.
	w := l.c.w
	w.Join(l.sent)
	l.renewFrom(renewState{next: w.Next(l.sent, time.Duration(every))})
}

// renewState is what the renewals carry across a rest: the next tick,
// and supervision's standing (stuck, excused: see renewals).
type renewState struct {
	next           bootTime
	stuck, excused bool
}

// renewFrom runs the renewals from st, the writer on the grid, until the
// lease ends or rests. At rest no goroutine waits (issue 34: a crontab's
// leaders are mostly between runs): whenFirst waits for Arm, which
// resumes the renewals on the dispatcher's new goroutine with a renewal
// at once, as the loop itself did before. There are never two loops of
// one lease: a loop's goroutine registers the wait only once its
// renewals have returned, the writer off the grid, and a wait fires at
// most once; holdLease starts the only other loop, the first.
func (l *lease) renewFrom(st renewState) {
	st, resting := l.renewals(st)
	if !resting {
		return
	}
	l.c.log.Debug("lease at rest: nothing runs under it and no renewal is in flight; it lapses until taken again before the next run", logEvLeaseAtRest.attr())
	// An Arm after the drain left its ping in wakeRenew (one slot): this
	// wait takes it, as atRest's select did.
	whenFirst(func(i int) {
		// quit, Lost: the lease is over. Both ready (an Arm, then Stop):
		// the select picks either, so quit is looked at too.
		if i != 0 || isClosed(l.quit) {
			return
		}
		st.next = l.clock.now() // armed: renew at once
		l.c.w.Join(st.next)
		l.renewFrom(st)
	}, l.wakeRenew, l.quit, l.c.s.Lost())
}

// renewals sends the renewals every T/8 on the session's grid until the
// lease ends (false) or rests with no renewal in flight (true: the caller
// waits for Arm, goroutine-free). Either way the writer is off the grid
// when it returns: the deferred Leave runs before the caller's wait is
// registered, so a resumed loop's Join cannot be undone by it. Leave is
// idempotent (the writer's onGrid), as it always was: a rest's Leave and
// this deferred one count once, and an Arm's Join puts the writer back.
func (l *lease) renewals(st renewState) (renewState, bool) {
	every := bootTime(l.timeout / renewEveryDiv)
	w := l.c.w
	defer w.Leave()
	for {
		if !l.sleepUntil(st.next) {
			return st, false
		}
		if l.Resting() {
			w.Leave() // the others' rounds wait for no renewal of ours
			switch l.drainRest() {
			case restEnded:
				return st, false
			case restDrained:
				return st, true
			}
			st.next = l.clock.now() // armed while draining: renew at once
			w.Join(st.next)
			continue
		}
		now := l.clock.now()
		// Woken a whole round late: this loop was stopped too (ballot
		// SIGSTOPped, the machine suspended), and supervision with it. It
		// gets a round to check in before it counts as stuck: otherwise a
		// resumed ballot would end its session here, abandoning the baton
		// to expire, instead of giving it back (releaseLost).
		resumed := now-st.next >= every
		st.next = w.Next(now, time.Duration(every))
		l.reportSlow(now)
		if !l.supervised(now) {
			w.Skip()
			if resumed && !st.excused {
				st.excused = true
				continue
			}
			// Stop vouching: the lease runs out, the keeper kills the
			// command at its end. Then end the session, or the baton
			// would stay held by a leader that runs nothing.
			if !st.stuck {
				st.stuck = true
				l.c.log.Warn("supervision has not checked in; renewals stop vouching, so the lease runs out and the keeper stops the command",
					"last_check_in_ago", time.Duration(now-bootTime(l.checkedIn.Load())).Round(time.Millisecond))
			}
			if l.enforced && now >= l.hardEnd() {
				if l.shared {
					if l.endOwn() {
						return st, false
					}
					continue // the connection is down: again next tick
				}
				l.c.s.MarkLost("supervision stuck past the lease's end")
				l.c.s.Conn.Close()
				return st, false
			}
			continue
		}
		st.excused = false
		if st.stuck {
			st.stuck = false
			l.c.log.Info("supervision checks in again; renewals vouch again")
		}
		l.mu.Lock()
		full := len(l.inFlight) >= maxRenewalsInFlight
		if !full {
			l.inFlight = append(l.inFlight, now)
		}
		l.mu.Unlock()
		if full {
			w.Skip()
			select { // send again as soon as one is answered
			case <-l.answered:
				st.next = l.clock.now()
			case <-l.quit:
				return st, false
			case <-l.c.s.Lost():
				return st, false
			}
			continue
		}
		if isClosed(l.quit) {
			return st, false // stopped meanwhile (sleepUntil returns at once when due): no renewal after Stop
		}
		go l.renew(now)
	}
}

// endOwn ends this leadership alone, its supervision stuck past the
// lease's end, on a session other elections share: closing it, as a
// lone lease does, would drop their batons too. One multi-op, fenced as
// a renewal is (the proposal checked, the baton ours: its owner and data,
// naming our proposal, read and its version with it), deletes the baton
// and the proposal; the other elections' nodes are not touched; with the
// proposal deleted already, the baton alone, so fenced. The command is dead by now (the
// keeper killed it at KillAt, before hardEnd), so this is what the
// session's end would do for this election, at the same moment: a
// successor that sees the baton gone waits W, as after an expiry. False
// if it must be tried again (no answer); the leadership ends either way
// once it lands, or with the session.
func (l *lease) endOwn() bool {
	c := l.c
	raw, st, err := c.s.Conn.Get(c.batonPath())
	ok := err == nil
	if errors.Is(err, zk.ErrNoNode) {
		err = nil
	}
	// Ours: this session's and naming our proposal (another candidacy of
	// the election on this session would be the session's too).
	mine := ok && st.EphemeralOwner == c.s.ID() && namesProposal(raw, c.node)
	if err == nil {
		ops := []any{&zk.CheckVersionRequest{Path: c.node, Version: -1}}
		if mine {
			ops = append(ops, &zk.DeleteRequest{Path: c.batonPath(), Version: st.Version})
		}
		ops = append(ops, &zk.DeleteRequest{Path: c.node, Version: -1})
		_, err = c.s.Conn.Multi(ops...)
	}
	switch {
	case err == nil:
		c.log.Warn("supervision stuck past the lease's end: this election's baton and proposal deleted; the session and the other elections on it go on", logEvLeaseExpired.attr(),
			"proposal", c.node)
		l.lose("supervision stuck past the lease's end: our proposal and baton deleted")
		return true
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
		// The proposal is gone already (an operator), or the baton changed
		// between the read and the delete: the next try sees to the latter.
		// Without the proposal, our baton goes alone (dropOwnBaton, fenced
		// as leaveOwn's deletes): what the session's end would delete, at
		// the moment it would. Left held, on a session the
		// other jobs keep alive, it would stall every successor.
		if ok2, _, e := c.s.Conn.Exists(c.node); e == nil && !ok2 {
			if dropOwnBaton(c) != nil {
				return false // changed since the read, or no answer: again next tick
			}
			l.lose((&nodeLostError{"proposal"}).Error())
			return true
		}
		return false
	case zookeeper.Retryable(err):
		return false
	}
	// An ACL, a deleted election path: end the session after all.
	c.log.Warn("cannot delete this election's nodes; ending the session", "error", err)
	c.s.MarkLost("supervision stuck past the lease's end")
	c.s.Conn.Close()
	return true
}

// takeHandedBaton sends the take of a baton handed over to us, the
// command starting meanwhile on credit. Its answer renews the lease as a
// renewal's does; a failed take ends the leadership at once. The
// candidate's baton state is settled when l.taken closes.
func (l *lease) takeHandedBaton() bool {
	defer close(l.taken)
	sent, err := oneBaton{l.c}.takeHandedOver(l.pending, l.fresh, l.quit)
	if err != nil {
		l.c.baton.takeFailed()
		var lost *nodeLostError
		if errors.As(err, &lost) {
			l.lose(lost.Error())
		} else {
			l.c.log.Warn("the take of a handed-over baton failed; ending the leadership", "error", err)
			l.lose("the baton handed over to us could not be taken")
		}
		return false
	}
	l.mu.Lock()
	l.end = max(l.end, l.endFrom(sent))
	l.mu.Unlock()
	l.sent = sent
	l.release = handoffFor(l.c, nil)
	ping(l.renewed)
	return true
}

// takePending reports a handover's take not answered yet.
func (l *lease) takePending() bool {
	select {
	case <-l.taken:
		return false
	default:
		return true
	}
}

// awaitTake waits until no take is pending, so that the candidate's baton
// state may be read; a lost session's take fails once the connection is
// closed.
func (l *lease) awaitTake() {
	select {
	case <-l.taken:
	case <-l.c.s.Lost():
		l.c.s.Conn.Close()
		<-l.taken
	}
}

// sleepUntil waits until t on the boot clock, or an Arm; false when the
// lease ends.
func (l *lease) sleepUntil(t bootTime) bool {
	d := time.Duration(t - l.clock.now())
	if d <= 0 {
		return true
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-l.wakeRenew:
		return true
	case <-l.quit:
	case <-l.c.s.Lost():
	}
	return false
}

// Rest stops the renewals once nothing runs under the lease (a cron
// leader between runs): the lease lapses, by the same bound as any lease
// (its end is the last answered renewal's send + W), and the leader starts
// nothing until Arm and an answered renewal make it fresh again
// (AwaitFresh). The baton stays held by the session meanwhile; a
// successor that finds it dropped waits W, which covers a lapsed lease
// all the more. No write at all while nothing runs.
func (l *lease) Rest() {
	l.mu.Lock()
	l.resting = true
	l.mu.Unlock()
}

// restOutcome is how a rest's drain ended.
type restOutcome int

const (
	restDrained restOutcome = iota // no renewal in flight: wait for Arm (renewFrom)
	restWoken                      // Arm came first: renew at once
	restEnded                      // quit, Lost: the lease is over
)

// drainRest waits, renewals stopped, until the renewals in flight are
// answered: from then on this leader writes nothing until its next run.
// A goroutine's wait, but a short one (a round trip); an Arm meanwhile
// is taken here and not lost.
func (l *lease) drainRest() restOutcome {
	for {
		l.mu.Lock()
		drained := len(l.inFlight) == 0
		l.mu.Unlock()
		if drained {
			return restDrained
		}
		select {
		case <-l.answered:
		case <-l.wakeRenew:
			return restWoken
		case <-l.quit:
			return restEnded
		case <-l.c.s.Lost():
			return restEnded
		}
	}
}

// Arm resumes the renewals, the first at once (the lease's take before a
// run), then every T/8 from it.
func (l *lease) Arm() {
	l.mu.Lock()
	was := l.resting
	l.resting = false
	if was {
		l.armedAt = l.clock.now()
	}
	l.mu.Unlock()
	if was {
		ping(l.wakeRenew)
	}
}

// armedFresh reports that a renewal sent since renewals last resumed from
// rest was answered: a lapsed lease's tail may still look fresh, but a
// run started on it would be stopped by a stall the steady renewals ride
// through.
func (l *lease) armedFresh() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastAnswered >= l.armedAt
}

// Resting reports that the renewals are stopped (Rest).
func (l *lease) Resting() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.resting
}

// AwaitFresh arms the lease and waits until it is fresh (Fresh): at once
// if renewals never stopped and answered lately leave it so, otherwise
// after the answer of a renewal sent since Arm resumed them (armedFresh). false when the leadership ends (the lease's
// ended), the session is lost, or stop closes first. Only the supervising
// goroutine calls it (it consumes renewed).
func (l *lease) AwaitFresh(stop <-chan struct{}) bool {
	l.awaitTake()
	l.Arm()
	for {
		if l.Fresh() && l.armedFresh() {
			return true
		}
		if isClosed(l.gone) || l.c.s.IsLost() {
			return false
		}
		t := time.NewTimer(l.renewEvery())
		select {
		case <-l.renewed:
		case <-t.C: // look again: a renewal answered while we looked
		case <-l.ended.Done():
			t.Stop()
			return false
		case <-l.c.s.Lost():
			t.Stop()
			return false
		case <-stop:
			t.Stop()
			return false
		}
		t.Stop()
	}
}

// renew sends one renewal, sent at sent, and records its answer.
func (l *lease) renew(sent bootTime) {
	c := l.c
	l.mu.Lock()
	data := c.batonData(l.latency, l.maxLat, l.wait-l.timeout/killMarginDiv)
	l.mu.Unlock()
	res, err := c.w.Write(&zk.CheckVersionRequest{Path: c.node, Version: -1},
		&zk.SetDataRequest{Path: c.batonPath(), Data: data, Version: -1})
	now := l.clock.now()
	// The set may land on a baton another session created after ours was
	// deleted (an operator, while we were stopped): SetData cannot check
	// the owner, its answer can. Such a renewal proves nothing for us.
	foreign := err == nil && (len(res) < 2 || res[1].Stat == nil || res[1].Stat.EphemeralOwner != c.s.ID())
	l.mu.Lock()
	for i, s := range l.inFlight {
		if s == sent {
			l.inFlight = append(l.inFlight[:i], l.inFlight[i+1:]...)
			break
		}
	}
	if err == nil && !foreign {
		if len(res) == 2 && res[1].Stat != nil && sent > l.zkClock.sent {
			l.zkClock = zkClockReading{mtime: time.UnixMilli(res[1].Stat.Mtime), sent: sent}
		}
		l.end = max(l.end, l.endFrom(sent))
		l.lastAnswered = max(l.lastAnswered, sent)
		l.latency = time.Duration(now - sent)
		l.maxLat = max(l.maxLat, l.latency)
	}
	recovered := err == nil && !foreign && l.slowSince != 0 && len(l.inFlight) == 0
	slowFor := time.Duration(now - l.slowSince)
	if recovered {
		l.slowSince = 0
	}
	l.mu.Unlock()
	ping(l.answered)
	switch {
	case foreign:
		l.lose("our baton node was deleted and another session holds one")
	case err == nil:
		ping(l.renewed)
		if recovered {
			c.log.Info("lease renewals are answered again", "slow_for", slowFor.Round(time.Millisecond),
				"last_renewal", l.latency.Round(time.Millisecond), "lease_left", l.Left().Round(time.Millisecond))
		}
	case errors.Is(err, zk.ErrSessionExpired):
		c.s.MarkLost("session expired")
	case len(res) == 2 && errors.Is(res[0].Error, zk.ErrNoNode):
		l.lose((&nodeLostError{"proposal"}).Error())
	case len(res) == 2 && errors.Is(res[1].Error, zk.ErrNoNode):
		l.lose((&nodeLostError{"baton"}).Error())
	case !zookeeper.Retryable(err):
		// An ACL, a deleted election path: the lease runs out meanwhile.
		c.log.Warn("cannot renew the lease", "error", err)
	}
}

// reportSlow warns, once per episode, about a renewal unanswered for T/8:
// the connection may be fine and ZooKeeper slow (a pause, a leader
// election, fsync), or the link slow. The command goes on until the lease
// left falls to the grace it is owed.
func (l *lease) reportSlow(now bootTime) {
	l.mu.Lock()
	if l.slowSince != 0 || len(l.inFlight) == 0 || now-l.inFlight[0] < bootTime(l.timeout/slowDiv) {
		l.mu.Unlock()
		return
	}
	l.slowSince = l.inFlight[0]
	oldest := time.Duration(now - l.inFlight[0])
	l.mu.Unlock()
	l.c.log.Warn("lease renewal slow: ZooKeeper has not answered; the command goes on while the lease lasts",
		"unlastAnsweredfor", oldest.Round(time.Millisecond), "lease_left", l.Left().Round(time.Millisecond),
		"stops_at_lease_left", l.grace.Round(time.Millisecond))
}

// watch ends the lease as soon as the proposal or the baton is deleted,
// rather than at the next renewal: the next candidate's watch fires at the
// same moment. It watches the election's children, which the renewals'
// writes to the baton's data do not touch. A member cut off from its
// quorum sends no such news; the lease covers that.
func (l *lease) watch() {
	// A goroutine's wait, kept: the take is one round trip, and a lease
	// that took its baton itself finds taken closed already, where a
	// whenFirst wait would cost it a dispatcher's pass and a goroutine.
	select { // a handover's baton exists once its take is answered
	case <-l.taken:
	case <-l.quit:
		return
	}
	l.watchRound(l.c.node[len(l.c.basePath)+1:])
}

// watchRound reads the election's children, and sets the watch, once
// (again while the read fails and the session can come back); then the
// next round waits through whenFirst, no goroutine of its own: the lease
// of a leader at rest costs nothing while nothing changes (issue 34).
func (l *lease) watchRound(proposal string) {
	c := l.c
	for {
		children, _, ev, err := c.s.Conn.ChildrenW(c.basePath)
		switch {
		case err == nil:
			c.line.seen.Store(&children)
			ping(c.line.changed)
			if f := c.tell.lineChanged; f != nil {
				f()
			}
			has := map[string]bool{}
			for _, n := range children {
				has[n] = true
			}
			if !has[proposal] {
				l.lose((&nodeLostError{"proposal"}).Error())
				return
			}
			if !has[slotName(batonName, c.slot)] {
				l.lose((&nodeLostError{"baton"}).Error())
				return
			}
		case errors.Is(err, zk.ErrNoNode):
			l.lose((&nodeLostError{"proposal"}).Error())
			return
		default:
			if !zookeeper.Retryable(err) || c.s.WaitOnline(l.quit) != nil {
				return
			}
			continue
		}
		whenFirstRecv(func(i int, v any) {
			if i != 0 {
				return // quit, Lost
			}
			// A closed ev gives zk.Event{}: another round, as `e := <-ev` did.
			if e, _ := v.(zk.Event); e.Type == zk.EventNotWatching {
				return // the session is gone; the supervisor hears of it
			}
			l.watchRound(proposal)
		}, ev, l.quit, c.s.Lost())
		return
	}
}

func (l *lease) lose(why string) {
	l.goneOnce.Do(func() {
		l.mu.Lock()
		l.goneWhy = why
		l.mu.Unlock()
		close(l.gone)
		l.endWith(&proposalGoneError{why})
	})
}

// GoneWhy says which node went, once gone is closed.
func (l *lease) GoneWhy() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.goneWhy
}

// Stop ends the renewals. It does not wait: a request held up by a lost
// connection must not hold up a resignation; it fails when the session is
// closed.
func (l *lease) Stop() { l.quitOnce.Do(func() { close(l.quit) }) }

// hardEnd is the earliest a successor could start: the last write that
// vouched for this leadership, plus W (a handover's credit: its proof,
// plus the W the record allows).
func (l *lease) hardEnd() bootTime {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.end
}

// KillAt is when the command must be dead at the latest, on the boot
// clock: ballot kills it then, and so does the keeper (keeper.go).
func (l *lease) KillAt() bootTime { return l.killFor(l.hardEnd()) }

// BackstopAt is when the kernel kills the keeper itself, should it not
// have killed the command by KillAt (ptrace-stopped, wedged): half the
// margin later, still T/32 before the lease's end.
func (l *lease) BackstopAt() bootTime { return l.backstopFor(l.hardEnd()) }

// stopAt is when ballot asks the command to stop (SIGTERM): the grace it
// is owed before KillAt.
func (l *lease) stopAt() bootTime { return l.stopFor(l.hardEnd()) }

// Left is the time left before the kill.
func (l *lease) Left() time.Duration { return time.Duration(l.KillAt() - l.clock.now()) }

// ZooKeeperClock is ZooKeeper's clock as the last answered renewal saw
// it; ok is false before the first.
func (l *lease) ZooKeeperClock() (r zkClockReading, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.zkClock, l.zkClock.sent != 0
}

// Renewals reports the last and the largest renewal round trip.
func (l *lease) Renewals() (last, largest time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.latency, l.maxLat
}

// KillBy and StopBy are KillAt and stopAt on Go's clock, computed afresh
// at each call, so they compare with time.Now() at that moment.
func (l *lease) KillBy() time.Time { return l.clock.onGoClock(l.KillAt()) }
func (l *lease) StopBy() time.Time { return l.clock.onGoClock(l.stopAt()) }

// leaseStanding is what supervision makes of its lease at a moment.
type leaseStanding int

const (
	leaseHolds      leaseStanding = iota
	leaseRunningOut               // past the stop: SIGTERM now, the grace still fits before the kill
	leaseExpired                  // past the kill: ZooKeeper may already have elected another leader
)

// standing reads the lease at now, on its own clock: the stop and the kill
// of one reading of its end (a renewal between two reads cannot make the
// stop come after the kill), and what is left before the kill (negative:
// how late).
func (l *lease) standing(now bootTime) (st leaseStanding, left time.Duration) {
	end := l.hardEnd()
	kill := l.killFor(end)
	left = time.Duration(kill - now)
	switch {
	case now >= kill:
		return leaseExpired, left
	case now >= l.stopFor(end):
		return leaseRunningOut, left
	}
	return leaseHolds, left
}

// supervisedKillBy is KillBy for a stop's grace period, which also checks
// in: a leader waiting for its command to stop is supervising it.
func (l *lease) supervisedKillBy() time.Time {
	l.checkIn()
	return l.KillBy()
}

// Fresh reports that the lease leaves more than the grace owed: the
// condition for starting anything as leader. Only the supervising
// goroutine calls it, so it checks in.
func (l *lease) Fresh() bool {
	l.checkIn()
	return l.fresh()
}

func (l *lease) fresh() bool {
	return !isClosed(l.gone) && !l.c.s.IsLost() && l.clock.now() < l.stopAt()
}

// Vouches reports, for systemd's watchdog, that the lease is fresh and
// supervision alive; a lease at rest (Rest: nothing runs under it) vouches
// while the session is connected, as a follower does.
func (l *lease) Vouches() bool {
	if l.Resting() {
		return !isClosed(l.gone) && !l.c.s.IsLost() && l.c.s.Connected()
	}
	return l.fresh() && l.supervised(l.clock.now())
}

// String is the lease as a log attribute.
func (l *lease) String() string {
	last, largest := l.Renewals()
	return fmt.Sprintf("left %s, last renewal %s, largest %s", l.Left().Round(time.Millisecond),
		last.Round(time.Millisecond), largest.Round(time.Millisecond))
}

// leaseKillTimes is what the keeper enforces under the lease l.
func leaseKillTimes(l *lease) killTimes {
	return killTimes{Kill: l.KillAt(), Backstop: l.BackstopAt()}
}

// handoffFor is what a keeper needs to end c's session and give its baton
// back should ballot die; nil when not elected. While a handover's take is
// pending under l, only the session: the release follows the take.
func handoffFor(c *candidate, l *lease) *zookeeper.Handoff {
	if c == nil {
		return nil
	}
	h := c.s.Handoff()
	if l != nil && l.takePending() {
		return h
	}
	if h != nil && c.baton.held() {
		h.ReleasePath, h.ReleaseVersion, h.ReleaseData = c.handoverPath(), c.baton.version, c.handoverData(handoverReleased)
		h.Proposal, h.Baton = c.node, c.batonPath()
	}
	return h
}
