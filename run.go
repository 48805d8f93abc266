package main

// The runner: one ballot process running a command (run once, run cron).
// Its candidacies, one after another, are in leadership.go.

import (
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// runner runs one election's candidacies: run once's or run cron's, or
// one job's of a crontab. Its state is grouped by concern, each group a
// value of its own, embedded so that its fields read as the runner's.
type runner struct {
	set *Settings
	log *slog.Logger
	runnerSession

	// stopping is closed on the first SIGTERM/SIGINT: what the runner
	// waits on everywhere; the rest of the signals' state beside it.
	stopping chan struct{}
	stopSignals
	jobHooks

	runningChild
	quickRunBackoff

	phase   phase     // the candidacy's state, set only through enter and become (transition.go); supervision reads it (a paused leader)
	notify  *notifier // systemd, when NOTIFY_SOCKET is set
	metrics *metrics  // --metrics-file
	reporting
	leadingNow
	runMode
}

// runnerSession is the ZooKeeper a runner stands on.
type runnerSession struct {
	zk   *zookeeper.Access
	hold *sessionHolder     // the process's session: this runner's own, or every job's (crontab)
	sess *zookeeper.Session // the session of the current candidacy, from hold
}

// stopSignals: the stop signals after the first (runner.stopping).
type stopSignals struct {
	hurry   chan struct{} // closed on the second SIGTERM/SIGINT
	stopSig syscall.Signal
}

// jobHooks are run crontab's hooks into one job's runner; nil outside
// crontab.
type jobHooks struct {
	// leaving (crontab: a job a reload removed) is closed before stopping:
	// a run going on is not stopped but ends by itself (its --timeout
	// still applies), then the candidate withdraws. procStop, closed on
	// the process's stop signal, stops that run too.
	leaving  chan struct{}
	procStop chan struct{}
	// joined, if set, is told of each proposal made (crontab's READY);
	// lineChanged, of each change of a line this runner leads in (its
	// spreading of leaderships).
	joined      func()
	lineChanged func()
}

// runningChild is the command running, and the keeper started for the
// next one.
type runningChild struct {
	mu      sync.Mutex
	current *child      // the running command, for signal forwarding
	spare   *idleKeeper // a keeper started before it is needed (keeperidle.go)
}

// quickRunBackoff: the backoff after runs that end quickly (backoffFor).
type quickRunBackoff struct {
	// quickRuns: runs that ended quickly (failing or not) in a row, of
	// reruns and of unelected runs, in either mode.
	quickRuns int
	// warnedQuickSuccess: the WARN on a quick success is said once.
	warnedQuickSuccess bool
}

// reporting: what the runner tells besides the log, systemd and the
// metrics file.
type reporting struct {
	health      *health        // nil without --health-check
	ping        *pinger        // --ping-url; nil without (ping.go)
	runEndHooks sync.WaitGroup // --on-run-end hooks going on: ballot's exit waits for them (hooks.go)
}

// leadingNow is the current candidacy and its leadership, for the
// watchdog, health publishing and supervision.
type leadingNow struct {
	cand  *candidate            // the current proposal, for health publishing
	lease atomic.Pointer[lease] // the current leadership's, for the watchdog
	alarm *wakeAlarm            // wakes supervision at the lease's stop time, on the boot clock
}

// runMode is the mode, chosen once (strategy.go), and what it keeps across
// candidacies.
type runMode struct {
	work  leaderWork // run once's or run cron's, with that mode's state (strategy.go)
	rules runRules   // and what the runner needs to know of its runs
	// lostClaim: the proposal of a --once-key claim whose answer was lost
	// with its session (it may have landed); see clearLostClaim.
	lostClaim string
}

func newRunner(set *Settings, acc *zookeeper.Access, log *slog.Logger) *runner {
	r := newJobRunner(set, &sessionHolder{acc: acc, log: log, timeout: set.SessionTimeout}, log, newNotifier())
	go r.notify.watchdog(r.vouches, r.stopping)
	r.metrics = newMetrics(set.MetricsFile, set.BasePath, set.CandidateID, r.connected, r.lease.Load)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2,
		syscall.SIGTSTP)
	ignoreJobControl()
	go r.signals(sigs)
	return r
}

// newJobRunner is a runner without the process's part (signals, systemd's
// watchdog, metrics): run once's and run cron's, or one job's of a
// crontab, whose process holds those for all of its jobs.
func newJobRunner(set *Settings, hold *sessionHolder, log *slog.Logger, n *notifier) *runner {
	r := &runner{set: set, runnerSession: runnerSession{zk: hold.acc, hold: hold}, log: log, stopping: make(chan struct{}),
		stopSignals: stopSignals{hurry: make(chan struct{})}, notify: n}
	r.alarm = newWakeAlarm()
	if p, err := newPinger(r); err != nil { // checked with the flags (checkPing): a file changed since
		log.Error("cannot ping; runs are not reported to --ping-url", "error", err)
	} else {
		r.ping = p
	}
	return r
}

