package main

// The command as ballot sees it: the keeper (keeper.go) started with the
// command, its output relayed into log lines, its stop with a grace period
// under the lease's kill time, and its end.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"ballot/internal/keeper"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// childExit is how a command ended, as ballot reports it.
type childExit struct {
	Code     int    // the command's exit code; 128+N if it died of signal N; 126/127 if it never ran
	Started  bool   // false when the command could not be executed
	Reason   string // why it could not be executed
	Duration time.Duration
	TimedOut bool // run once: stopped by --timeout (an error, whatever its code)
	// LastLine: with --wrap-child-logs, the last line the command wrote
	// (stdout or stderr), for the WARN of a failing run.
	LastLine string
	Output   string // the tail of its output (childSpec.Tail), valid UTF-8
}

func (e childExit) Success() bool { return e.Started && e.Code == 0 && !e.TimedOut }

// child is one run of the command, in its own process group, behind a
// keeper process (see keeper.go) that guarantees the whole tree dies with
// ballot.
type child struct {
	log     *slog.Logger
	pid     int // the command's pid, which is also its process group id
	started time.Time
	keeper  *exec.Cmd
	exited  <-chan struct{} // a keeper started beforehand: closed once it is reaped
	done    chan struct{}
	exit    childExit
	outputs []*os.File  // with --wrap-child-logs: the read ends the relays read
	tail    *outputTail // the last bytes of the output, kept for the history (nil: none)

	mu       sync.Mutex
	control  *os.File  // to the keeper: one line per order (keeper.go)
	cutLine  bool      // the last order was cut short by its write deadline
	deadline killTimes // the last deadline the keeper was told
	lastLine string    // the last non-blank line relayed (childExit.LastLine)
}

// killTimes is what the keeper enforces, on the boot clock (0, 0: none).
type killTimes = keeper.KillTimes

type childSpec struct {
	Argv []string
	Env  []string // extra NAME=value pairs (BALLOT_*)
	Wrap bool     // wrap each output line into a ballot log line
	// Tail is how many of the output's last bytes to keep (childExit.Output),
	// read from the pipes of Wrap; 0: none.
	Tail  int
	Grace time.Duration
	// Deadline is when the keeper kills the tree unless told a later one
	// (SetDeadline); it does not start the command after it. 0: none.
	Deadline killTimes
	// Handoff lets the keeper end ballot's session, should ballot die,
	// once the tree is gone (zkwire.go). nil: it leaves it to expire.
	Handoff *zookeeper.Handoff
	// Demote is the on-demote hook the keeper runs, should ballot die
	// while leading, before it ends the session (keeperend.go). nil: none.
	Demote *keeper.DemoteHook
	// StartLimit bounds the wait for the keeper's first report, like
	// Deadline, whichever comes first. 0: keeperStartLimit.
	StartLimit time.Duration
	// Keeper, when not nil, is a keeper started before it was needed
	// (keeperidle.go), told to run the command instead of a new one
	// started; startChild owns it from then on. Not with Wrap.
	Keeper *idleKeeper
}

// keeperStartLimit bounds the wait for the keeper's first report when
// nothing shorter does (no lease: on-connection-loss=ignore, run-anyway).
// The report follows a fork and two execs, milliseconds even on a small
// board; a keeper this slow is stopped or hung (an exec from a dead network
// mount), and ballot, blocked on it, could neither run nor stop anything.
const keeperStartLimit = 10 * time.Second

// startChild runs the command. An error means ballot itself failed; a
// command that cannot be executed is a child that is done at once with
// Code 126 or 127.
func startChild(log *slog.Logger, spec childSpec) (*child, error) {
	if spec.Keeper != nil {
		if c, ok := runOnKeeper(log, spec); ok {
			return c, nil
		}
	}
	c := &child{log: log, deadline: spec.Deadline, done: make(chan struct{}), tail: newOutputTail(spec)}
	keepersExiting.Add(1)
	var streams sync.WaitGroup
	out, errw, closeAfterStart, relays, err := c.wrapOutput(spec.Wrap, &streams)
	if err != nil {
		keepersExiting.Done()
		return nil, err
	}
	k, statusR, controlW, err := spawnKeeper(keeper.Args(os.Getpid(), spec.Grace, spec.Deadline, spec.Argv), spec.Env, out, errw)
	for _, w := range closeAfterStart {
		w.Close()
	}
	if err != nil {
		for _, r := range c.outputs {
			r.Close()
		}
		keepersExiting.Done()
		return nil, err
	}
	c.keeper, c.control = k, controlW
	c.started = time.Now()

	c.afterStart(spec, bufio.NewReader(statusR), statusR, relays, &streams)
	return c, nil
}

