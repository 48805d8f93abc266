package main

// The life of a candidate running a command, top to bottom:
//
//   joining   → a session and a proposal (on-election-failure decides what a
//               failure means)
//   following → wait until our proposal is the lowest
//   leading   → run the command under a lease; on-child-success/error decide
//               what its end means; connection loss and session expiry stop it
//   resigning → the command is gone and reaped, then the proposal is deleted
//
// Every transition is logged once at info.

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"
)

// exit codes of ballot itself
const (
	exitUsage   = 2
	exitFailure = 125
)

type runner struct {
	set *Settings
	zk  *zkAccess
	log *slog.Logger

	sess *session

	// stopping is closed on the first SIGTERM/SIGINT, hurry on the second.
	stopping chan struct{}
	hurry    chan struct{}
	stopSig  syscall.Signal

	mu      sync.Mutex
	current *child // the running command, for signal forwarding

	quickFailures int

	// wary: this candidate's proposal was deleted by someone else; its next
	// leadership waits as for a dropped baton if no handover is on record.
	wary bool

	onceClaimed bool // --once-key: this ballot recorded the key

	waitingOutPause bool // the leader holds a paused election, running nothing

	notify  *notifier             // systemd, when NOTIFY_SOCKET is set
	metrics *metrics              // --metrics-file
	lease   atomic.Pointer[lease] // the current leadership's, for the watchdog

	cand   *candidate // the current proposal, for health publishing
	health *health    // nil without --health-check

	sched     schedule  // run cron only
	scheduled time.Time // the scheduled time of the run being started
}

func newRunner(set *Settings, acc *zkAccess, log *slog.Logger) *runner {
	r := &runner{set: set, zk: acc, log: log, stopping: make(chan struct{}), hurry: make(chan struct{}), notify: newNotifier()}
	go r.notify.watchdog(r.vouches, r.stopping)
	r.metrics = newMetrics(set.MetricsFile, set.BasePath, set.CandidateID, r.connected)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2,
		syscall.SIGTSTP)
	// A stopped ballot renews nothing while its command runs on: never stop
	// for a terminal's job control. SIGTTIN and SIGTTOU are ignored rather
	// than caught: with a handler, a background write to a terminal with
	// "stty tostop" would be refused, signalled and retried forever.
	signal.Ignore(syscall.SIGTTIN, syscall.SIGTTOU)
	go r.signals(sigs)
	return r
}

func (r *runner) signals(sigs <-chan os.Signal) {
	tstpLogged := false
	for s := range sigs {
		sig := s.(syscall.Signal)
		switch sig {
		case syscall.SIGTSTP:
			if !tstpLogged {
				tstpLogged = true
				r.log.Warn("ignoring SIGTSTP (and SIGTTIN, SIGTTOU): a stopped ballot could not stop its command in time; stop it with SIGTERM")
			}
		case syscall.SIGINT, syscall.SIGTERM:
			select {
			case <-r.stopping:
				r.log.Info("second stop signal: killing the command now", "signal", sigName(sig))
				select {
				case <-r.hurry:
				default:
					close(r.hurry)
				}
			default:
				r.log.Info("stop requested", "signal", sigName(sig))
				r.notify.Stopping()
				r.stopSig = sig
				close(r.stopping)
			}
		default:
			r.mu.Lock()
			c := r.current
			r.mu.Unlock()
			if c != nil {
				r.log.Info("forwarding signal to the command", "signal", sigName(sig), "pid", c.pid)
				c.Signal(sig)
			}
		}
	}
}

func (r *runner) stopRequested() bool {
	select {
	case <-r.stopping:
		return true
	default:
		return false
	}
}

// outcome is why a leader stopped supervising.
type outcome int

const (
	childEnded outcome = iota
	leaseLost
	sessionLost
	proposalGone
	stopRequested
	unhealthy
	wakeUp
	steppedDown     // ballot step-down named this leadership
	paused          // ballot pause: the command was stopped, the lead kept
	controlsChanged // while waiting out a pause: the controls changed
)

