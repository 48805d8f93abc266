package main

// Command lines that parse: parseCommandLine against the parameter table.

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"ballot/internal/slog"
)

// configTestEnv prepares a hermetic temp dir: files (paths relative to it,
// "$DIR" in contents expanded) are written, and the default config search
// is redirected to $HOME/.config/ballot/ballot.json, DIR/etc/ballot.json
// and DIR/cwd/ballot.json.
func configTestEnv(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(content, "$DIR", dir)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := defaultConfigPaths
	defaultConfigPaths = func(home string) []string {
		var paths []string
		if home != "" {
			paths = append(paths, filepath.Join(home, ".config", "ballot", "ballot.json"))
		}
		return append(paths, filepath.Join(dir, "etc", "ballot.json"), filepath.Join(dir, "cwd", "ballot.json"))
	}
	t.Cleanup(func() { defaultConfigPaths = old })
	return dir
}

// parseIn runs parseCommandLine with "$DIR" expanded in args and env values
// and an environment made only of env.
func parseIn(dir string, args []string, env map[string]string) (*Settings, error) {
	expanded := make([]string, len(args))
	for i, a := range args {
		expanded[i] = strings.ReplaceAll(a, "$DIR", dir)
	}
	getenv := func(k string) string { return strings.ReplaceAll(env[k], "$DIR", dir) }
	return parseCommandLine(expanded, getenv)
}

func a(s ...string) []string { return s }

// validCase is a command line (with its environment and files) that
// parses, and what it must parse to.
type validCase struct {
	name  string
	args  []string
	env   map[string]string
	files map[string]string
	check func(t *testing.T, s *Settings, dir string)
}

// runOnce is a minimal valid run once command line.
var runOnce = a("run", "once", "--candidate-id", "c1", "--", "/bin/true")

func TestParseCommandLineValid(t *testing.T) {
	for _, tt := range slices.Concat(validDefaultCases, validSourceCases, validSyntaxCases, validRunCases) {
		t.Run(tt.name, func(t *testing.T) {
			dir := configTestEnv(t, tt.files)
			s, err := parseIn(dir, tt.args, tt.env)
			if err != nil {
				t.Fatalf("parseCommandLine(%q): %v", tt.args, err)
			}
			tt.check(t, s, dir)
		})
	}
}