// runOnKeeper runs the command on a keeper started before it was needed;
// false if that keeper is gone or does not take the order (a new one is
// then started).
func runOnKeeper(log *slog.Logger, spec childSpec) (*child, bool) {
	k := spec.Keeper
	if spec.Wrap != (len(k.wrapped) > 0) || !k.alive() {
		k.stop()
		return nil, false
	}
	c := &child{log: log, keeper: k.c.keeper, control: k.c.control, deadline: spec.Deadline, done: make(chan struct{}), exited: k.done,
		tail: newOutputTail(spec)}
	var streams sync.WaitGroup
	var relays []func()
	c.outputs = k.wrapped
	for i, name := range []string{"stdout", "stderr"}[:len(k.wrapped)] {
		r := k.wrapped[i]
		relays = append(relays, func() {
			streams.Add(1)
			go func() {
				defer streams.Done()
				c.relay(name, r)
			}()
		})
	}
	o := &keeper.RunOrder{Grace: spec.Grace, Kill: spec.Deadline.Kill, Backstop: spec.Deadline.Backstop, Argv: spec.Argv, Env: spec.Env}
	if !c.tell(o.Line()) {
		k.stop()
		return nil, false
	}
	c.started = time.Now()
	keepersExiting.Add(1)
	log.Debug("the command starts on a keeper started beforehand", "keeper_pid", k.c.keeper.Process.Pid)
	c.afterStart(spec, k.status, k.statusR, relays, &streams)
	return c, true
}

// afterStart reads the keeper's first report, tells it what ending the
// session takes, and follows it.
func (c *child) afterStart(spec childSpec, status *bufio.Reader, statusR *os.File, relays []func(), streams *sync.WaitGroup) {
	limit := spec.StartLimit
	if limit <= 0 {
		limit = keeperStartLimit
	}
	c.readStart(status, statusR, spec.Deadline.Kill, limit)
	if h := spec.Handoff; h != nil && c.pid != 0 {
		c.tellHandoff(h)
	}
	if d := spec.Demote; d != nil && c.pid != 0 {
		c.tell(keeper.DemoteOrder(d))
	}
	for _, start := range relays {
		start()
	}
	go c.await(status, statusR, streams)
}

// spawnKeeper starts the keeper with args (keeperArgs) and the extra
// environment env, writing to out and errw (the command's stdout and
// stderr); it returns ballot's ends of the status and control pipes.
func spawnKeeper(args, env []string, out, errw *os.File) (k *exec.Cmd, statusR, controlW *os.File, err error) {
	self, err := keeperExecutable()
	if err != nil {
		return nil, nil, nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	controlR, controlW, err := os.Pipe()
	if err != nil {
		statusR.Close()
		statusW.Close()
		return nil, nil, nil, err
	}
	k = exec.Command(self, append([]string{keeper.Arg}, args...)...)
	k.Args[0] = "ballot-keeper"
	k.Env = append(os.Environ(), env...)
	k.Stdin, k.Stdout, k.Stderr = os.Stdin, out, errw
	// fd 5: ballot's stderr, where the keeper logs should ballot die
	// (the command's may be a pipe to ballot).
	k.ExtraFiles = append([]*os.File{statusW, controlR, os.Stderr}, keeperShare()...)
	k.SysProcAttr = keeper.NewGroupAttr(syscall.SIGTERM)
	err = k.Start()
	statusW.Close()
	controlR.Close()
	if err != nil {
		statusR.Close()
		controlW.Close()
		return nil, nil, nil, fmt.Errorf("cannot start the keeper: %w", err)
	}
	return k, statusR, controlW, nil
}

// keeperShareFiles are the pipes the keepers of a shared session take
// turns by (internal/keeper/keepershare.go): made once per process, given
// to every keeper (fds 6 to 11), and held by ballot for the keepers to
// come, so that they go with the last of them and leave nothing behind.
//
// Per process, not per session: a keeper is spawned before it learns its
// session (an idle one waits for its run), so the pipes cannot follow the
// session. The cost is availability only: a keeper of an ended session
// still stopping its command when ballot dies holds done (and trees) open,
// so the new session's last keeper closes it only once that keeper exits
// (the trees wait is at most T/4), or the session expires: its batons are
// given back by their keepers all the same, and a baton dropped with it
// is waited W for, as after any crash.
var keeperShareFiles struct {
	mu    sync.Mutex
	files []*os.File // nil: not made yet, or they could not be made
}

// keeperShare returns the pipes, made on first use, tried again on the
// next use if they could not be made (a keeper given none, told of a
// shared session, leaves it to expire): the turn, with its one byte in
// it, done and trees.
func keeperShare() []*os.File {
	s := &keeperShareFiles
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.files == nil {
		var files []*os.File
		for range 3 {
			r, w, err := os.Pipe()
			if err != nil {
				for _, f := range files {
					f.Close()
				}
				return nil
			}
			files = append(files, r, w)
		}
		if _, err := files[1].Write([]byte{1}); err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil
		}
		s.files = files
	}
	return s.files
}

