// ballot runs a command on only one machine of a fleet at a time, by leader
// election on a ZooKeeper ensemble.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"ballot/internal/keeper"
	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

func main() {
	oneProcessor()
	if err := checkPlatform(); err != nil {
		fmt.Fprintln(os.Stderr, "ballot: "+err.Error())
		os.Exit(exitFailure)
	}
	if len(os.Args) > 1 && os.Args[1] == keeper.Arg {
		os.Exit(keeperMain(os.Args[2:]))
	}
	if os.Getpid() == 1 {
		os.Exit(initMain())
	}
	os.Exit(realMain(os.Args[1:]))
}

// oneProcessor runs ballot's goroutines on one processor (GOMAXPROCS=1)
// unless GOMAXPROCS says otherwise. ballot and its keeper wait on
// ZooKeeper, pipes and timers; they never need two cores at once. With
// more processors, each wake-up of an idle leader (a renewal, its answer,
// a ping: about 5 a second at T = 5 s) also wakes a second thread to run
// the goroutine it readies: about 15% of an idle leader's CPU (BENCHMARKS.md).
// A goroutine stuck in a system call still hands its processor over.
func oneProcessor() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// initMain runs when ballot is PID 1, the init of a container. The kernel
// hands PID 1 every orphan of the PID namespace, and Go reaps only the
// processes it waits for, so orphans would stay zombies. A reaping loop in
// the same process would steal exit statuses os/exec waits for (the health
// check's), so ballot splits in two instead: this PID 1 only starts ballot
// again as its child (not PID 1, so it does the real work), forwards it the
// signals ballot handles, reaps every process that ends, and exits with the
// child's status.
func initMain() int {
	sigs := make(chan os.Signal, 32)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP,
		syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballot: running as PID 1: cannot find ballot's own executable:", err)
		return exitFailure
	}
	// The child gets its own process group, and the terminal if there is
	// one, so that a Ctrl-C reaches it once (forwarded), not twice: a second
	// SIGINT means "kill the command now" to ballot.
	sys := &syscall.SysProcAttr{Setpgid: true}
	if isTerminal(0) {
		sys.Foreground, sys.Ctty = true, 0
	}
	pid, err := syscall.ForkExec(self, os.Args, &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}, Sys: sys})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballot: running as PID 1: cannot start ballot:", err)
		return exitFailure
	}
	for s := range sigs {
		if s != syscall.SIGCHLD {
			_ = syscall.Kill(pid, s.(syscall.Signal))
			continue
		}
		for {
			var ws syscall.WaitStatus
			wpid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if wpid <= 0 {
				break
			}
			if wpid == pid {
				return keeper.ExitCode(ws)
			}
		}
	}
	return exitFailure
}

// realMain is ballot with its arguments: the exit code.
func realMain(args []string) int {
	set, code, ok := settingsOrExit(args)
	if !ok {
		return code
	}
	if set.Command == cmdVersion {
		printVersion()
		return 0
	}
	log, closeLog := newMainLogger(set)
	defer closeLog()
	if set.Command == cmdRunCrontab && set.CrontabCheck {
		return checkCrontab(set, os.Stdout) // connects to nothing, reads no credentials
	}

	// Certificates, keys and credentials are read before anything
	// connects; a bad one is a usage error.
	acc, err := loadZKAccess(set)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballot: "+err.Error())
		if set.Command == cmdCheck {
			return exitUnknown
		}
		return exitUsage
	}
	for _, w := range acc.Warnings {
		log.Warn(w)
	}
	return runSubcommand(set, acc, log)
}

// settingsOrExit parses the command line; when it is a help request or
// wrong, ok is false and code is the exit code, its text already printed.
func settingsOrExit(args []string) (set *Settings, code int, ok bool) {
	set, err := parseCommandLine(args, os.Getenv)
	var help *helpRequested
	var usage *usageError
	switch {
	case errors.As(err, &help):
		fmt.Fprint(os.Stdout, help.text)
		return nil, 0, false
	case errors.As(err, &usage):
		fmt.Fprintln(os.Stderr, "ballot: "+usage.Error())
		return nil, usage.exitCode(), false
	case err != nil:
		fmt.Fprintln(os.Stderr, "ballot: "+err.Error())
		return nil, exitUsage, false
	}
	return set, 0, true
}

