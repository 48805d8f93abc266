package main

// Settings: what ballot was asked to do, as parsed from the command line,
// the environment and the config file.

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// The policies are types of their own, so that a connection-loss policy
// compared with a child policy does not compile (both have an "exit").

// childPolicy is on-child-success / on-child-error: what a run's end means.
type childPolicy string

const (
	policyRerun   childPolicy = "rerun"
	policyReelect childPolicy = "reelect"
	policyExit    childPolicy = "exit"
	policyIgnore  childPolicy = "ignore"
)

// electionPolicy is on-election-failure: what a failure to join means.
type electionPolicy string

const (
	electionRetry     electionPolicy = "retry"
	electionRunAnyway electionPolicy = "run-anyway"
	electionExit      electionPolicy = "exit"
)

// Values for zookeeper-acl.
const (
	aclOpen             = zookeeper.ACLOpen
	aclCreator          = zookeeper.ACLCreator
	aclCreatorWorldRead = zookeeper.ACLCreatorWorldRead
)

// lossPolicy is on-connection-loss: what a leader does when its
// connection to ZooKeeper is lost.
type lossPolicy string

const (
	lossReelect lossPolicy = "reelect"
	lossExit    lossPolicy = "exit"
	lossIgnore  lossPolicy = "ignore"
)

// Settings is every parameter after precedence (flag > environment > config
// file > default) has been applied and every value validated.
type Settings struct {
	Command    string   // "run once", "run cron", "run crontab", "info", "watch", "leader", "version", "help"
	Args       []string // the child command line (after "--"), for run commands; nil: none (hooks only)
	ConfigFile string   // the file actually read, "" if none

	// global
	ZooKeeperServers []string // normalised to host:port, without the chroot
	ZooKeeperChroot  string   // a "/chroot" suffix of --zookeeper-servers; "" if none
	BasePath         string   // absolute, no trailing slash; the chroot already prepended
	SessionTimeout   time.Duration
	LogLevel         slog.Level
	LogFormat        string // human, json, raw
	Debug            bool

	// global: secure ZooKeeper (zkaccess.go reads the files)
	ZooKeeperTLS           bool   // given, or implied by a --zookeeper-tls-* option
	ZooKeeperTLSCA         string // PEM file; "": the system's CA certificates
	ZooKeeperTLSCert       string // PEM file of a client certificate; "" if none
	ZooKeeperTLSKey        string // PEM file of its private key
	ZooKeeperTLSServerName string // "": each server's host as written
	ZooKeeperAuthFile      string // file holding user:password (digest); "" if none
	ZooKeeperACL           string // open, creator, creator-world-read (default resolved)

	// run once / run cron
	CandidateID       string
	OnChildSuccess    childPolicy
	OnChildError      childPolicy
	OnElectionFailure electionPolicy
	OnConnectionLoss  lossPolicy
	WrapChildLogs     bool
	Quiet             bool // --quiet: only warnings and errors of ballot's own, the command's output unwrapped
	StopGracePeriod   time.Duration
	Timeout           time.Duration // a run of the command is stopped after this; 0: none
	Priority          int           // --priority: a higher one goes ahead in line
	Slots             int           // --slots: how many lead at once
	PreemptAfter      time.Duration // hand over to a higher priority ready this long; 0: never

	// run once
	OnceKey             string // "": none
	OnceRetryUnfinished bool
	NoWait              bool
	WaitTimeout         time.Duration // give up waiting in line after this (exit 75); 0: none
	RerunLimit          rerunLimit    // --rerun-limit: at most N reruns within a window, then hand over; zero: none

	// run cron
	Schedule           string
	Timezone           *time.Location
	StartingDeadline   time.Duration // how late a missed time may still run; 0: missed times are skipped
	CatchUpDefault     bool          // --starting-deadline auto (the default): a brand-new election runs no past time
	Spread             time.Duration // --spread: each run starts this election's offset in [0, Spread) after its time
	Retries            int           // further attempts of a failed or lost run (and of a --once-key run)
	HistoryOutputBytes int           // the last bytes of each run's output kept in its history entry
	RetryDelay         time.Duration // before the 2nd attempt; doubling after, at most retryDelayCap
	Overlap            string        // run cron: a time due while the previous run goes on: skip, queue, replace, allow
	OverlapLimit       int           // --overlap allow: at most this many runs at once

	// run crontab
	CrontabFile  string // the crontab FILE; "": the config file's "jobs"
	CrontabCheck bool   // --check: validate and print the jobs, connect to nothing
	ConfigJobs   []byte // the config file's "jobs" as raw JSON; nil: none

	// run once / run cron: hooks, leader data, health (see hooks.go)
	OnPromote      []string      // command line run on becoming leader, before the command
	OnDemote       []string      // command line run on ceasing to lead, after the command is gone
	HookTimeout    time.Duration // a hook still running after this is killed
	OnRunEnd       []string      // command line run after each run of run cron or --once-key (hooks.go)
	PingURL        string        // --ping-url or the content of --ping-url-file (ping.go); a secret
	PingURLFile    string        // --ping-url-file, read into PingURL by checkPing
	PingCA         string        // PEM file of the CAs for an https ping URL; "": the system's
	LeaderData     string        // published in <base>/leader once leading ("@file" already read)
	HealthCheck    []string      // command line; empty: no health gating
	HealthInterval time.Duration
	HealthTimeout  time.Duration
	HealthFailures int // consecutive failures before acting
	MetricsFile    string

	// info / watch / leader / history / trigger
	Output  string // human, json
	Verbose bool   // info: the detail after the summary

	// history
	Limit      int  // entries to print
	ShowOutput bool // history: print each run's output tail

	// check
	MaxAge       time.Duration // 0: no age check
	FailCritical bool          // a failed last run is CRITICAL, not WARNING

	// leader, step-down
	Wait time.Duration // 0: do not wait

	// pause
	Reason string

	// drain: until the candidate's host reboots
	UntilReboot bool

	// Sources records where each parameter's value came from ("flag",
	// "environment BALLOT_ZOOKEEPER_SERVERS", "config file /etc/ballot/ballot.json",
	// "default"), keyed by parameter name; logged with --debug.
	Sources map[string]string
	// Values is each parameter's value as given (flag syntax; a config
	// file's JSON compacted), keyed like Sources; logged with --debug,
	// secrets redacted (redactValue).
	Values map[string]string
}

