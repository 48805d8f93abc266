package keeper

import (
	"slices"
	"sync"
	"testing"
	"time"

	"ballot/internal/zookeeper"
)

// restProbe records an idleRest's rests and restores, in order, instead of
// touching the process's collector and pages.
type restProbe struct {
	mu     sync.Mutex
	calls  []string
	rested chan struct{} // a receive for each rest
}

func newRestProbe(r *idleRest) *restProbe {
	p := &restProbe{rested: make(chan struct{}, 8)}
	r.rest = func() int {
		p.mu.Lock()
		p.calls = append(p.calls, "rest")
		p.mu.Unlock()
		p.rested <- struct{}{}
		return 100
	}
	r.restore = func(pct int) {
		p.mu.Lock()
		p.calls = append(p.calls, "restore")
		p.mu.Unlock()
		if pct != 100 {
			panic("restored a percent the rest did not return")
		}
	}
	return p
}

func (p *restProbe) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls)
}

// TestIdleRestDecisions: quiet for the quiet period, it rests once; an
// order at rest restores before the caller goes on, and the quiet starts
// again; stopped, it restores and never rests again.
func TestIdleRestDecisions(t *testing.T) {
	now := time.Unix(1000, 0)
	r := newIdleRest()
	r.now = func() time.Time { return now }
	p := newRestProbe(r)
	r.last = now
	if w := r.check(); w != restQuiet {
		t.Fatalf("at once: wait %s, want the whole quiet period %s", w, restQuiet)
	}
	now = now.Add(restQuiet - time.Second)
	if w := r.check(); w != time.Second {
		t.Fatalf("a second short: wait %s, want 1s", w)
	}
	now = now.Add(time.Second)
	if w := r.check(); w != 0 || !r.resting {
		t.Fatalf("quiet for %s: wait %s, resting %v; want a rest", restQuiet, w, r.resting)
	}
	if w := r.check(); w != 0 || len(p.seen()) != 1 {
		t.Fatalf("resting: wait %s, calls %v; want no second rest", w, p.seen())
	}
	r.stir() // an order
	if got := p.seen(); !slices.Equal(got, []string{"rest", "restore"}) || r.resting {
		t.Fatalf("an order at rest: calls %v, resting %v; want the collector restored", got, r.resting)
	}
	select {
	case <-r.wake:
	default:
		t.Fatal("an order at rest did not wake the loop")
	}
	now = now.Add(restQuiet / 2)
	if w := r.check(); w != restQuiet/2 {
		t.Fatalf("half the quiet period after the order: wait %s, want the other half", w)
	}
	now = now.Add(restQuiet)
	r.check()
	r.stop()
	if got := p.seen(); !slices.Equal(got, []string{"rest", "restore", "rest", "restore"}) {
		t.Fatalf("stopped at rest: calls %v, want the collector restored", got)
	}
	now = now.Add(time.Hour)
	if w := r.check(); w != 0 || len(p.seen()) != 4 {
		t.Fatalf("stopped: wait %s, calls %v; want no more rests", w, p.seen())
	}
	if _, open := <-r.wake; open {
		t.Fatal("stopped: the loop's wake is still open")
	}
	var none *idleRest
	none.stir() // a keeper that is not idle has none
}

// TestIdleKeeperRests: an idle keeper quiet for its quiet period rests,
// and at rest still carries out what ballot says, the collector put back
// first: an order, and ballot's death (EOF: the tree ended, as when it did
// not rest). Waits for each rest; the quiet period is short for the test.
func TestIdleKeeperRests(t *testing.T) {
	tk := newTestKeeper(t, KillTimes{})
	tk.rest = newIdleRest()
	tk.rest.quiet = 50 * time.Millisecond
	p := newRestProbe(tk.rest)
	done := make(chan *RunOrder, 1)
	go func() { done <- tk.standIdle(tk.control) }()
	<-p.rested
	release := &zookeeper.Handoff{Proposal: "/b/j/_c_ab-proposal-0000000001", ReleasePath: "/b/j/handover",
		ReleaseData: []byte(`{}`), Baton: "/b/j/baton"}
	tk.tell(t, HoldOrder(release))
	<-p.rested // rests again once quiet after the order: it was carried out
	tk.keeper.mu.Lock()
	held := tk.held[release.Baton]
	tk.keeper.mu.Unlock()
	if held == nil {
		t.Fatalf("the hold order sent at rest was not carried out")
	}
	tk.orders.Close() // ballot died
	if o := <-done; o != nil {
		t.Fatalf("at EOF it would run %q", o.Argv)
	}
	if !tk.killed() {
		t.Error("ballot died while its keeper rested: the tree was not ended")
	}
	if got := p.seen(); !slices.Equal(got, []string{"rest", "restore", "rest", "restore"}) {
		t.Errorf("calls %v: want each wake to restore the collector before the order or the end", got)
	}
}
