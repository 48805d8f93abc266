package main

// The parameter table: every flag, environment variable and config file
// key, with its help text and how it sets Settings. Each group is a
// function so that help texts may refer back to params.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// params is every parameter, in help order. Built in init because the help
// texts refer back to it.
var params []*param

func init() {
	params = slices.Concat(zookeeperParams(), logParams(), runParams(), hookParams(), preferenceParams(),
		onceParams(), metricsParams(), cronParams(), readerParams())
}

// zookeeperParams: how to reach ZooKeeper, and the election's path.
func zookeeperParams() []*param {
	return []*param{
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
			shown: "each server's host as written in\n        --zookeeper-servers",
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
			},
			choices: aclValues},
	}
}

// logParams: ballot's own log.
func logParams() []*param {
	return []*param{
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
			},
			choices: logLevelNames},
		{name: "log-format", scope: scopeGlobal, arg: "FORMAT", def: "human",
			help: "human, json or raw",
			apply: func(s *Settings, v string) (err error) {
				s.LogFormat, err = oneOf(v, "not a log format; ", "human", "json", "raw")
				return err
			},
			choices: []string{"human", "json", "raw"}},
		{name: "debug", scope: scopeGlobal, kind: kindBool, def: "false",
			help: "log debugging details, such as where each setting came from",
			apply: func(s *Settings, v string) (err error) {
				s.Debug, err = parseBool(v)
				return err
			}},
	}
}

