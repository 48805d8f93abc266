package main

// The runner: one ballot process running a command (run once, run cron).
// Its candidacies, one after another, are in leadership.go.

import (
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"ballot/internal/zookeeper"
)

type runner struct {
	set *Settings
	zk  *zookeeper.Access
	log *slog.Logger

	sess *zookeeper.Session

	// stopping is closed on the first SIGTERM/SIGINT, hurry on the second.
	stopping chan struct{}
	hurry    chan struct{}
	stopSig  syscall.Signal

	mu      sync.Mutex
	current *child      // the running command, for signal forwarding
	spare   *idleKeeper // a keeper started before it is needed (keeperidle.go)

	// quickRuns: runs that ended quickly (failing or not) in a row, of
	// reruns and of unelected runs, in either mode (backoffFor).
	quickRuns int
	// warnedQuickSuccess: the WARN on a quick success is said once.
	warnedQuickSuccess bool

	// lostClaim: the proposal of a --once-key claim whose answer was lost
	// with its session (it may have landed); see clearLostClaim.
	lostClaim string

	phase phase // the candidacy's state, set only through enter and become (transition.go); supervision reads it (a paused leader)

	notify  *notifier             // systemd, when NOTIFY_SOCKET is set
	metrics *metrics              // --metrics-file
	lease   atomic.Pointer[lease] // the current leadership's, for the watchdog
	alarm   *wakeAlarm            // wakes supervision at the lease's stop time, on the boot clock

	cand   *candidate // the current proposal, for health publishing
	health *health    // nil without --health-check

	work  leaderWork // run once's or run cron's, with that mode's state (strategy.go)
	rules runRules   // and what the runner needs to know of its runs

	runEndHooks sync.WaitGroup // --on-run-end hooks going on: ballot's exit waits for them (hooks.go)
	ping        *pinger        // --ping-url; nil without (ping.go)
}

func newRunner(set *Settings, acc *zookeeper.Access, log *slog.Logger) *runner {
	r := &runner{set: set, zk: acc, log: log, stopping: make(chan struct{}), hurry: make(chan struct{}), notify: newNotifier(),
		alarm: newWakeAlarm()}
	go r.notify.watchdog(r.vouches, r.stopping)
	r.metrics = newMetrics(set.MetricsFile, set.BasePath, set.CandidateID, r.connected, r.lease.Load)
	if p, err := newPinger(r); err != nil { // checked with the flags (checkPing): a file changed since
		log.Error("cannot ping; runs are not reported to --ping-url", "error", err)
	} else {
		r.ping = p
	}
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
				r.log.Warn("ignoring SIGTSTP (and SIGTTIN, SIGTTOU): a stopped ballot could not stop its command in time; stop it with SIGTERM", logEvSignalIgnored.attr(), "signal", "SIGTSTP")
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
