package keeper

// Unit tests of the keeper's decisions (keeper.go, keeperidle.go) on a
// clock of the test's own: when the lease's deadline has passed, what a
// later deadline order does to an earlier one, which kernel alarms it
// arms, when it kills the command's tree and when it refuses to start
// it, and what the idle keeper does with "run", "bye" and EOF. The orders
// come over a real pipe, as from ballot; the alarms only record what they
// are armed for; the tree is one already reaped, so that a decision to
// kill it signals nothing and shows as the tree's signal (killed). No
// process is started, no ZooKeeper.

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"ballot/internal/bootclock"
	"ballot/internal/zookeeper"
)

// keeperBase is the boot clock's reading when a keeper test starts.
const keeperBase = bootclock.Time(time.Hour)

// testCodes are the exit codes ballot gives its keeper (run.go).
var testCodes = Config{Usage: 2, Failure: 125, NotExecutable: 126, NotFound: 127}

// movingClock is a boot clock that moves only when the test says, safe to
// read from the keeper's goroutines.
type movingClock struct{ boot atomic.Int64 }

func newMovingClock() *movingClock {
	c := &movingClock{}
	c.boot.Store(int64(keeperBase))
	return c
}

func (c *movingClock) clock() func() bootclock.Time { return c.now }
func (c *movingClock) now() bootclock.Time          { return bootclock.Time(c.boot.Load()) }
func (c *movingClock) set(t bootclock.Time)         { c.boot.Store(int64(t)) }

// fakeAlarm stands for a kernel alarm (bootAlarm): it records the moment
// it is armed for, 0 once disarmed.
type fakeAlarm struct {
	mu     sync.Mutex
	at     bootclock.Time
	closed bool
}

func (a *fakeAlarm) Set(at bootclock.Time) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.at = at
	return nil
}

func (a *fakeAlarm) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	return nil
}

func (a *fakeAlarm) armed() (at bootclock.Time, closed bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.at, a.closed
}

// testKeeper is a keeper on a movingClock, with recording alarms, an
// already reaped tree and a control pipe whose write end plays ballot.
type testKeeper struct {
	*keeper
	clk            *movingClock
	wake, backstop *fakeAlarm
	control        *os.File // the keeper's end (its fd 4)
	orders         *os.File // ballot's end

	mu      sync.Mutex
	reports []string
}

func newTestKeeper(t *testing.T, first KillTimes) *testKeeper {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(); r.Close() })
	tk := &testKeeper{clk: newMovingClock(), wake: &fakeAlarm{}, backstop: &fakeAlarm{}, control: r, orders: w}
	dl := (&deadline{clock: tk.clk.clock(), wake: tk.wake, backstop: tk.backstop}).arm(first.Kill, first.Backstop)
	// reaped: nothing to signal (a tree of pgid 0 would be the test's own group).
	tk.keeper = &keeper{cfg: testCodes, parent: os.Getppid(), dl: dl, tree: &tree{reaped: true}, over: make(chan struct{})}
	tk.keeper.report = func(line string) {
		tk.mu.Lock()
		tk.reports = append(tk.reports, line)
		tk.mu.Unlock()
	}
	// By number, as keeperMain does: Fd would make the pipe blocking.
	rc, err := r.SyscallConn()
	if err == nil {
		err = rc.Control(func(fd uintptr) { tk.keeper.control = fd })
	}
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// tell writes ballot's orders into the control pipe.
func (tk *testKeeper) tell(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := fmt.Fprintln(tk.orders, l); err != nil {
			t.Fatal(err)
		}
	}
}

// obeyed waits until obey has returned ("bye" or EOF).
func (tk *testKeeper) obeyed(t *testing.T) {
	t.Helper()
	select {
	case <-tk.over:
	case <-time.After(time.Minute): // a hang, not a measure
		t.Fatal("the keeper never finished reading its orders")
	}
}

// killed reports that the keeper decided to SIGKILL the command's tree.
func (tk *testKeeper) killed() bool {
	tk.tree.mu.Lock()
	defer tk.tree.mu.Unlock()
	return tk.tree.sig == syscall.SIGKILL
}