// printVersion is ballot version.
func printVersion() {
	build := ""
	if !tlsBuilt {
		build = ", without TLS"
	}
	fmt.Printf("ballot %s (commit %s, %s, %s/%s%s)\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH, build)
}

// newMainLogger is ballot's logger for set.Command; closeLog flushes it,
// when ballot exits.
func newMainLogger(set *Settings) (log *slog.Logger, closeLog func()) {
	if set.Debug && set.LogLevel > slog.LevelDebug {
		set.LogLevel = slog.LevelDebug // --debug is for seeing more
	}
	var logOut io.Writer = os.Stderr
	closeLog = func() {}
	if set.Command == cmdRunOnce || set.Command == cmdRunCron || set.Command == cmdRunCrontab {
		// Supervision logs as it acts: it must never wait for a reader.
		p := newLogPipe(os.Stderr)
		closeLog = func() { p.Close(time.Second) }
		logOut = p
	}
	log = newLogger(logOut, set.LogFormat, set.LogLevel)
	if set.Debug {
		logSources(log, set)
	}
	if set.Command == cmdLeader && !set.Debug {
		// Its output is for scripts: only ballot's own errors on stderr.
		log = newLogger(os.Stderr, set.LogFormat, max(set.LogLevel, slog.LevelError))
	}
	return log, closeLog
}

// runSubcommand runs the command the settings name, and is its exit code.
func runSubcommand(set *Settings, acc *zookeeper.Access, log *slog.Logger) int {
	switch set.Command {
	case cmdInfo:
		return runInfo(set, acc, log)
	case cmdWatch:
		return runWatch(set, acc, log)
	case cmdRunOnce, cmdRunCron:
		return startRun(set, acc, log)
	case cmdRunCrontab:
		return startCrontab(set, acc, log)
	case cmdStepDown:
		return runStepDown(set, acc, log, os.Stdout)
	case cmdPause:
		return runPause(set, acc, log, os.Stdout)
	case cmdResume:
		return runResume(set, acc, log, os.Stdout)
	case cmdTrigger:
		return runTrigger(set, acc, log, os.Stdout)
	case cmdDrain:
		return runDrain(set, acc, log, os.Stdout)
	case cmdUndrain:
		return runUndrain(set, acc, log, os.Stdout)
	case cmdLeader:
		return runLeader(set, acc, log, os.Stdout)
	case cmdHistory:
		return runHistory(set, acc, log, os.Stdout)
	case cmdJobs:
		return runJobs(set, acc, log, os.Stdout)
	case cmdCheck:
		return runCheck(set, acc, log, os.Stdout)
	}
	fmt.Fprintf(os.Stderr, "ballot: %s: not implemented yet\n", set.Command)
	return exitUsage
}

// startRun is run once and run cron: the checks that need more than one
// parameter or the file system, then the runner. Nothing is started and
// nothing is left behind when a check fails.
func startRun(set *Settings, acc *zookeeper.Access, log *slog.Logger) int {
	sched, code, err := checkRun(set)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballot: "+err.Error())
		return code
	}
	log.Info("ballot starting", append([]any{logEvStarting.attr(), "version", version, "mode", set.Command, "candidate_id", set.CandidateID,
		"election", set.BasePath, "zookeeper", set.ZooKeeperServers}, acc.Describe()...)...)
	startGovernor(set.SessionTimeout, log)
	r := newRunner(set, acc, log)
	r.work, r.rules = newLeaderWork(r, sched)
	if len(set.HealthCheck) > 0 {
		r.health = newHealth(r)
	}
	return r.run()
}