// The parameters' shape: commands, scopes, kinds and environment names.
// The table itself is in params.go; parsing in cmdline.go and
// configfile.go; value checks in values.go; help texts in help.go.

// Settings.Command values.
const (
	cmdRunOnce = "run once"
	cmdRunCron = "run cron"
	// run crontab: many run cron jobs in one process (crontab.go).
	cmdRunCrontab = "run crontab"
	cmdInfo       = "info"
	cmdWatch      = "watch"
	cmdLeader     = "leader"
	cmdStepDown   = "step-down"
	cmdPause      = "pause"
	cmdResume     = "resume"
	cmdDrain      = "drain"
	cmdUndrain    = "undrain"
	cmdTrigger    = "trigger"
	cmdVersion    = "version"
	cmdHelp       = "help"
	cmdHistory    = "history"
	cmdCheck      = "check"
	cmdJobs       = "jobs"
	// completion prints a shell's completion script (paramdocs.go).
	cmdCompletion = "completion"
)

// usageError is a usage or configuration error: main prints
// "ballot: " + Error() as one line on stderr and exits 2 (code, when set:
// check exits 3).
type usageError struct {
	msg  string
	code int
}

func (e *usageError) exitCode() int {
	if e.code != 0 {
		return e.code
	}
	return exitUsage
}

func (e *usageError) Error() string { return e.msg }

// usagef builds a *usageError; the message is forced onto one line.
func usagef(format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	msg = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(msg)
	return &usageError{msg: msg}
}

// helpRequested is returned instead of Settings when help was asked for:
// main prints text on stdout and exits 0.
type helpRequested struct{ text string }

func (h *helpRequested) Error() string { return "help requested" }