// run is `ballot run once`. It returns ballot's exit code.
func (r *runner) run() int {
	metricsStop, metricsDone := make(chan struct{}), make(chan struct{})
	go r.metrics.loop(metricsStop, metricsDone)
	defer func() {
		if r.sess != nil {
			r.sess.Close()
		}
		close(metricsStop)
		<-metricsDone // ballot_up 0 is written before ballot exits
	}()
	for {
		if r.stopRequested() {
			return 0
		}
		// joining
		cand, code := r.join()
		if code >= 0 {
			return code
		}
		if cand == nil { // on-election-failure=run-anyway
			ex := r.runUnelected()
			if code, done := r.afterChild(nil, ex); done {
				return code
			}
			continue
		}
		if code, done := r.beforeFollowing(cand); done {
			return code
		}
		r.notify.Ready("following")
		cand.onFollowing = func(place int, leader string) { r.notifyFollowing(cand, place, leader) }
		// following, then waiting for the baton
		standDown, onceRun, release := r.followStop(cand)
		err := cand.awaitLeadership(standDown)
		var taken bootTime
		if err == nil {
			taken, err = cand.takeBaton(standDown, r.wary)
		}
		release()
		switch {
		case errors.Is(err, errStopped) && isClosed(onceRun):
			cand.withdraw()
			r.logOnceDone(cand, "another candidate ran it while this one waited in line")
			return 0
		case errors.Is(err, errStopped) && !r.stopRequested():
			if !cand.withdraw() {
				r.endSession()
			}
			r.setCandidate(nil)
			r.log.Info("withdrew from the election while unhealthy", "proposal", cand.node)
			continue
		case errors.Is(err, errStopped):
			cand.withdraw()
			r.log.Info("withdrew from the election", "proposal", cand.node)
			return 0
		case err != nil:
			r.log.Info("candidacy ended", "reason", r.why(err))
			if errors.Is(err, errProposalGone) {
				r.wary = true
			}
			if cand.maybeBaton {
				r.endSession() // a baton of ours may exist: it goes with the session
			}
			r.dropSessionIfLost()
			continue
		}
		r.wary = false
		// leading
		lead := r.lead
		if r.sched != nil {
			lead = r.leadCron
		}
		if code, done := lead(cand, taken); done {
			return code
		}
	}
}

// beforeFollowing is run once per proposal: with --once-key, a key already
// run ends ballot (exit 0); with --no-wait, another leader does (exit 75).
// With --once-retry-unfinished, a key still running is waited for in line:
// once its runner's session is gone, this candidate may lead and retry it
// (or find it finished).
func (r *runner) beforeFollowing(c *candidate) (int, bool) {
	if key := r.set.OnceKey; key != "" {
		rec, _, _, err := readOnce(c.s.conn, c.basePath, key)
		if err == nil && rec != nil && (rec.FinishedAt != nil || !r.set.OnceRetryUnfinished) {
			c.withdraw()
			r.logOnceDone(c, "")
			return 0, true
		}
	}
	if r.set.NoWait {
		children, _, err := c.s.conn.Children(c.basePath)
		if line := sortedProposals(children); err == nil && len(line) > 0 && c.basePath+"/"+line[0] != c.node {
			c.withdraw()
			r.log.Info("another candidate leads: not waiting in line (--no-wait)", "leader_proposal", c.basePath+"/"+line[0], "exit_code", exitBusy)
			return exitBusy, true
		}
	}
	return 0, false
}

// logOnceDone says who ran --once-key's key, and that this ballot runs
// nothing.
func (r *runner) logOnceDone(c *candidate, how string) {
	rec, _, running, err := readOnce(c.s.conn, c.basePath, r.set.OnceKey)
	what := "unknown (the record cannot be read)"
	if err == nil && rec != nil {
		what = rec.String()
		if rec.FinishedAt == nil && running {
			what += ", still running"
		} else if rec.FinishedAt == nil {
			what += " (its runner's session ended: see --once-retry-unfinished)"
		}
	}
	msg := "once key already run: exiting without running anything"
	if how != "" {
		msg += " (" + how + ")"
	}
	r.log.Info(msg, "once_key", r.set.OnceKey, "run", what)
}

// followStop is standDown, also closed when --once-key's key gets recorded
// by another candidate while this one waits (onceRun is closed then).
// With --once-retry-unfinished the candidate keeps its place instead: the
// key may yet need a retry, which it decides once elected.
func (r *runner) followStop(c *candidate) (stop, onceRun <-chan struct{}, release func()) {
	standDown, stopStanding := r.standDown()
	if r.set.OnceKey == "" || r.set.OnceRetryUnfinished {
		return standDown, nil, stopStanding
	}
	seen, unwatch := c.watchOnce(r.set.OnceKey)
	merged, done := make(chan struct{}), make(chan struct{})
	go func() {
		select {
		case <-standDown:
		case <-seen:
		case <-done:
			return
		}
		close(merged)
	}()
	return merged, seen, func() { close(done); unwatch(); stopStanding() }
}

