// Package keeper is the keeper process between ballot and its command,
// and both ends of its pipes. It imports nothing of package main: what it
// needs of ballot comes in its Config (keepermain.go) and over its pipes.
package keeper

// The keeper is ballot re-executed as a tiny supervisor between ballot and
// the command. It exists for one reason: when ballot is killed with SIGKILL
// nothing in ballot can run, yet the command and every process it started
// must die with it. The keeper is a child subreaper, so orphaned
// grandchildren (even ones that called setsid) are reparented to it, and it
// learns of ballot's death twice over: the parent-death signal and EOF on its
// control pipe. It then kills the command's whole tree and reaps it.
//
// It also enforces the leader's lease on its own: ballot tells it, with
// every renewal, when the command must be gone at the latest (a reading of
// CLOCK_BOOTTIME, which both processes read). If that moment passes without
// a newer one, the keeper kills the whole tree, so a stopped, hung or
// crashed ballot can never leave the command running past the lease; and
// it refuses to start the command at all after it. Kernel alarms on the
// same clock (bootclock.Alarm) cover the keeper itself: one wakes it at that
// moment should it be stopped too, or its Go timer late after a suspend;
// a second, a little later, kills it should it still not have acted
// (ptrace-stopped, wedged), and the command with it (parent-death signal).
//
// Protocol (file descriptors set up by startChild; each line's encoder and
// parser are in keeperpipe.go):
//   fd 3, keeper → ballot: "pid N" once the command runs, then
//         "exit CODE" when the command and all its descendants are gone,
//         or "error CODE message" if the command could not be started.
//   fd 4, ballot → keeper, one line each:
//         "signal N"    send signal N to the whole tree (SIGKILL: keep
//                       killing until it is all gone);
//         "deadline K K2" the tree must be gone by boot-clock nanosecond K;
//                       at K2 (later) the kernel kills the keeper itself
//                       ("deadline 0 0": none; the first comes in argv);
//         "session ID PASSWD TIMEOUT SERVERS", "access ..." (TLS and
//                       credentials, zkwire.go) and "release PROPOSAL PATH
//                       VERSION DATA BATON" (hex data): what ending ballot's
//                       session takes; the release is fenced by PROPOSAL;
//         "demote FORMAT WRAP TIMEOUT ARGV ENV"  the on-demote hook, sent
//                       by a leader with one (keeperend.go);
//         "forget"      drop the session and the demote hook: another
//                       run's keeper may outlive this one (--overlap allow);
//         "hold ..."/"unhold BATON"  a shared session's idle keeper: the
//                       releases of the jobs at rest (keepershare.go);
//         "bye"         ballot has read "exit": the keeper may go;
//         EOF without "bye" means ballot died (perhaps just as the command
//         ended on its own): once the tree is reaped, the keeper resumes
//         the session, runs the on-demote hook (reason ballot-died) while
//         pinging it, then gives the baton back and closes the session
//         (zkwire.go), so the next candidate need not wait for it to expire
//         and is promoted only after the hook. An expired session: the hook
//         runs anyway, best effort.
//   fd 5, ballot's stderr: the keeper's own log lines.
//   fds 6 to 11, the pipes the keepers of one shared session take turns
//         by (keepershare.go), used only once told the session is shared.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"ballot/internal/bootclock"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// Arg, first on ballot's command line, makes the process a keeper (main.go).
const Arg = ".ballot-keeper"

// keeper is the keeper's own state: what it supervises and what it was
// told over the control pipe.
type keeper struct {
	cfg     Config
	parent  int           // ballot's pid: a different parent means ballot died
	grace   time.Duration // for what the command leaves behind when it ends
	dl      *deadline
	tree    *tree
	report  func(line string) // a line on the status pipe (keeperpipe.go)
	control uintptr           // the control pipe's fd (4), where overdue looks for orders not yet read

	over      chan struct{}  // closed on "bye" or EOF
	runs      chan *RunOrder // idle: where a "run" order goes (keeperidle.go); nil otherwise
	unapplied sync.Mutex     // held by obey from reading orders until it has carried them out

	mu     sync.Mutex
	h      *zookeeper.Handoff // what ending ballot's session takes; nil: unknown
	demote *DemoteHook        // the on-demote hook to run if ballot dies; nil: none
	bye    bool               // ballot said "bye": it read the exit and lives on
	share  *sharing           // the pipes of a shared session (keepershare.go); nil: not told one
	// A shared session's own keeper: the releases of the jobs at rest,
	// by baton (hold, unhold).
	held   map[string]*zookeeper.Handoff
	logOut *os.File  // ballot's stderr (fd 5), for the keeper's own log lines
	rest   *idleRest // an idle keeper's rests (keeperrest.go); nil: not idle
}

