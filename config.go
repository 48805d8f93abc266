package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
)

// Policy values for on-child-success / on-child-error.
const (
	policyRerun   = "rerun"
	policyReelect = "reelect"
	policyExit    = "exit"
	policyIgnore  = "ignore"
)

// Values for on-election-failure.
const (
	electionRetry     = "retry"
	electionRunAnyway = "run-anyway"
	electionExit      = "exit"
)

// Values for zookeeper-acl.
const (
	aclOpen             = "open"
	aclCreator          = "creator"
	aclCreatorWorldRead = "creator-world-read"
)

// Values for on-connection-loss.
const (
	lossReelect = "reelect"
	lossExit    = "exit"
	lossIgnore  = "ignore"
)

// Settings is every parameter after precedence (flag > environment > config
// file > default) has been applied and every value validated.
type Settings struct {
	Command    string   // "run once", "run cron", "info", "watch", "leader", "version", "help"
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
	OnChildSuccess    string
	OnChildError      string
	OnElectionFailure string
	OnConnectionLoss  string
	WrapChildLogs     bool
	StopGracePeriod   time.Duration

	// run once
	OnceKey             string // "": none
	OnceRetryUnfinished bool
	NoWait              bool

	// run cron
	Schedule         string
	Timezone         *time.Location
	StartingDeadline time.Duration // 0: none
	Timeout          time.Duration // 0: none

	// run once / run cron: hooks, leader data, health (see hooks.go)
	OnPromote      []string      // command line run on becoming leader, before the command
	OnDemote       []string      // command line run on ceasing to lead, after the command is gone
	HookTimeout    time.Duration // a hook still running after this is killed
	LeaderData     string        // published in <base>/leader once leading ("@file" already read)
	HealthCheck    []string      // command line; empty: no health gating
	HealthInterval time.Duration
	HealthTimeout  time.Duration
	HealthFailures int // consecutive failures before acting
	MetricsFile    string

	// info / watch / leader
	Output string // human, json

	// leader, step-down
	Wait time.Duration // 0: do not wait

	// pause
	Reason string

	// Sources records where each parameter's value came from ("flag",
	// "environment BALLOT_ZOOKEEPER_SERVERS", "config file /etc/ballot/ballot.json",
	// "default"), keyed by parameter name; logged with --debug.
	Sources map[string]string
}

// Log levels beyond slog's four.
const (
	LevelTrace = slog.Level(-8)
	LevelFatal = slog.Level(12)
	LevelPanic = slog.Level(16)
)

// ---------------------------------------------------------------------------
// Command line, environment and config file parsing.
// ---------------------------------------------------------------------------

// Settings.Command values.
const (
	cmdRunOnce  = "run once"
	cmdRunCron  = "run cron"
	cmdInfo     = "info"
	cmdWatch    = "watch"
	cmdLeader   = "leader"
	cmdStepDown = "step-down"
	cmdPause    = "pause"
	cmdResume   = "resume"
	cmdVersion  = "version"
	cmdHelp     = "help"
)

// usageError is a usage or configuration error: main prints
// "ballot: " + Error() as one line on stderr and exits 2.
type usageError struct{ msg string }

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
	scopeRun                         // run once, run cron
	scopeCron                        // run cron
	scopeOnce                        // run once
	scopeOutput                      // info, watch, leader
	scopeLeader                      // leader, step-down
	scopeCandidate                   // run once, run cron, step-down
	scopePause                       // pause
)

func (sc paramScope) usedBy(cmd string) bool {
	switch sc {
	case scopeGlobal:
		return cmd == cmdRunOnce || cmd == cmdRunCron || cmd == cmdInfo || cmd == cmdWatch || cmd == cmdLeader ||
			cmd == cmdStepDown || cmd == cmdPause || cmd == cmdResume
	case scopeRun:
		return cmd == cmdRunOnce || cmd == cmdRunCron
	case scopeCron:
		return cmd == cmdRunCron
	case scopeOnce:
		return cmd == cmdRunOnce
	case scopeOutput:
		return cmd == cmdInfo || cmd == cmdWatch || cmd == cmdLeader
	case scopeLeader:
		return cmd == cmdLeader || cmd == cmdStepDown
	case scopeCandidate:
		return cmd == cmdRunOnce || cmd == cmdRunCron || cmd == cmdStepDown
	case scopePause:
		return cmd == cmdPause
	}
	return false
}

func (sc paramScope) commands() string {
	switch sc {
	case scopeRun:
		return "run once and run cron"
	case scopeCron:
		return "run cron"
	case scopeOnce:
		return "run once"
	case scopeOutput:
		return "info, watch and leader"
	case scopeLeader:
		return "leader and step-down"
	case scopeCandidate:
		return "run once, run cron and step-down"
	case scopePause:
		return "pause"
	}
	return "run once, run cron, info, watch and leader"
}

// commandList names the commands in messages.
const commandList = "run once, run cron, info, watch, leader, step-down, pause, resume, version, help"

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
	// apply validates v and stores it in s. Its error is the reason only;
	// the caller prefixes where the value came from. Unused for config-file
	// and zookeeper-servers, which are handled specially.
	apply func(s *Settings, v string) error
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
	policyValues   = []string{policyRerun, policyReelect, policyExit, policyIgnore}
	electionValues = []string{electionRetry, electionRunAnyway, electionExit}
	lossValues     = []string{lossReelect, lossExit, lossIgnore}
	aclValues      = []string{aclOpen, aclCreator, aclCreatorWorldRead}
	logLevelNames  = []string{"trace", "debug", "info", "warn", "error", "fatal", "panic"}
	logLevels      = []slog.Level{LevelTrace, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, LevelFatal, LevelPanic}
)

// params is every parameter, in help order. Built in init because the help
// texts refer back to it.
var params []*param