func isClosed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// standDown is closed when a follower must leave the line: a stop signal,
// or the health check failing.
func (r *runner) standDown() (<-chan struct{}, func()) {
	if r.health == nil {
		return r.stopping, func() {}
	}
	ch, done := make(chan struct{}), make(chan struct{})
	bad := r.health.Bad()
	go func() {
		select {
		case <-r.stopping:
		case <-bad:
		case <-done:
			return
		}
		close(ch)
	}()
	return ch, func() { close(done) }
}

func (r *runner) why(err error) string {
	if errors.Is(err, errSessionLost) && r.sess != nil {
		return r.sess.lostReason()
	}
	return err.Error()
}

func (r *runner) dropSessionIfLost() {
	if r.sess != nil && r.sess.isLost() {
		r.sess.Close()
		r.sess = nil
	}
}

// join makes a proposal, in the current session or a new one. It returns
// a candidate, or nil and -1 for run-anyway, or an exit code.
func (r *runner) join() (*candidate, int) {
	wait := connectWait(r.set)
	backoff := time.Second
	for {
		if !r.health.Healthy() {
			r.log.Info("waiting for a passing health check before standing for election")
			if !r.health.WaitHealthy(r.stopping) {
				return nil, 0
			}
		}
		var err error
		if r.sess == nil {
			r.sess, err = dialSession(r.log, r.zk, r.set.SessionTimeout, wait, r.stopping)
		}
		if err == nil {
			var c *candidate
			c, err = propose(r.log, r.sess, r.set.BasePath, r.set.CandidateID, r.set.Command, r.stopping)
			if err == nil {
				r.setCandidate(c)
				r.publishHealth()
				return c, -1
			}
			if errors.Is(err, errStopped) {
				return nil, 0
			}
			if errors.Is(err, errSessionLost) {
				// Lost between dialing and proposing (say, while waiting to
				// be healthy): not an election failure; start afresh.
				r.log.Info("session lost before the proposal was made; starting a new one", "reason", r.sess.lostReason())
				r.dropSessionIfLost()
				continue
			}
			r.dropSessionIfLost()
		}
		if r.stopRequested() {
			return nil, 0
		}
		switch r.set.OnElectionFailure {
		case electionExit:
			r.log.Error("cannot join the election; exiting (on-election-failure=exit)", "error", err)
			return nil, exitFailure
		case electionRunAnyway:
			r.log.Error("cannot join the election: RUNNING THE COMMAND WITHOUT ELECTION; mutual exclusion is given up (on-election-failure=run-anyway)", "error", err)
			return nil, -1
		}
		r.log.Warn("cannot join the election; retrying", "error", err, "retry_in", backoff)
		select {
		case <-time.After(backoff):
		case <-r.stopping:
			return nil, 0
		}
		if backoff < 10*time.Second {
			backoff *= 2
		}
	}
}

func (r *runner) childEnv(c *candidate) []string {
	env := []string{
		"BALLOT_CANDIDATE_ID=" + r.set.CandidateID,
		"BALLOT_ELECTION_PATH=" + r.set.BasePath,
	}
	if r.sched != nil {
		env = append(env, "BALLOT_SCHEDULED_TIME="+r.scheduled.In(r.set.Timezone).Format(time.RFC3339))
	}
	if c == nil {
		return append(env, "BALLOT_PROPOSAL_NODE=", "BALLOT_FENCING_TOKEN=0", "BALLOT_ELECTED=false")
	}
	return append(env,
		"BALLOT_PROPOSAL_NODE="+c.node,
		"BALLOT_FENCING_TOKEN="+strconv.FormatInt(c.token, 10),
		"BALLOT_SESSION_ID="+fmt.Sprintf("0x%x", c.s.ID()),
		"BALLOT_ELECTED=true")
}

