package main

// The lease: how long a leader may still act. Its end is the earliest
// moment the ZooKeeper quorum could expire the leader's session; the
// command must be gone a margin before it, by ballot's hand or, if ballot
// cannot act (stopped, hung, killed), by the keeper's (keeper.go).
//
// Only requests that reach the ZooKeeper leader vouch for a session: a
// member cut off from its quorum keeps answering reads and pings from its
// own copy for syncLimit × tickTime, while the quorum may expire the
// session after T. So a renewal is a sync (forwarded to the ZooKeeper
// leader), then reads of the proposal and the baton, which the member
// answers only once it has caught up with that sync.
//
// A member reports its clients' session touches to the ZooKeeper leader in
// its reply to the leader's ping, every tickTime/2. Once a sync sent at
// least tickTime/2 after an earlier request a was answered, the leader had
// seen a's touch before it saw the sync, so the session cannot expire
// before a was sent + T. ballot does not know tickTime; ZooKeeper's default
// minSessionTimeout (2 × tickTime) makes tickTime/2 ≤ T/4. So each renewal
// is sent renewGap after the previous one was answered, and moves the end
// of the lease to the previous one's send time + T. The README derives the
// bound and lists what it assumes.

import (
	"errors"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Fractions of the session timeout T.
const (
	// renewGapDiv: renewals are spaced T/4 after the previous answer, at
	// least the ZooKeeper leader's ping period (tickTime/2 ≤ T/4), so each
	// answered renewal proves the previous one's touch reached the leader.
	renewGapDiv = 4
	// marginDiv: the command must be gone T/8 before the lease ends, for the
	// kill itself, message delays and clocks that tick at slightly different
	// rates.
	marginDiv = 8
	// suspectLateDiv: a renewal more than T/8 late means the connection is
	// in trouble: the command is asked to stop (SIGTERM) while the lease
	// still leaves it a grace period.
	suspectLateDiv = 8
)

// firstLease is the lease a leader has from taking the baton until its
// first renewal: a write proves only that the session lived when it was
// sent. 5T/8 leaves T/2 before the kill, which a successor covers: it waits
// 3T/4 after finding a baton dropped without release (baton.go).
func firstLease(t time.Duration) time.Duration { return t * 5 / 8 }

type lease struct {
	c       *candidate
	timeout time.Duration // the smallest session timeout negotiated

	mu       sync.Mutex
	end      bootTime // the earliest the quorum may expire the session
	lastSent bootTime // send time of the last answered renewal
	answered bootTime // and when it was answered

	renewed  chan struct{} // pinged on every renewal
	gone     chan struct{} // closed when the proposal or the baton is gone
	goneOnce sync.Once
	goneWhy  string
	quit     chan struct{}
	quitOnce sync.Once

	ctl *controls // ballot pause and step-down, for this leadership
}

// holdLease starts a leader's lease; taken is the send time of the write
// that took the baton.
func (c *candidate) holdLease(taken bootTime) *lease {
	t := c.s.Timeout()
	l := &lease{
		c:        c,
		timeout:  t,
		end:      taken + bootTime(firstLease(t)),
		lastSent: taken,
		answered: bootNow(),
		renewed:  make(chan struct{}, 1),
		gone:     make(chan struct{}),
		quit:     make(chan struct{}),
	}
	l.ctl = c.watchControls(l.quit)
	go l.renewLoop()
	go l.watch(c.node, "proposal")
	go l.watch(c.batonPath(), "baton")
	return l
}

func (l *lease) renewLoop() {
	gap := bootTime(l.timeout / renewGapDiv)
	for {
		l.mu.Lock()
		due := l.answered + gap
		l.mu.Unlock()
		if d := time.Duration(due - bootNow()); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-l.quit:
				t.Stop()
				return
			case <-l.c.s.lost:
				t.Stop()
				return
			}
		}
		sent := bootNow()
		err := l.renew()
		var lost *nodeLostError
		switch {
		case err == nil:
			l.mu.Lock()
			if e := l.lastSent + bootTime(l.timeout); e > l.end {
				l.end = e
			}
			l.lastSent, l.answered = sent, bootNow()
			l.mu.Unlock()
			select {
			case l.renewed <- struct{}{}:
			default:
			}
		case errors.As(err, &lost):
			l.lose(lost.Error())
			return
		default:
			// The connection is down: the request failed or waited for a
			// reconnect; try again soon (a later send only widens the gap).
			// Anything else (an ACL, a deleted election path): try again
			// less often; the lease runs out meanwhile if it lasts.
			pause := 20 * time.Millisecond
			if !retryable(err) {
				pause = 500 * time.Millisecond
				l.c.log.Warn("cannot renew the lease", "error", err)
			}
			select {
			case <-time.After(pause):
			case <-l.quit:
				return
			case <-l.c.s.lost:
				return
			}
		}
	}
}