// ignoreJobControl: a stopped ballot renews nothing while its command
// runs on: never stop for a terminal's job control. SIGTTIN and SIGTTOU
// are ignored rather than caught: with a handler, a background write to a
// terminal with "stty tostop" would be refused, signalled and retried
// forever.
func ignoreJobControl() { signal.Ignore(syscall.SIGTTIN, syscall.SIGTTOU) }

func (r *runner) signals(sigs <-chan os.Signal) {
	tstpLogged := false
	for s := range sigs {
		governor.stir() // a stop allocates
		sig := s.(syscall.Signal)
		switch sig {
		case syscall.SIGTSTP:
			if !tstpLogged {
				tstpLogged = true
				r.log.Warn("ignoring SIGTSTP (and SIGTTIN, SIGTTOU): a stopped ballot could not stop its command in time; stop it with SIGTERM", logEvSignalIgnored.attr(), "signal", "SIGTSTP")
			}
		case syscall.SIGINT, syscall.SIGTERM:
			if isClosed(r.stopping) {
				r.log.Info("second stop signal: killing the command now", "signal", sigName(sig))
			} else {
				r.log.Info("stop requested", "signal", sigName(sig))
				r.notify.Stopping()
			}
			r.stop(sig)
		default:
			r.forward(sig)
		}
	}
}

// stop is a stop signal: the first stops, the second hurries. Only the
// signal goroutine calls it.
func (r *runner) stop(sig syscall.Signal) {
	if isClosed(r.stopping) {
		if !isClosed(r.hurry) {
			close(r.hurry)
		}
		return
	}
	r.stopSig = sig
	close(r.stopping)
}

// forward passes sig on to the running command, if any.
func (r *runner) forward(sig syscall.Signal) {
	r.mu.Lock()
	c := r.current
	r.mu.Unlock()
	if c != nil {
		r.log.Info("forwarding signal to the command", "signal", sigName(sig), "pid", c.pid)
		c.Signal(sig)
	}
}

func (r *runner) stopRequested() bool { return isClosed(r.stopping) }

// connected says whether the current session is connected.
func (r *runner) connected() bool {
	r.mu.Lock()
	c := r.cand
	r.mu.Unlock()
	return c != nil && c.s.Connected() && !c.s.IsLost()
}

// vouches says whether this candidate can vouch for itself, for systemd's
// watchdog: a leader whose lease was renewed lately, a follower whose
// session is connected.
func (r *runner) vouches() bool {
	if l := r.lease.Load(); l != nil {
		return l.Vouches()
	}
	return r.connected()
}

// sessionHolder is the ZooKeeper session of a process's runners: one
// runner's own (run once, run cron), or the one every job of a crontab
// shares. It dials once for all: a runner that finds no live session
// dials, the others wait for that dial and take its session, so a lost
// session is replaced by one new session, not one per job.
type sessionHolder struct {
	acc     *zookeeper.Access
	log     *slog.Logger
	timeout time.Duration
	// shared: several elections on the session. A candidacy that would
	// end its session to be rid of its nodes then ends only its own
	// election (runner.leaveElection); the process closes the session.
	shared bool

	mu     sync.Mutex // held while dialing
	sess   *zookeeper.Session
	closed bool
}

// get is the live session, dialed if there is none; stop gives up.
func (h *sessionHolder) get(stop <-chan struct{}) (*zookeeper.Session, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sess != nil && !h.sess.IsLost() {
		return h.sess, nil
	}
	if h.sess != nil {
		if h.shared {
			dropSessionKeeper(h.sess)
		}
		h.sess.Close()
		h.sess = nil
	}
	if h.closed {
		return nil, errStopped
	}
	s, err := zookeeper.DialSession(h.log, h.acc, h.timeout, zookeeper.ConnectWait(h.timeout), stop)
	if err == nil {
		h.sess = s
		if h.shared {
			keepSharedSession(h.log, s) // before any keeper is told it
		}
	}
	return s, err
}

// drop closes s if it is still the current session: the next get dials.
func (h *sessionHolder) drop(s *zookeeper.Session) {
	if h == nil { // unit tests' bare runners
		s.Close()
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sess == s {
		h.sess = nil
	}
	if h.shared {
		dropSessionKeeper(s)
	}
	s.Close()
}

// close ends the session for good (the process exits).
func (h *sessionHolder) close() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.sess != nil {
		if h.shared {
			dropSessionKeeper(h.sess)
		}
		h.sess.Close()
		h.sess = nil
	}
}

// current is the session now held, if any (the process's readiness).
func (h *sessionHolder) current() *zookeeper.Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sess
}

// sharedSession: this runner's session serves other jobs' elections too.
func (r *runner) sharedSession() bool { return r.hold != nil && r.hold.shared }