// startCrontab is run crontab: its jobs, all checked before anything
// starts, then the runner of them all.
func startCrontab(set *Settings, acc *zookeeper.Access, log *slog.Logger) int {
	jobs, err := loadCrontab(set)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ballot: "+err.Error())
		return exitUsage
	}
	startGovernor(set.SessionTimeout, log)
	return runCrontab(set, jobs, acc, log)
}

// checkRun returns the schedule of run cron, or the exit code and error of
// the first check that fails.
func checkRun(set *Settings) (sched schedule, code int, err error) {
	if set.Command == cmdRunCron {
		if len(set.Args) == 0 {
			return nil, exitUsage, errors.New(`run cron: no command given; put it after "--" (hooks alone are for run once)`)
		}
		expr, err := hashExpr(set.Schedule, set.BasePath) // H fields
		if err != nil {
			return nil, exitUsage, fmt.Errorf("%s %q: %v", scheduleSource(set), set.Schedule, err)
		}
		if sched, err = parseSchedule(expr, scheduleSource(set), set.Timezone, time.Now()); err != nil {
			return nil, exitUsage, err
		}
	}
	if f := set.MetricsFile; f != "" {
		if st, err := os.Stat(filepath.Dir(f)); err != nil || !st.IsDir() {
			return nil, exitUsage, fmt.Errorf("--metrics-file %q: its directory %s does not exist; create it, or name a file in an existing one", f, filepath.Dir(f))
		}
	}
	if err := checkOnce(set); err != nil {
		return nil, exitUsage, err
	}
	if err := checkPing(set); err != nil {
		return nil, exitUsage, err
	}
	if err := checkRerunLimit(set); err != nil {
		return nil, exitUsage, err
	}
	if set.Slots > 1 && set.OnceRetryUnfinished {
		// With one slot, a retry waits out the dropped baton of the run's
		// holder; with several it would take another slot at once, while
		// that run may still be ending under its lease.
		return nil, exitUsage, fmt.Errorf("--once-retry-unfinished: not with --slots %d, where a key's unfinished run may still be ending under another slot's lease; retry it with --slots 1 once every candidate of that election has stopped", set.Slots)
	}
	if src := set.Sources["preempt-after"]; set.Slots > 1 && set.PreemptAfter > 0 && src != "" && src != "default" {
		// Silently ignored, it would promise handovers nobody makes.
		return nil, exitUsage, fmt.Errorf("--preempt-after %s: not with --slots %d, where no holder hands over for a priority (priorities only order the line); leave it out, or give 0", set.PreemptAfter, set.Slots)
	}
	if set.NoWait && set.WaitTimeout > 0 {
		return nil, exitUsage, fmt.Errorf("--wait-timeout %s: contradicts --no-wait, which does not wait at all; give one of them", set.WaitTimeout)
	}
	for _, c := range []struct {
		what string
		argv []string
	}{{"", set.Args}, {"--on-promote ", set.OnPromote}, {"--on-demote ", set.OnDemote}, {"--health-check ", set.HealthCheck}} {
		if len(c.argv) == 0 {
			continue
		}
		if code, err := checkCommand(c.argv[0]); err != nil {
			return nil, code, errors.New(c.what + err.Error())
		}
	}
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		// The keeper is ballot re-executed, and it finds escaped
		// descendants in /proc: without it nothing can be supervised.
		return nil, exitFailure, errors.New("/proc is not mounted: ballot needs it to run and supervise the command (mount -t proc proc /proc)")
	}
	return sched, 0, nil
}

// checkPing refuses what --ping-url cannot use: both ways of giving it,
// a CA file that holds none.
func checkPing(set *Settings) error {
	if f := set.PingURLFile; f != "" {
		if set.PingURL != "" {
			return fmt.Errorf("--ping-url-file %q: not with --ping-url (from %s); give the URL one way", f, set.Sources["ping-url"])
		}
		u, err := readPingURLFile(f)
		if err == nil {
			_, err = parsePingURL(u)
		}
		if err != nil {
			return fmt.Errorf("--ping-url-file %q: %v", f, err)
		}
		set.PingURL = u
	}
	if set.PingCA != "" && set.PingURL != "" && strings.HasPrefix(set.PingURL, "https:") {
		if _, err := loadPingTLS(set.PingCA); err != nil {
			return fmt.Errorf("--ping-ca %q: %v", set.PingCA, err)
		}
	}
	return nil
}