// nodeLostError says the proposal or the baton is gone or not ours.
type nodeLostError struct{ what string }

func (e *nodeLostError) Error() string { return "our " + e.what + " node was deleted" }

// renew is one renewal: a sync, then the proposal and the baton must still
// exist and belong to this session.
func (l *lease) renew() error {
	c := l.c
	if _, err := c.s.conn.Sync(c.basePath); err != nil {
		return err
	}
	for _, n := range [...]struct{ path, what string }{{c.node, "proposal"}, {c.batonPath(), "baton"}} {
		ok, st, err := c.s.conn.Exists(n.path)
		if err != nil {
			return err
		}
		if !ok || st.EphemeralOwner != c.s.ID() {
			return &nodeLostError{n.what}
		}
	}
	return nil
}

// watch ends the lease as soon as path is deleted, rather than at the next
// renewal: the next candidate's watch fires at the same moment. A member
// cut off from its quorum sends no such news; the lease covers that.
func (l *lease) watch(path, what string) {
	for {
		ok, _, ev, err := l.c.s.conn.ExistsW(path)
		switch {
		case err == nil && !ok:
			l.lose((&nodeLostError{what}).Error())
			return
		case err != nil:
			if !retryable(err) || l.c.s.waitOnline(l.quit) != nil {
				return
			}
			continue
		}
		select {
		case e := <-ev:
			switch e.Type {
			case zk.EventNodeDeleted:
				l.lose((&nodeLostError{what}).Error())
				return
			case zk.EventNotWatching:
				return // the session is gone; the supervisor hears of it
			}
			// The proposal's own status writes: watch again.
		case <-l.quit:
			return
		case <-l.c.s.lost:
			return
		}
	}
}

func (l *lease) lose(why string) {
	l.goneOnce.Do(func() {
		l.mu.Lock()
		l.goneWhy = why
		l.mu.Unlock()
		close(l.gone)
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

// KillAt is when the command must be gone at the latest, on the boot clock
// (what the keeper is told).
func (l *lease) KillAt() bootTime {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.end - bootTime(l.timeout/marginDiv)
}

// suspectAt is when missing renewals mean the connection is lost: the next
// renewal is T/8 late, but no later than T/8 before the kill, so the
// command always gets a grace period and nothing starts on a lease about
// to end (slow renewals move the kill closer than the schedule assumes).
func (l *lease) suspectAt() bootTime {
	l.mu.Lock()
	defer l.mu.Unlock()
	late := l.answered + bootTime(l.timeout/renewGapDiv+l.timeout/suspectLateDiv)
	kill := l.end - bootTime(l.timeout/marginDiv)
	return min(late, kill-bootTime(l.timeout/8))
}

// KillBy and SuspectAt are KillAt and suspectAt on Go's clock, computed
// afresh at each call, so they compare with time.Now() at that moment.
func (l *lease) KillBy() time.Time    { return onGoClock(l.KillAt()) }
func (l *lease) SuspectAt() time.Time { return onGoClock(l.suspectAt()) }

func onGoClock(t bootTime) time.Time { return time.Now().Add(time.Duration(t - bootNow())) }

// Fresh reports that the session is connected and the lease well within
// its term: the condition for starting anything as leader.
func (l *lease) Fresh() bool {
	select {
	case <-l.gone:
		return false
	default:
	}
	return l.c.s.connected.Load() && !l.c.s.isLost() && bootNow() < l.suspectAt()
}

// bootTime is a reading of CLOCK_BOOTTIME. The lease is kept on it, not on
// the monotonic clock of Go's time package, which stops while the machine
// is suspended (and, on some hypervisors, while a VM is paused): ZooKeeper's
// clock runs on meanwhile, and a lease must not look fresh on resume. The
// keeper reads the same clock, so a deadline passes between the two as a
// number. bootClock (clock_linux.go) reads it.
type bootTime time.Duration

func bootNow() bootTime { return bootClock() }