func (tk *testKeeper) deadlineAt() bootclock.Time {
	tk.dl.mu.Lock()
	defer tk.dl.mu.Unlock()
	return tk.dl.at
}

// done runs f in a goroutine and closes the returned channel once f returns.
func done(f func()) <-chan struct{} {
	ch := make(chan struct{})
	go func() { f(); close(ch) }()
	return ch
}

// testKillTimes is what ballot sends the keeper for a lease with session
// timeout T whose last vouching write was sent at vouched: the lease ends
// W = 3T/4 later, the kill comes T/16 and the backstop T/32 before that
// (leaseterms.go in package main, whose own tests check these moments
// against the keeper's alarms).
func testKillTimes(T time.Duration, vouched bootclock.Time) KillTimes {
	end := vouched + bootclock.Time(T*3/4)
	return KillTimes{Kill: end - bootclock.Time(T/16), Backstop: end - bootclock.Time(T/32)}
}

// TestKeeperDeadlineOrders: the deadline as the first kill times and the
// later "deadline" orders leave it; the last order rules, also when it is
// earlier (ballot alone knows the lease), and "deadline 0 0" lifts it.
func TestKeeperDeadlineOrders(t *testing.T) {
	const T = 2 * time.Second
	lease := testKillTimes(T, keeperBase)
	renewed := testKillTimes(T, keeperBase+bootclock.Time(T/8)) // the next renewal
	endNow := KillTimes{Kill: keeperBase + 1, Backstop: keeperBase + 1 + bootclock.Time(T/32)}
	for _, tc := range []struct {
		name   string
		first  KillTimes
		orders []KillTimes
		now    bootclock.Time
		want   KillTimes // the deadline and backstop in force
		passed bool
	}{
		{"no deadline: never passes", KillTimes{}, nil, keeperBase + bootclock.Time(1000*time.Hour), KillTimes{}, false},
		{"a lease's: not passed a nanosecond before the kill", lease, nil, lease.Kill - 1, lease, false},
		{"a lease's: passed at the kill itself", lease, nil, lease.Kill, lease, true},
		{"a renewal moves it later", lease, []KillTimes{renewed}, lease.Kill, renewed, false},
		{"a renewal's deadline passes in its turn", lease, []KillTimes{renewed}, renewed.Kill, renewed, true},
		{"a later order moves it earlier too", lease, []KillTimes{renewed, endNow}, endNow.Kill, endNow, true},
		{"deadline 0 0 lifts it", lease, []KillTimes{{}}, lease.Backstop + bootclock.Time(time.Hour), KillTimes{}, false},
		{"a backstop before the kill is none", lease, []KillTimes{{Kill: lease.Kill, Backstop: lease.Kill - 1}},
			lease.Kill - 1, KillTimes{Kill: lease.Kill}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk := newTestKeeper(t, tc.first)
			go tk.obey(tk.control)
			for _, o := range tc.orders {
				tk.tell(t, DeadlineOrder(o))
			}
			tk.tell(t, orderBye)
			tk.obeyed(t)
			tk.clk.set(tc.now)
			if got := tk.deadlineAt(); got != tc.want.Kill {
				t.Errorf("deadline at %d, want %d", got, tc.want.Kill)
			}
			if got := tk.dl.passed(); got != tc.passed {
				t.Errorf("passed() = %v %s after the take, want %v", got, time.Duration(tc.now-keeperBase), tc.passed)
			}
			wantWake, wantBackstop := bootclock.KeeperAlarms(tc.want.Kill, tc.want.Backstop)
			wake, _ := tk.wake.armed()
			backstop, _ := tk.backstop.armed()
			if wake != wantWake || backstop != wantBackstop {
				t.Errorf("alarms armed for wake %d, backstop %d; want %d, %d", wake, backstop, wantWake, wantBackstop)
			}
			if tk.killed() {
				t.Errorf("the tree was killed on an order")
			}
		})
	}
}