// keeperExecutable is ballot's own executable, which the keeper is.
func keeperExecutable() (string, error) {
	self := "/proc/self/exe"
	if _, err := os.Stat(self); err != nil {
		if self, err = os.Executable(); err != nil {
			return "", fmt.Errorf("cannot find ballot's own executable to start the keeper: %w", err)
		}
	}
	return self, nil
}

// readStart reads the keeper's first report: the command's pid, or why it
// did not start it (c.exit). A keeper that does not report by the lease's
// end or within limit (stopped, hung on exec) is given up: the command
// must not start after the lease, and ballot must not hang on it.
func (c *child) readStart(status *bufio.Reader, statusR *os.File, deadline bootTime, limit time.Duration) {
	by, why := time.Now().Add(limit), fmt.Sprintf("within %s", limit)
	if deadline != 0 {
		if end := onGoClock(deadline); end.Before(by) {
			by, why = end, "before the lease ended"
		}
	}
	_ = statusR.SetReadDeadline(by)
	first, err := status.ReadString('\n')
	_ = statusR.SetReadDeadline(time.Time{})
	if errors.Is(err, os.ErrDeadlineExceeded) {
		_ = c.keeper.Process.Kill() // its command, if any, dies with it (parent-death signal)
		first = keeper.ErrorReport(exitFailure, "the keeper did not start the command "+why)
	}
	switch r, ok := keeper.ParseReport(first); {
	case ok && r.Kind == keeper.ReportPid:
		c.pid = r.Pid
	case ok && r.Kind == keeper.ReportError:
		c.exit = childExit{Code: r.Code, Reason: r.Reason}
	default:
		c.exit = childExit{Code: exitFailure, Reason: "the keeper ended without starting the command"}
	}
}

// tellHandoff gives the keeper what ending ballot's session takes, over
// the private pipe, never in arguments or the environment: the password
// is the session.
func (c *child) tellHandoff(h *zookeeper.Handoff) {
	if h.Shared && keeperShare() == nil {
		// No pipes to take turns by: none of the keepers may end the
		// session, nor give a baton back on it. It expires.
		return
	}
	c.tell(keeper.SessionOrder(h))
	c.tell(keeper.AccessOrder(h.Access))
	c.tellRelease(h)
}

// tellForget takes back the handoff and the demote hook (orderForget);
// false if the order could not be written.
func (c *child) tellForget() bool { return c.tell(keeper.ForgetOrder) }

// tellRelease gives the keeper the release of the baton, fenced by the
// proposal; nothing without one.
func (c *child) tellRelease(h *zookeeper.Handoff) {
	if h.ReleasePath != "" {
		c.tell(keeper.ReleaseOrder(h))
	}
}

