package main

// Starting the command (as leader, or unelected with run-anyway), and what
// its end means: on-child-success / on-child-error, and backing off a
// command that keeps ending at once.

import (
	"fmt"
	"strconv"
	"time"

	"ballot/internal/zookeeper"
)

func (r *runner) childEnv(c *candidate) []string {
	env := []string{
		"BALLOT_CANDIDATE_ID=" + r.set.CandidateID,
		"BALLOT_ELECTION_PATH=" + r.set.BasePath,
	}
	env = append(env, r.work.runEnv()...)
	if c == nil {
		return append(env, "BALLOT_PROPOSAL_NODE=", "BALLOT_FENCING_TOKEN=0", "BALLOT_ELECTED=false")
	}
	return append(env,
		"BALLOT_PROPOSAL_NODE="+c.node,
		"BALLOT_FENCING_TOKEN="+strconv.FormatInt(c.token, 10),
		"BALLOT_SESSION_ID="+zookeeper.SessionHex(c.s.ID()),
		"BALLOT_SLOT="+strconv.Itoa(c.slot),
		"BALLOT_ELECTED=true")
}

// tailBytes is how much of a run's output to keep: for the runs the
// history records (run cron, --once-key), as leader.
func (r *runner) tailBytes(c *candidate) int {
	if !r.recordsRuns(c) {
		return 0
	}
	return r.set.HistoryOutputBytes
}

// recordsRuns: c leads a run cron or --once-key election, whose runs the
// history records, and --on-run-end and --ping-url report.
func (r *runner) recordsRuns(c *candidate) bool {
	return c != nil && r.rules.records
}

// startCommand runs the command, as leader under the lease l (nil: not
// elected, run-anyway); beside: a run beside others (--overlap allow).
func (r *runner) startCommand(c *candidate, l *lease, beside bool) (*child, error) {
	// Decided with the handoff: the keeper is told the release later if
	// this one has none.
	pending := l != nil && l.takePending()
	spec := childSpec{
		Argv:     r.set.Args,
		Env:      r.childEnv(c),
		Wrap:     r.set.WrapChildLogs,
		Tail:     r.tailBytes(c),
		Grace:    r.set.StopGracePeriod,
		Deadline: r.keeperDeadline(l),
		Handoff:  handoffFor(c, l),
		Demote:   r.keeperDemote(c),
		Keeper:   r.takeSpare(),
	}
	if beside {
		// --overlap allow: no keeper gives the baton back while another's
		// tree may live (cronallow.go); a shared session's is closed by
		// the last keeper done, which this one may be.
		spec.Handoff, spec.Demote = sessionOnly(spec.Handoff), nil
	}
	governor.stir() // a run starts
	cmd, err := startChild(r.log, spec)
	if err != nil {
		return nil, err
	}
	releaseWhenTaken(cmd, l, pending)
	if r.recordsRuns(c) {
		r.ping.send("start", nil)
	}
	if cmd.pid == 0 {
		<-cmd.Done()
		r.log.Error("cannot execute the command", "command", r.set.Args[0], "reason", cmd.Exit().Reason, "exit_code", cmd.Exit().Code)
		return cmd, nil
	}
	if l != nil {
		// Supervision takes it on now: a cron leader between runs checks
		// in with nothing (supervision.await), and must not start a run
		// on a check-in hours old that renewals would refuse to vouch for.
		l.checkIn()
	}
	r.mu.Lock()
	r.current = cmd
	r.mu.Unlock()
	r.log.Info("command started", logEvCommandStarted.attr(), "pid", cmd.pid, "command", r.set.Args[0])
	r.metrics.CommandRunning(true)
	go func() { <-cmd.Done(); governor.stir(); r.metrics.CommandExited(cmd.Exit().Code) }()
	if c != nil {
		st := &childStatus{PID: cmd.pid, Since: cmd.started}
		if t := r.work.scheduledTime(); !t.IsZero() {
			st.ScheduledTime = t.In(r.set.Timezone).Format(time.RFC3339)
		}
		c.pub.update(func(d *proposalData) { d.Child = st })
	}
	return cmd, nil
}