// validDefaultCases: defaults of each command, and version.
var validDefaultCases = []validCase{
	{
		name: "defaults run once",
		args: runOnce,
		check: func(t *testing.T, s *Settings, dir string) {
			want := &Settings{
				Command:            cmdRunOnce,
				Args:               []string{"/bin/true"},
				ZooKeeperServers:   []string{"localhost:2181"},
				BasePath:           "/ballot/election",
				SessionTimeout:     5 * time.Second,
				LogLevel:           slog.LevelInfo,
				LogFormat:          "human",
				CandidateID:        "c1",
				OnChildSuccess:     policyReelect,
				OnChildError:       policyReelect,
				OnElectionFailure:  electionRetry,
				OnConnectionLoss:   lossReelect,
				WrapChildLogs:      true,
				StopGracePeriod:    10 * time.Second,
				HookTimeout:        30 * time.Second,
				PreemptAfter:       30 * time.Second,
				Slots:              1,
				RetryDelay:         10 * time.Second,
				HistoryOutputBytes: 4096,
				HealthInterval:     5 * time.Second,
				HealthTimeout:      5 * time.Second,
				HealthFailures:     3,
				ZooKeeperACL:       aclOpen,
			}
			src := s.Sources
			s.Sources, s.Values = nil, nil
			if !reflect.DeepEqual(s, want) {
				t.Errorf("got  %+v\nwant %+v", s, want)
			}
			for _, p := range params {
				_, ok := src[p.name]
				if ok != p.scope.usedBy(cmdRunOnce) {
					t.Errorf("Sources[%q] present = %v", p.name, ok)
				}
				if ok && p.name != "candidate-id" && src[p.name] != "default" {
					t.Errorf("Sources[%q] = %q, want default", p.name, src[p.name])
				}
			}
		},
	},
	{
		name: "defaults run cron",
		args: a("run", "cron", "--candidate-id", "c1", "--schedule", "@hourly", "--", "job"),
		check: func(t *testing.T, s *Settings, dir string) {
			if s.Command != cmdRunCron || s.Schedule != "@hourly" || s.Timezone != time.UTC ||
				s.StartingDeadline != autoStartingDeadline || !s.CatchUpDefault || s.Timeout != 0 || s.Output != "" || s.Wait != 0 ||
				s.Retries != 0 || s.RetryDelay != 10*time.Second || s.Overlap != overlapSkip {
				t.Errorf("got %+v", s)
			}
			if len(s.Sources) != len(params)-15 { // all but output, wait, reason, until-reboot, the five run once flags, those of info, history (2) and check, and run crontab's --check
				t.Errorf("Sources = %v", s.Sources)
			}
		},
	},
	{
		name: "run crontab FILE, flags after it too",
		args: a("run", "crontab", "--candidate-id", "c1", "--timeout", "1h", "jobs.tab", "--check", "--retries=2"),
		check: func(t *testing.T, s *Settings, dir string) {
			if s.Command != cmdRunCrontab || s.CrontabFile != "jobs.tab" || !s.CrontabCheck || s.Timeout != time.Hour || s.Retries != 2 ||
				s.Args != nil || s.ConfigJobs != nil || s.Schedule != "" {
				t.Errorf("got %+v", s)
			}
			if _, ok := s.Sources["schedule"]; ok {
				t.Errorf("run crontab resolved --schedule: %v", s.Sources)
			}
		},
	},
	{
		// A crontab's jobs are spread by their leaderships; reelect after
		// each run would undo that. A policy given still wins; run cron
		// keeps reelect.
		name: "run crontab keeps its jobs between runs by default",
		args: a("run", "crontab", "--candidate-id", "c1", "jobs.tab"),
		check: func(t *testing.T, s *Settings, dir string) {
			if s.OnChildSuccess != policyRerun || s.OnChildError != policyReelect || s.Values["on-child-success"] != "rerun" {
				t.Errorf("got on-child-success %q (%q), on-child-error %q", s.OnChildSuccess, s.Values["on-child-success"], s.OnChildError)
			}
			given, err := parseCommandLine(a("run", "crontab", "--candidate-id", "c1", "--on-child-success", "reelect", "jobs.tab"), func(string) string { return "" })
			if err != nil || given.OnChildSuccess != policyReelect {
				t.Errorf("--on-child-success reelect given: %v, %v", given.OnChildSuccess, err)
			}
			cron, err := parseCommandLine(a("run", "cron", "--candidate-id", "c1", "--schedule", "@daily", "--", "x"), func(string) string { return "" })
			if err != nil || cron.OnChildSuccess != policyReelect {
				t.Errorf("run cron: %v, %v", cron.OnChildSuccess, err)
			}
		},
	},
	{
		name:  "run crontab --check needs no candidate, jobs from the config file",
		args:  a("run", "crontab", "--check", "--config-file", "$DIR/c.json"),
		files: map[string]string{"c.json": `{"schedule": "@daily", "check": false, "jobs": [{"name": "a", "schedule": "@daily", "command": "x"}]}`},
		check: func(t *testing.T, s *Settings, dir string) {
			if s.Command != cmdRunCrontab || s.CrontabFile != "" || !s.CrontabCheck || s.CandidateID != "" || s.Schedule != "" ||
				!strings.HasPrefix(string(s.ConfigJobs), `[{"name": "a"`) {
				t.Errorf("got %+v", s)
			}
		},
	},
	{
		name: "defaults info and watch",
		args: a("info"),
		check: func(t *testing.T, s *Settings, dir string) {
			if s.Command != cmdInfo || s.Output != "human" || s.CandidateID != "" || s.Args != nil || s.ConfigFile != "" {
				t.Errorf("got %+v", s)
			}
			if _, ok := s.Sources["candidate-id"]; ok {
				t.Errorf("info has a source for candidate-id")
			}
			if s.Sources["output"] != "default" || s.Sources["config-file"] != "default" {
				t.Errorf("Sources = %v", s.Sources)
			}
		},
	},
	{
		name: "watch json output",
		args: a("watch", "--output", "json"),
		check: func(t *testing.T, s *Settings, dir string) {
			if s.Command != cmdWatch || s.Output != "json" || s.Sources["output"] != "flag" {
				t.Errorf("got %+v", s)
			}
		},
	},
	{
		name: "version",
		args: a("version"),
		check: func(t *testing.T, s *Settings, dir string) {
			if !reflect.DeepEqual(s, &Settings{Command: cmdVersion}) {
				t.Errorf("got %+v", s)
			}
		},
	},
	{
		name: "--version",
		args: a("--version"),
		check: func(t *testing.T, s *Settings, dir string) {
			if !reflect.DeepEqual(s, &Settings{Command: cmdVersion}) {
				t.Errorf("got %+v", s)
			}
		},
	},
	{
		name: "-v",
		args: a("-v"),
		check: func(t *testing.T, s *Settings, dir string) {
			if !reflect.DeepEqual(s, &Settings{Command: cmdVersion}) {
				t.Errorf("got %+v", s)
			}
		},
	},
	{
		name:  "version ignores a broken config file",
		args:  a("version"),
		env:   map[string]string{"BALLOT_CONFIG_FILE": "$DIR/missing.json", "LOG_LEVEL": "loud"},
		check: func(t *testing.T, s *Settings, dir string) {},
	},
}