// await waits for the keeper's "exit" report, then closes c.done; then
// it waits for the keeper itself. The report comes only once the keeper
// has reaped every process of the tree (keeper.go, reapTree: none is left
// in the group or below the subreaper), so nothing of the command runs
// after it: a resignation need not wait for the keeper's own exit. The
// output the tree wrote is all in the pipes by then; it is relayed before
// c.done, so "command ended" follows the command's last line.
func (c *child) await(status *bufio.Reader, statusR *os.File, streams *sync.WaitGroup) {
	defer keepersExiting.Done()
	reported := false
	if c.pid != 0 {
		for {
			line, err := status.ReadString('\n')
			if r, ok := keeper.ParseReport(line); ok && r.Kind == keeper.ReportExit {
				c.exit = childExit{Code: r.Code, Started: true}
				c.bye()
				reported = true
				break
			}
			if err != nil {
				// The keeper died without a word (killed by hand?);
				// the command's group cannot be trusted to be gone.
				_ = syscall.Kill(-c.pid, syscall.SIGKILL)
				c.exit = childExit{Code: 128 + int(syscall.SIGKILL), Started: true}
				break
			}
		}
	}
	waitKeeper := func() {
		if c.exited != nil {
			<-c.exited // a keeper started beforehand: reaped by its own waiter
		} else {
			_ = c.keeper.Wait()
		}
		statusR.Close()
		c.mu.Lock()
		c.control.Close()
		c.mu.Unlock()
	}
	if !reported {
		waitKeeper() // no word that the tree is gone: the keeper's end is the last sign
	}
	// The keeper keeps the pipes' write ends until it exits: read what
	// the reaped tree left in them, no more (drainOutput).
	for _, r := range c.outputs {
		_ = r.SetReadDeadline(time.Now())
	}
	waitTimeout(streams, time.Second)
	c.exit.Duration = time.Since(c.started)
	c.exit.Output = c.tail.String()
	c.mu.Lock()
	c.exit.LastLine = c.lastLine
	c.mu.Unlock()
	close(c.done)
	if reported {
		waitKeeper() // it exits on "bye": no child of ballot is left behind
	}
}

// keepersExiting counts the keepers not reaped yet: a resignation goes on
// without waiting for a keeper's exit, ballot's own exit does not
// (awaitKeepers).
var keepersExiting sync.WaitGroup

// awaitKeepers waits, at most limit, for every keeper to be reaped, so
// that ballot leaves no process of its own behind.
func awaitKeepers(limit time.Duration) { waitTimeout(&keepersExiting, limit) }

// bye tells the keeper that ballot has its exit report, so it may go
// without ending ballot's session. A keeper that cannot be told is killed:
// its tree is reaped, and closing the pipe on it would read as ballot's
// death.
func (c *child) bye() {
	if !c.tell(keeper.ByeOrder) {
		_ = c.keeper.Process.Kill()
	}
	c.mu.Lock()
	c.control.Close()
	c.mu.Unlock()
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(d):
	}
}

// Done is closed once the command and everything it started are gone and reaped.
func (c *child) Done() <-chan struct{} { return c.done }

// Exit is valid after Done is closed.
func (c *child) Exit() childExit { return c.exit }

// Signal forwards a signal to the command's whole process group.
func (c *child) Signal(sig syscall.Signal) {
	if c.pid == 0 {
		return
	}
	_ = syscall.Kill(-c.pid, sig)
	c.tell(keeper.SignalOrder(sig)) // the keeper also reaches escaped descendants
}

// SetDeadline tells the keeper a new lease deadline (0: none); one that
// could not be written is tried again at the next call.
func (c *child) SetDeadline(d killTimes) {
	near := func(a, b bootTime) bool {
		return a-b < bootTime(5*time.Millisecond) && b-a < bootTime(5*time.Millisecond)
	}
	c.mu.Lock()
	// Within 5 ms is the same deadline read off another clock: not worth a
	// line (renewals move it by T/4).
	same := near(d.Kill, c.deadline.Kill) && near(d.Backstop, c.deadline.Backstop)
	c.mu.Unlock()
	if !same && c.tell(keeper.DeadlineOrder(d)) {
		c.mu.Lock()
		c.deadline = d
		c.mu.Unlock()
	}
}