// Config is what the keeper takes from ballot's own code, of which it
// imports nothing: the numbers it reports with, and the words and format
// of its log lines.
type Config struct {
	// Exit codes: Usage for a command line that is not ballot's; in the
	// report of a command that could not start, NotFound, NotExecutable,
	// or Failure (the lease ended first).
	Usage, Failure, NotFound, NotExecutable int
	// NewLogger is ballot's logger writing format (human, json) to w: the
	// keeper's own lines once ballot died.
	NewLogger func(w io.Writer, format string) *slog.Logger
	// HookStarted and HookEnded are the events of the on-demote hook's lines.
	HookStarted, HookEnded slog.Attr
	// StampRelease dates the release record now, as the keeper writes it.
	StampRelease func(h *zookeeper.Handoff)
}

// Main is the keeper process: ballot re-executed with Arg and Args.
func Main(args []string, cfg Config) int {
	st, ok := parseKeeperArgs(args) // keeperpipe.go
	if !ok {
		fmt.Fprintln(os.Stderr, "ballot: the keeper is internal to ballot")
		return cfg.Usage
	}
	parent, argv := st.parent, st.argv
	// Caught before the alarm that sends it is armed.
	wakes := make(chan os.Signal, 1)
	signal.Notify(wakes, syscall.SIGCONT)
	k := &keeper{cfg: cfg, parent: parent, grace: st.grace, control: 4,
		dl: newDeadline(st.first.Kill, st.first.Backstop), over: make(chan struct{})}

	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	syscall.CloseOnExec(5)
	closeOnExecShared()
	status := os.NewFile(3, "status")
	// Non-blocking, so that obey waits for orders in Go's poller without
	// taking them in (ordersReader).
	_ = syscall.SetNonblock(4, true)
	control := os.NewFile(4, "control")
	k.logOut = os.NewFile(5, "ballot-stderr")
	k.report = func(line string) { fmt.Fprintln(status, line) }

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// A stopped keeper enforces nothing: never stop for a terminal's job
	// control. Caught, not ignored: an ignored signal would stay ignored in
	// the command (exec keeps SIG_IGN, resets handlers); ballot itself
	// ignores SIGTTIN/SIGTTOU, so reset those for the command.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTSTP)
	signal.Reset(syscall.SIGTTIN, syscall.SIGTTOU)

	becomeSubreaper()
	if os.Getppid() != parent {
		return 0 // ballot died before we could watch it
	}
	if len(argv) == 0 {
		o := k.standIdle(control)
		if o == nil {
			return 0
		}
		// Told to run a command (keeperidle.go): from here on, as if it
		// had come in argv, orders already being obeyed.
		k.adopt(o)
		return k.run(control, o.Argv, o.Env, sigs, wakes, o.started)
	}
	return k.run(control, argv, nil, sigs, wakes, nil)
}