// killByFor is the lease's kill time for a stop's grace period; nil (no
// limit) with on-connection-loss=ignore.
func (r *runner) killByFor(l *lease) func() time.Time {
	if r.set.OnConnectionLoss == lossIgnore {
		return nil
	}
	return l.supervisedKillBy
}

// keeperDeadline is the lease's kill time for the keeper to enforce; none
// without a lease, or with on-connection-loss=ignore, which keeps the
// command running whatever happens to the session.
func (r *runner) keeperDeadline(l *lease) killTimes {
	if l == nil || r.set.OnConnectionLoss == lossIgnore {
		return killTimes{}
	}
	return leaseKillTimes(l)
}

// releaseWhenTaken: a command or hook started on a handover's credit
// (pending: its handoff had no release) learns, once the take is
// answered, how to give the baton back should ballot die.
func releaseWhenTaken(cmd *child, l *lease, pending bool) {
	if !pending || cmd.pid == 0 {
		return
	}
	go func() {
		<-l.taken
		if h := l.release; h != nil && h.ReleasePath != "" {
			cmd.tellRelease(h)
		}
	}()
}

// publishRunEnd records the end of a run in the proposal node (what
// info shows as the last exit); c.lead.published is about the leader node.
func (r *runner) publishRunEnd(c *candidate, ex childExit) {
	c.pub.update(func(d *proposalData) {
		d.Child = nil
		d.LastExit = &exitStatus{Code: ex.Code, At: time.Now(), DurationMs: ex.Duration.Milliseconds()}
	})
}

func (r *runner) forget(cmd *child) {
	r.mu.Lock()
	if r.current == cmd {
		r.current = nil
	}
	r.mu.Unlock()
}

// logEnd logs a run's end: at WARN when it failed, with the output's last
// line (wrapped output only), so that a failure stands out at a glance and
// in --quiet.
func (r *runner) logEnd(ex childExit) {
	if !ex.Started {
		return
	}
	attrs := []any{logEvCommandEnded.attr(), "exit_code", ex.Code, "duration", ex.Duration.Round(time.Millisecond), "timed_out", ex.TimedOut}
	if ex.Success() {
		r.log.Info("command ended", attrs...)
		return
	}
	r.log.Warn("command ended", append(attrs, lastLineAttr(ex)...)...)
}

// lastLineAttr is last_line=..., the failing run's last line of output,
// when it was seen.
func lastLineAttr(ex childExit) []any {
	if ex.LastLine == "" {
		return nil
	}
	return []any{"last_line", ex.LastLine}
}

// runUnelected runs the command once with no election (run-anyway).
func (r *runner) runUnelected() childExit {
	if len(r.set.Args) == 0 {
		r.log.Info("no command to run without election (hooks only); waiting for a stop signal")
		<-r.stopping
		return childExit{}
	}
	cmd, err := r.startCommand(nil, nil, false)
	if err != nil {
		r.log.Error("ballot failed", "error", err)
		return childExit{Code: exitFailure}
	}
	defer r.forget(cmd)
	select {
	case <-cmd.Done():
	case <-r.stopping:
		r.stopChild(cmd, nil)
	}
	ex := cmd.Exit()
	r.logEnd(ex)
	return ex
}

// afterUnelected applies on-child-success / on-child-error outside
// leadership (run-anyway).
func (r *runner) afterUnelected(ex childExit) verdict {
	if r.stopRequested() {
		return exitWith(ex.Code)
	}
	switch r.policyFor(ex) {
	case policyExit:
		return exitWith(ex.Code)
	case policyIgnore:
		// Unelected there is no leadership to keep: wait for a stop signal.
		<-r.stopping
		return exitWith(exitOK)
	}
	r.backOff(ex)
	return rejoin()
}