// startCommand runs the command, as leader under the lease l (nil: not
// elected, run-anyway).
func (r *runner) startCommand(c *candidate, l *lease) (*child, error) {
	ch, err := startChild(r.log, childSpec{
		Argv:     r.set.Args,
		Env:      r.childEnv(c),
		Wrap:     r.set.WrapChildLogs,
		Grace:    r.set.StopGracePeriod,
		Deadline: r.keeperDeadline(l),
		Handoff:  handoffFor(c),
	})
	if err != nil {
		return nil, err
	}
	if ch.pid == 0 {
		<-ch.Done()
		r.log.Error("cannot execute the command", "command", r.set.Args[0], "reason", ch.Exit().Reason, "exit_code", ch.Exit().Code)
		return ch, nil
	}
	r.mu.Lock()
	r.current = ch
	r.mu.Unlock()
	r.log.Info("command started", "pid", ch.pid, "command", r.set.Args[0])
	r.metrics.CommandRunning(true)
	go func() { <-ch.Done(); r.metrics.CommandExited(ch.Exit().Code) }()
	if c != nil {
		st := &childStatus{PID: ch.pid, Since: ch.started}
		if r.sched != nil {
			st.ScheduledTime = r.scheduled.In(r.set.Timezone).Format(time.RFC3339)
		}
		c.pub.update(func(d *proposalData) { d.Child = st })
	}
	return ch, nil
}

// killByFor is the lease's kill time for a stop's grace period; nil (no
// limit) with on-connection-loss=ignore.
func (r *runner) killByFor(l *lease) func() time.Time {
	if r.set.OnConnectionLoss == lossIgnore {
		return nil
	}
	return l.KillBy
}

// keeperDeadline is the lease's kill time for the keeper to enforce; none
// without a lease, or with on-connection-loss=ignore, which keeps the
// command running whatever happens to the session.
func (r *runner) keeperDeadline(l *lease) bootTime {
	if l == nil || r.set.OnConnectionLoss == lossIgnore {
		return 0
	}
	return l.KillAt()
}

// handoffFor is what a keeper needs to end c's session and give its baton
// back should ballot die; nil when not elected.
func handoffFor(c *candidate) *handoff {
	if c == nil {
		return nil
	}
	h := c.s.handoff()
	if h != nil && c.holdsBaton {
		h.ReleasePath, h.ReleaseVersion, h.ReleaseData = c.handoverPath(), c.handoverVersion, c.handoverData(handoverReleased)
	}
	return h
}

// published records the end of a run in the proposal node.
func (r *runner) published(c *candidate, ex childExit) {
	c.pub.update(func(d *proposalData) {
		d.Child = nil
		d.LastExit = &exitStatus{Code: ex.Code, At: time.Now(), DurationMs: ex.Duration.Milliseconds()}
	})
}

func (r *runner) forget(ch *child) {
	r.mu.Lock()
	if r.current == ch {
		r.current = nil
	}
	r.mu.Unlock()
}

func (r *runner) logEnd(ex childExit) {
	if ex.Started {
		r.log.Info("command ended", "exit_code", ex.Code, "duration", ex.Duration.Round(time.Millisecond))
	}
}

// runUnelected runs the command once with no election (run-anyway).
func (r *runner) runUnelected() childExit {
	if len(r.set.Args) == 0 {
		r.log.Info("no command to run without election (hooks only); waiting for a stop signal")
		<-r.stopping
		return childExit{}
	}
	ch, err := r.startCommand(nil, nil)
	if err != nil {
		r.log.Error("ballot failed", "error", err)
		return childExit{Code: exitFailure}
	}
	defer r.forget(ch)
	select {
	case <-ch.Done():
	case <-r.stopping:
		r.stopChild(ch, nil)
	}
	ex := ch.Exit()
	r.logEnd(ex)
	return ex
}

// connected says whether the current session is connected.
func (r *runner) connected() bool {
	r.mu.Lock()
	c := r.cand
	r.mu.Unlock()
	return c != nil && c.s.connected.Load() && !c.s.isLost()
}

// vouches says whether this candidate can vouch for itself, for systemd's
// watchdog: a leader whose lease was renewed lately, a follower whose
// session is connected.
func (r *runner) vouches() bool {
	if l := r.lease.Load(); l != nil {
		return l.Fresh()
	}
	return r.connected()
}

// notifyFollowing tells systemd this candidate's place and its leader.
func (r *runner) notifyFollowing(c *candidate, place int, leaderNode string) {
	if r.notify.conn == nil {
		return
	}
	leader := leaderNode
	if b, _, err := c.s.conn.Get(leaderNode); err == nil {
		if d, _ := parseProposalData(b); d != nil {
			leader = d.CandidateID
		}
	}
	r.notify.Status(fmt.Sprintf("following, %s in line", ordinal(place)) + statusLine("", leader, 0))
}

