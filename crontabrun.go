package main

// run crontab: every job of a crontab in one process, each its own
// election (<base>/<job>) run by a runner of its own, as run cron would,
// all on one ZooKeeper session (sessionHolder, run.go). The process holds
// what run cron's runner holds for itself: the signals, systemd's
// readiness and watchdog. A job's trouble ends only its own election
// (docs/design.md, "One session, several elections").

import (
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// jobRun is one job's runner: started, or waiting for the runner of the
// same job's old settings to leave (a changed job).
type jobRun struct {
	job     cronJob
	r       *runner
	leaving bool    // removed or changed by a reload
	first   bool    // of the first load: READY waits for its proposal
	after   *jobRun // the same job's runner of its old settings, left first
	done    chan struct{}
	code    int // the runner's exit code, once done
}

// crontab is the process of run crontab.
type crontab struct {
	set      *Settings
	log      *slog.Logger
	hold     *sessionHolder
	notify   *notifier
	procStop chan struct{} // closed on the first stop signal
	ended    chan *jobRun  // a runner returned

	cur     map[string]*jobRun // the file's jobs, by name, as last loaded
	names   []string           // and in the file's order
	last    map[string]*jobRun // each name's newest runner, leaving ones too
	live    map[*jobRun]bool   // runners not returned yet (signals go to each)
	joined  map[string]bool    // jobs of the first load that made their proposal
	ready   bool               // READY sent
	readyCh chan string        // a job's first proposal (READY)

	jobs   atomic.Pointer[[]*jobRun] // cur in the file's order, for the spreader's goroutine
	spread *spreader
	health *health // --health-check: one check of the host for every job; nil without

	metrics *metricsFile // --metrics-file: every job's figures in one file; nil without
}

// runCrontab runs jobs, and on SIGHUP the file's jobs as they then are;
// its exit code. Nothing is started when a check fails.
func runCrontab(set *Settings, jobs []cronJob, acc *zookeeper.Access, log *slog.Logger) int {
	log.Info("ballot starting", append([]any{logEvStarting.attr(), "version", version, "mode", set.Command, "candidate_id", set.CandidateID,
		"election", set.BasePath, "jobs", len(jobs), "zookeeper", set.ZooKeeperServers}, acc.Describe()...)...)
	ct := &crontab{set: set, log: log, notify: newNotifier(), procStop: make(chan struct{}), ended: make(chan *jobRun),
		hold:    &sessionHolder{acc: acc, log: log, timeout: set.SessionTimeout, shared: true},
		cur:     map[string]*jobRun{},
		last:    map[string]*jobRun{},
		live:    map[*jobRun]bool{},
		joined:  map[string]bool{},
		readyCh: make(chan string, len(jobs)),
		metrics: newMetricsFile(set.MetricsFile),
	}
	metricsStop, metricsDone := make(chan struct{}), make(chan struct{})
	go ct.metrics.loop(metricsStop, metricsDone)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2,
		syscall.SIGTSTP)
	ignoreJobControl()
	// The watchdog vouches while every job's runner can (run.go, vouches).
	var vouchers atomic.Pointer[[]*runner]
	vouchers.Store(&[]*runner{})
	go ct.notify.watchdog(func() bool {
		for _, r := range *vouchers.Load() {
			if !r.vouches() {
				return false
			}
		}
		return true
	}, ct.procStop)
	setVouch := func() { // and the spreader's list
		rs := ct.runners()
		vouchers.Store(&rs)
		var js []*jobRun
		for _, name := range ct.names {
			if jr := ct.cur[name]; jr != nil {
				js = append(js, jr)
			}
		}
		ct.jobs.Store(&js)
	}
	setVouch()
	ct.spread = newSpreader(ct)
	if len(set.HealthCheck) > 0 {
		// One check gates the host's candidacy in every job's election.
		proc := &runner{set: set, log: log, stopping: ct.procStop}
		ct.health = newSharedHealth(proc, func() {
			for _, jr := range *ct.jobs.Load() {
				jr.r.publishHealth()
			}
		})
	}
	for _, j := range jobs {
		ct.cur[j.Name] = ct.launch(j, nil, true)
		ct.names = append(ct.names, j.Name)
	}
	setVouch()
	code, signalled := exitOK, false
	tstpLogged := false
	for {
		if isClosed(ct.procStop) && len(ct.live) == 0 {
			break
		}
		select {
		case s := <-sigs:
			governor.stir() // a stop or a reload allocates
			sig := s.(syscall.Signal)
			switch sig {
			case syscall.SIGTSTP:
				if !tstpLogged {
					tstpLogged = true
					log.Warn("ignoring SIGTSTP (and SIGTTIN, SIGTTOU): a stopped ballot could not stop its commands in time; stop it with SIGTERM", logEvSignalIgnored.attr(), "signal", "SIGTSTP")
				}
			case syscall.SIGINT, syscall.SIGTERM:
				first := !isClosed(ct.procStop)
				if first {
					log.Info("stop requested: stopping every job", "signal", sigName(sig), "jobs", len(ct.live))
					ct.notify.Stopping()
					grace := set.StopGracePeriod
					for jr := range ct.live {
						grace = max(grace, jr.job.Set.StopGracePeriod)
					}
					ct.notify.ExtendTimeout(grace + 5*time.Second) // as a run's stop does, for the longest
					signalled = true
					close(ct.procStop)
				} else {
					log.Info("second stop signal: killing the commands now", "signal", sigName(sig))
				}
				for jr := range ct.live {
					if first && jr.leaving {
						continue // procStop stops the run it finishes (supervise.go)
					}
					jr.r.stop(sig)
				}
			case syscall.SIGHUP:
				if !isClosed(ct.procStop) {
					ct.reload()
					ct.retainMetrics()
					setVouch()
					ct.checkReady() // a job of the first load removed before it joined
				}
			default:
				for jr := range ct.live {
					jr.r.forward(sig)
				}
			}
		case jr := <-ct.ended:
			delete(ct.live, jr)
			if ct.last[jr.job.Name] == jr {
				delete(ct.last, jr.job.Name)
			}
			if ct.cur[jr.job.Name] == jr {
				// Ended by itself (on-connection-loss=exit, a --slots
				// mismatch, …), not by a reload or a stop: it stays out
				// until the next reload.
				delete(ct.cur, jr.job.Name)
				if !isClosed(ct.procStop) {
					log.Error("job ended: its runner exited; it stays out of its election until the next reload (SIGHUP)", "job", jr.job.Name, "exit_code", jr.code)
					code = jr.code
				}
			}
			ct.endMetrics(jr)
			if len(ct.cur) == 0 && len(ct.live) == 0 && !isClosed(ct.procStop) {
				log.Error("every job has ended; exiting", "exit_code", code)
				close(ct.procStop)
			}
			setVouch()
		case name := <-ct.readyCh:
			ct.joined[name] = true
			ct.checkReady()
		}
	}
	ct.hold.close()
	awaitKeepers(time.Second)
	close(metricsStop)
	<-metricsDone // every job's ballot_up 0 is written before ballot exits
	if signalled {
		return exitOK
	}
	return code
}