func (r *runner) policyFor(ex childExit) childPolicy {
	if ex.Success() {
		return r.set.OnChildSuccess
	}
	return r.set.OnChildError
}

// backoffFor spaces out reruns of a command that keeps ending at once, so
// neither a broken command nor one that daemonizes (forks and exits 0)
// spins: each rerun under reelect is a resignation and a new proposal,
// writes to a shared ZooKeeper. Quick successes count as quick failures.
func (r *runner) backoffFor(ex childExit) time.Duration {
	if ex.Duration > 10*time.Second {
		r.quickRuns = 0
		return 0
	}
	if ex.Duration > time.Second {
		return 0
	}
	r.quickRuns++
	if r.quickRuns <= 1 {
		return 0
	}
	d := 100 * time.Millisecond << min(r.quickRuns-2, 7)
	if d > 10*time.Second {
		d = 10 * time.Second
	}
	return d
}

// rerunWait is backoffFor, said: the back-off at INFO, and once per ballot,
// at WARN, what a quick success most likely is.
func (r *runner) rerunWait(ex childExit) time.Duration {
	d := r.backoffFor(ex)
	if ex.Success() && ex.Duration <= time.Second && !r.warnedQuickSuccess {
		r.warnedQuickSuccess = true
		r.log.Warn(fmt.Sprintf("the command exited 0 after %s; a command that daemonizes must run in the foreground",
			ex.Duration.Round(time.Millisecond)), "exit_code", ex.Code, "duration", ex.Duration.Round(time.Millisecond))
	}
	if d > 0 {
		r.log.Info("the command keeps ending quickly; waiting before the next run", "wait", d)
	}
	return d
}

// backOff waits before standing again after a run that ended quickly
// (backoffFor), or until a stop signal.
func (r *runner) backOff(ex childExit) {
	if d := r.rerunWait(ex); d > 0 {
		select {
		case <-time.After(d):
		case <-r.stopping:
		}
	}
}

// checkRerunLimit refuses a --rerun-limit that would limit nothing, or
// whose handover has no single successor.
func checkRerunLimit(set *Settings) error {
	l := set.RerunLimit
	switch {
	case !l.set():
		return nil
	case set.OnceKey != "":
		return fmt.Errorf("--rerun-limit %s: not with --once-key, which runs the command once; leave it out", l)
	case set.OnChildError != policyRerun:
		return fmt.Errorf("--rerun-limit %s: needs --on-child-error rerun (it limits the reruns after failures; now %s); give --on-child-error rerun, or leave it out", l, set.OnChildError)
	case set.Slots > 1:
		return fmt.Errorf("--rerun-limit %s: not with --slots %d, where the next in line is no single holder's successor; leave it out", l, set.Slots)
	}
	return nil
}

// prestartKeeper starts a spare keeper for run once's next command: the
// next in line then starts its command without waiting for a keeper to
// start (a fork, an exec and Go's start-up, milliseconds on a handover's
// critical path). Only the next in line keeps one, so followers further
// back cost nothing. It knows nothing of the session until it runs a
// command, so should ballot die meanwhile it gives nothing back.
func (r *runner) prestartKeeper() {
	k, err := startIdleKeeper(nil, nil, r.set.WrapChildLogs)
	if err != nil {
		r.log.Debug("cannot start a keeper ahead of time; one starts with the command", "error", err)
		return
	}
	r.setSpare(k)
	r.log.Debug("a keeper stands by for the next command", logEvKeeperReady.attr(), "keeper_pid", k.c.keeper.Process.Pid)
}

// setSpare makes k the keeper the next command runs on.
func (r *runner) setSpare(k *idleKeeper) {
	r.mu.Lock()
	old := r.spare
	r.spare = k
	r.mu.Unlock()
	old.stop()
}

// takeSpare hands over the spare keeper, if any.
func (r *runner) takeSpare() *idleKeeper {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := r.spare
	r.spare = nil
	return k
}

// dropSpare stops the spare keeper, if any.
func (r *runner) dropSpare() { r.takeSpare().stop() }