// TestKeeperEndedDeadline: once the tree is reaped, the alarms are deleted
// and later orders neither bring back a deadline nor re-arm them.
func TestKeeperEndedDeadline(t *testing.T) {
	const T = 2 * time.Second
	lease := testKillTimes(T, keeperBase)
	tk := newTestKeeper(t, lease)
	tk.dl.end()
	go tk.obey(tk.control)
	tk.tell(t, DeadlineOrder(testKillTimes(T, keeperBase+bootclock.Time(T/8))), orderBye)
	tk.obeyed(t)
	tk.clk.set(lease.Backstop)
	if tk.deadlineAt() != 0 || tk.dl.passed() {
		t.Errorf("a deadline (%d) after the end", tk.deadlineAt())
	}
	for name, a := range map[string]*fakeAlarm{"wake": tk.wake, "backstop": tk.backstop} {
		at, closed := a.armed()
		if !closed {
			t.Errorf("the %s alarm was not deleted", name)
		}
		if first, _ := bootclock.KeeperAlarms(lease.Kill, lease.Backstop); name == "wake" && at != first || name == "backstop" && at != lease.Backstop {
			t.Errorf("the %s alarm was re-armed for %d after the end", name, at)
		}
	}
}

// TestKeeperReadsWaitingOrdersBeforeKilling: a keeper past its deadline
// (woken late, say, after being stopped) kills only once it has read
// every order waiting in the pipe: a renewal it missed saves the command.
func TestKeeperReadsWaitingOrdersBeforeKilling(t *testing.T) {
	const T = 2 * time.Second
	lease := testKillTimes(T, keeperBase)
	for _, tc := range []struct {
		name    string
		waiting []string
		overdue bool
	}{
		{"nothing waiting: overdue", nil, true},
		{"a renewal waiting: not overdue", []string{DeadlineOrder(testKillTimes(T, keeperBase+bootclock.Time(T/8)))}, false},
		{"renewals waiting, the last past too: overdue", []string{
			DeadlineOrder(testKillTimes(T, keeperBase+bootclock.Time(T/8))), DeadlineOrder(KillTimes{Kill: lease.Kill - 1})}, true},
		{"deadline 0 0 waiting: not overdue", []string{DeadlineOrder(KillTimes{})}, false},
		{"only other orders waiting: overdue", []string{SignalOrder(syscall.SIGHUP), ReleaseOrder(&zookeeper.Handoff{Proposal: "/e/p", ReleasePath: "/e/b"})}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk := newTestKeeper(t, lease)
			tk.tell(t, tc.waiting...)
			tk.clk.set(lease.Kill)
			if got := unreadBytes(tk.keeper.control) > 0; got != (len(tc.waiting) > 0) {
				t.Fatalf("orders waiting in the pipe: %v, want %v", got, len(tc.waiting) > 0)
			}
			verdict := make(chan bool, 1)
			go func() { verdict <- tk.overdue() }() // before obey reads anything
			go tk.obey(tk.control)
			if got := <-verdict; got != tc.overdue {
				t.Errorf("overdue() = %v, want %v", got, tc.overdue)
			}
			tk.orders.Close() // EOF: obey returns
			tk.obeyed(t)
		})
	}
}