// defaultConfigPaths lists the files searched, in order, when neither
// --config-file nor BALLOT_CONFIG_FILE is given. A variable so tests can replace it.
var defaultConfigPaths = func(home string) []string {
	var paths []string
	if home != "" {
		paths = append(paths, filepath.Join(home, ".config", "ballot", "ballot.json"))
	}
	return append(paths, "/etc/ballot/ballot.json", "./ballot.json")
}

type paramScope int

const (
	scopeGlobal    paramScope = iota // every command except version and help
	scopeRun                         // run once, run cron, run crontab
	scopeCron                        // run cron, run crontab
	scopeOnce                        // run once
	scopeOutput                      // info, watch, leader, history, trigger, jobs
	scopeLeader                      // leader, step-down
	scopeCandidate                   // run once, run cron, step-down
	scopePause                       // pause
	scopeDrain                       // drain
	scopeInfo                        // info
	scopeHistory                     // history
	scopeCheck                       // check
	scopeCrontab                     // run crontab
	scopeSchedule                    // run cron (run crontab: each job's line)
)

func (sc paramScope) usedBy(cmd string) bool {
	switch sc {
	case scopeGlobal:
		return cmd == cmdRunOnce || cmd == cmdRunCron || cmd == cmdRunCrontab || cmd == cmdInfo || cmd == cmdWatch || cmd == cmdLeader ||
			cmd == cmdStepDown || cmd == cmdPause || cmd == cmdResume || cmd == cmdHistory || cmd == cmdCheck ||
			cmd == cmdDrain || cmd == cmdUndrain || cmd == cmdTrigger || cmd == cmdJobs
	case scopeRun:
		return cmd == cmdRunOnce || cmd == cmdRunCron || cmd == cmdRunCrontab
	case scopeCron:
		return cmd == cmdRunCron || cmd == cmdRunCrontab
	case scopeCrontab:
		return cmd == cmdRunCrontab
	case scopeSchedule:
		return cmd == cmdRunCron
	case scopeOnce:
		return cmd == cmdRunOnce
	case scopeOutput:
		return cmd == cmdInfo || cmd == cmdWatch || cmd == cmdLeader || cmd == cmdHistory || cmd == cmdTrigger || cmd == cmdJobs
	case scopeInfo:
		return cmd == cmdInfo
	case scopeHistory:
		return cmd == cmdHistory
	case scopeCheck:
		return cmd == cmdCheck
	case scopeLeader:
		return cmd == cmdLeader || cmd == cmdStepDown || cmd == cmdTrigger || cmd == cmdDrain
	case scopeCandidate:
		return cmd == cmdRunOnce || cmd == cmdRunCron || cmd == cmdRunCrontab || cmd == cmdStepDown || cmd == cmdDrain || cmd == cmdUndrain
	case scopePause:
		return cmd == cmdPause || cmd == cmdDrain
	case scopeDrain:
		return cmd == cmdDrain
	}
	return false
}

func (sc paramScope) commands() string {
	switch sc {
	case scopeRun:
		return "run once, run cron and run crontab"
	case scopeCron:
		return "run cron and run crontab"
	case scopeCrontab:
		return "run crontab"
	case scopeSchedule:
		return "run cron"
	case scopeOnce:
		return "run once"
	case scopeOutput:
		return "info, watch, leader, history, trigger and jobs"
	case scopeInfo:
		return "info"
	case scopeHistory:
		return "history"
	case scopeCheck:
		return "check"
	case scopeLeader:
		return "leader, step-down, trigger and drain"
	case scopeCandidate:
		return "run once, run cron, run crontab, step-down, drain and undrain"
	case scopePause:
		return "pause and drain"
	case scopeDrain:
		return "drain"
	}
	return "every command but version and help"
}

// commandList names the commands in messages.
const commandList = "run once, run cron, run crontab, info, jobs, watch, leader, history, check, step-down, pause, resume, trigger, drain, undrain, version, help, completion"

type paramKind int

const (
	kindString   paramKind = iota // JSON string
	kindDuration                  // JSON string holding a Go duration
	kindBool                      // JSON true/false
	kindList                      // JSON array of strings (zookeeper-servers)
	kindCommand                   // JSON string split into words, or array of strings taken as argv
	kindInt                       // JSON whole number
)