func init() {
	params = []*param{
		{name: "config-file", scope: scopeGlobal, arg: "PATH",
			def:  "the first that exists of $HOME/.config/ballot/ballot.json,\n        /etc/ballot/ballot.json, ./ballot.json;",
			help: "JSON config file; a named file must exist"},
		{name: "zookeeper-servers", scope: scopeGlobal, kind: kindList, arg: "HOST[:PORT],...",
			def: "localhost:2181",
			help: "ZooKeeper servers; port 2181 if omitted; flag may repeat; a chroot suffix\n" +
				"(zk1,zk2/app) is prepended to the base path"},
		{name: "zookeeper-base-path", scope: scopeGlobal, arg: "PATH", def: "/ballot/election",
			help: "ZooKeeper node under which the election is held",
			apply: func(s *Settings, v string) error {
				if err := checkZKPath(v); err != nil {
					return err
				}
				s.BasePath = v
				return nil
			}},
		{name: "zookeeper-session-timeout", scope: scopeGlobal, kind: kindDuration, arg: "DURATION", def: "5s",
			help: "ZooKeeper session timeout, > 0",
			apply: func(s *Settings, v string) (err error) {
				s.SessionTimeout, err = parseDuration(v, true)
				return err
			}},
		{name: "zookeeper-tls", scope: scopeGlobal, kind: kindBool, def: "false",
			help: "connect to ZooKeeper with TLS (the servers' secureClientPort); implied by the\n" +
				"--zookeeper-tls-* options",
			apply: func(s *Settings, v string) (err error) {
				s.ZooKeeperTLS, err = parseBool(v)
				return err
			}},
		{name: "zookeeper-tls-ca", scope: scopeGlobal, arg: "FILE", opt: true, shown: "the system's CA certificates",
			help: "PEM file of the CA certificates that sign the ZooKeeper servers' certificates",
			apply: func(s *Settings, v string) (err error) {
				s.ZooKeeperTLSCA, err = fileName(v)
				return err
			}},
		{name: "zookeeper-tls-cert", scope: scopeGlobal, arg: "FILE", opt: true,
			help: "PEM file of a client certificate, for servers with ssl.clientAuth=need;\n" +
				"needs --zookeeper-tls-key",
			apply: func(s *Settings, v string) (err error) {
				s.ZooKeeperTLSCert, err = fileName(v)
				return err
			}},
		{name: "zookeeper-tls-key", scope: scopeGlobal, arg: "FILE", opt: true,
			help: "PEM file of the client certificate's private key",
			apply: func(s *Settings, v string) (err error) {
				s.ZooKeeperTLSKey, err = fileName(v)
				return err
			}},
		{name: "zookeeper-tls-server-name", scope: scopeGlobal, arg: "NAME", opt: true,
			shown: "each server's host as written in --zookeeper-servers",
			help:  "the name the servers' certificates must be valid for",
			apply: func(s *Settings, v string) error {
				if err := checkServerName(v); err != nil {
					return err
				}
				s.ZooKeeperTLSServerName = v
				return nil
			}},
		{name: "zookeeper-auth-file", scope: scopeGlobal, arg: "FILE", opt: true,
			help: "file holding user:password for ZooKeeper's digest scheme, sent on every\n" +
				"connection (credentials are never taken from the command line or the environment)",
			apply: func(s *Settings, v string) (err error) {
				s.ZooKeeperAuthFile, err = fileName(v)
				return err
			}},
		{name: "zookeeper-acl", scope: scopeGlobal, arg: "ACL", opt: true,
			shown: "creator with credentials (--zookeeper-auth-file or a client certificate),\n        open without",
			help: "ACL of every node ballot creates: open (anyone may do anything), creator (only\n" +
				"ballot's identity: its digest user, its client certificate), creator-world-read\n" +
				"(the same, and anyone may read: info, watch and leader work without credentials)",
			apply: func(s *Settings, v string) (err error) {
				s.ZooKeeperACL, err = oneOf(v, "", aclValues...)
				return err
			}},
		{name: "log-level", scope: scopeGlobal, arg: "LEVEL", def: "info",
			help: "trace, debug, info, warn, error, fatal or panic",
			apply: func(s *Settings, v string) error {
				for i, n := range logLevelNames {
					if strings.EqualFold(v, n) {
						s.LogLevel = logLevels[i]
						return nil
					}
				}
				return fmt.Errorf("not a log level; use one of %s", strings.Join(logLevelNames, ", "))
			}},
		{name: "log-format", scope: scopeGlobal, arg: "FORMAT", def: "human",
			help: "human, json or raw",
			apply: func(s *Settings, v string) (err error) {
				s.LogFormat, err = oneOf(v, "not a log format; ", "human", "json", "raw")
				return err
			}},
		{name: "debug", scope: scopeGlobal, kind: kindBool, def: "false",
			help: "log debugging details, such as where each setting came from",
			apply: func(s *Settings, v string) (err error) {
				s.Debug, err = parseBool(v)
				return err
			}},

		{name: "candidate-id", scope: scopeCandidate, arg: "ID", req: true,
			help: "this machine's name in the election (required by run; step-down: the candidate\n" +
				"to step down, only if it leads)",
			apply: func(s *Settings, v string) error {
				switch {
				case v == "":
					return errors.New("must not be empty")
				case strings.ContainsAny(v, "\n\r\x00"):
					return errors.New("must not contain a newline or NUL character")
				}
				s.CandidateID = v
				return nil
			}},
		{name: "on-child-success", scope: scopeRun, arg: "POLICY", def: policyReelect,
			help: "when the command exits 0: rerun, reelect, exit or ignore",
			apply: func(s *Settings, v string) (err error) {
				s.OnChildSuccess, err = oneOf(v, "", policyValues...)
				return err
			}},
		{name: "on-child-error", scope: scopeRun, arg: "POLICY", def: policyReelect,
			help: "when the command fails: rerun, reelect, exit or ignore",
			apply: func(s *Settings, v string) (err error) {
				s.OnChildError, err = oneOf(v, "", policyValues...)
				return err
			}},
		{name: "on-election-failure", scope: scopeRun, arg: "POLICY", def: electionRetry,
			help: "when the election cannot be held: retry, run-anyway or exit",
			apply: func(s *Settings, v string) (err error) {
				s.OnElectionFailure, err = oneOf(v, "", electionValues...)
				return err
			}},
		{name: "on-connection-loss", scope: scopeRun, arg: "POLICY", def: lossReelect,
			help: "when the connection to ZooKeeper is lost while leading: reelect = stop the command\n" +
				"before the session can expire, then stand again; exit = the same stop, then exit 125;\n" +
				"ignore = keep the command running until the session is known to be expired\n" +
				"(risks two commands at once under a network partition)",
			apply: func(s *Settings, v string) (err error) {
				s.OnConnectionLoss, err = oneOf(v, "", lossValues...)
				return err
			}},
		{name: "wrap-child-logs", scope: scopeRun, kind: kindBool, def: "true",
			help: "log the command's output lines in ballot's log format; =false passes them through",
			apply: func(s *Settings, v string) (err error) {
				s.WrapChildLogs, err = parseBool(v)
				return err
			}},
		{name: "stop-grace-period", scope: scopeRun, kind: kindDuration, arg: "DURATION", def: "10s",
			help: "time between SIGTERM and SIGKILL when stopping the command",
			apply: func(s *Settings, v string) (err error) {
				s.StopGracePeriod, err = parseDuration(v, false)
				return err
			}},
		{name: "on-promote", scope: scopeRun, kind: kindCommand, arg: "COMMAND", opt: true,
			help: "command line run when this candidate becomes leader, before the command",
			apply: func(s *Settings, v string) (err error) {
				s.OnPromote, err = splitCommandLine(v)
				return err
			}},
		{name: "on-demote", scope: scopeRun, kind: kindCommand, arg: "COMMAND", opt: true,
			help: "command line run when this candidate stops being leader, after the command is gone",
			apply: func(s *Settings, v string) (err error) {
				s.OnDemote, err = splitCommandLine(v)
				return err
			}},
		{name: "hook-timeout", scope: scopeRun, kind: kindDuration, arg: "DURATION", def: "30s",
			help: "a hook still running after this is killed, > 0",
			apply: func(s *Settings, v string) (err error) {
				s.HookTimeout, err = parseDuration(v, true)
				return err
			}},
		{name: "leader-data", scope: scopeRun, arg: "DATA|@PATH", opt: true,
			help: "text published for observers (ballot leader) once leading; @PATH: the content of\n" +
				"file PATH (at most 512 KiB); @@ for a literal leading @",
			apply: func(s *Settings, v string) (err error) {
				s.LeaderData, err = leaderData(v)
				return err
			}},
		{name: "health-check", scope: scopeRun, kind: kindCommand, arg: "COMMAND", opt: true,
			help: "command line run every --health-interval; the candidate stands for election only\n" +
				"while it passes (exits 0), and withdraws after --health-failures failures in a row",
			apply: func(s *Settings, v string) (err error) {
				s.HealthCheck, err = splitCommandLine(v)
				return err
			}},
		{name: "health-interval", scope: scopeRun, kind: kindDuration, arg: "DURATION", def: "5s",
			help: "time between health checks, > 0",
			apply: func(s *Settings, v string) (err error) {
				s.HealthInterval, err = parseDuration(v, true)
				return err
			}},
		{name: "health-timeout", scope: scopeRun, kind: kindDuration, arg: "DURATION", def: "5s",
			help: "a health check still running after this is killed and counts as failed, > 0",
			apply: func(s *Settings, v string) (err error) {
				s.HealthTimeout, err = parseDuration(v, true)
				return err
			}},
		{name: "health-failures", scope: scopeRun, kind: kindInt, arg: "N", def: "3",
			help: "failed health checks in a row before withdrawing, >= 1",
			apply: func(s *Settings, v string) error {
				n, err := strconv.Atoi(v)
				switch {
				case err != nil:
					return errors.New("not a whole number; use a number such as 3")
				case n < 1:
					return errors.New("must be at least 1")
				}
				s.HealthFailures = n
				return nil
			}},

		{name: "once-key", scope: scopeOnce, arg: "KEY", opt: true,
			help: "run the command at most once per KEY across the election, whoever starts it and\n" +
				"when (e.g. \"$(date +%F)\" from every host's crontab); a candidate that finds KEY\n" +
				"recorded exits 0 without running anything. ballot exits after the command with its\n" +
				"exit code: the on-child-* policies do not apply",
			apply: func(s *Settings, v string) error {
				switch {
				case v == "":
					return errors.New("must not be empty")
				case len(v) > onceKeyMax:
					return fmt.Errorf("longer than %d bytes", onceKeyMax)
				case strings.ContainsAny(v, "\n\r\x00"):
					return errors.New("must not contain a newline or NUL character")
				}
				s.OnceKey = v
				return nil
			}},
		{name: "once-retry-unfinished", scope: scopeOnce, kind: kindBool, def: "false",
			help: "with --once-key: run a KEY whose runner's session ended before the run finished\n" +
				"(never while that session lives); without it such a KEY is never run again",
			apply: func(s *Settings, v string) (err error) {
				s.OnceRetryUnfinished, err = parseBool(v)
				return err
			}},
		{name: "no-wait", scope: scopeOnce, kind: kindBool, def: "false",
			help: "if another candidate leads now, exit 75 at once instead of waiting in line\n" +
				"(like flock -n)",
			apply: func(s *Settings, v string) (err error) {
				s.NoWait, err = parseBool(v)
				return err
			}},

		{name: "metrics-file", scope: scopeRun, arg: "PATH", opt: true,
			help: "keep a Prometheus text-format file of this candidate's state at PATH (for\n" +
				"node_exporter's textfile collector); its directory must exist",
			apply: func(s *Settings, v string) error {
				if v == "" || strings.HasSuffix(v, "/") {
					return errors.New("must name a file, such as /var/lib/node_exporter/textfile_collector/ballot.prom")
				}
				s.MetricsFile = v
				return nil
			}},

		{name: "schedule", scope: scopeCron, arg: "EXPR", req: true,
			help: `cron expression, e.g. "*/5 * * * *" or @hourly (required)`,
			apply: func(s *Settings, v string) error {
				if strings.TrimSpace(v) == "" {
					return errors.New("must not be empty; use a cron expression such as \"*/5 * * * *\"")
				}
				s.Schedule = v
				return nil
			}},
		{name: "timezone", scope: scopeCron, arg: "ZONE", def: "UTC",
			help: "time zone of the schedule: an IANA name such as Europe/Berlin, or Local",
			apply: func(s *Settings, v string) error {
				loc, err := loadLocation(v)
				if err != nil {
					return err
				}
				s.Timezone = loc
				return nil
			}},
		{name: "starting-deadline", scope: scopeCron, kind: kindDuration, arg: "DURATION", def: "0",
			help: "a scheduled time missed (no leader at that moment) is still run by a new leader\n" +
				"if it is less than this late; 0: missed times are skipped and logged",
			apply: func(s *Settings, v string) (err error) {
				s.StartingDeadline, err = parseDuration(v, false)
				return err
			}},
		{name: "timeout", scope: scopeCron, kind: kindDuration, arg: "DURATION", def: "0",
			help: "stop a run that lasts longer than this; 0: no limit",
			apply: func(s *Settings, v string) (err error) {
				s.Timeout, err = parseDuration(v, false)
				return err
			}},

		{name: "output", scope: scopeOutput, arg: "FORMAT", def: "human",
			help: "human or json",
			apply: func(s *Settings, v string) (err error) {
				s.Output, err = oneOf(v, "not an output format; ", "human", "json")
				return err
			}},

		{name: "reason", scope: scopePause, arg: "TEXT", opt: true,
			help: "why the election is paused, shown by info, watch and the leader's log",
			apply: func(s *Settings, v string) error {
				if strings.ContainsAny(v, "\n\r\x00") {
					return errors.New("must be one line")
				}
				s.Reason = v
				return nil
			}},
		{name: "wait", scope: scopeLeader, kind: kindDuration, arg: "DURATION", def: "0",
			help: "leader: wait up to this long for a leader to acknowledge; step-down: for another\n" +
				"candidate to lead; 0: do not wait",
			apply: func(s *Settings, v string) (err error) {
				s.Wait, err = parseDuration(v, false)
				return err
			}},
	}
}