// TestKeeperKillsOnlyOnTheDeadlineItKnowsLast: the keeper found its
// deadline passed just as obey was carrying out a renewal it had taken in
// (woken by its alarm after a stop, both run at once): once obey is done,
// the renewal counts, not the deadline read before it.
func TestKeeperKillsOnlyOnTheDeadlineItKnowsLast(t *testing.T) {
	const T = 2 * time.Second
	lease, renewed := testKillTimes(T, keeperBase), testKillTimes(T, keeperBase+bootclock.Time(T/8))
	tk := newTestKeeper(t, lease)
	tk.clk.set(lease.Kill)
	read := make(chan struct{}, 1)
	tk.dl.clock = func() bootclock.Time {
		select {
		case read <- struct{}{}:
		default:
		}
		return tk.clk.now()
	}
	tk.tell(t, DeadlineOrder(renewed))
	// As obey holds it from a read until it has carried out what it read.
	tk.unapplied.Lock()
	verdict := make(chan bool, 1)
	go func() { verdict <- tk.overdue() }()
	<-read // it has found the deadline it knew passed
	buf := make([]byte, 256)
	n, err := tk.control.Read(buf)
	o, ok := parseOrder(string(buf[:n]))
	if err != nil || !ok || o.kind != orderDeadline {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	tk.dl.set(o.deadline.Kill, o.deadline.Backstop)
	tk.unapplied.Unlock()
	if <-verdict {
		t.Errorf("overdue after the renewal to %d was carried out (the clock at %d)", renewed.Kill, tk.clk.now())
	}
}

// TestKeeperKillsWhenTheDeadlinePasses: the keeper's watch on the
// deadline (awaitOverdue, then SIGKILL to the tree) ends when its timer
// finds the deadline passed, or an order moves it into the past; not on a
// deadline a renewal replaced.
func TestKeeperKillsWhenTheDeadlinePasses(t *testing.T) {
	t.Run("by its timer", func(t *testing.T) {
		tk := newTestKeeper(t, KillTimes{Kill: keeperBase + bootclock.Time(time.Millisecond)})
		over := done(tk.awaitOverdue)
		tk.clk.set(keeperBase + bootclock.Time(time.Millisecond))
		waitDone(t, over, "the deadline passed on the clock")
	})
	t.Run("by an order that moves it into the past", func(t *testing.T) {
		tk := newTestKeeper(t, KillTimes{Kill: keeperBase + bootclock.Time(time.Hour)})
		go tk.obey(tk.control)
		over := done(tk.awaitOverdue) // its timer is an hour away
		tk.tell(t, DeadlineOrder(KillTimes{Kill: keeperBase - 1}))
		waitDone(t, over, "the order moved the deadline into the past")
		tk.orders.Close()
		tk.obeyed(t)
	})
	t.Run("not on a deadline a renewal replaced", func(t *testing.T) {
		first := KillTimes{Kill: keeperBase + bootclock.Time(time.Millisecond)}
		tk := newTestKeeper(t, first)
		go tk.obey(tk.control)
		tk.tell(t, DeadlineOrder(KillTimes{Kill: keeperBase + bootclock.Time(time.Hour)}), orderBye)
		tk.obeyed(t)
		tk.clk.set(first.Kill + 1)
		over := done(tk.awaitOverdue)
		select {
		case <-over:
			t.Fatal("the keeper took the deadline a renewal replaced")
		default:
		}
		tk.dl.set(tk.clk.now(), 0) // as obey does for a deadline order
		waitDone(t, over, "the renewed deadline was moved to now")
	})
}

func waitDone(t *testing.T, ch <-chan struct{}, after string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute): // a hang, not a measure
		t.Fatalf("the keeper did not act although %s", after)
	}
}

// TestKeeperRefusesToStartPastTheDeadline: the command is not started
// once the lease's deadline has passed, and the keeper says why.
func TestKeeperRefusesToStartPastTheDeadline(t *testing.T) {
	lease := testKillTimes(2*time.Second, keeperBase)
	missing := "/nonexistent/ballot-keeper-test-command"
	for _, tc := range []struct {
		name   string
		now    bootclock.Time
		code   int
		reason string
	}{
		{"past the deadline", lease.Kill + 1, testCodes.Failure, "the lease ended before the command could start"},
		{"at the deadline", lease.Kill, testCodes.Failure, "the lease ended before the command could start"},
		{"in time: it goes on to look for the command", lease.Kill - 1, testCodes.NotFound, missing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk := newTestKeeper(t, lease)
			tk.clk.set(tc.now)
			pid, ok := tk.start([]string{missing}, nil)
			if ok || pid != 0 {
				t.Fatalf("started pid %d", pid)
			}
			if len(tk.reports) != 1 {
				t.Fatalf("reports %q, want one", tk.reports)
			}
			r, ok := ParseReport(tk.reports[0])
			if !ok || r.Kind != ReportError || r.Code != tc.code || !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("report %q, want an error %d about %q", tk.reports[0], tc.code, tc.reason)
			}
		})
	}
}