// param describes one parameter: its flag name (also its JSON key), the
// environment variable derived from it, and how to validate and store it.
type param struct {
	name  string
	scope paramScope
	kind  paramKind
	arg   string // placeholder in help, e.g. DURATION
	def   string // default in flag syntax; "" and req or opt: no default
	// shown is the default as help words it, for an opt parameter whose
	// default is not a value (the system's CAs) or depends on others.
	shown string
	req   bool   // mandatory (no default)
	opt   bool   // optional with no default: left unset (zero) unless given
	help  string // may span lines, "\n"-separated
	// choices are the values an enum parameter allows, for completions,
	// the man page and the docs' test (paramdocs.go); nil: not an enum.
	choices []string
	// apply validates v and stores it in s. Its error is the reason only;
	// the caller prefixes where the value came from. Unused for config-file
	// and zookeeper-servers, which are handled specially.
	apply func(s *Settings, v string) error
	// secret: a usage error shows the value redacted (redactURL), never whole.
	secret bool
	// job: run crontab takes it on a job's line (or config "jobs" entry)
	// too, for that job; without it a run crontab parameter is the
	// process's alone (one session, one log, one candidate id).
	job bool
}

// cronJob is one job of a crontab: one line of the file, or one entry of
// the config file's "jobs".
type cronJob struct {
	Name  string    // the job's name: its election is <base>/<Name>
	Where string    // "FILE:LINE" (or "CONFIG: jobs[3]") for log lines and messages
	Set   *Settings // the job's complete settings, as run cron would have them (crontab.go)
}

// quote is v as a usage error shows it.
func (p *param) quote(v string) string {
	if p.secret {
		return strconv.Quote(redactURL(v))
	}
	return strconv.Quote(v)
}

func (p *param) env() string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(p.name, "-", "_"))
}

// envPrefix: every parameter is read from BALLOT_<NAME>, so that a variable
// set for other programs (DEBUG, TIMEOUT, OUTPUT in a cron environment)
// never changes what ballot does.
const envPrefix = "BALLOT_"

// legacyEnv are the unprefixed names the older ZooKeeper-based ballot
// documented, still read for drop-in compatibility; the BALLOT_ name wins.
// Every other unprefixed name is ignored.
var legacyEnv = map[string]string{
	"zookeeper-servers":         "ZOOKEEPER_SERVERS",
	"zookeeper-base-path":       "ZOOKEEPER_BASE_PATH",
	"zookeeper-session-timeout": "ZOOKEEPER_SESSION_TIMEOUT",
	"log-level":                 "LOG_LEVEL",
	"log-format":                "LOG_FORMAT",
}

// lookupEnv returns p's value from the environment and the variable it
// came from ("" if none is set).
func (p *param) lookupEnv(getenv func(string) string) (value, name string) {
	if v := getenv(p.env()); v != "" {
		return v, p.env()
	}
	if legacy := legacyEnv[p.name]; legacy != "" && getenv(legacy) != "" {
		return getenv(legacy), legacy
	}
	return "", ""
}

var (
	policyValues   = []childPolicy{policyRerun, policyReelect, policyExit, policyIgnore}
	electionValues = []electionPolicy{electionRetry, electionRunAnyway, electionExit}
	lossValues     = []lossPolicy{lossReelect, lossExit, lossIgnore}
	aclValues      = []string{aclOpen, aclCreator, aclCreatorWorldRead}
	logLevelNames  = []string{"trace", "debug", "info", "warn", "error", "fatal", "panic"}
	logLevels      = []slog.Level{LevelTrace, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, LevelFatal, LevelPanic}
)

// paramSource names where parameter name's value came from, the way
// usage errors do: "--name", "environment NAME" or
// `config file PATH: key "name"`.
func paramSource(s *Settings, name string) string {
	switch src := s.Sources[name]; {
	case strings.HasPrefix(src, "environment "):
		return src
	case strings.HasPrefix(src, "config file "):
		return fmt.Sprintf("%s: key %q", src, name)
	}
	return "--" + name
}