// validSourceCases: each parameter by flag, environment and config file, and which wins.
var validSourceCases = []validCase{
	{
		name:  "spread by flag, rerun-limit by environment and config file",
		args:  a("run", "cron", "--candidate-id", "c1", "--schedule", "@daily", "--spread", "1h30m", "--", "job"),
		env:   map[string]string{"BALLOT_CONFIG_FILE": "$DIR/c.json"},
		files: map[string]string{"c.json": `{"rerun-limit": "0/1s", "spread": "5s"}`},
		check: func(t *testing.T, s *Settings, dir string) {
			if s.Spread != 90*time.Minute || s.Sources["spread"] != "flag" {
				t.Errorf("Spread = %s (%s), want 1h30m from the flag", s.Spread, s.Sources["spread"])
			}
		},
	},
	{
		name: "rerun-limit forms",
		args: a("run", "once", "--candidate-id", "c1", "--on-child-error", "rerun", "--rerun-limit", "3/10m", "--", "job"),
		check: func(t *testing.T, s *Settings, dir string) {
			if s.RerunLimit != (rerunLimit{N: 3, Window: 10 * time.Minute}) || s.RerunLimit.String() != "3/10m0s" {
				t.Errorf("RerunLimit = %+v (%s)", s.RerunLimit, s.RerunLimit)
			}
			for v, want := range map[string]rerunLimit{"off": {}, "0/1s": {0, time.Second}, "100/24h": {100, 24 * time.Hour}} {
				if got, err := parseRerunLimit(v); err != nil || got != want {
					t.Errorf("parseRerunLimit(%q) = %+v, %v; want %+v", v, got, err, want)
				}
			}
		},
	},
	{
		name: "starting-deadline 0 skips missed times",
		args: a("run", "cron", "--candidate-id", "c1", "--schedule", "@hourly", "--starting-deadline", "0", "--", "job"),
		check: func(t *testing.T, s *Settings, dir string) {
			if s.StartingDeadline != 0 || s.CatchUpDefault {
				t.Errorf("StartingDeadline = %s, CatchUpDefault = %v; want 0, false", s.StartingDeadline, s.CatchUpDefault)
			}
		},
	},
	{
		name: "starting-deadline auto by environment",
		args: a("run", "cron", "--candidate-id", "c1", "--schedule", "@hourly", "--", "job"),
		env:  map[string]string{"BALLOT_STARTING_DEADLINE": "auto"},
		check: func(t *testing.T, s *Settings, dir string) {
			if s.StartingDeadline != autoStartingDeadline || !s.CatchUpDefault {
				t.Errorf("StartingDeadline = %s, CatchUpDefault = %v; want %s, true", s.StartingDeadline, s.CatchUpDefault, autoStartingDeadline)
			}
		},
	},
	{
		name: "every parameter by flag",
		args: a("--zookeeper-servers", "zk1/chroot", "--zookeeper-base-path=/x/y", "-zookeeper-session-timeout", "2s",
			"--zookeeper-tls", "--zookeeper-tls-ca", "ca.pem", "--zookeeper-tls-cert", "c.pem", "--zookeeper-tls-key", "k.pem",
			"--zookeeper-tls-server-name", "zk.example.com", "--zookeeper-auth-file", "auth", "--zookeeper-acl", "Creator-World-Read",
			"--log-level", "TRACE", "--log-format", "json", "--debug",
			"run", "cron", "--candidate-id", "host a", "--on-child-success", "rerun", "--on-child-error=exit",
			"--on-election-failure", "run-anyway", "--on-connection-loss", "ignore", "--wrap-child-logs=false", "--quiet=false",
			"--stop-grace-period", "0s", "--schedule", "*/5 * * * *", "--timezone", "Europe/Berlin",
			"--starting-deadline", "1m", "--timeout", "1h", "--retries", "2", "--retry-delay", "30s", "--overlap", "replace",
			"--on-run-end", "report --run", "--history-output-bytes", "100", "--ping-url", "https://hc.example/abc", "--ping-ca", "hc.pem",
			"--on-promote", "promote --now", "--on-demote", "demote", "--hook-timeout", "1m", "--leader-data", "data",
			"--health-check", "check -q", "--health-interval", "2s", "--health-timeout", "1s", "--health-failures", "7",
			"--metrics-file", "/tmp/m.prom", "--priority", "-7", "--preempt-after", "0", "--slots", "3",
			"--spread", "10m", "--overlap-limit", "7", "--", "cmd"),
		check: func(t *testing.T, s *Settings, dir string) {
			if !reflect.DeepEqual(s.ZooKeeperServers, []string{"zk1:2181"}) || s.ZooKeeperChroot != "/chroot" || s.BasePath != "/chroot/x/y" ||
				s.SessionTimeout != 2*time.Second || s.LogLevel != LevelTrace || s.LogFormat != "json" || !s.Debug ||
				!s.ZooKeeperTLS || s.ZooKeeperTLSCA != "ca.pem" || s.ZooKeeperTLSCert != "c.pem" || s.ZooKeeperTLSKey != "k.pem" ||
				s.ZooKeeperTLSServerName != "zk.example.com" || s.ZooKeeperAuthFile != "auth" || s.ZooKeeperACL != aclCreatorWorldRead ||
				s.CandidateID != "host a" || s.OnChildSuccess != policyRerun || s.OnChildError != policyExit ||
				s.OnElectionFailure != electionRunAnyway || s.OnConnectionLoss != lossIgnore || s.WrapChildLogs ||
				s.StopGracePeriod != 0 || s.Schedule != "*/5 * * * *" || s.Timezone.String() != "Europe/Berlin" ||
				s.StartingDeadline != time.Minute || s.CatchUpDefault || s.Timeout != time.Hour || s.Retries != 2 || s.RetryDelay != 30*time.Second || s.Overlap != overlapReplace || s.OverlapLimit != 7 ||
				!reflect.DeepEqual(s.OnPromote, a("promote", "--now")) || !reflect.DeepEqual(s.OnDemote, a("demote")) ||
				s.HookTimeout != time.Minute || s.LeaderData != "data" || !reflect.DeepEqual(s.HealthCheck, a("check", "-q")) ||
				s.HealthInterval != 2*time.Second || s.HealthTimeout != time.Second || s.HealthFailures != 7 ||
				s.MetricsFile != "/tmp/m.prom" || s.Priority != -7 || s.PreemptAfter != 0 || s.Slots != 3 ||
				!reflect.DeepEqual(s.OnRunEnd, a("report", "--run")) || s.HistoryOutputBytes != 100 ||
				s.PingURL != "https://hc.example/abc" || s.PingCA != "hc.pem" ||
				s.Spread != 10*time.Minute {
				t.Errorf("got %+v", s)
			}
			for name, src := range s.Sources {
				// --ping-url-file is refused beside --ping-url: left to its default.
				if name != "config-file" && name != "ping-url-file" && src != "flag" {
					t.Errorf("Sources[%q] = %q, want flag", name, src)
				}
			}
		},
	},
	{
		name: "every parameter by environment",
		args: a("run", "cron", "--", "cmd"),
		env: map[string]string{
			"ZOOKEEPER_SERVERS": "zk1, zk2:2182", "ZOOKEEPER_BASE_PATH": "/e", "ZOOKEEPER_SESSION_TIMEOUT": "3s",
			"BALLOT_ZOOKEEPER_TLS": "true", "BALLOT_ZOOKEEPER_TLS_CA": "/ca", "BALLOT_ZOOKEEPER_TLS_CERT": "/c", "BALLOT_ZOOKEEPER_TLS_KEY": "/k",
			"BALLOT_ZOOKEEPER_TLS_SERVER_NAME": "10.0.0.1", "BALLOT_ZOOKEEPER_AUTH_FILE": "/a", "BALLOT_ZOOKEEPER_ACL": "open",
			"LOG_LEVEL": "warn", "LOG_FORMAT": "raw", "BALLOT_DEBUG": "1", "BALLOT_CANDIDATE_ID": "envcand",
			"BALLOT_ON_CHILD_SUCCESS": "exit", "BALLOT_ON_CHILD_ERROR": "ignore", "BALLOT_ON_ELECTION_FAILURE": "exit",
			"BALLOT_ON_CONNECTION_LOSS": "exit", "BALLOT_WRAP_CHILD_LOGS": "F", "BALLOT_STOP_GRACE_PERIOD": "1s",
			"BALLOT_SCHEDULE": "@daily", "BALLOT_TIMEZONE": "Local", "BALLOT_STARTING_DEADLINE": "5s", "BALLOT_TIMEOUT": "6s",
			"BALLOT_ON_PROMOTE": `p "a b"`, "BALLOT_ON_DEMOTE": "d", "BALLOT_HOOK_TIMEOUT": "2m", "BALLOT_LEADER_DATA": "@@x",
			"BALLOT_HEALTH_CHECK": "h", "BALLOT_HEALTH_INTERVAL": "3s", "BALLOT_HEALTH_TIMEOUT": "4s", "BALLOT_HEALTH_FAILURES": "1",
			"BALLOT_OUTPUT": "json", "BALLOT_WAIT": "bogus", // not used by run cron: ignored
		},
		check: func(t *testing.T, s *Settings, dir string) {
			if !reflect.DeepEqual(s.ZooKeeperServers, []string{"zk1:2181", "zk2:2182"}) || s.BasePath != "/e" ||
				!s.ZooKeeperTLS || s.ZooKeeperTLSCA != "/ca" || s.ZooKeeperTLSCert != "/c" || s.ZooKeeperTLSKey != "/k" ||
				s.ZooKeeperTLSServerName != "10.0.0.1" || s.ZooKeeperAuthFile != "/a" || s.ZooKeeperACL != aclOpen ||
				s.SessionTimeout != 3*time.Second || s.LogLevel != slog.LevelWarn || s.LogFormat != "raw" || !s.Debug ||
				s.CandidateID != "envcand" || s.OnChildSuccess != policyExit || s.OnChildError != policyIgnore ||
				s.OnElectionFailure != electionExit || s.OnConnectionLoss != lossExit || s.WrapChildLogs ||
				s.StopGracePeriod != time.Second || s.Schedule != "@daily" || s.Timezone != time.Local ||
				s.StartingDeadline != 5*time.Second || s.Timeout != 6*time.Second || s.Output != "" ||
				!reflect.DeepEqual(s.OnPromote, a("p", "a b")) || !reflect.DeepEqual(s.OnDemote, a("d")) ||
				s.HookTimeout != 2*time.Minute || s.LeaderData != "@x" || !reflect.DeepEqual(s.HealthCheck, a("h")) ||
				s.HealthInterval != 3*time.Second || s.HealthTimeout != 4*time.Second || s.HealthFailures != 1 || s.Wait != 0 {
				t.Errorf("got %+v", s)
			}
			if s.Sources["zookeeper-servers"] != "environment ZOOKEEPER_SERVERS" || s.Sources["health-failures"] != "environment BALLOT_HEALTH_FAILURES" ||
				s.Sources["timeout"] != "environment BALLOT_TIMEOUT" || s.Sources["debug"] != "environment BALLOT_DEBUG" {
				t.Errorf("Sources = %v", s.Sources)
			}
		},
	},
	{
		name: "every parameter by config file",
		args: a("run", "cron", "--config-file", "$DIR/c.json", "--", "cmd"),
		files: map[string]string{"c.json": `{
			"zookeeper-servers": ["zk1", "[::1]:2183/app/x"], "zookeeper-base-path": "/c",
			"zookeeper-tls": true, "zookeeper-tls-ca": "ca", "zookeeper-tls-cert": "cert", "zookeeper-tls-key": "key",
			"zookeeper-tls-server-name": "zk", "zookeeper-auth-file": "auth", "zookeeper-acl": "creator",
			"zookeeper-session-timeout": "4s", "log-level": "error", "log-format": "json", "debug": true,
			"candidate-id": "filecand", "on-child-success": "ignore", "on-child-error": "rerun",
			"on-election-failure": "run-anyway", "on-connection-loss": "reelect", "wrap-child-logs": false, "quiet": false,
			"stop-grace-period": "2s", "schedule": "0 3 * * *", "timezone": "America/New_York",
			"starting-deadline": "7s", "timeout": "8s", "output": "json", "wait": "9s",
			"on-promote": ["sh", "-c", "echo $HOME 'x'"], "on-demote": "demote 'a b'", "hook-timeout": "10s",
			"leader-data": "@$DIR/data.txt", "health-check": ["check"], "health-interval": "11s",
			"health-timeout": "12s", "health-failures": 4, "metrics-file": "/tmp/c.prom",
			"priority": 12, "preempt-after": "1m", "slots": 4, "retries": 3, "retry-delay": "13s", "overlap": "queue",
			"on-run-end": ["report"], "history-output-bytes": 0, "ping-url-file": "/etc/ballot/ping-url", "ping-ca": "ca.pem",
			"spread": "20m", "overlap-limit": 9}`,
			"data.txt": "line 1\nline 2\n"},
		check: func(t *testing.T, s *Settings, dir string) {
			if !reflect.DeepEqual(s.ZooKeeperServers, []string{"zk1:2181", "[::1]:2183"}) || s.BasePath != "/app/x/c" ||
				!s.ZooKeeperTLS || s.ZooKeeperTLSCA != "ca" || s.ZooKeeperTLSCert != "cert" || s.ZooKeeperTLSKey != "key" ||
				s.ZooKeeperTLSServerName != "zk" || s.ZooKeeperAuthFile != "auth" || s.ZooKeeperACL != aclCreator ||
				s.SessionTimeout != 4*time.Second || s.LogLevel != slog.LevelError || s.LogFormat != "json" || !s.Debug ||
				s.CandidateID != "filecand" || s.OnChildSuccess != policyIgnore || s.OnChildError != policyRerun ||
				s.OnElectionFailure != electionRunAnyway || s.OnConnectionLoss != lossReelect || s.WrapChildLogs ||
				s.StopGracePeriod != 2*time.Second || s.Schedule != "0 3 * * *" || s.Timezone.String() != "America/New_York" ||
				s.StartingDeadline != 7*time.Second || s.Timeout != 8*time.Second || s.Retries != 3 || s.RetryDelay != 13*time.Second || s.Overlap != overlapQueue || s.OverlapLimit != 9 ||
				!reflect.DeepEqual(s.OnPromote, a("sh", "-c", "echo $HOME 'x'")) || !reflect.DeepEqual(s.OnDemote, a("demote", "a b")) ||
				s.HookTimeout != 10*time.Second || s.LeaderData != "line 1\nline 2\n" || !reflect.DeepEqual(s.HealthCheck, a("check")) ||
				s.HealthInterval != 11*time.Second || s.HealthTimeout != 12*time.Second || s.HealthFailures != 4 || s.Wait != 0 ||
				s.Priority != 12 || s.PreemptAfter != time.Minute || s.Slots != 4 ||
				!reflect.DeepEqual(s.OnRunEnd, a("report")) || s.HistoryOutputBytes != 0 ||
				s.PingURLFile != "/etc/ballot/ping-url" || s.PingCA != "ca.pem" ||
				s.Spread != 20*time.Minute {
				t.Errorf("got %+v", s)
			}
			file := filepath.Join(dir, "c.json")
			if s.ConfigFile != file || s.Sources["config-file"] != "flag" {
				t.Errorf("ConfigFile = %q, source %q", s.ConfigFile, s.Sources["config-file"])
			}
			for name, src := range s.Sources {
				// --ping-url is refused beside --ping-url-file: left to its default.
				if name != "config-file" && name != "ping-url" && src != "config file "+file {
					t.Errorf("Sources[%q] = %q", name, src)
				}
			}
		},
	},
	{
		name:  "run once timeouts by flag, environment and config file",
		args:  a("run", "once", "--candidate-id", "c", "--timeout", "90s", "--config-file", "$DIR/c.json", "--", "x"),
		env:   map[string]string{"BALLOT_WAIT_TIMEOUT": "2m"},
		files: map[string]string{"c.json": `{"timeout": "1h", "wait-timeout": "1h"}`},
		check: func(t *testing.T, s *Settings, dir string) {
			if s.Timeout != 90*time.Second || s.WaitTimeout != 2*time.Minute ||
				s.Sources["timeout"] != "flag" || s.Sources["wait-timeout"] != "environment BALLOT_WAIT_TIMEOUT" {
				t.Errorf("timeout %s (%s), wait-timeout %s (%s)", s.Timeout, s.Sources["timeout"], s.WaitTimeout, s.Sources["wait-timeout"])
			}
		},
	},
	{
		name:  "run once wait-timeout from a config file",
		args:  a("run", "once", "--candidate-id", "c", "--config-file", "$DIR/c.json", "--", "x"),
		files: map[string]string{"c.json": `{"wait-timeout": "3m"}`},
		check: func(t *testing.T, s *Settings, dir string) {
			if s.WaitTimeout != 3*time.Minute || s.Timeout != 0 {
				t.Errorf("wait-timeout %s, timeout %s", s.WaitTimeout, s.Timeout)
			}
		},
	},
	{
		name:  "precedence flag > env > file > default",
		args:  a("run", "once", "--log-level", "debug", "--", "x"),
		env:   map[string]string{"BALLOT_CONFIG_FILE": "$DIR/c.json", "LOG_LEVEL": "warn", "LOG_FORMAT": "raw", "BALLOT_CANDIDATE_ID": "e"},
		files: map[string]string{"c.json": `{"log-level": "error", "log-format": "json", "candidate-id": "f", "zookeeper-base-path": "/f"}`},
		check: func(t *testing.T, s *Settings, dir string) {
			file := "config file " + filepath.Join(dir, "c.json")
			want := map[string]string{
				"log-level":           "flag",
				"log-format":          "environment LOG_FORMAT",
				"candidate-id":        "environment BALLOT_CANDIDATE_ID",
				"zookeeper-base-path": file,
				"debug":               "default",
				"config-file":         "environment BALLOT_CONFIG_FILE",
			}
			for k, v := range want {
				if s.Sources[k] != v {
					t.Errorf("Sources[%q] = %q, want %q", k, s.Sources[k], v)
				}
			}
			if s.LogLevel != slog.LevelDebug || s.LogFormat != "raw" || s.CandidateID != "e" || s.BasePath != "/f" || s.Debug {
				t.Errorf("got %+v", s)
			}
		},
	},
	{
		name:  "empty env var is unset",
		args:  a("info"),
		env:   map[string]string{"BALLOT_CONFIG_FILE": "$DIR/c.json", "ZOOKEEPER_BASE_PATH": ""},
		files: map[string]string{"c.json": `{"zookeeper-base-path": "/from/file"}`},
		check: func(t *testing.T, s *Settings, dir string) {
			if s.BasePath != "/from/file" {
				t.Errorf("BasePath = %q", s.BasePath)
			}
		},
	},
}