// checkReady tells systemd READY once every job of the first load has
// made its proposal, or left by a reload.
func (ct *crontab) checkReady() {
	if ct.ready {
		return
	}
	for _, name := range ct.names {
		if jr := ct.cur[name]; jr != nil && jr.first && !ct.joined[name] {
			return
		}
	}
	ct.ready = true
	ct.notify.Ready(fmt.Sprintf("%d jobs joined", len(ct.cur)))
}

// runners are the runners started and not returned yet (not a changed
// job's new one while the old one finishes its run).
func (ct *crontab) runners() []*runner {
	var rs []*runner
	for jr := range ct.live {
		if jr.after == nil || isClosed(jr.after.done) {
			rs = append(rs, jr.r)
		}
	}
	return rs
}

// launch starts job's runner on the shared session, once after (the
// same job's runner of its old settings) has left, if any. first: a job
// of the first load, counted for READY.
func (ct *crontab) launch(j cronJob, after *jobRun, first bool) *jobRun {
	log := ct.log.With("job", j.Name)
	r := newJobRunner(j.Set, ct.hold, log, &notifier{})
	r.leaving, r.procStop = make(chan struct{}), ct.procStop
	sched, _, err := checkRun(j.Set) // checked when loaded: the schedule again
	if err != nil {
		log.Error("job cannot run", "error", err)
	}
	r.work, r.rules = newLeaderWork(r, sched)
	r.lineChanged = ct.spread.changed
	r.health = ct.health
	r.metrics = ct.metrics.member(j.Set.BasePath, j.Set.CandidateID, r.connected, r.lease.Load) // joins the file as r runs
	if first {
		r.joined = func() {
			select {
			case ct.readyCh <- j.Name:
			default:
			}
		}
	}
	jr := &jobRun{job: j, r: r, after: after, first: first, done: make(chan struct{})}
	ct.live[jr] = true
	ct.last[j.Name] = jr
	go func() {
		if after != nil {
			<-after.done
		}
		if err == nil {
			jr.code = r.run()
		} else {
			jr.code = exitUsage
		}
		close(jr.done)
		ct.ended <- jr
	}()
	return jr
}