// checkOnce refuses flags that contradict --once-key.
func checkOnce(set *Settings) error {
	given := func(name string) bool { return set.Sources[name] != "" && set.Sources[name] != "default" }
	if set.OnceKey == "" {
		if given("once-retry-unfinished") && set.OnceRetryUnfinished {
			return errors.New("--once-retry-unfinished: needs --once-key")
		}
		if set.Command == cmdRunOnce && given("retries") && set.Retries > 0 {
			// 0, as ballot.json.example has it, is no retries: fine.
			return fmt.Errorf("--retries %d: with run once, needs --once-key (a run recorded per key is what is attempted again)", set.Retries)
		}
		if set.Command == cmdRunOnce {
			// From a config file shared with run cron it is not a mistake.
			for _, p := range []string{"on-run-end", "ping-url", "ping-url-file"} {
				unset := p == "ping-url" && set.PingURL == "" // --ping-url= unsets
				if given(p) && !unset && !strings.HasPrefix(set.Sources[p], "config file") {
					return fmt.Errorf("--%s: with run once, needs --once-key (only a run recorded per key has an end to report)", p)
				}
			}
		}
		return nil
	}
	for _, p := range []string{"on-child-success", "on-child-error"} {
		if given(p) {
			return fmt.Errorf("--%s %s: does not apply with --once-key, after which ballot exits with the command's exit code; leave it out", p, map[string]childPolicy{"on-child-success": set.OnChildSuccess, "on-child-error": set.OnChildError}[p])
		}
	}
	switch {
	case set.OnElectionFailure == electionRunAnyway:
		return errors.New("--on-election-failure run-anyway: contradicts --once-key (a run without election cannot be recorded); use retry or exit")
	case len(set.Args) == 0:
		return errors.New(`--once-key: needs a command after "--"`)
	}
	return nil
}

// knownExecFormat: path starts as the programs the kernel runs do, an ELF
// executable or a #! script. True when that cannot be read (mode 0111,
// not a regular file): then only running it tells.
func knownExecFormat(path string) bool {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	return bytes.HasPrefix(head, []byte("\x7fELF")) || bytes.HasPrefix(head, []byte("#!"))
}

// checkCommand refuses, before anything is started, a command that cannot
// be executed here.
func checkCommand(name string) (int, error) {
	path, err := exec.LookPath(name)
	switch {
	case err == nil && !knownExecFormat(path):
		// Elected, it would fail with "exec format error" and be retried
		// forever.
		return exitNotExecutable, fmt.Errorf("command %q: not a program: neither an executable (ELF) nor a script starting with #!, so the kernel would refuse it (exec format error)", name)
	case err == nil:
		return 0, nil
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist):
		return exitNotFound, fmt.Errorf("command %q: not found (not a file, and not in PATH)", name)
	default:
		return exitNotExecutable, fmt.Errorf("command %q: cannot be executed: %v", name, err)
	}
}

// scheduleSource names where --schedule came from, for its error message.
func scheduleSource(set *Settings) string {
	return paramSource(set, "schedule")
}

func logSources(log *slog.Logger, set *Settings) {
	if set.ConfigFile != "" {
		log.Debug("configuration file read", "path", set.ConfigFile)
	}
	names := make([]string, 0, len(set.Sources))
	for k := range set.Sources {
		names = append(names, k)
	}
	sortStrings(names)
	for _, k := range names {
		v := set.Values[k]
		if v == "" && set.Sources[k] == "default" {
			v = "none"
			if p := lookupParam(k); p != nil && p.shown != "" {
				v = strings.Join(strings.Fields(p.shown), " ")
			}
		}
		log.Debug("parameter", "name", k, "from", set.Sources[k], "value", redactValue(v))
	}
}