// run starts the command and keeps it until it and everything it started
// are gone, then reports and waits for ballot's "bye" (or its death).
// obeyed, when not nil, is closed once the tree exists (or its start
// failed): orders are already being obeyed, and wait for that.
func (k *keeper) run(control *os.File, argv, env []string, sigs, wakes <-chan os.Signal, obeyed chan struct{}) int {
	pid, ok := k.start(argv, env)
	if ok {
		k.tree = &tree{pgid: pid}
	}
	if obeyed != nil {
		close(obeyed)
	}
	if !ok {
		return 0
	}
	if k.dl.passed() {
		// The keeper was held up between its check and the fork.
		go k.tree.endAll(syscall.SIGKILL)
	}
	if obeyed == nil {
		go k.obey(control)
	}
	go func() {
		k.awaitOverdue()
		k.tree.endAll(syscall.SIGKILL) // the lease ended and ballot did not act
	}()
	go k.onSignals(sigs)
	go k.onWake(wakes)

	code := k.reap(pid)
	// Nothing is left to kill: the alarms must not hit the keeper while it
	// reports, waits for ballot and maybe ends its session.
	k.dl.end()
	k.report(exitReport(code))
	// Wait for ballot to take the report: the command may have ended on
	// its own just as ballot died, and then the keeper ends the session
	// for it. A stopped ballot keeps the keeper waiting, idle.
	<-k.over
	k.mu.Lock()
	// EOF without "bye": ballot died, before or just after the command
	// ended.
	died := !k.bye
	k.mu.Unlock()
	if died {
		// Everything is reaped: nothing of this leadership runs any more.
		// The on-demote hook, then the release (keeperend.go).
		k.afterBallot(false)
	}
	return 0
}

// start execs the command, unless the lease has ended; it reports the pid,
// or why it could not start it (ok false).
func (k *keeper) start(argv, env []string) (pid int, ok bool) {
	if k.dl.passed() {
		k.report(ErrorReport(k.cfg.Failure, "the lease ended before the command could start"))
		return 0, false
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		code := k.cfg.NotFound
		if !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, os.ErrNotExist) {
			code = k.cfg.NotExecutable
		}
		k.report(ErrorReport(code, err.Error()))
		return 0, false
	}
	pid, err = syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   append(os.Environ(), env...),
		Files: []uintptr{0, 1, 2},
		Sys:   NewGroupAttr(syscall.SIGKILL),
	})
	if err != nil {
		code := k.cfg.NotExecutable
		if errors.Is(err, syscall.ENOENT) {
			code = k.cfg.NotFound
		}
		k.report(ErrorReport(code, argv[0]+": "+err.Error()))
		return 0, false
	}
	k.report(pidReport(pid))
	return pid, true
}

// obey carries out ballot's orders from the control pipe until "bye" or
// EOF, which means ballot is gone: then the tree is ended.
func (k *keeper) obey(control *os.File) {
	defer close(k.over)
	defer k.rest.stir() // "bye" or EOF: what follows allocates
	lines := bufio.NewScanner(k.ordersFrom(control))
	defer k.unapplied.Unlock()
	// An "access" line carries, in hex, a CA bundle, a certificate chain,
	// a key and credentials, each read from a file of at most 1 MiB: 8 MiB
	// at worst. A longer line would end the scan as if ballot were gone.
	lines.Buffer(make([]byte, 0, 64<<10), 10*zookeeper.MaxCredentialFile)
	for lines.Scan() {
		k.rest.stir()                     // the collector back before the order is carried out
		o, ok := parseOrder(lines.Text()) // keeperpipe.go
		if !ok {
			continue // cut short, or unknown
		}
		switch o.kind {
		case orderSession:
			k.mu.Lock()
			k.h = o.handoff
			k.mu.Unlock()
		case orderAccess:
			k.mu.Lock()
			if k.h != nil {
				k.h.Access = o.access
			}
			k.mu.Unlock()
		case orderRun:
			// Idle, told to run: the command's tree exists (or its start
			// failed) before any later order is carried out.
			if runs := k.runs; runs != nil {
				k.runs = nil
				runs <- o.run
				<-o.run.started
			}
		case orderHold:
			// Before "bye" or EOF, like every order: a job's run starts
			// only once its unhold is in the pipe, read before EOF.
			k.mu.Lock()
			if k.held == nil {
				k.held = map[string]*zookeeper.Handoff{}
			}
			k.held[o.handoff.Baton] = o.handoff
			k.mu.Unlock()
		case orderUnhold:
			k.mu.Lock()
			delete(k.held, o.handoff.Baton)
			k.mu.Unlock()
		case orderDemote:
			k.mu.Lock()
			k.demote = o.demote
			k.mu.Unlock()
		case orderForget:
			// Runs side by side: whichever keeper ended the session first
			// would let a successor start beside another's tree. The
			// session expires instead.
			// A shared session is still closed by the last keeper
			// done with it: this one may be, once its tree is reaped.
			k.mu.Lock()
			if k.h != nil && k.h.Shared {
				k.h = k.h.SessionOnly()
			} else {
				k.h = nil
			}
			k.demote = nil
			k.mu.Unlock()
		case orderRelease:
			k.mu.Lock()
			if k.h != nil {
				r := o.handoff
				k.h.Proposal, k.h.ReleasePath, k.h.ReleaseVersion, k.h.ReleaseData, k.h.Baton = r.Proposal, r.ReleasePath, r.ReleaseVersion, r.ReleaseData, r.Baton
			}
			k.mu.Unlock()
		case orderDeadline:
			k.dl.set(o.deadline.Kill, o.deadline.Backstop)
		case orderBye:
			k.mu.Lock()
			k.bye = true
			k.mu.Unlock()
			return
		case orderSignal:
			if o.signal == syscall.SIGKILL {
				go k.tree.endAll(syscall.SIGKILL)
			} else {
				// ballot has already signalled the process group itself:
				// reach only what escaped it, so nothing gets it twice.
				k.tree.signalEscaped(o.signal)
			}
		}
	}
	k.tree.endAll(syscall.SIGKILL) // EOF: ballot is gone
}