func lookupParam(name string) *param {
	for _, p := range params {
		if p.name == name {
			return p
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// Value checks. Each returns only the reason; callers add the source.

func oneOf(v, what string, allowed ...string) (string, error) {
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			return a, nil
		}
	}
	return "", fmt.Errorf("%suse one of %s", what, strings.Join(allowed, ", "))
}

func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errors.New("not a boolean; use true or false")
	}
	return b, nil
}

func parseDuration(v string, positive bool) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return 0, errors.New("not a duration; use a Go duration such as 5s or 500ms")
	case d < 0:
		return 0, errors.New("must not be negative")
	case positive && d == 0:
		return 0, errors.New("must be greater than zero")
	}
	return d, nil
}

func loadLocation(v string) (*time.Location, error) {
	if v == "" {
		return nil, errors.New("must not be empty; use an IANA time zone name such as Europe/Berlin, UTC or Local")
	}
	loc, err := time.LoadLocation(v)
	if err != nil {
		return nil, errors.New("unknown time zone; use an IANA name such as Europe/Berlin, UTC or Local")
	}
	return loc, nil
}

// splitCommandLine splits v into argv the way a POSIX shell splits words,
// but expands nothing and runs no shell: words are separated by unquoted
// spaces, tabs and newlines; '...' is literal; inside "..." a backslash
// escapes only \\ \" \$ \` (and a newline, which it removes); outside quotes
// a backslash escapes any character (and removes a newline). $, `, *, ~, ;,
// |, >, # and the like are ordinary characters.
func splitCommandLine(v string) ([]string, error) {
	var (
		argv   []string
		word   strings.Builder
		inWord bool // a word has begun, possibly empty (as after '')
	)
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				argv = append(argv, word.String())
				word.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(v[i+1:], '\'')
			if end < 0 {
				return nil, errors.New(`unterminated single quote; close it with ', or write \' for a literal one`)
			}
			word.WriteString(v[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(v) && v[i] != '"'; i++ {
				if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("\\\"$`\n", v[i+1]) >= 0 {
					i++
					if v[i] == '\n' {
						continue
					}
				}
				word.WriteByte(v[i])
			}
			if i == len(v) {
				return nil, errors.New(`unterminated double quote; close it with ", or write \" for a literal one`)
			}
			inWord = true
		case c == '\\':
			if i+1 == len(v) {
				return nil, errors.New(`ends with a backslash that escapes nothing; write \\ for a backslash`)
			}
			i++
			if v[i] != '\n' {
				word.WriteByte(v[i])
				inWord = true
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		argv = append(argv, word.String())
	}
	return argv, checkArgv(argv)
}

// checkArgv checks a hook's command line, split or given as a JSON array.
func checkArgv(argv []string) error {
	if len(argv) == 0 {
		return errors.New("empty command line; name a command to run, e.g. /usr/local/bin/promote")
	}
	if argv[0] == "" {
		return errors.New("the command name is an empty string")
	}
	for _, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return errors.New("contains a NUL character")
		}
	}
	return nil
}

// maxLeaderData bounds --leader-data, which is stored in one ZooKeeper node.
const maxLeaderData = 512 << 10