// TestKeeperSignalsAndWakeUps: a SIGTERM (or SIGINT, SIGHUP) to the keeper
// kills the tree only once ballot is gone, which then stops the command
// itself with its grace; a SIGCONT (its wake alarm) kills it only past
// the deadline.
func TestKeeperSignalsAndWakeUps(t *testing.T) {
	lease := testKillTimes(2*time.Second, keeperBase)
	for _, tc := range []struct {
		name        string
		sig         syscall.Signal
		ballotLives bool
		first       KillTimes
		now         bootclock.Time
		kill        bool
	}{
		{"SIGTERM while ballot lives", syscall.SIGTERM, true, lease, lease.Kill + 1, false},
		{"SIGTERM once ballot is gone", syscall.SIGTERM, false, lease, keeperBase, true},
		{"SIGHUP once ballot is gone", syscall.SIGHUP, false, KillTimes{}, keeperBase, true},
		{"SIGCONT before the deadline", syscall.SIGCONT, true, lease, lease.Kill - 1, false},
		{"SIGCONT at the deadline", syscall.SIGCONT, true, lease, lease.Kill, true},
		{"SIGCONT without a deadline", syscall.SIGCONT, false, KillTimes{}, lease.Backstop, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk := newTestKeeper(t, tc.first)
			if !tc.ballotLives {
				tk.parent = os.Getppid() + 1 // reparented: ballot died
			}
			tk.clk.set(tc.now)
			sigs := make(chan os.Signal, 1)
			sigs <- tc.sig
			close(sigs)
			if tc.sig == syscall.SIGCONT {
				tk.onWake(sigs)
			} else {
				tk.onSignals(sigs)
			}
			if got := tk.killed(); got != tc.kill {
				t.Errorf("killed the tree: %v, want %v", got, tc.kill)
			}
		})
	}
}

// TestIdleKeeper: the idle keeper's orders. "bye": it goes, nothing to
// kill or give back; EOF: ballot died; "run": it returns the order, and a
// deadline order sent after it applies only once the command's tree
// exists, so the run's own deadline never overwrites a renewal.
func TestIdleKeeper(t *testing.T) {
	const T = 2 * time.Second
	t.Run("bye", func(t *testing.T) {
		tk := newTestKeeper(t, KillTimes{})
		tk.tell(t, orderBye)
		if o := tk.standIdle(tk.control); o != nil {
			t.Fatalf("told bye, it would run %q", o.Argv)
		}
		if !tk.bye || tk.killed() || len(tk.reports) != 1 || tk.reports[0] != IdleLine {
			t.Errorf("bye %v, killed %v, reports %q: want a clean goodbye after %q", tk.bye, tk.killed(), tk.reports, IdleLine)
		}
	})
	t.Run("EOF: ballot died", func(t *testing.T) {
		tk := newTestKeeper(t, KillTimes{})
		tk.orders.Close()
		if o := tk.standIdle(tk.control); o != nil {
			t.Fatalf("at EOF, it would run %q", o.Argv)
		}
		if tk.bye || !tk.killed() {
			t.Errorf("bye %v, killed %v: want ballot seen dead and its tree ended", tk.bye, tk.killed())
		}
	})
	t.Run("run, then a renewal", func(t *testing.T) {
		tk := newTestKeeper(t, KillTimes{})
		run := &RunOrder{Grace: 300 * time.Millisecond, Argv: []string{"sleep", "1"}, Env: []string{"BALLOT_SLOT=0"}}
		kt := testKillTimes(T, keeperBase)
		run.Kill, run.Backstop = kt.Kill, kt.Backstop
		renewed := testKillTimes(T, keeperBase+bootclock.Time(T/8))
		tk.tell(t, run.Line(), DeadlineOrder(renewed), run.Line(), orderBye)
		o := tk.standIdle(tk.control)
		if o == nil || o.Grace != run.Grace || o.Kill != run.Kill || o.Backstop != run.Backstop ||
			strings.Join(o.Argv, " ") != "sleep 1" || strings.Join(o.Env, " ") != "BALLOT_SLOT=0" {
			t.Fatalf("run order read as %+v, sent %+v", o, run)
		}
		tk.adopt(o)
		close(o.started) // the tree exists
		tk.obeyed(t)
		if tk.grace != run.Grace || tk.deadlineAt() != renewed.Kill {
			t.Errorf("grace %s, deadline %d: want %s and the renewal's %d (the run's was %d)",
				tk.grace, tk.deadlineAt(), run.Grace, renewed.Kill, run.Kill)
		}
		if tk.runs != nil {
			t.Errorf("still takes run orders after one")
		}
	})
}