// stopChild stops the command for a stop signal: the same signal, the grace
// period (never past killBy), then SIGKILL; a second signal kills at once.
func (r *runner) stopChild(ch *child, killBy func() time.Time) childExit {
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-r.hurry:
			ch.Kill()
		case <-done:
		}
	}()
	sig := syscall.SIGTERM
	if r.stopRequested() {
		sig = r.stopSig // written before stopping was closed
	}
	r.notify.ExtendTimeout(r.set.StopGracePeriod + 5*time.Second)
	ex, how := ch.Stop(sig, r.set.StopGracePeriod, killBy)
	r.log.Info("command stopped", "how", how, "exit_code", ex.Code)
	return ex
}

// afterChild applies on-child-success / on-child-error outside leadership
// (run-anyway). done reports that ballot should exit with code.
func (r *runner) afterChild(c *candidate, ex childExit) (code int, done bool) {
	if r.stopRequested() {
		return ex.Code, true
	}
	switch r.policyFor(ex) {
	case policyExit:
		return ex.Code, true
	case policyIgnore:
		// Unelected there is no leadership to keep: wait for a stop signal.
		<-r.stopping
		return 0, true
	}
	r.pause(ex)
	return 0, false
}

func (r *runner) policyFor(ex childExit) string {
	if ex.Success() {
		return r.set.OnChildSuccess
	}
	return r.set.OnChildError
}

// backoffFor spaces out reruns of a command that keeps failing at once, so a
// broken command does not spin.
func (r *runner) backoffFor(ex childExit) time.Duration {
	if ex.Success() || ex.Duration > 10*time.Second {
		r.quickFailures = 0
		return 0
	}
	if ex.Duration > time.Second {
		return 0
	}
	r.quickFailures++
	if r.quickFailures <= 1 {
		return 0
	}
	d := 100 * time.Millisecond << min(r.quickFailures-2, 7)
	if d > 10*time.Second {
		d = 10 * time.Second
	}
	return d
}

func (r *runner) pause(ex childExit) {
	if d := r.backoffFor(ex); d > 0 {
		r.log.Info("the command keeps failing quickly; waiting before the next run", "wait", d)
		select {
		case <-time.After(d):
		case <-r.stopping:
		}
	}
}

// lead is the leader state of run once. done reports that ballot should
// exit with code.
func (r *runner) lead(c *candidate, taken bootTime) (code int, done bool) {
	l := r.elected(c, taken)
	defer l.Stop()
	promoted := len(r.set.OnPromote) == 0
	for {
		if r.stopRequested() {
			return r.resign(c, childExit{}, true, "stop-requested")
		}
		if p := l.ctl.Paused(); p != nil && len(r.set.Args) > 0 {
			if how := r.waitOutPause(c, l, p); how != controlsChanged {
				return r.leaderEnded(c, how, childExit{})
			}
			continue
		}
		var how outcome
		var ex childExit
		if !promoted {
			// A failing promote hook is a command error.
			how, ex = r.runPromote(c, l)
			if how == paused {
				continue // the hook runs again on resume
			}
			if how == childEnded && (ex.Success() || r.set.OnChildError == policyIgnore) {
				promoted, ex = true, childExit{}
			}
		}
		if promoted && len(r.set.Args) == 0 {
			// Hooks only: hold the leadership until something ends it.
			r.publishLeader(c)
			r.log.Info("holding leadership (no command; hooks only)")
			return r.leaderEnded(c, r.supervise(c, l, nil, time.Time{}), childExit{})
		}
		if promoted {
			if !l.Fresh() {
				// Never start a command on a lease that may be gone (the
				// host was frozen, or the connection dropped, just now).
				return r.leaderEnded(c, leaseLost, ex)
			}
			if key := r.set.OnceKey; key != "" {
				claimed, _, err := c.claimOnce(key, r.set.OnceRetryUnfinished, r.stopping)
				switch {
				case err != nil:
					r.log.Error("cannot record the once key; not running the command", "once_key", key, "error", err)
					return r.resign(c, childExit{Code: exitFailure}, true, "once-key-failed")
				case !claimed:
					r.logOnceDone(c, "found when elected")
					return r.resign(c, childExit{}, true, "once-key-run")
				}
				r.onceClaimed = true
				if !l.Fresh() {
					// The record waited out a partition: the key is taken
					// (so never run twice) but not run.
					r.log.Warn("lease lost while recording the once key; this run is lost", "once_key", key)
					return r.leaderEnded(c, leaseLost, ex)
				}
			}
			ch, err := r.startCommand(c, l)
			if err != nil {
				r.log.Error("ballot failed", "error", err)
				r.resign(c, childExit{}, true, "ballot-failed")
				return exitFailure, true
			}
			how = childEnded
			if ch.pid != 0 {
				r.publishLeader(c)
				how = r.supervise(c, l, ch, time.Time{})
				r.forget(ch)
			}
			ex = ch.Exit()
			r.published(c, ex)
			if how == childEnded {
				r.logEnd(ex)
			}
			if how == paused && r.onceClaimed {
				return r.endOnceRun(c, ex, "paused")
			}
			if how == paused {
				continue
			}
		}
		if how != childEnded {
			if !promoted {
				ex = childExit{} // the command never ran
			}
			return r.leaderEnded(c, how, ex)
		}
		if r.set.OnceKey != "" && promoted {
			// Once per key: record how it ended, exit with its code.
			c.finishOnce(r.set.OnceKey, ex)
			r.log.Info("once key run; exiting with the command's exit code", "once_key", r.set.OnceKey, "exit_code", ex.Code)
			return r.resign(c, ex, true, "command-exited")
		}
		policy := r.policyFor(ex)
		reason := "command-exited"
		if !promoted {
			reason = "promote-failed" // the command never ran
		}
		switch policy {
		case policyExit:
			r.log.Info("exiting as on-child-* says", "policy", policy, "exit_code", ex.Code)
			return r.resign(c, ex, true, reason)
		case policyReelect:
			r.resign(c, ex, false, reason)
			r.pause(ex)
			return 0, false
		case policyIgnore:
			r.log.Info("keeping leadership without the command (policy ignore)")
			return r.leaderEnded(c, r.supervise(c, l, nil, time.Time{}), childExit{})
		case policyRerun:
			if d := r.backoffFor(ex); d > 0 {
				r.log.Info("the command keeps failing quickly; waiting before the next run", "wait", d)
				if how := r.supervise(c, l, nil, time.Now().Add(d)); how != wakeUp {
					return r.leaderEnded(c, how, ex)
				}
			}
			r.log.Info("running the command again (policy rerun)")
		}
	}
}