// leaderData resolves a --leader-data value: "@PATH" is the content of file
// PATH (relative to the working directory), "@@..." a literal "@...", and
// anything else is itself.
func leaderData(v string) (string, error) {
	path, isFile := strings.CutPrefix(v, "@")
	switch {
	case strings.HasPrefix(path, "@"):
		v, isFile = path, false
	case isFile && path == "":
		return "", errors.New("@ names no file; use @PATH to read a file, or @@ for a literal leading @")
	}
	if !isFile {
		if len(v) > maxLeaderData {
			return "", fmt.Errorf("is %d bytes; at most 512 KiB (%d bytes) can be published", len(v), maxLeaderData)
		}
		return v, nil
	}
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return "", fmt.Errorf("cannot read file %s: is a directory", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read file %s: %v", path, pathErr(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLeaderData+1))
	if err != nil {
		return "", fmt.Errorf("cannot read file %s: %v", path, pathErr(err))
	}
	if len(data) > maxLeaderData {
		return "", fmt.Errorf("file %s is larger than 512 KiB (%d bytes), the most that can be published", path, maxLeaderData)
	}
	return string(data), nil
}

// checkZKPath checks an absolute ZooKeeper node path, following ZooKeeper's
// own PathUtils.validatePath, and refuses "/" and the reserved /zookeeper.
func checkZKPath(p string) error {
	const hint = "; use an absolute ZooKeeper path such as /ballot/election"
	if p == "" {
		return errors.New("must not be empty" + hint)
	}
	if !utf8.ValidString(p) {
		return errors.New("not valid UTF-8" + hint)
	}
	for _, r := range p {
		if unicode.IsControl(r) || (r >= 0xd800 && r <= 0xf8ff) || (r >= 0xfff0 && r <= 0xffff) {
			return fmt.Errorf("contains the character %U, which ZooKeeper does not allow in paths", r)
		}
	}
	switch {
	case p[0] != '/':
		return errors.New("not absolute: must start with /" + hint)
	case p == "/":
		return errors.New("must name a node below /" + hint)
	case strings.HasSuffix(p, "/"):
		return errors.New("must not end with /" + hint)
	}
	segs := strings.Split(p[1:], "/")
	for _, seg := range segs {
		switch seg {
		case "":
			return errors.New("contains an empty segment (//)" + hint)
		case ".", "..":
			return errors.New(`must not contain "." or ".." segments` + hint)
		}
	}
	if segs[0] == "zookeeper" {
		return errors.New("/zookeeper is reserved by ZooKeeper" + hint)
	}
	return nil
}

// fileName checks a parameter naming a file; the file itself is read once
// every parameter is known (zkaccess.go).
func fileName(v string) (string, error) {
	if v == "" {
		return "", errors.New("must name a file")
	}
	if strings.IndexByte(v, 0) >= 0 {
		return "", errors.New("contains a NUL character")
	}
	return v, nil
}

// checkServerName checks a name a server certificate must be valid for: a
// DNS name or an IP address.
func checkServerName(v string) error {
	if v == "" {
		return errors.New("must not be empty; use the DNS name (or IP address) the servers' certificates are issued for")
	}
	if net.ParseIP(v) != nil {
		return nil
	}
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return errors.New("not a host name; use the DNS name (or IP address) the servers' certificates are issued for")
		}
	}
	return nil
}

// splitChroot cuts a chroot suffix, as in ZooKeeper's own connection
// strings (zk1:2181,zk2:2181/app), off a server list. "/" alone is no
// chroot, as for ZooKeeper.
func splitChroot(v string) (list, chroot string, err error) {
	i := strings.IndexByte(v, '/')
	if i < 0 {
		return v, "", nil
	}
	list, chroot = v[:i], v[i:]
	switch {
	case strings.Contains(chroot, ","):
		return "", "", errors.New("a chroot suffix goes after the last server, e.g. zk1:2181,zk2:2181/app")
	case chroot == "/":
		return list, "", nil
	}
	if err := checkZKPath(chroot); err != nil {
		return "", "", fmt.Errorf("chroot %q: %v", chroot, err)
	}
	return list, chroot, nil
}

// parseServerList splits a comma-separated list of servers, with an
// optional chroot suffix, and normalises each server to host:port.
func parseServerList(v string) ([]string, string, error) {
	v, chroot, err := splitChroot(v)
	if err != nil {
		return nil, "", err
	}
	servers, err := parseServers(v)
	return servers, chroot, err
}

// parseServers splits a comma-separated list of servers and normalises
// each to host:port.
func parseServers(v string) ([]string, error) {
	var out []string
	for _, e := range strings.Split(v, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			return nil, errors.New("empty server entry; use host or host:port, separated by commas")
		}
		hp, err := normalizeServer(e)
		if err != nil {
			return nil, fmt.Errorf("server %q: %v", e, err)
		}
		out = append(out, hp)
	}
	return out, nil
}

// normalizeServer turns "host", "host:port", "[v6addr]" or "[v6addr]:port"
// into host:port, with port 2181 when none is given.
func normalizeServer(e string) (string, error) {
	host, port := e, "2181"
	if strings.HasPrefix(e, "[") {
		end := strings.IndexByte(e, ']')
		if end < 0 {
			return "", errors.New(`missing "]" after IPv6 address`)
		}
		host = e[1:end]
		switch rest := e[end+1:]; {
		case rest == "":
		case rest[0] == ':':
			port = rest[1:]
		default:
			return "", errors.New(`unexpected text after "]"; use [address]:port`)
		}
		ip, _, _ := strings.Cut(host, "%")
		if !strings.Contains(ip, ":") || net.ParseIP(ip) == nil {
			return "", errors.New("not an IPv6 address between [ and ]")
		}
	} else {
		if strings.Count(e, ":") > 1 {
			return "", errors.New("IPv6 addresses need brackets, e.g. [::1]:2181")
		}
		if h, p, ok := strings.Cut(e, ":"); ok {
			host, port = h, p
		}
		if host == "" {
			return "", errors.New("missing host name")
		}
		for _, r := range host {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
				return "", errors.New("not a host name; use host or host:port")
			}
		}
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strings.ContainsAny(port, "+-") {
		return "", fmt.Errorf("bad port %q; use a port number from 1 to 65535", port)
	}
	return net.JoinHostPort(host, strconv.Itoa(n)), nil
}

// ---------------------------------------------------------------------------
// Flags.

// flagValue records the raw strings given for one flag; validation happens
// later so that every error can be worded the same way.
type flagValue struct {
	isBool bool
	vals   []string
}

func (v *flagValue) String() string     { return "" }
func (v *flagValue) Set(s string) error { v.vals = append(v.vals, s); return nil }
func (v *flagValue) IsBoolFlag() bool   { return v != nil && v.isBool }

// newFlagSet returns a FlagSet for cmd ("" for the flags before the command)
// with the global flags and cmd's own, all recording into vals.
func newFlagSet(cmd string, vals map[string]*flagValue) *flag.FlagSet {
	fs := flag.NewFlagSet("ballot "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for _, p := range params {
		if p.scope == scopeGlobal || (cmd != "" && p.scope.usedBy(cmd)) {
			fs.Var(vals[p.name], p.name, p.help)
		}
	}
	return fs
}

// sawTerminator reports whether fs.Parse(args) stopped at a "--" (which the
// flag package swallows) rather than at a positional argument. consumed is
// how many of args the parse used. A "--" given as a flag's value
// (--candidate-id --) is not a terminator.
func sawTerminator(fs *flag.FlagSet, args []string, consumed int) bool {
	for i := 0; i < consumed; {
		s := args[i]
		if s == "--" {
			return true
		}
		name := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "-")
		if strings.Contains(name, "=") {
			i++
			continue
		}
		if f := fs.Lookup(name); f != nil {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				i++
				continue
			}
		}
		i += 2
	}
	return false
}

// flagError turns an error of the flag package into a one-line usageError.
func flagError(cmd string, err error) error {
	prefix, hint := "", "(see ballot help)"
	if cmd != "" {
		prefix, hint = cmd+": ", "(see ballot help "+cmd+")"
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		if p := lookupParam(name); p != nil && p.scope != scopeGlobal {
			if cmd == "" {
				return usagef("--%s goes after the command; it applies to %s only %s", name, p.scope.commands(), hint)
			}
			return usagef("%sunknown flag --%s; it applies to %s only %s", prefix, name, p.scope.commands(), hint)
		}
		return usagef("%sunknown flag --%s %s", prefix, name, hint)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		name = strings.TrimLeft(name, "-")
		return usagef("%s--%s needs a value, e.g. --%s=VALUE %s", prefix, name, name, hint)
	}
	if arg, ok := strings.CutPrefix(msg, "bad flag syntax: "); ok {
		return usagef("%sbad flag syntax %q; use --name value or --name=value %s", prefix, arg, hint)
	}
	return usagef("%s%s %s", prefix, msg, hint)
}