// runParams: who the candidate is and what ends or restarts its command.
func runParams() []*param {
	return []*param{
		{name: "candidate-id", scope: scopeCandidate, arg: "ID", req: true,
			help: "this machine's name in the election (required by run; step-down: the candidate\n" +
				"to step down, only if it leads; drain, undrain: the candidate to drain or undrain)",
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
		{name: "on-child-success", scope: scopeRun, arg: "POLICY", def: string(policyReelect),
			shown: "reelect (rerun for run crontab)",
			help:  "when the command exits 0: rerun, reelect, exit or ignore",
			apply: func(s *Settings, v string) (err error) {
				s.OnChildSuccess, err = oneOf(v, "", policyValues...)
				return err
			},
			choices: names(policyValues)},
		{name: "on-child-error", scope: scopeRun, arg: "POLICY", def: string(policyReelect),
			help: "when the command fails: rerun, reelect, exit or ignore",
			apply: func(s *Settings, v string) (err error) {
				s.OnChildError, err = oneOf(v, "", policyValues...)
				return err
			},
			choices: names(policyValues)},
		{name: "on-election-failure", scope: scopeRun, arg: "POLICY", def: string(electionRetry),
			help: "when the election cannot be held: retry, run-anyway or exit",
			apply: func(s *Settings, v string) (err error) {
				s.OnElectionFailure, err = oneOf(v, "", electionValues...)
				return err
			},
			choices: names(electionValues)},
		{name: "on-connection-loss", scope: scopeRun, arg: "POLICY", def: string(lossReelect),
			help: "when the connection to ZooKeeper is lost while leading: reelect = stop the command\n" +
				"before the session can expire, then stand again; exit = the same stop, then exit 125;\n" +
				"ignore = keep the command running until the session is known to be expired\n" +
				"(risks two commands at once under a network partition)",
			apply: func(s *Settings, v string) (err error) {
				s.OnConnectionLoss, err = oneOf(v, "", lossValues...)
				return err
			},
			choices: names(lossValues)},
		{name: "wrap-child-logs", scope: scopeRun, kind: kindBool, def: "true",
			help: "log the command's output lines in ballot's log format; =false passes them through",
			apply: func(s *Settings, v string) (err error) {
				s.WrapChildLogs, err = parseBool(v)
				return err
			}},
		{name: "quiet", scope: scopeRun, kind: kindBool, def: "false",
			help: "for crontab: ballot logs only warnings and errors, and the command's output\n" +
				"passes through unchanged (implies --wrap-child-logs=false); a host that finds\n" +
				"its --once-key run already prints nothing",
			apply: func(s *Settings, v string) (err error) {
				s.Quiet, err = parseBool(v)
				return err
			}},
		{name: "stop-grace-period", job: true, scope: scopeRun, kind: kindDuration, arg: "DURATION", def: "10s",
			help: "time between SIGTERM and SIGKILL when stopping the command",
			apply: func(s *Settings, v string) (err error) {
				s.StopGracePeriod, err = parseDuration(v, false)
				return err
			}},
		{name: "timeout", job: true, scope: scopeRun, kind: kindDuration, arg: "DURATION", def: "0",
			help: "stop a run of the command that lasts longer than this (SIGTERM, SIGKILL after\n" +
				"--stop-grace-period); it counts as an error, recorded as timed out; 0: no limit",
			apply: func(s *Settings, v string) (err error) {
				s.Timeout, err = parseDuration(v, false)
				return err
			}},
	}
}

// hookParams: hooks, the leader node's data and health checks.
func hookParams() []*param {
	return []*param{
		{name: "on-promote", job: true, scope: scopeRun, kind: kindCommand, arg: "COMMAND", opt: true,
			help: "command line run when this candidate becomes leader, before the command",
			apply: func(s *Settings, v string) (err error) {
				s.OnPromote, err = splitCommandLine(v)
				return err
			}},
		{name: "on-demote", job: true, scope: scopeRun, kind: kindCommand, arg: "COMMAND", opt: true,
			help: "command line run when this candidate stops being leader, after the command is gone",
			apply: func(s *Settings, v string) (err error) {
				s.OnDemote, err = splitCommandLine(v)
				return err
			}},
		{name: "on-run-end", job: true, scope: scopeRun, kind: kindCommand, arg: "COMMAND", opt: true,
			help: "run cron, and run once with --once-key: command line run on the host that ran\n" +
				"the job after each run or attempt, with its outcome in BALLOT_RUN_RESULT and\n" +
				"more (docs/cron.md); beside the schedule and the lease, bounded by\n" +
				"--hook-timeout; its failure is logged and counted, never changes the run's outcome",
			apply: func(s *Settings, v string) (err error) {
				s.OnRunEnd, err = splitCommandLine(v)
				return err
			}},
		{name: "ping-url", job: true, scope: scopeRun, arg: "URL", opt: true, secret: true,
			help: "run cron, and run once with --once-key: healthchecks.io-style URL told of each\n" +
				"run: URL/start, then URL/<exit code> with the output tail; a secret, never logged\n" +
				"whole; http or https, no redirects, no proxies",
			apply: func(s *Settings, v string) error {
				if v == "" {
					s.PingURL = "" // none: a config file's, unset
					return nil
				}
				if _, err := parsePingURL(v); err != nil {
					return err
				}
				s.PingURL = strings.TrimSpace(v)
				return nil
			}},
		{name: "ping-url-file", job: true, scope: scopeRun, arg: "FILE", opt: true,
			help: "file whose first line is the ping URL (kept out of ps and the environment);\n" +
				"not with --ping-url",
			apply: func(s *Settings, v string) (err error) {
				s.PingURLFile, err = fileName(v) // read by checkPing, before anything starts
				return err
			}},
		{name: "ping-ca", job: true, scope: scopeRun, arg: "FILE", opt: true, shown: "the system's CAs (SSL_CERT_FILE, SSL_CERT_DIR)",
			help: "PEM file of the CA certificates that sign an https ping URL's server",
			apply: func(s *Settings, v string) (err error) {
				s.PingCA, err = fileName(v)
				return err
			}},
		{name: "hook-timeout", job: true, scope: scopeRun, kind: kindDuration, arg: "DURATION", def: "30s",
			help: "a hook still running after this is killed, > 0",
			apply: func(s *Settings, v string) (err error) {
				s.HookTimeout, err = parseDuration(v, true)
				return err
			}},
		{name: "leader-data", job: true, scope: scopeRun, arg: "DATA|@PATH", opt: true,
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
	}
}

// preferenceParams: preferred leaders (preempt.go).
func preferenceParams() []*param {
	return []*param{
		{name: "priority", job: true, scope: scopeRun, kind: kindInt, arg: "N", def: "0",
			help: fmt.Sprintf("this candidate's place in line: a higher N goes ahead of lower ones, equal N\n"+
				"keep the order they joined in; %d to %d", -maxPriority, maxPriority),
			apply: func(s *Settings, v string) error {
				n, err := strconv.Atoi(v)
				switch {
				case err != nil:
					return errors.New("not a whole number; use a number such as 10 (higher is preferred)")
				case n < -maxPriority || n > maxPriority:
					return fmt.Errorf("out of range; use %d to %d", -maxPriority, maxPriority)
				}
				s.Priority = n
				return nil
			}},
		{name: "slots", job: true, scope: scopeRun, kind: kindInt, arg: "N", def: "1",
			help: fmt.Sprintf("at most N candidates lead at once, each in its own slot (BALLOT_SLOT 0 … N-1)\n"+
				"with its own fencing token; every candidate of an election must give the same N;\n"+
				"1 to %d", maxSlots),
			apply: func(s *Settings, v string) error {
				n, err := strconv.Atoi(v)
				switch {
				case err != nil:
					return errors.New("not a whole number; use a number such as 2")
				case n < 1 || n > maxSlots:
					return fmt.Errorf("out of range; use 1 to %d (1: one leader)", maxSlots)
				}
				s.Slots = n
				return nil
			}},
		{name: "preempt-after", job: true, scope: scopeRun, kind: kindDuration, arg: "DURATION", def: "30s",
			help: "as leader, hand over to a candidate of higher --priority once it has stood in\n" +
				"line, ready, this long (run cron: between runs); 0: never hand over for it",
			apply: func(s *Settings, v string) (err error) {
				s.PreemptAfter, err = parseDuration(v, false)
				return err
			}},
	}
}

// onceParams: run once's keyed runs.
func onceParams() []*param {
	return []*param{
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
		{name: "wait-timeout", scope: scopeOnce, kind: kindDuration, arg: "DURATION", opt: true,
			shown: "none (wait in line without limit)",
			help:  "give up waiting in line after this long and exit 75 (like flock -w)",
			apply: func(s *Settings, v string) error {
				d, err := parseDuration(v, true)
				if err != nil {
					return fmt.Errorf("%w; leave it out to wait without limit, or use --no-wait not to wait", err)
				}
				s.WaitTimeout = d
				return nil
			}},
		{name: "rerun-limit", scope: scopeOnce, arg: "N/DURATION", def: "off",
			help: "with --on-child-error rerun: at most N reruns after failures within DURATION;\n" +
				"the next failure hands over to the next in line, and this host sits out for\n" +
				"DURATION (alone in line: it restarts here, with a growing pause); off: no limit",
			apply: func(s *Settings, v string) (err error) {
				s.RerunLimit, err = parseRerunLimit(v)
				return err
			}},
	}
}

// metricsParams: the metrics file.
func metricsParams() []*param {
	return []*param{
		{name: "metrics-file", scope: scopeRun, arg: "PATH", opt: true,
			help: "keep a Prometheus text-format file of this candidate's state at PATH (for\n" +
				"node_exporter's textfile collector); its directory must exist; run crontab:\n" +
				"one file, every job's series",
			apply: func(s *Settings, v string) error {
				if v == "" || strings.HasSuffix(v, "/") {
					return errors.New("must name a file, such as /var/lib/node_exporter/textfile_collector/ballot.prom")
				}
				s.MetricsFile = v
				return nil
			}},
	}
}

// cronParams: run cron's schedule.
func cronParams() []*param {
	return []*param{
		{name: "schedule", scope: scopeSchedule, arg: "EXPR", req: true,
			help: `cron expression, e.g. "*/5 * * * *" or @hourly (required)`,
			apply: func(s *Settings, v string) error {
				if strings.TrimSpace(v) == "" {
					return errors.New("must not be empty; use a cron expression such as \"*/5 * * * *\"")
				}
				s.Schedule = v
				return nil
			}},
		{name: "timezone", job: true, scope: scopeCron, arg: "ZONE", def: "UTC",
			help: "time zone of the schedule: an IANA name such as Europe/Berlin, or Local",
			apply: func(s *Settings, v string) error {
				loc, err := loadLocation(v)
				if err != nil {
					return err
				}
				s.Timezone = loc
				return nil
			}},
		{name: "starting-deadline", job: true, scope: scopeCron, kind: kindDuration, arg: "DURATION", def: "auto",
			help: "a scheduled time missed (no leader at that moment) is still run once by the next\n" +
				"leader if it is less than this late; auto: until the next time is due, at most 1h;\n" +
				"0: missed times are skipped and logged",
			apply: func(s *Settings, v string) (err error) {
				if v == "auto" {
					s.StartingDeadline, s.CatchUpDefault = autoStartingDeadline, true
					return nil
				}
				s.CatchUpDefault = false
				if s.StartingDeadline, err = parseDuration(v, false); err != nil {
					return fmt.Errorf("%v; or auto (the default: catch up, at most 1h late)", err)
				}
				return nil
			}},
		{name: "overlap", job: true, scope: scopeCron, arg: "POLICY", def: overlapSkip,
			help: "a scheduled time due while the previous run is still going: skip it; queue it\n" +
				"(it starts when the previous run ends; at most one waits, the latest); replace\n" +
				"(the previous run is stopped with the grace period, then the new one starts); or\n" +
				"allow (it starts beside it, on the leader's host, up to --overlap-limit runs)",
			apply: func(s *Settings, v string) (err error) {
				s.Overlap, err = oneOf(v, "not an overlap policy; ", overlapSkip, overlapQueue, overlapReplace, overlapAllow)
				return err
			},
			choices: []string{overlapSkip, overlapQueue, overlapReplace, overlapAllow}},
		{name: "overlap-limit", job: true, scope: scopeCron, kind: kindInt, arg: "N", def: "4",
			help: "with --overlap allow: at most N runs at once on the leader's host; a time due\n" +
				"while N go is skipped (overlap-limit); 1 to 100",
			apply: func(s *Settings, v string) error {
				n, err := strconv.Atoi(v)
				switch {
				case err != nil:
					return errors.New("not a whole number; use 1 to 100, e.g. 4")
				case n < 1 || n > overlapLimitMax:
					return fmt.Errorf("out of range; use 1 to %d", overlapLimitMax)
				}
				s.OverlapLimit = n
				return nil
			}},
		{name: "history-output-bytes", job: true, scope: scopeRun, kind: kindInt, arg: "N", def: "4096",
			help: "run cron, and run once with --once-key: keep the last N bytes of each run's\n" +
				"output (with --wrap-child-logs) in its history entry (ballot history\n" +
				"--show-output); readable by whoever can read the election; 0 to 65536",
			apply: func(s *Settings, v string) error {
				n, err := strconv.Atoi(v)
				switch {
				case err != nil:
					return errors.New("not a whole number of bytes; use 0 (keep none) to 65536, e.g. 4096")
				case n < 0 || n > historyOutputMax:
					return fmt.Errorf("out of range; use 0 (keep none) to %d (64 KiB)", historyOutputMax)
				}
				s.HistoryOutputBytes = n
				return nil
			}},
		{name: "retries", job: true, scope: scopeRun, kind: kindInt, arg: "N", def: "0",
			help: "run cron, and run once with --once-key: attempt a failed, timed-out or lost run\n" +
				"again, up to N more times (N+1 in all, across failovers); cron: never once the\n" +
				"next scheduled time is due; >= 0",
			apply: func(s *Settings, v string) error {
				n, err := strconv.Atoi(v)
				switch {
				case err != nil:
					return errors.New("not a whole number; use 0 (no retries) or a count such as 3")
				case n < 0:
					return errors.New("must not be negative; use 0 for no retries")
				case n > 100:
					return errors.New("too many; use at most 100")
				}
				s.Retries = n
				return nil
			}},
		{name: "retry-delay", job: true, scope: scopeRun, kind: kindDuration, arg: "DURATION", def: "10s",
			help: "wait before the 2nd attempt; it doubles for each further one, up to 10m\n" +
				"(or DURATION itself, if longer); a run lost with its leader is retried at once",
			apply: func(s *Settings, v string) (err error) {
				s.RetryDelay, err = parseDuration(v, false)
				return err
			}},
		{name: "spread", job: true, scope: scopeCron, kind: kindDuration, arg: "DURATION", def: "0s",
			help: "start each run a fixed delay in [0, DURATION) after its scheduled time, derived\n" +
				"from the election's path: the same on every host and across restarts, so a\n" +
				"fleet's @daily jobs do not all start at once; 0: on time; else at least 1s",
			apply: func(s *Settings, v string) (err error) {
				s.Spread, err = parseSpread(v)
				return err
			}},
		{name: "check", scope: scopeCrontab, kind: kindBool, def: "false",
			help: "validate the crontab FILE (or the config file's jobs) and print one line a job:\n" +
				"name, schedule, next run (local time) and command; connects to nothing",
			apply: func(s *Settings, v string) (err error) {
				s.CrontabCheck, err = parseBool(v)
				return err
			}},
	}
}

// readerParams: info, watch, leader and the operators' commands.
func readerParams() []*param {
	return []*param{
		{name: "output", scope: scopeOutput, arg: "FORMAT", def: "human",
			help: "human or json",
			apply: func(s *Settings, v string) (err error) {
				s.Output, err = oneOf(v, "not an output format; ", "human", "json")
				return err
			},
			choices: []string{"human", "json"}},

		{name: "verbose", scope: scopeInfo, kind: kindBool, def: "false",
			help: "human output: after the summary, every detail (the candidates' own reports, the\n" +
				"lease, the once keys, the nodes)",
			apply: func(s *Settings, v string) (err error) {
				s.Verbose, err = parseBool(v)
				return err
			}},
		{name: "limit", scope: scopeHistory, kind: kindInt, arg: "N", def: "20",
			help: "print the newest N entries, >= 1",
			apply: func(s *Settings, v string) error {
				n, err := strconv.Atoi(v)
				switch {
				case err != nil:
					return errors.New("not a whole number; use a number such as 20")
				case n < 1:
					return fmt.Errorf("must be at least 1 (the history keeps the newest %d)", historyKeep)
				}
				s.Limit = n
				return nil
			}},
		{name: "show-output", scope: scopeHistory, kind: kindBool, def: "false",
			help: "human output: under each run, the tail of its output that the history keeps\n" +
				"(--history-output-bytes); json output always has it",
			apply: func(s *Settings, v string) (err error) {
				s.ShowOutput, err = parseBool(v)
				return err
			}},
		{name: "max-age", scope: scopeCheck, kind: kindDuration, arg: "DURATION", opt: true,
			help: "CRITICAL when no run succeeded for this long (e.g. 26h for a daily job), > 0;\n" +
				"required until the election has run once",
			apply: func(s *Settings, v string) (err error) {
				s.MaxAge, err = parseDuration(v, true)
				return err
			}},
		{name: "fail-critical", scope: scopeCheck, kind: kindBool, def: "false",
			help: "a failed last run is CRITICAL (default: WARNING)",
			apply: func(s *Settings, v string) (err error) {
				s.FailCritical, err = parseBool(v)
				return err
			}},
		{name: "reason", scope: scopePause, arg: "TEXT", opt: true,
			help: "why the election is paused (drain: why the candidate is drained), shown by info,\n" +
				"watch and the leader's log",
			apply: func(s *Settings, v string) error {
				if strings.ContainsAny(v, "\n\r\x00") {
					return errors.New("must be one line")
				}
				s.Reason = v
				return nil
			}},
		{name: "until-reboot", scope: scopeDrain, kind: kindBool, def: "false",
			help: "the drain also ends when the candidate's host reboots (its boot id changes); the\n" +
				"candidate must be in line (its proposal says its host's boot id) or drained until\n" +
				"reboot already",
			apply: func(s *Settings, v string) (err error) {
				s.UntilReboot, err = parseBool(v)
				return err
			}},
		{name: "wait", scope: scopeLeader, kind: kindDuration, arg: "DURATION", def: "0",
			help: "leader: wait up to this long for a leader to acknowledge; step-down: for another\n" +
				"candidate to lead; trigger: for the run to end (its exit code is trigger's); drain:\n" +
				"for the candidate to leave the line; 0: do not wait",
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