// endOnceRun ends a --once-key run an operator cut short (pause,
// step-down): the key is recorded as finished with the command's code, and
// ballot exits with it, as after any once run.
func (r *runner) endOnceRun(c *candidate, ex childExit, reason string) (int, bool) {
	c.finishOnce(r.set.OnceKey, ex)
	r.log.Info("once key run stopped by an operator; exiting with the command's exit code", "once_key", r.set.OnceKey,
		"reason", reason, "exit_code", ex.Code)
	return r.resign(c, ex, true, reason)
}

// waitOutPause holds a paused leadership, running nothing, until the
// election is resumed (controlsChanged) or the leadership ends otherwise.
func (r *runner) waitOutPause(c *candidate, l *lease, p *pauseRecord) outcome {
	r.log.Info("election paused: running nothing until resumed (ballot resume)", "reason", p.Reason, "by", p.By, "since", p.Since.Format(time.RFC3339))
	r.notify.Status(statusLine("leading, paused: "+p.Reason, r.set.CandidateID, c.token))
	r.metrics.Paused(true)
	r.waitingOutPause = true
	defer func() { r.waitingOutPause = false; r.metrics.Paused(false) }()
	for {
		how := r.supervise(c, l, nil, time.Time{})
		if how != controlsChanged || l.ctl.Paused() == nil {
			if how == controlsChanged {
				r.log.Info("election resumed")
				r.notify.Status(statusLine("leading", r.set.CandidateID, c.token))
			}
			return how
		}
	}
}

// leaderEnded ends a leadership for any reason but the command's own end;
// the command is already gone.
func (r *runner) leaderEnded(c *candidate, how outcome, ex childExit) (int, bool) {
	switch how {
	case stopRequested:
		return r.resign(c, ex, true, "stop-requested")
	case unhealthy:
		r.resign(c, ex, false, "unhealthy")
		return 0, false
	case steppedDown:
		if r.onceClaimed {
			c.clearStepDown()
			return r.endOnceRun(c, ex, "step-down")
		}
		code, done := r.resign(c, ex, false, "step-down")
		c.clearStepDown()
		return code, done
	case proposalGone:
		return r.lostLeadership(c, "proposal-deleted", ex)
	case sessionLost:
		return r.lostLeadership(c, "session-expired", ex)
	}
	return r.lostLeadership(c, "connection-lost", ex)
}