// strayArgs is the error for positional arguments that are not allowed.
func strayArgs(cmd string, args []string, afterDashes bool) error {
	hint := "(see ballot help " + cmd + ")"
	if afterDashes {
		return usagef("%s: takes no command to run, but got %q %s", cmd, strings.Join(args, " "), hint)
	}
	a := args[0]
	if a == "true" || a == "false" {
		return usagef(`%s: unexpected argument %q; boolean flags take their value with "=", e.g. --wrap-child-logs=false %s`, cmd, a, hint)
	}
	if cmd == cmdRunOnce || cmd == cmdRunCron {
		return usagef(`%s: unexpected argument %q; put the command to run after "--" %s`, cmd, a, hint)
	}
	return usagef("%s: unexpected argument %q %s", cmd, a, hint)
}

// ---------------------------------------------------------------------------
// parseCommandLine.

// parseCommandLine parses os.Args[1:]-style args, with getenv standing in
// for os.Getenv (HOME is read through it too, for the config file search).
// It returns *usageError for usage and configuration errors and
// *helpRequested when help was asked for.
func parseCommandLine(args []string, getenv func(string) string) (*Settings, error) {
	vals := make(map[string]*flagValue, len(params))
	for _, p := range params {
		vals[p.name] = &flagValue{isBool: p.kind == kindBool}
	}

	// Global flags before the command.
	gfs := newFlagSet("", vals)
	if err := gfs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, &helpRequested{text: helpText("")}
		}
		return nil, flagError("", err)
	}
	rest := gfs.Args()
	if sawTerminator(gfs, args, len(args)-len(rest)) || len(rest) == 0 {
		return nil, usagef("no command given; use one of %s (see ballot help)", commandList)
	}

	cmd, rest := rest[0], rest[1:]
	switch cmd {
	case cmdHelp:
		return nil, helpFor(rest)
	case "run":
		if len(rest) == 0 {
			return nil, usagef(`run: missing "once" or "cron", e.g. ballot run once --candidate-id a -- /usr/bin/myservice (see ballot help run)`)
		}
		switch rest[0] {
		case "once", "cron":
			cmd, rest = "run "+rest[0], rest[1:]
		case "-h", "-help", "--help":
			return nil, &helpRequested{text: helpText("run")}
		default:
			return nil, usagef(`run: unknown mode %q; use "run once" or "run cron" (see ballot help run)`, rest[0])
		}
	case cmdInfo, cmdWatch, cmdLeader, cmdStepDown, cmdPause, cmdResume, cmdVersion:
	default:
		return nil, usagef("unknown command %q; use one of %s (see ballot help)", cmd, commandList)
	}

	// The command's flags, with the global flags again.
	fs := newFlagSet(cmd, vals)
	if cmd == cmdVersion {
		fs = newFlagSet("", vals)
	}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, &helpRequested{text: helpText(cmd)}
		}
		return nil, flagError(cmd, err)
	}
	pos := fs.Args()
	dashes := sawTerminator(fs, rest, len(rest)-len(pos))
	isRun := cmd == cmdRunOnce || cmd == cmdRunCron
	if len(pos) > 0 && (!dashes || !isRun) {
		return nil, strayArgs(cmd, pos, dashes)
	}
	if cmd == cmdVersion {
		return &Settings{Command: cmdVersion}, nil
	}
	if isRun && len(pos) > 0 && pos[0] == "" {
		return nil, usagef(`%s: the command after "--" is an empty string`, cmd)
	}

	s := &Settings{Command: cmd, Sources: map[string]string{}}
	if isRun && len(pos) > 0 {
		s.Args = append([]string(nil), pos...)
	}

	cfg, err := loadConfig(s, vals["config-file"].vals, getenv)
	if err != nil {
		return nil, err
	}
	for _, p := range params {
		if p.name == "config-file" || !p.scope.usedBy(cmd) {
			continue
		}
		if err := resolve(s, p, vals[p.name].vals, getenv, cfg); err != nil {
			return nil, err
		}
	}

	if err := settleZooKeeperAccess(s); err != nil {
		return nil, err
	}

	// Without a command, a run holds leadership until stopped, which only
	// makes sense with a hook to act on it.
	if isRun && len(s.Args) == 0 && len(s.OnPromote) == 0 && len(s.OnDemote) == 0 {
		example := "ballot run once --candidate-id a -- /usr/bin/myservice"
		if cmd == cmdRunCron {
			example = `ballot run cron --candidate-id a --schedule "@hourly" -- /usr/bin/myjob`
		}
		return nil, usagef(`%s: no command given; put it after "--", e.g. %s, or set --on-promote or --on-demote to hold leadership with hooks only`, cmd, example)
	}
	return s, nil
}

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

// settleZooKeeperAccess checks the secure-ZooKeeper parameters against each
// other, settles the defaults that depend on others (TLS, the ACL) and
// prepends the chroot to the base path. The files are read later, by
// loadZKAccess.
func settleZooKeeperAccess(s *Settings) error {
	given := func(name string) bool { return s.Sources[name] != "" && s.Sources[name] != "default" }
	switch {
	case s.ZooKeeperTLSCert != "" && s.ZooKeeperTLSKey == "":
		return usagef("%s %q: a client certificate needs its private key; set --zookeeper-tls-key too",
			paramSource(s, "zookeeper-tls-cert"), s.ZooKeeperTLSCert)
	case s.ZooKeeperTLSKey != "" && s.ZooKeeperTLSCert == "":
		return usagef("%s %q: a private key needs its client certificate; set --zookeeper-tls-cert too",
			paramSource(s, "zookeeper-tls-key"), s.ZooKeeperTLSKey)
	}
	for _, name := range []string{"zookeeper-tls-ca", "zookeeper-tls-cert", "zookeeper-tls-key", "zookeeper-tls-server-name"} {
		if !given(name) {
			continue
		}
		if given("zookeeper-tls") && !s.ZooKeeperTLS {
			return usagef("%s \"false\" contradicts %s, which needs TLS; drop one of them",
				paramSource(s, "zookeeper-tls"), paramSource(s, name))
		}
		if !s.ZooKeeperTLS {
			s.ZooKeeperTLS = true
			s.Sources["zookeeper-tls"] = "implied by " + paramSource(s, name)
		}
	}

	// Credentials: something ZooKeeper knows ballot by, which "creator"
	// ACLs grant their rights to.
	credentials := s.ZooKeeperAuthFile != "" || s.ZooKeeperTLSCert != ""
	switch {
	case s.ZooKeeperACL == "" && credentials:
		s.ZooKeeperACL = aclCreator
	case s.ZooKeeperACL == "":
		s.ZooKeeperACL = aclOpen
	case s.ZooKeeperACL != aclOpen && !credentials:
		return usagef("%s %q: needs credentials for ZooKeeper to know ballot by: --zookeeper-auth-file, or a client certificate (--zookeeper-tls-cert and --zookeeper-tls-key)",
			paramSource(s, "zookeeper-acl"), s.ZooKeeperACL)
	}

	// The client library has no chroot: ballot applies it itself, so logs
	// and info show the full path.
	s.BasePath = s.ZooKeeperChroot + s.BasePath
	return nil
}