// onSignals: while ballot lives, it stops the command itself (with the
// grace period) and tells us through the control pipe: a SIGTERM sent to
// every process at once (systemd's KillMode=control-group, sysvinit's
// sendsigs) must not cut that short. Once ballot is gone (the
// parent-death signal), end it all.
func (k *keeper) onSignals(sigs <-chan os.Signal) {
	for range sigs {
		if os.Getppid() == k.parent {
			continue
		}
		k.tree.endAll(syscall.SIGKILL)
	}
}

// onWake: a SIGCONT, from the alarm set for the deadline (or from anyone),
// resumed a stopped keeper or came while its Go timer, which does not count
// a host's suspend, still runs: the deadline is checked afresh.
func (k *keeper) onWake(wakes <-chan os.Signal) {
	for range wakes {
		if k.overdue() {
			k.tree.endAll(syscall.SIGKILL)
		}
	}
}

// awaitOverdue returns once the deadline has passed and no renewal waits
// in the control pipe to move it.
func (k *keeper) awaitOverdue() {
	for {
		k.dl.wait()
		if k.overdue() {
			return
		}
	}
}

// overdue reports that the deadline has passed, once every order ballot
// wrote is carried out: a keeper stopped on its own, then woken by its
// alarm, finds the renewals it missed waiting in the pipe, and must not
// kill on the deadline it knew.
func (k *keeper) overdue() bool {
	for k.dl.passed() {
		k.unapplied.Lock()
		// obey has carried out all it took in: anything newer is in the
		// pipe (read by number: control's Fd method would make it blocking).
		pending := unreadBytes(k.control) > 0
		// And the deadline afresh: what obey carried out while this waited
		// for the lock may have been a renewal.
		passed := k.dl.passed()
		k.unapplied.Unlock()
		if !pending {
			return passed
		}
		time.Sleep(time.Millisecond) // for obey to take it in
	}
	return false
}

// ordersReader reads the control pipe for obey, holding k.unapplied from
// each read until the next, by when the scanner has carried out every
// whole line it took in (it reads only once it has none left).
type ordersReader struct {
	k  *keeper
	rc syscall.RawConn
}

// ordersFrom returns control's reader, k.unapplied held; obey releases it
// when it returns.
func (k *keeper) ordersFrom(control *os.File) io.Reader {
	k.unapplied.Lock()
	rc, err := control.SyscallConn()
	if err != nil {
		return blockingOrders{k, control}
	}
	return ordersReader{k, rc}
}

// blockingOrders is ordersReader for a pipe without a raw connection:
// the lock is let go only for the read itself.
type blockingOrders struct {
	k *keeper
	f *os.File
}

func (b blockingOrders) Read(p []byte) (int, error) {
	b.k.unapplied.Unlock()
	defer b.k.unapplied.Lock()
	return b.f.Read(p)
}