// elected is the edge from follower to leader, once the baton is taken:
// the lease starts, the proposal node says so.
func (r *runner) elected(c *candidate, taken bootTime) *lease {
	l := c.holdLease(taken)
	r.lease.Store(l)
	r.notify.Status(statusLine("leading", r.set.CandidateID, c.token))
	r.metrics.Leader(true)
	c.leading = true
	r.log.Info("elected leader", "proposal", c.node, "fencing_token", c.token,
		"lease_left", time.Until(l.KillBy()).Round(time.Millisecond))
	c.pub.update(func(d *proposalData) {
		d.State = stateLeading
		d.FencingToken = c.token
	})
	return l
}

// resign ends a leadership in order: the leader node goes, the demote hook
// runs (the command is already gone), then the proposal is deleted so the
// next candidate leads at once. With exiting, the session is closed too.
func (r *runner) resign(c *candidate, ex childExit, exiting bool, reason string) (int, bool) {
	r.log.Info("resigning", "proposal", c.node, "reason", reason)
	r.lease.Store(nil)
	r.notify.Status("resigning (" + reason + ")")
	r.metrics.Leader(false)
	c.pub.update(func(d *proposalData) { d.State = stateResigning })
	if !(len(r.set.OnDemote) == 0 && r.withdrawWithLeaderNode(c)) {
		r.unpublishLeader(c)
		if c.ops != nil {
			// Observers should see the leader node go before the next
			// leader is elected; off the supervision path, waiting a
			// little is fine.
			c.flushNodeOps(c.s.Timeout() / 2)
		}
		r.demote(c, reason)
		if !c.withdraw() && !exiting {
			r.endSession() // or the unconfirmed proposal would stay in line
		}
	}
	c.leading = false
	r.setCandidate(nil)
	if exiting {
		r.endSession()
		return ex.Code, true
	}
	return 0, false
}

// lostLeadership handles a leader that lost its lease, session or proposal:
// the command is already gone; rejoin or exit per on-connection-loss.
func (r *runner) lostLeadership(c *candidate, reason string, ex childExit) (int, bool) {
	r.lease.Store(nil)
	r.notify.Status("leadership lost (" + reason + ")")
	r.metrics.Leader(false)
	r.demote(c, reason)
	r.setCandidate(nil)
	r.releaseLost(c)
	c.pub.stop()
	c.retire()
	// Whatever happened, this session cannot be trusted any more: a new one
	// gives a new proposal and a new fencing token.
	r.endSession()
	switch {
	case r.stopRequested():
		// A stop signal came while the command was being stopped.
		return ex.Code, true
	case r.set.OnConnectionLoss == lossExit:
		r.log.Error("leadership lost; exiting (on-connection-loss=exit)", "reason", reason)
		return exitFailure, true
	case r.onceClaimed:
		r.log.Error("leadership lost during a once-key run; exiting: the key stays started, unfinished", "reason", reason, "once_key", r.set.OnceKey)
		return exitFailure, true
	}
	r.log.Info("rejoining the election as a new candidate", "reason", reason)
	return 0, false
}

// releaseLost gives the baton back after a lost leadership, if the session
// still answers soon: the command is gone, so a successor need not wait
// for this leader's lease to run out. Otherwise the session is closed
// below and the baton goes with it, dropped.
func (r *runner) releaseLost(c *candidate) {
	if !c.holdsBaton || c.s.isLost() {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The proposal goes too: the session is about to end anyway.
		if released, err := c.retireMulti(append([]any{&zk.DeleteRequest{Path: c.node, Version: -1}}, c.releaseOps()...)); err == nil && released {
			r.log.Info("baton given back", "proposal", c.node)
		}
	}()
	select {
	case <-done:
	case <-time.After(c.s.Timeout() / 4):
	}
}

// endSession closes the current session; the next candidacy opens a new one.
func (r *runner) endSession() {
	if r.sess != nil {
		r.sess.Close()
		r.sess = nil
	}
}

func (r *runner) setCandidate(c *candidate) {
	r.mu.Lock()
	r.cand = c
	r.mu.Unlock()
}