// setChroot records the chroot of one --zookeeper-servers flag; repeated
// flags may each give it, but not two different ones.
func setChroot(s *Settings, chroot string) error {
	switch {
	case chroot == "":
	case s.ZooKeeperChroot != "" && s.ZooKeeperChroot != chroot:
		return fmt.Errorf("chroot %q differs from the chroot %q of an earlier --zookeeper-servers; give one", chroot, s.ZooKeeperChroot)
	default:
		s.ZooKeeperChroot = chroot
	}
	return nil
}

// resolve sets parameter p from the first of flag, environment, config file
// and default that has it, recording the source in s.Sources.
func resolve(s *Settings, p *param, flagVals []string, getenv func(string) string, cfg *configFile) error {
	env := p.env()
	if len(flagVals) > 0 {
		s.Sources[p.name] = "flag"
		if p.kind == kindList {
			s.ZooKeeperServers = nil
			for _, v := range flagVals {
				hs, chroot, err := parseServerList(v)
				if err == nil {
					err = setChroot(s, chroot)
				}
				if err != nil {
					return usagef("--%s %q: %v", p.name, v, err)
				}
				s.ZooKeeperServers = append(s.ZooKeeperServers, hs...)
			}
			return nil
		}
		v := flagVals[len(flagVals)-1]
		if err := p.apply(s, v); err != nil {
			return usagef("--%s %q: %v", p.name, v, err)
		}
		return nil
	}

	if v, env := p.lookupEnv(getenv); v != "" {
		s.Sources[p.name] = "environment " + env
		var err error
		if p.kind == kindList {
			s.ZooKeeperServers, s.ZooKeeperChroot, err = parseServerList(v)
		} else {
			err = p.apply(s, v)
		}
		if err != nil {
			return usagef("environment %s %q: %v", env, v, err)
		}
		return nil
	}

	if raw, ok := cfg.get(p.name); ok {
		s.Sources[p.name] = "config file " + cfg.path
		return cfg.apply(s, p, raw)
	}

	s.Sources[p.name] = "default"
	if p.opt {
		return nil
	}
	if p.scope == scopeCandidate && s.Command == cmdStepDown {
		return nil // step-down: any leader
	}
	if p.req {
		return usagef("%s: --%s is required (or set %s, or %q in the config file)", s.Command, p.name, env, p.name)
	}
	if p.kind == kindList {
		s.ZooKeeperServers, _ = parseServers(p.def)
		return nil
	}
	if err := p.apply(s, p.def); err != nil {
		panic("ballot: bad default for " + p.name + ": " + err.Error())
	}
	return nil
}

// ---------------------------------------------------------------------------
// Config file.

type configFile struct {
	path   string
	values map[string]json.RawMessage
}

func (c *configFile) get(name string) (json.RawMessage, bool) {
	if c == nil {
		return nil, false
	}
	raw, ok := c.values[name]
	return raw, ok
}

// apply decodes the config file's value for p and stores it in s.
func (c *configFile) apply(s *Settings, p *param, raw json.RawMessage) error {
	prefix := fmt.Sprintf("config file %s: key %q", c.path, p.name)
	got := describeJSON(raw)
	switch p.kind {
	case kindList:
		var list []string
		if err := json.Unmarshal(raw, &list); err != nil || list == nil {
			return usagef(`%s: expected an array of strings such as ["zk1:2181", "zk2:2181"], got %s`, prefix, got)
		}
		if len(list) == 0 {
			return usagef("%s: the list is empty; name at least one server", prefix)
		}
		s.ZooKeeperServers = nil
		for i, e := range list {
			if strings.TrimSpace(e) == "" {
				return usagef("%s: entry %q: empty server entry; use host or host:port", prefix, e)
			}
			server, chroot, err := splitChroot(strings.TrimSpace(e))
			if err == nil && chroot != "" && i < len(list)-1 {
				err = errors.New(`a chroot suffix goes after the last server, e.g. ["zk1:2181", "zk2:2181/app"]`)
			}
			if err != nil {
				return usagef("%s: entry %q: %v", prefix, e, err)
			}
			hp, err := normalizeServer(server)
			if err != nil {
				return usagef("%s: entry %q: %v", prefix, e, err)
			}
			s.ZooKeeperServers = append(s.ZooKeeperServers, hp)
			s.ZooKeeperChroot = chroot
		}
		return nil
	case kindBool:
		var b bool
		if string(raw) == "null" || json.Unmarshal(raw, &b) != nil {
			return usagef("%s: expected true or false, got %s", prefix, got)
		}
		return p.apply(s, strconv.FormatBool(b))
	case kindInt:
		n, ok := wholeNumber(raw)
		if !ok {
			return usagef("%s: expected a whole number such as 3, got %s", prefix, got)
		}
		if err := p.apply(s, strconv.FormatInt(n, 10)); err != nil {
			return usagef("%s %d: %v", prefix, n, err)
		}
		return nil
	case kindCommand:
		if len(raw) > 0 && raw[0] == '[' {
			// An array is argv as it is, without splitting.
			var elems []json.RawMessage
			if err := json.Unmarshal(raw, &elems); err != nil {
				return usagef("%s: %v", prefix, err)
			}
			argv := make([]string, len(elems))
			for i, e := range elems {
				if string(e) == "null" || json.Unmarshal(e, &argv[i]) != nil {
					return usagef(`%s: element %d: expected a string, got %s; use an array of strings such as ["/usr/local/bin/promote", "--now"]`,
						prefix, i+1, describeJSON(e))
				}
			}
			if err := checkArgv(argv); err != nil {
				return usagef("%s %s: %v", prefix, got, err)
			}
			setArgv(s, p, argv)
			return nil
		}
	}
	var v string
	if string(raw) == "null" || json.Unmarshal(raw, &v) != nil {
		switch p.kind {
		case kindDuration:
			return usagef(`%s: expected a duration string such as "5s", got %s`, prefix, got)
		case kindCommand:
			return usagef(`%s: expected a command line string or an array of strings such as ["/usr/local/bin/promote", "--now"], got %s`, prefix, got)
		}
		return usagef("%s: expected a string, got %s", prefix, got)
	}
	if err := p.apply(s, v); err != nil {
		return usagef("%s %q: %v", prefix, v, err)
	}
	return nil
}

// setArgv stores argv, given as a JSON array, in the field of p.
func setArgv(s *Settings, p *param, argv []string) {
	switch p.name {
	case "on-promote":
		s.OnPromote = argv
	case "on-demote":
		s.OnDemote = argv
	case "health-check":
		s.HealthCheck = argv
	default:
		panic("ballot: setArgv: " + p.name + " is not a command line parameter")
	}
}

// wholeNumber decodes a JSON number with no fractional part (3, 3.0, 3e0);
// strings, fractions and other types are refused.
func wholeNumber(raw json.RawMessage) (int64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false // json.Number would also take "3", a string
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var n json.Number
	if dec.Decode(&n) != nil {
		return 0, false
	}
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// describeJSON renders a JSON value compactly on one line for messages.
func describeJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(raw)
	}
	s := b.String()
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// loadConfig finds and reads the config file: --config-file, else
// BALLOT_CONFIG_FILE, else the first of defaultConfigPaths that exists. It returns
// nil when there is none. s.ConfigFile and s.Sources["config-file"] are set.
func loadConfig(s *Settings, flagVals []string, getenv func(string) string) (*configFile, error) {
	var path, src string
	switch {
	case len(flagVals) > 0:
		path = flagVals[len(flagVals)-1]
		src = fmt.Sprintf("--config-file %q", path)
		s.Sources["config-file"] = "flag"
	case getenv(envPrefix+"CONFIG_FILE") != "":
		path = getenv(envPrefix + "CONFIG_FILE")
		src = fmt.Sprintf("environment %sCONFIG_FILE %q", envPrefix, path)
		s.Sources["config-file"] = "environment " + envPrefix + "CONFIG_FILE"
	default:
		s.Sources["config-file"] = "default"
		for _, p := range defaultConfigPaths(getenv("HOME")) {
			_, err := os.Stat(p)
			if err == nil {
				path = p
				break
			}
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				return nil, usagef("config file %s: cannot check it: %v", p, pathErr(err))
			}
		}
		if path == "" {
			return nil, nil
		}
		src = "config file " + path
	}

	if path == "" {
		return nil, usagef("%s: must name a file", src)
	}
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return nil, usagef("%s: is a directory, not a file", src)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, usagef("%s: no such file", src)
		}
		return nil, usagef("%s: cannot read: %v", src, pathErr(err))
	}
	s.ConfigFile = path
	return parseConfig(path, data)
}