func (r ordersReader) Read(p []byte) (n int, err error) {
	r.k.unapplied.Unlock()
	held := false
	var rerr error
	err = r.rc.Read(func(fd uintptr) bool {
		r.k.unapplied.Lock()
		n, rerr = syscall.Read(int(fd), p)
		if rerr == syscall.EAGAIN {
			r.k.unapplied.Unlock()
			return false // wait in the poller, taking nothing in
		}
		held = true
		return true
	})
	if !held {
		r.k.unapplied.Lock()
	}
	switch {
	case err == nil && rerr != nil:
		err = rerr
	case err == nil && n <= 0:
		err = io.EOF
	}
	return max(n, 0), err
}

// reap reaps every process of the tree and returns the command's exit
// code (-1 if it was never seen to end).
func (k *keeper) reap(pid int) int { return reapTree(k.tree, pid, k.grace) }

// deadline is the lease's kill time as the keeper knows it, with the
// kernel alarms that enforce it when the keeper cannot run: SIGCONT at the
// kill time (onWake), SIGKILL for the keeper itself at the backstop.
type deadline struct {
	clock    func() bootclock.Time // nil: the system's boot clock (keeper_test.go sets its own)
	mu       sync.Mutex
	at       bootclock.Time // 0: none
	changed  chan struct{}
	wake     keeperAlarm // nil if the kernel would not make one: the Go timer alone
	backstop keeperAlarm
	ended    bool // the tree is reaped: nothing more to enforce
}

// keeperAlarm is a kernel alarm on the boot clock (bootclock.Alarm); the unit
// tests record what is armed instead.
type keeperAlarm interface {
	Set(at bootclock.Time) error
	Close() error
}

// now reads the deadline's clock.
func (d *deadline) now() bootclock.Time {
	if d.clock != nil {
		return d.clock()
	}
	return bootclock.Now()
}

func newDeadline(at, backstop bootclock.Time) *deadline {
	d := &deadline{}
	if a, err := bootclock.NewAlarm(syscall.SIGCONT); err == nil {
		d.wake = a
	}
	if a, err := bootclock.NewAlarm(syscall.SIGKILL); err == nil {
		d.backstop = a
	}
	return d.arm(at, backstop)
}

// arm sets d's first kill time and backstop (0, 0: none).
func (d *deadline) arm(at, backstop bootclock.Time) *deadline {
	d.changed = make(chan struct{}, 1)
	d.set(at, backstop)
	return d
}

// set moves the kill time to at and the keeper's own end to backstop
// (0, 0: none).
func (d *deadline) set(at, backstop bootclock.Time) {
	wake, backstop := bootclock.KeeperAlarms(at, backstop)
	d.mu.Lock()
	if d.ended {
		d.mu.Unlock()
		return
	}
	d.at = at
	if d.backstop != nil {
		_ = d.backstop.Set(backstop)
	}
	if d.wake != nil {
		// One that finds no renewals waiting kills at the deadline, on
		// its Go timer.
		_ = d.wake.Set(wake)
	}
	d.mu.Unlock()
	select {
	case d.changed <- struct{}{}:
	default:
	}
}

// end deletes the alarms once the tree is reaped; later deadlines from
// ballot are moot.
func (d *deadline) end() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ended, d.at = true, 0
	if d.backstop != nil {
		_ = d.backstop.Close()
	}
	if d.wake != nil {
		_ = d.wake.Close()
	}
}

func (d *deadline) passed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.at != 0 && d.now() >= d.at
}

// wait returns once the deadline has passed. It sleeps until the deadline
// or the next update (ballot sends one with every renewal), never
// polling: an idle leader's keeper must cost no CPU. Go's timers do not
// count time the machine spent suspended, so after a resume this one fires
// late by what was left of the sleep: the SIGCONT alarm, on the boot
// clock, comes on time (onWake).
func (d *deadline) wait() {
	for !d.passed() {
		d.mu.Lock()
		at := d.at
		d.mu.Unlock()
		var t *time.Timer
		var fire <-chan time.Time
		if at != 0 {
			t = time.NewTimer(time.Duration(at - d.now()))
			fire = t.C
		}
		select {
		case <-fire:
		case <-d.changed:
		}
		if t != nil {
			t.Stop()
		}
	}
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