// moveDeadline moves the kill time; the backstop keeps its distance
// from it (the lease sets both from one renewal).
func (c *child) moveDeadline(kill bootTime) {
	c.mu.Lock()
	d := c.deadline
	c.mu.Unlock()
	if d.Backstop != 0 {
		d.Backstop += kill - d.Kill
	}
	d.Kill = kill
	c.SetDeadline(d)
}

// tell writes one line to the keeper. The pipe is written without waiting
// on the keeper's reading it: a stopped keeper must not stop ballot.
//
// The time allowed grows with the line (an "access" line may carry MiBs of
// certificates); a line cut short by it is ended before the next one, so
// the keeper drops the cut one as unknown and still reads the next.
func (c *child) tell(line string) bool {
	// Activity, for ballot's rest (restmem.go): ballot rests at least 10 s
	// after its last order, by when the keeper that read it rests too (5 s,
	// internal/keeper/keeperrest.go).
	governor.stir()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cutLine {
		line = "\n" + line
	}
	allowed := 100*time.Millisecond + time.Duration(len(line)>>14)*time.Millisecond // +1ms per 16 KiB
	_ = c.control.SetWriteDeadline(time.Now().Add(allowed))
	n, err := c.control.WriteString(line + "\n")
	// A deadline left armed fires later all the same, waking ballot for
	// nothing: once per renewal on an idle leader.
	_ = c.control.SetWriteDeadline(time.Time{})
	c.cutLine = err != nil && n > 0
	return err == nil
}

// keeperUnresponsive is how long Kill waits for the keeper to report the
// tree reaped before it takes that over: a healthy keeper reaps within
// milliseconds of a SIGKILL; one that takes this long is stopped or hung,
// and what escaped the process group lives on until it is bypassed.
const keeperUnresponsive = 250 * time.Millisecond

// Kill ends the whole tree at once and waits until it is reaped. If the
// keeper does not answer (stopped, hung), ballot kills the tree itself,
// then the keeper.
func (c *child) Kill() childExit {
	c.Signal(syscall.SIGKILL)
	t := time.NewTimer(keeperUnresponsive)
	defer t.Stop()
	select {
	case <-c.done:
		return c.exit
	case <-t.C:
	}
	c.log.Warn("the keeper does not answer; killing the command's tree and the keeper from ballot", "keeper_pid", c.keeper.Process.Pid)
	keeperPid := c.keeper.Process.Pid
	for i := 0; i < 10; i++ {
		if c.pid != 0 {
			_ = syscall.Kill(-c.pid, syscall.SIGKILL)
		}
		rest := keeper.DescendantsOf(keeperPid)
		for _, p := range rest {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		if len(rest) == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = c.keeper.Process.Kill() // its zombies go to init, which reaps them
	<-c.done
	return c.exit
}

// Stop asks the command to end with sig, waits for the grace period but
// never past killBy (nil: no limit; re-read while waiting, as a lease renewal
// moves it), then kills the whole tree. It returns once everything is
// reaped, and says how the command ended.
func (c *child) Stop(sig syscall.Signal, grace time.Duration, killBy func() time.Time) (childExit, string) {
	select {
	case <-c.done:
		return c.exit, "had already ended"
	default:
	}
	graceEnd := time.Now().Add(grace)
	deadline := func() time.Time {
		if killBy != nil {
			if k := killBy(); k.Before(graceEnd) {
				return k
			}
		}
		return graceEnd
	}
	if !time.Now().Before(deadline()) {
		return c.Kill(), "killed at once (no time left for a grace period)"
	}
	c.Signal(sig)
	for {
		if killBy != nil {
			// The lease keeps being renewed during the grace period: the
			// keeper must hear of it, or it would kill at the old deadline.
			c.moveDeadline(bootNow() + bootTime(time.Until(killBy())))
		}
		wait := time.Until(deadline())
		if wait <= 0 {
			return c.Kill(), fmt.Sprintf("killed after a %s grace period", time.Since(graceEnd.Add(-grace)).Round(time.Millisecond))
		}
		if killBy != nil && wait > 50*time.Millisecond {
			wait = 50 * time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-c.done:
			t.Stop()
			return c.exit, "ended after " + sigName(sig)
		case <-t.C:
		}
	}
}

func sigName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGUSR1:
		return "SIGUSR1"
	case syscall.SIGUSR2:
		return "SIGUSR2"
	}
	return sig.String()
}