func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parseConfig parses the JSON object in data; path is for messages.
func parseConfig(path string, data []byte) (*configFile, error) {
	prefix := "config file " + path
	yamlErr := usagef("%s: looks like YAML; ballot reads JSON only (see ballot.json.example)", prefix)
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".yaml" || ext == ".yml" {
		return nil, yamlErr
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, usagef("%s: file is empty; expected a JSON object such as {\"candidate-id\": \"a\"}", prefix)
	}

	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if looksLikeYAML(data) {
			return nil, yamlErr
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(data, int(se.Offset))
			return nil, usagef("%s: invalid JSON at line %d, column %d: %v", prefix, line, col, se)
		}
		line, col := lineCol(data, len(data)+1)
		return nil, usagef("%s: invalid JSON at line %d, column %d: unexpected end of file", prefix, line, col)
	}
	if off := int(dec.InputOffset()); len(bytes.TrimSpace(data[off:])) > 0 {
		// Point at the first non-blank byte after the object.
		off += len(data[off:]) - len(bytes.TrimLeft(data[off:], " \t\r\n"))
		line, col := lineCol(data, off+1)
		return nil, usagef("%s: unexpected data after the JSON object at line %d, column %d", prefix, line, col)
	}
	if raw[0] != '{' {
		kind := map[byte]string{'[': "an array", '"': "a string", 't': "a boolean", 'f': "a boolean", 'n': "null"}[raw[0]]
		if kind == "" {
			kind = "a number"
		}
		return nil, usagef("%s: expected a JSON object such as {\"candidate-id\": \"a\"}, got %s", prefix, kind)
	}

	// Walk the object's keys in order, to report unknown and duplicate keys.
	cfg := &configFile{path: path, values: map[string]json.RawMessage{}}
	kd := json.NewDecoder(bytes.NewReader(raw))
	if _, err := kd.Token(); err != nil { // "{"
		return nil, usagef("%s: %v", prefix, err)
	}
	for kd.More() {
		tok, err := kd.Token()
		if err != nil {
			return nil, usagef("%s: %v", prefix, err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := kd.Decode(&v); err != nil {
			return nil, usagef("%s: key %q: %v", prefix, key, err)
		}
		p := lookupParam(key)
		switch {
		case key == "config-file":
			return nil, usagef("%s: unknown key %q; a config file cannot name another one, use --config-file or BALLOT_CONFIG_FILE", prefix, key)
		case key == "once-key":
			// A fixed key in a file every run reads would run the job once,
			// ever: the key belongs to each invocation.
			return nil, usagef("%s: key %q is not accepted in a config file; give it to each run, e.g. --once-key \"$(date +%%F)\"", prefix, key)
		case p == nil:
			return nil, usagef("%s: unknown key %q; %s", prefix, key, suggestKey(key))
		}
		if _, dup := cfg.values[key]; dup {
			return nil, usagef("%s: key %q appears more than once", prefix, key)
		}
		cfg.values[key] = v
	}
	return cfg, nil
}

// suggestKey names the closest known key when there is one, else them all.
func suggestKey(key string) string {
	var known []string
	best, bestDist := "", 1<<30
	for _, p := range params {
		if p.name == "config-file" {
			continue
		}
		known = append(known, p.name)
		if d := editDistance(strings.ToLower(strings.ReplaceAll(key, "_", "-")), p.name); d < bestDist {
			best, bestDist = p.name, d
		}
	}
	if bestDist <= 3 || (bestDist <= len(key)/3 && bestDist < len(best)/2) {
		return fmt.Sprintf("did you mean %q?", best)
	}
	return "known keys: " + compactKeys(known)
}

// compactKeys lists keys with a shared first word once, brace-style
// (on-{promote,demote}), to keep the one-line message short.
func compactKeys(keys []string) string {
	var out []string
	groups := map[string][]string{}
	var order []string
	for _, k := range keys {
		head, rest, ok := strings.Cut(k, "-")
		if !ok {
			head, rest = k, ""
		}
		if _, seen := groups[head]; !seen {
			order = append(order, head)
		}
		groups[head] = append(groups[head], rest)
	}
	for _, h := range order {
		g := groups[h]
		switch {
		case len(g) == 1 && g[0] == "":
			out = append(out, h)
		case len(g) == 1:
			out = append(out, h+"-"+g[0])
		default:
			out = append(out, h+"-{"+strings.Join(g, ",")+"}")
		}
	}
	return strings.Join(out, ", ")
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// lineCol converts "the error is after reading off bytes" into the 1-based
// line and column of byte off-1.
func lineCol(data []byte, off int) (line, col int) {
	if off > len(data)+1 {
		off = len(data) + 1
	}
	if off < 1 {
		return 1, 1
	}
	before := data[:off-1]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = off - bytes.LastIndexByte(before, '\n') - 1
	return line, col
}

// looksLikeYAML is a heuristic for a file that failed to parse as JSON: a
// "---" document marker, a "# comment", a "- item" or a "key: value" line.
func looksLikeYAML(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if line[0] == '{' || line[0] == '[' {
			return false
		}
		if strings.HasPrefix(line, "---") || line[0] == '#' || strings.HasPrefix(line, "- ") {
			return true
		}
		key, _, ok := strings.Cut(line, ":")
		key = strings.Trim(strings.TrimSpace(key), `"'`)
		if !ok || key == "" {
			return false
		}
		for _, r := range key {
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
				return false
			}
		}
		return true
	}
	return false
}

// ---------------------------------------------------------------------------
// Help.

// helpFor answers "ballot help [cmd...]".
func helpFor(args []string) error {
	topic := strings.Join(args, " ")
	switch topic {
	case "", "help", "-h", "-help", "--help":
		return &helpRequested{text: helpText("")}
	case "run", cmdRunOnce, cmdRunCron, cmdInfo, cmdWatch, cmdLeader, cmdStepDown, cmdPause, cmdResume, cmdVersion:
		return &helpRequested{text: helpText(topic)}
	}
	return usagef("help: unknown command %q; use one of run once, run cron, info, watch, leader, step-down, pause, resume, version (see ballot help)", topic)
}

const helpGlobalShort = `Global flags (see ballot help): --config-file, --zookeeper-servers,
--zookeeper-base-path, --zookeeper-session-timeout, --zookeeper-tls, --zookeeper-tls-ca,
--zookeeper-tls-cert, --zookeeper-tls-key, --zookeeper-tls-server-name,
--zookeeper-auth-file, --zookeeper-acl, --log-level, --log-format, --debug
`

const helpPrecedence = `Every flag can also be set by its environment variable, BALLOT_ and the flag
name in capitals (empty means unset), or by its key in the JSON config file
(key = flag name). A flag beats the environment, which beats the config file,
which beats the default. For compatibility, ZOOKEEPER_SERVERS,
ZOOKEEPER_BASE_PATH, ZOOKEEPER_SESSION_TIMEOUT, LOG_LEVEL and LOG_FORMAT are
read too (the BALLOT_ name wins); no other unprefixed variable is.
`

const helpHooks = `Hooks:
  --on-promote, --on-demote and --health-check take a command line, split into
  words as a shell would ('...', "...", \ escapes) but run without a shell:
  nothing is expanded, so $VAR, *, ~, |, ; and > are passed as they are (use
  sh -c '...' for those). In the config file they are a string split the same
  way, or an array of strings taken as the arguments as they are.
  With --on-promote or --on-demote, the command after "--" may be left out:
  ballot then holds leadership until stopped, running only the hooks.
`