// supervise watches a leader's command (or a leader without one, ch nil,
// until wake) and returns why it stopped. Whatever it returns, the command
// is gone and reaped, unless it returns wakeUp.
func (r *runner) supervise(c *candidate, l *lease, ch *child, wake time.Time) outcome {
	guard := r.set.OnConnectionLoss != lossIgnore
	// pastLease: a ballot woken after its lease ended reports that first,
	// whatever else it learns on waking (the command is already dead).
	pastLease := func() bool { return guard && !time.Now().Before(l.KillBy()) }
	// A stop for any reason must end before the lease, unless ignore.
	var killBy func() time.Time
	if guard {
		killBy = l.KillBy
	}
	var done <-chan struct{}
	if ch != nil {
		done = ch.Done()
	}
	stop := func(reason string, killBy func() time.Time) {
		if ch == nil {
			return
		}
		ex, how := ch.Stop(syscall.SIGTERM, r.set.StopGracePeriod, killBy)
		r.log.Info("command stopped", "reason", reason, "how", how, "exit_code", ex.Code)
	}
	for {
		if guard && ch != nil {
			ch.SetDeadline(l.KillAt()) // the keeper kills by then unless told later
		}
		// The lease is checked before anything else, so a host that was
		// frozen past its lease stops the command first thing on resume.
		if guard {
			now := time.Now()
			deadline := l.KillBy()
			if !now.Before(deadline) {
				r.log.Warn("lease expired: ZooKeeper may already have elected another leader", "late_by", now.Sub(deadline).Round(time.Millisecond))
				if ch != nil {
					ex := ch.Kill()
					r.log.Info("command stopped", "reason", "lease expired", "how", "killed at once", "exit_code", ex.Code)
				}
				return leaseLost
			}
			if !now.Before(l.SuspectAt()) {
				r.log.Warn("connection to ZooKeeper lost while leading; stopping the command before the lease ends",
					"lease_left", deadline.Sub(now).Round(time.Millisecond))
				stop("connection lost", l.KillBy)
				return leaseLost
			}
		}
		next := time.Hour
		if guard {
			// At most a renewal period: Go's timers stop with a suspended
			// machine, the lease's clock does not.
			next = min(time.Until(l.SuspectAt()), time.Until(l.KillBy()), l.timeout/4)
		}
		if !wake.IsZero() {
			if d := time.Until(wake); d < next {
				next = d
			}
		}
		t := time.NewTimer(next)
		select {
		case <-done:
			t.Stop()
			if pastLease() {
				// The keeper killed it when the lease ran out (ballot was
				// stopped): that is a lost leadership, not a command's end.
				r.log.Warn("lease expired: the keeper stopped the command; ZooKeeper may already have elected another leader")
				return leaseLost
			}
			return childEnded
		case <-l.renewed:
		case <-t.C:
			if !wake.IsZero() && !time.Now().Before(wake) {
				return wakeUp
			}
		case <-l.gone:
			t.Stop()
			if pastLease() {
				continue // resumed past the lease: say so first (above)
			}
			r.log.Warn(l.GoneWhy()+" by someone else: leadership lost", "proposal", c.node)
			// Someone is undoing this leadership: no grace period.
			if ch != nil {
				ex := ch.Kill()
				r.log.Info("command stopped", "reason", l.GoneWhy(), "how", "killed at once", "exit_code", ex.Code)
			}
			return proposalGone
		case <-c.s.lost:
			t.Stop()
			if pastLease() {
				continue // resumed past the lease: say so first (above)
			}
			r.log.Warn("ZooKeeper session lost while leading", "reason", c.s.lostReason())
			if ch != nil {
				ex := ch.Kill()
				r.log.Info("command stopped", "reason", "session lost", "how", "killed at once", "exit_code", ex.Code)
			}
			return sessionLost
		case <-l.ctl.Changed():
			t.Stop()
			switch {
			case l.ctl.SteppingDown():
				r.log.Info("asked to step down (ballot step-down): handing over")
				r.unpublishLeader(c)
				stop("step-down", killBy)
				return steppedDown
			case l.ctl.Paused() != nil && ch != nil && r.sched == nil:
				r.log.Info("election paused (ballot pause): stopping the command, keeping the lead", "reason", l.ctl.Paused().Reason)
				stop("paused", killBy)
				return paused
			case r.waitingOutPause:
				return controlsChanged
			}
		case <-r.health.Bad():
			t.Stop()
			r.unpublishLeader(c)
			stop("unhealthy", killBy)
			return unhealthy
		case <-r.stopping:
			t.Stop()
			r.unpublishLeader(c)
			if ch != nil {
				r.stopChild(ch, killBy)
			}
			return stopRequested
		}
		t.Stop()
	}
}