// leave takes a job out: a run going on ends by itself (its --timeout
// still applies), as cron does not kill a job on a reload; then the
// candidate withdraws. A stop signal after stops that run too.
func (jr *jobRun) leave() {
	jr.leaving = true
	r := jr.r
	if isClosed(r.stopping) {
		return
	}
	close(r.leaving)
	r.stop(syscall.SIGTERM)
}

// reload reads the file again: added jobs join, removed jobs leave,
// changed jobs leave and join again with their new settings once their
// run, if any, has ended; unchanged jobs are not touched. A bad file
// changes nothing.
func (ct *crontab) reload() {
	jobs, err := loadCrontab(ct.set) // the FILE, or the config file's "jobs", read again
	if err != nil {
		ct.log.Error("reload refused: the jobs go on as they were", logEvReloadRefused.attr(), "error", err)
		return
	}
	var added, removed, changed, names []string
	unchanged := 0
	seen := map[string]bool{}
	for _, j := range jobs {
		seen[j.Name] = true
		names = append(names, j.Name)
		old := ct.cur[j.Name]
		switch {
		case old == nil:
			// Removed by an earlier reload and still ending its run: never
			// two runners of one election on the session; this one joins
			// once that one has left.
			added = append(added, j.Name)
			ct.cur[j.Name] = ct.launch(j, ct.last[j.Name], false)
		case sameJob(old.job, j):
			unchanged++ // a line that moved too
		default:
			changed = append(changed, j.Name)
			old.leave()
			ct.cur[j.Name] = ct.launch(j, old, false)
		}
	}
	for _, name := range ct.names {
		if old := ct.cur[name]; old != nil && !seen[name] {
			removed = append(removed, name)
			old.leave()
			delete(ct.cur, name)
		}
	}
	ct.names = names
	ct.log.Info("crontab reloaded", logEvReloaded.attr(), "jobs", len(jobs), "joined", strings.Join(added, ","),
		"left", strings.Join(removed, ","), "changed", strings.Join(changed, ","), "unchanged", unchanged)
}

// sameJob: every setting of the job is as it was (the values as given,
// wherever from, and the command). Its line's place does not count.
func sameJob(a, b cronJob) bool {
	return maps.Equal(a.Set.Values, b.Set.Values) && slices.Equal(a.Set.Args, b.Set.Args) &&
		a.Set.Schedule == b.Set.Schedule && a.Set.BasePath == b.Set.BasePath
}

// endMetrics: jr's runner has ended. Unless a runner of the same job is
// to follow (a changed job's, which carries its figures on), its series
// say ballot_up 0: a job that ended by itself, or the process stopping.
func (ct *crontab) endMetrics(jr *jobRun) {
	if ct.last[jr.job.Name] == nil {
		ct.metrics.down(jr.r.metrics)
	}
	ct.retainMetrics()
}

// retainMetrics drops from the metrics file the jobs no longer in the
// crontab whose runner has ended (a job a reload removed): the job is
// gone, not down.
func (ct *crontab) retainMetrics() {
	if ct.metrics == nil {
		return
	}
	keep := map[string]bool{}
	for _, jr := range ct.last {
		keep[jr.job.Set.BasePath] = true
	}
	for _, name := range ct.names {
		keep[ct.set.BasePath+"/"+name] = true // as loadCrontab names its election
	}
	ct.metrics.retain(keep)
}