const helpPolicies = `Policies:
  on-child-success, on-child-error (after the command ends):
    rerun       run once: stay leader and run the command again
                run cron: stay leader and run it at the next scheduled time
    reelect     run once: resign, stand for election again, run the command if elected
                run cron: resign after each run (runs spread across hosts)
    exit        exit ballot with the command's exit code
    ignore      run once: stay leader and do not act on the command's result
                run cron: stay leader and run it at the next scheduled time
  on-election-failure (the election cannot be held, e.g. ZooKeeper is unreachable):
    retry       keep trying
    run-anyway  run the command without being elected
    exit        exit with code 125
  on-connection-loss (the connection to ZooKeeper is lost while leading):
    reelect     stop the command before the session can expire, then stand again
    exit        the same stop, then exit with code 125
    ignore      keep the command running until the session is known to be
                expired (risks two commands at once under a network partition)
`

const helpExitCodes = `Exit codes:
  0    success
  N    run: the command's own exit code, when a policy is exit;
       128+N when it died of signal N
  1    info: there is no leader; leader: no leader has acknowledged
       (within --wait); step-down: no leader, --candidate-id does not lead,
       nobody else in line, or nobody else leads within --wait
  2    usage or config error
  75   run once --no-wait: another candidate leads
  125  ballot failed: election failure or connection loss under the exit
       policy, or info could not read ZooKeeper
  126  the command is not executable
  127  the command was not found
`

// flagHelp lists the flags of the given scopes.
func flagHelp(b *strings.Builder, title string, scopes ...paramScope) {
	fmt.Fprintf(b, "%s:\n", title)
	for _, p := range params {
		if !slices.Contains(scopes, p.scope) {
			continue
		}
		fmt.Fprintf(b, "  --%s", p.name)
		if p.arg != "" {
			fmt.Fprintf(b, " %s", p.arg)
		}
		def := p.def
		if p.req || p.opt {
			def = "none"
		}
		if p.shown != "" {
			def = p.shown
		}
		sep := ";"
		if strings.HasSuffix(def, ";") {
			sep = ""
		}
		help := strings.ReplaceAll(p.help, "\n", "\n      ")
		fmt.Fprintf(b, "\n      %s\n      default: %s%s env %s\n", help, def, sep, p.env())
	}
}

// helpText is the help for cmd: "" for the overview, "run", or a command.
func helpText(cmd string) string {
	var b strings.Builder
	switch cmd {
	case "":
		b.WriteString(`ballot runs a command on only one machine of a fleet, chosen by ZooKeeper leader election.

Usage:
  ballot [global flags] run once --candidate-id ID [flags] [-- command [args...]]
  ballot [global flags] run cron --candidate-id ID --schedule EXPR [flags] [-- command [args...]]
  ballot [global flags] info [--output human|json]
  ballot [global flags] watch [--output human|json]
  ballot [global flags] leader [--wait DURATION] [--output human|json]
  ballot [global flags] step-down [--candidate-id ID] [--wait DURATION]
  ballot [global flags] pause [--reason TEXT]
  ballot [global flags] resume
  ballot version
  ballot help [command]

Commands:
  run once  stand for election; run the command while leader
  run cron  stand for election; run the command on a schedule while leader
  info      print the election's current leader and candidates
  watch     print the election's leader and candidates as they change
  leader    print the current leader's published data (--leader-data)
  step-down ask the leader to hand over to the next candidate
  pause     stop the election's command everywhere until resume; resume undoes it
  version   print ballot's version
  help      print help; "ballot help run once" or "ballot run once --help" for a command

`)
		flagHelp(&b, "Global flags (also accepted after the command)", scopeGlobal)
		b.WriteString("\n" + helpPrecedence + "\n" + helpExitCodes)
	case "run", cmdRunOnce, cmdRunCron:
		switch cmd {
		case "run":
			b.WriteString("ballot run: stand for election and run a command while this machine is leader.\n\nUsage:\n" +
				"  ballot [global flags] run once --candidate-id ID [flags] [-- command [args...]]\n" +
				"  ballot [global flags] run cron --candidate-id ID --schedule EXPR [flags] [-- command [args...]]\n\n")
		case cmdRunOnce:
			b.WriteString("ballot run once: stand for election and run the command while this machine is leader.\n\nUsage:\n" +
				"  ballot [global flags] run once --candidate-id ID [flags] [-- command [args...]]\n\n")
		case cmdRunCron:
			b.WriteString("ballot run cron: stand for election and, while this machine is leader,\nrun the command at the times of a cron schedule.\n\nUsage:\n" +
				"  ballot [global flags] run cron --candidate-id ID --schedule EXPR [flags] [-- command [args...]]\n\n")
		}
		b.WriteString("Everything after \"--\" is the command and its arguments. It may be left out\n" +
			"when --on-promote or --on-demote is set: ballot then holds leadership until stopped.\n\n")
		flagHelp(&b, "Flags", scopeCandidate, scopeRun)
		if cmd != cmdRunCron {
			b.WriteString("\n")
			flagHelp(&b, "Once flags (run once only)", scopeOnce)
		}
		if cmd != cmdRunOnce {
			b.WriteString("\n")
			flagHelp(&b, "Cron flags (run cron only)", scopeCron)
		}
		b.WriteString("\n" + helpGlobalShort + "\n" + helpHooks + "\n" + helpPolicies + "\n" + helpPrecedence)
	case cmdInfo, cmdWatch:
		if cmd == cmdInfo {
			b.WriteString("ballot info: print the election's current leader and candidates, then exit\n(exit code 1 when there is no leader).\n\n")
		} else {
			b.WriteString("ballot watch: print the election's leader and candidates, and again each time\nthey change, until interrupted.\n\n")
		}
		fmt.Fprintf(&b, "Usage:\n  ballot [global flags] %s [--output human|json]\n\n", cmd)
		flagHelp(&b, "Flags", scopeOutput)
		b.WriteString("\n" + helpGlobalShort + "\n" + helpPrecedence)
	case cmdLeader:
		b.WriteString("ballot leader: print the current leader's published data (--leader-data of its\n" +
			"run) and exit 0, or exit 1 when no leader has acknowledged; --wait blocks up to\n" +
			"DURATION for one.\n\n" +
			"Usage:\n  ballot [global flags] leader [--wait DURATION] [--output human|json]\n\n")
		flagHelp(&b, "Flags", scopeLeader, scopeOutput)
		b.WriteString("\n" + helpGlobalShort + "\n" + helpPrecedence)
	case cmdStepDown:
		b.WriteString("ballot step-down: ask the leader (with --candidate-id, that candidate if it leads)\n" +
			"to hand over: it stops its command as on SIGTERM and stands again at the back of\n" +
			"the line. Exit 0 once asked (with --wait, once another candidate leads); 1 if\n" +
			"there is no leader, --candidate-id does not lead, no other candidate is in line,\n" +
			"or nobody else leads within --wait.\n\n" +
			"Usage:\n  ballot [global flags] step-down [--candidate-id ID] [--wait DURATION]\n\n")
		flagHelp(&b, "Flags", scopeCandidate, scopeLeader)
		b.WriteString("\n" + helpGlobalShort + "\n" + helpPrecedence)
	case cmdPause, cmdResume:
		b.WriteString("ballot pause: while an election is paused its leader runs nothing: run once stops\n" +
			"its command, run cron skips its scheduled times; candidates keep their places. The\n" +
			"pause lives in ZooKeeper and survives restarts. ballot resume ends it.\n\n" +
			"Usage:\n  ballot [global flags] pause [--reason TEXT]\n  ballot [global flags] resume\n\n")
		flagHelp(&b, "Flags", scopePause)
		b.WriteString("\n" + helpGlobalShort + "\n" + helpPrecedence)
	case cmdVersion:
		b.WriteString("ballot version: print ballot's version.\n\nUsage:\n  ballot version\n")
	}
	return b.String()
}
