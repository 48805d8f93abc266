package main

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
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

func TestParseCommandLineValid(t *testing.T) {
	runOnce := a("run", "once", "--candidate-id", "c1", "--", "/bin/true")
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		files map[string]string
		check func(t *testing.T, s *Settings, dir string)
	}{
		{
			name: "defaults run once",
			args: runOnce,
			check: func(t *testing.T, s *Settings, dir string) {
				want := &Settings{
					Command:           cmdRunOnce,
					Args:              []string{"/bin/true"},
					ZooKeeperServers:  []string{"localhost:2181"},
					BasePath:          "/ballot/election",
					SessionTimeout:    5 * time.Second,
					LogLevel:          slog.LevelInfo,
					LogFormat:         "human",
					CandidateID:       "c1",
					OnChildSuccess:    policyReelect,
					OnChildError:      policyReelect,
					OnElectionFailure: electionRetry,
					OnConnectionLoss:  lossReelect,
					WrapChildLogs:     true,
					StopGracePeriod:   10 * time.Second,
					HookTimeout:       30 * time.Second,
					HealthInterval:    5 * time.Second,
					HealthTimeout:     5 * time.Second,
					HealthFailures:    3,
					ZooKeeperACL:      aclOpen,
				}
				src := s.Sources
				s.Sources = nil
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
					s.StartingDeadline != 0 || s.Timeout != 0 || s.Output != "" || s.Wait != 0 {
					t.Errorf("got %+v", s)
				}
				if len(s.Sources) != len(params)-6 { // all but output, wait, reason and the three run once flags
					t.Errorf("Sources = %v", s.Sources)
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
			name:  "version ignores a broken config file",
			args:  a("version"),
			env:   map[string]string{"BALLOT_CONFIG_FILE": "$DIR/missing.json", "LOG_LEVEL": "loud"},
			check: func(t *testing.T, s *Settings, dir string) {},
		},
		{
			name: "every parameter by flag",
			args: a("--zookeeper-servers", "zk1/chroot", "--zookeeper-base-path=/x/y", "-zookeeper-session-timeout", "2s",
				"--zookeeper-tls", "--zookeeper-tls-ca", "ca.pem", "--zookeeper-tls-cert", "c.pem", "--zookeeper-tls-key", "k.pem",
				"--zookeeper-tls-server-name", "zk.example.com", "--zookeeper-auth-file", "auth", "--zookeeper-acl", "Creator-World-Read",
				"--log-level", "TRACE", "--log-format", "json", "--debug",
				"run", "cron", "--candidate-id", "host a", "--on-child-success", "rerun", "--on-child-error=exit",
				"--on-election-failure", "run-anyway", "--on-connection-loss", "ignore", "--wrap-child-logs=false",
				"--stop-grace-period", "0s", "--schedule", "*/5 * * * *", "--timezone", "Europe/Berlin",
				"--starting-deadline", "1m", "--timeout", "1h",
				"--on-promote", "promote --now", "--on-demote", "demote", "--hook-timeout", "1m", "--leader-data", "data",
				"--health-check", "check -q", "--health-interval", "2s", "--health-timeout", "1s", "--health-failures", "7",
				"--metrics-file", "/tmp/m.prom", "--", "cmd"),
			check: func(t *testing.T, s *Settings, dir string) {
				if !reflect.DeepEqual(s.ZooKeeperServers, []string{"zk1:2181"}) || s.ZooKeeperChroot != "/chroot" || s.BasePath != "/chroot/x/y" ||
					s.SessionTimeout != 2*time.Second || s.LogLevel != LevelTrace || s.LogFormat != "json" || !s.Debug ||
					!s.ZooKeeperTLS || s.ZooKeeperTLSCA != "ca.pem" || s.ZooKeeperTLSCert != "c.pem" || s.ZooKeeperTLSKey != "k.pem" ||
					s.ZooKeeperTLSServerName != "zk.example.com" || s.ZooKeeperAuthFile != "auth" || s.ZooKeeperACL != aclCreatorWorldRead ||
					s.CandidateID != "host a" || s.OnChildSuccess != policyRerun || s.OnChildError != policyExit ||
					s.OnElectionFailure != electionRunAnyway || s.OnConnectionLoss != lossIgnore || s.WrapChildLogs ||
					s.StopGracePeriod != 0 || s.Schedule != "*/5 * * * *" || s.Timezone.String() != "Europe/Berlin" ||
					s.StartingDeadline != time.Minute || s.Timeout != time.Hour ||
					!reflect.DeepEqual(s.OnPromote, a("promote", "--now")) || !reflect.DeepEqual(s.OnDemote, a("demote")) ||
					s.HookTimeout != time.Minute || s.LeaderData != "data" || !reflect.DeepEqual(s.HealthCheck, a("check", "-q")) ||
					s.HealthInterval != 2*time.Second || s.HealthTimeout != time.Second || s.HealthFailures != 7 ||
					s.MetricsFile != "/tmp/m.prom" {
					t.Errorf("got %+v", s)
				}
				for name, src := range s.Sources {
					if name != "config-file" && src != "flag" {
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
				"on-election-failure": "run-anyway", "on-connection-loss": "reelect", "wrap-child-logs": false,
				"stop-grace-period": "2s", "schedule": "0 3 * * *", "timezone": "America/New_York",
				"starting-deadline": "7s", "timeout": "8s", "output": "json", "wait": "9s",
				"on-promote": ["sh", "-c", "echo $HOME 'x'"], "on-demote": "demote 'a b'", "hook-timeout": "10s",
				"leader-data": "@$DIR/data.txt", "health-check": ["check"], "health-interval": "11s",
				"health-timeout": "12s", "health-failures": 4, "metrics-file": "/tmp/c.prom"}`,
				"data.txt": "line 1\nline 2\n"},
			check: func(t *testing.T, s *Settings, dir string) {
				if !reflect.DeepEqual(s.ZooKeeperServers, []string{"zk1:2181", "[::1]:2183"}) || s.BasePath != "/app/x/c" ||
					!s.ZooKeeperTLS || s.ZooKeeperTLSCA != "ca" || s.ZooKeeperTLSCert != "cert" || s.ZooKeeperTLSKey != "key" ||
					s.ZooKeeperTLSServerName != "zk" || s.ZooKeeperAuthFile != "auth" || s.ZooKeeperACL != aclCreator ||
					s.SessionTimeout != 4*time.Second || s.LogLevel != slog.LevelError || s.LogFormat != "json" || !s.Debug ||
					s.CandidateID != "filecand" || s.OnChildSuccess != policyIgnore || s.OnChildError != policyRerun ||
					s.OnElectionFailure != electionRunAnyway || s.OnConnectionLoss != lossReelect || s.WrapChildLogs ||
					s.StopGracePeriod != 2*time.Second || s.Schedule != "0 3 * * *" || s.Timezone.String() != "America/New_York" ||
					s.StartingDeadline != 7*time.Second || s.Timeout != 8*time.Second ||
					!reflect.DeepEqual(s.OnPromote, a("sh", "-c", "echo $HOME 'x'")) || !reflect.DeepEqual(s.OnDemote, a("demote", "a b")) ||
					s.HookTimeout != 10*time.Second || s.LeaderData != "line 1\nline 2\n" || !reflect.DeepEqual(s.HealthCheck, a("check")) ||
					s.HealthInterval != 11*time.Second || s.HealthTimeout != 12*time.Second || s.HealthFailures != 4 || s.Wait != 0 {
					t.Errorf("got %+v", s)
				}
				file := filepath.Join(dir, "c.json")
				if s.ConfigFile != file || s.Sources["config-file"] != "flag" {
					t.Errorf("ConfigFile = %q, source %q", s.ConfigFile, s.Sources["config-file"])
				}
				for name, src := range s.Sources {
					if name != "config-file" && src != "config file "+file {
						t.Errorf("Sources[%q] = %q", name, src)
					}
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
		{
			name: "repeated servers, comma lists, IPv6, before and after the command",
			args: a("--zookeeper-servers", "a,b:1", "info", "--zookeeper-servers=c:65535", "-zookeeper-servers", "[fe80::1%eth0],[::1]:9"),
			env:  map[string]string{"ZOOKEEPER_SERVERS": "ignored"},
			check: func(t *testing.T, s *Settings, dir string) {
				want := []string{"a:2181", "b:1", "c:65535", "[fe80::1%eth0]:2181", "[::1]:9"}
				if !reflect.DeepEqual(s.ZooKeeperServers, want) {
					t.Errorf("servers = %q, want %q", s.ZooKeeperServers, want)
				}
			},
		},
		{
			name: "chroot: repeated flags may repeat it; the base path gets it",
			args: a("--zookeeper-servers", "a,b/apps/ballot", "info", "--zookeeper-servers", "c/apps/ballot", "--zookeeper-base-path", "/e"),
			check: func(t *testing.T, s *Settings, dir string) {
				if !reflect.DeepEqual(s.ZooKeeperServers, a("a:2181", "b:2181", "c:2181")) || s.ZooKeeperChroot != "/apps/ballot" ||
					s.BasePath != "/apps/ballot/e" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: `chroot "/" is none, as for ZooKeeper; IPv6 with a chroot`,
			args: a("info", "--zookeeper-servers", "zk1/", "--zookeeper-servers", "[::1]:2182/x"),
			check: func(t *testing.T, s *Settings, dir string) {
				if !reflect.DeepEqual(s.ZooKeeperServers, a("zk1:2181", "[::1]:2182")) || s.BasePath != "/x/ballot/election" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "TLS implied by a TLS option; ACL creator by default with credentials",
			args: a("leader", "--zookeeper-tls-ca", "ca.pem", "--zookeeper-auth-file", "auth"),
			check: func(t *testing.T, s *Settings, dir string) {
				if !s.ZooKeeperTLS || s.ZooKeeperACL != aclCreator || s.Sources["zookeeper-tls"] != "implied by --zookeeper-tls-ca" ||
					s.Sources["zookeeper-acl"] != "default" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name:  "a client certificate is a credential; TLS implied from the config file",
			args:  a("info", "--config-file", "$DIR/c.json"),
			files: map[string]string{"c.json": `{"zookeeper-tls-cert": "c.pem", "zookeeper-tls-key": "k.pem"}`},
			check: func(t *testing.T, s *Settings, dir string) {
				if !s.ZooKeeperTLS || s.ZooKeeperACL != aclCreator ||
					s.Sources["zookeeper-tls"] != `implied by config file `+filepath.Join(dir, "c.json")+`: key "zookeeper-tls-cert"` {
					t.Errorf("got %+v, sources %v", s, s.Sources)
				}
			},
		},
		{
			name: "credentials with an open ACL; TLS stays off without TLS options",
			args: a("run", "once", "--candidate-id", "c", "--zookeeper-auth-file", "auth", "--zookeeper-acl", "open", "--", "x"),
			check: func(t *testing.T, s *Settings, dir string) {
				if s.ZooKeeperTLS || s.ZooKeeperACL != aclOpen || s.ZooKeeperAuthFile != "auth" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "global flags after the command; later flag wins",
			args: a("--log-level", "error", "run", "once", "--log-level", "debug", "--candidate-id", "a", "--zookeeper-base-path", "/p", "--", "x"),
			check: func(t *testing.T, s *Settings, dir string) {
				if s.LogLevel != slog.LevelDebug || s.BasePath != "/p" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "child args that look like flags stay child args",
			args: a("run", "once", "--candidate-id", "a", "--", "/bin/sh", "-c", "echo hi", "--debug", "--", "-h"),
			check: func(t *testing.T, s *Settings, dir string) {
				if want := a("/bin/sh", "-c", "echo hi", "--debug", "--", "-h"); !reflect.DeepEqual(s.Args, want) {
					t.Errorf("Args = %q, want %q", s.Args, want)
				}
				if s.Debug {
					t.Error("child's --debug was taken as ballot's")
				}
			},
		},
		{
			name: `"--" as a flag value is not the terminator`,
			args: a("run", "once", "--candidate-id", "--", "--", "x"),
			check: func(t *testing.T, s *Settings, dir string) {
				if s.CandidateID != "--" || !reflect.DeepEqual(s.Args, a("x")) {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "bool flags and single dash",
			args: a("-debug=true", "run", "once", "-candidate-id=a", "-wrap-child-logs=0", "--", "x"),
			check: func(t *testing.T, s *Settings, dir string) {
				if !s.Debug || s.WrapChildLogs || s.CandidateID != "a" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "info with empty --",
			args: a("info", "--"),
			check: func(t *testing.T, s *Settings, dir string) {
				if s.Command != cmdInfo {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name:  "default search: HOME first",
			args:  a("info"),
			env:   map[string]string{"HOME": "$DIR/home"},
			files: map[string]string{"home/.config/ballot/ballot.json": `{"output":"json"}`, "etc/ballot.json": `{"output":"human"}`},
			check: func(t *testing.T, s *Settings, dir string) {
				file := filepath.Join(dir, "home/.config/ballot/ballot.json")
				if s.Output != "json" || s.ConfigFile != file || s.Sources["output"] != "config file "+file || s.Sources["config-file"] != "default" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name:  "default search: falls through to later paths",
			args:  a("info"),
			env:   map[string]string{"HOME": "$DIR/home"},
			files: map[string]string{"cwd/ballot.json": `{"output":"json"}`},
			check: func(t *testing.T, s *Settings, dir string) {
				if s.Output != "json" || s.ConfigFile != filepath.Join(dir, "cwd/ballot.json") {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name:  "config keys of other commands are ignored",
			args:  a("info", "--config-file", "$DIR/c.json"),
			files: map[string]string{"c.json": `{"candidate-id": "", "schedule": 5, "timeout": "bogus", "output": "json"}`},
			check: func(t *testing.T, s *Settings, dir string) {
				if s.Output != "json" || s.CandidateID != "" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "case-insensitive keywords normalised",
			args: a("info", "--log-level", "Warn", "--log-format", "JSON", "--output", "Json"),
			check: func(t *testing.T, s *Settings, dir string) {
				if s.LogLevel != slog.LevelWarn || s.LogFormat != "json" || s.Output != "json" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "all log levels",
			args: a("info", "--log-level", "fatal"),
			check: func(t *testing.T, s *Settings, dir string) {
				for i, n := range logLevelNames {
					var st Settings
					if err := lookupParam("log-level").apply(&st, n); err != nil || st.LogLevel != logLevels[i] {
						t.Errorf("%s: %v %v", n, st.LogLevel, err)
					}
				}
				if s.LogLevel != LevelFatal {
					t.Errorf("LogLevel = %v", s.LogLevel)
				}
			},
		},
		{
			name:  "config file with BOM, nested whitespace and trailing newline",
			args:  a("info", "--config-file", "$DIR/c.json"),
			files: map[string]string{"c.json": "\xef\xbb\xbf\n{\n  \"zookeeper-servers\": [\n    \"a\"\n  ]\n}\n\n"},
			check: func(t *testing.T, s *Settings, dir string) {
				if !reflect.DeepEqual(s.ZooKeeperServers, a("a:2181")) {
					t.Errorf("got %+v", s)
				}
			},
		},

		// Hooks, leader data and health.
		{
			name: "hook quoting by flag",
			args: a("run", "once", "--candidate-id", "c", "--on-promote", "sh -c 'echo a b'", "--on-demote", `a\ b`,
				"--health-check", "'x y' z", "--", "x"),
			check: func(t *testing.T, s *Settings, dir string) {
				if !reflect.DeepEqual(s.OnPromote, a("sh", "-c", "echo a b")) || !reflect.DeepEqual(s.OnDemote, a("a b")) ||
					!reflect.DeepEqual(s.HealthCheck, a("x y", "z")) || !reflect.DeepEqual(s.Args, a("x")) {
					t.Errorf("OnPromote %q, OnDemote %q, HealthCheck %q, Args %q", s.OnPromote, s.OnDemote, s.HealthCheck, s.Args)
				}
			},
		},
		{
			name: "no command with on-promote flag",
			args: a("run", "once", "--candidate-id", "c", "--on-promote", "promote"),
			check: func(t *testing.T, s *Settings, dir string) {
				if s.Args != nil || !reflect.DeepEqual(s.OnPromote, a("promote")) {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "no command after -- with on-demote flag",
			args: a("run", "once", "--candidate-id", "c", "--on-demote", "demote", "--"),
			check: func(t *testing.T, s *Settings, dir string) {
				if s.Args != nil || !reflect.DeepEqual(s.OnDemote, a("demote")) {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "no command with ON_PROMOTE env",
			args: a("run", "cron", "--candidate-id", "c", "--schedule", "@daily"),
			env:  map[string]string{"BALLOT_ON_PROMOTE": "/usr/local/bin/promote --role primary"},
			check: func(t *testing.T, s *Settings, dir string) {
				if s.Args != nil || !reflect.DeepEqual(s.OnPromote, a("/usr/local/bin/promote", "--role", "primary")) ||
					s.Sources["on-promote"] != "environment BALLOT_ON_PROMOTE" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name:  "no command with on-demote in config file",
			args:  a("run", "once", "--candidate-id", "c", "--config-file", "$DIR/c.json", "--"),
			files: map[string]string{"c.json": `{"on-demote": ["demote", "--now"]}`},
			check: func(t *testing.T, s *Settings, dir string) {
				if s.Args != nil || !reflect.DeepEqual(s.OnDemote, a("demote", "--now")) || s.OnPromote != nil {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name:  "hook arrays are taken as they are",
			args:  a("run", "once", "--config-file", "$DIR/c.json", "--", "x"),
			files: map[string]string{"c.json": `{"candidate-id": "c", "on-promote": ["sh", "-c", "echo \"$1\" | tr a b", "", "'q'"], "health-check": "x ''"}`},
			check: func(t *testing.T, s *Settings, dir string) {
				if want := a("sh", "-c", `echo "$1" | tr a b`, "", "'q'"); !reflect.DeepEqual(s.OnPromote, want) {
					t.Errorf("OnPromote = %q, want %q", s.OnPromote, want)
				}
				if want := a("x", ""); !reflect.DeepEqual(s.HealthCheck, want) {
					t.Errorf("HealthCheck = %q, want %q", s.HealthCheck, want)
				}
			},
		},
		{
			name: "leader-data literal, @@ and @file",
			args: a("run", "once", "--candidate-id", "c", "--leader-data", "@@home", "--", "x"),
			env:  map[string]string{"BALLOT_LEADER_DATA": "ignored"},
			check: func(t *testing.T, s *Settings, dir string) {
				for v, want := range map[string]string{"plain": "plain", "a@b": "a@b", "@@": "@", "@@@x": "@@x", "": "", " @x": " @x"} {
					if got, err := leaderData(v); err != nil || got != want {
						t.Errorf("leaderData(%q) = %q, %v; want %q", v, got, err, want)
					}
				}
				if s.LeaderData != "@home" || s.Sources["leader-data"] != "flag" {
					t.Errorf("LeaderData %q from %q", s.LeaderData, s.Sources["leader-data"])
				}
			},
		},
		{
			name:  "leader-data from a file of exactly 512 KiB",
			args:  a("run", "once", "--candidate-id", "c", "--", "x"),
			env:   map[string]string{"BALLOT_LEADER_DATA": "@$DIR/big"},
			files: map[string]string{"big": strings.Repeat("x", 512<<10)},
			check: func(t *testing.T, s *Settings, dir string) {
				if len(s.LeaderData) != 512<<10 {
					t.Errorf("LeaderData is %d bytes", len(s.LeaderData))
				}
			},
		},
		{
			name:  "leader-data from an empty file",
			args:  a("run", "once", "--candidate-id", "c", "--leader-data", "@$DIR/empty", "--", "x"),
			files: map[string]string{"empty": ""},
			check: func(t *testing.T, s *Settings, dir string) {
				if s.LeaderData != "" || s.Sources["leader-data"] != "flag" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name:  "health-failures whole numbers in JSON",
			args:  a("run", "once", "--candidate-id", "c", "--config-file", "$DIR/c.json", "--", "x"),
			files: map[string]string{"c.json": `{"health-failures": 3.0}`},
			check: func(t *testing.T, s *Settings, dir string) {
				if s.HealthFailures != 3 {
					t.Errorf("HealthFailures = %d", s.HealthFailures)
				}
				for raw, want := range map[string]int64{"1": 1, "10": 10, "1e1": 10, "2.0": 2, "-1": -1} {
					if n, ok := wholeNumber([]byte(raw)); !ok || n != want {
						t.Errorf("wholeNumber(%s) = %d, %v", raw, n, ok)
					}
				}
				for _, raw := range a(`"3"`, "2.5", "true", "null", "[3]", "{}", "1e300") {
					if n, ok := wholeNumber([]byte(raw)); ok {
						t.Errorf("wholeNumber(%s) = %d, want refusal", raw, n)
					}
				}
			},
		},
		{
			name: "health and hook durations by flag",
			args: a("run", "once", "--candidate-id", "c", "--hook-timeout=1ms", "--health-interval", "1h", "--health-timeout", "100ms",
				"--health-failures", "1", "--", "x"),
			check: func(t *testing.T, s *Settings, dir string) {
				if s.HookTimeout != time.Millisecond || s.HealthInterval != time.Hour || s.HealthTimeout != 100*time.Millisecond || s.HealthFailures != 1 {
					t.Errorf("got %+v", s)
				}
			},
		},

		// The leader command.
		{
			name: "defaults leader",
			args: a("leader"),
			check: func(t *testing.T, s *Settings, dir string) {
				if s.Command != cmdLeader || s.Output != "human" || s.Wait != 0 || s.Args != nil || s.CandidateID != "" ||
					s.SessionTimeout != 5*time.Second || !reflect.DeepEqual(s.ZooKeeperServers, a("localhost:2181")) {
					t.Errorf("got %+v", s)
				}
				for _, p := range params {
					_, ok := s.Sources[p.name]
					if want := p.scope.usedBy(cmdLeader) || p.name == "config-file"; ok != want {
						t.Errorf("Sources[%q] present = %v, want %v", p.name, ok, want)
					}
				}
			},
		},
		{
			name: "leader with wait and output flags, global flags after the command",
			args: a("--log-level", "debug", "leader", "--wait", "30s", "--output=json", "--zookeeper-servers", "zk9"),
			check: func(t *testing.T, s *Settings, dir string) {
				if s.Wait != 30*time.Second || s.Output != "json" || s.LogLevel != slog.LevelDebug ||
					!reflect.DeepEqual(s.ZooKeeperServers, a("zk9:2181")) || s.Sources["wait"] != "flag" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "leader wait by environment",
			args: a("leader", "--"),
			env:  map[string]string{"BALLOT_WAIT": "1m30s", "BALLOT_OUTPUT": "json", "BALLOT_CANDIDATE_ID": "", "BALLOT_SCHEDULE": "ignored"},
			check: func(t *testing.T, s *Settings, dir string) {
				if s.Wait != 90*time.Second || s.Output != "json" || s.Sources["wait"] != "environment BALLOT_WAIT" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name:  "leader wait by config file; run keys ignored",
			args:  a("leader", "--config-file", "$DIR/c.json"),
			files: map[string]string{"c.json": `{"wait": "0s", "on-promote": [], "health-failures": "x"}`},
			check: func(t *testing.T, s *Settings, dir string) {
				if s.Wait != 0 || !strings.HasPrefix(s.Sources["wait"], "config file ") {
					t.Errorf("got %+v", s)
				}
			},
		},
	}
	for _, tt := range tests {
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

func TestParseCommandLineInvalid(t *testing.T) {
	runOnce := func(extra ...string) []string {
		return append(append(a("run", "once", "--candidate-id", "c"), extra...), "--", "x")
	}
	infoCfg := a("info", "--config-file", "$DIR/c.json")
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		files map[string]string
		want  []string // substrings of the message
	}{
		// command line structure
		{"no command", a(), nil, nil, a("no command given")},
		{"only global flags", a("--debug"), nil, nil, a("no command given")},
		{"unknown command", a("frobnicate"), nil, nil, a(`unknown command "frobnicate"`)},
		{"run without mode", a("run"), nil, nil, a("run:", `"once" or "cron"`)},
		{"run bad mode", a("run", "twice"), nil, nil, a(`unknown mode "twice"`)},
		{"unknown flag", a("info", "--colour"), nil, nil, a("info:", "unknown flag --colour")},
		{"unknown global flag", a("--colour", "info"), nil, nil, a("unknown flag --colour")},
		{"run flag on info", a("info", "--candidate-id", "x"), nil, nil, a("info:", "--candidate-id", "run once")},
		{"run flag before command", a("--candidate-id", "x", "run", "once", "--", "x"), nil, nil, a("--candidate-id", "after the command")},
		{"cron flag on run once", runOnce("--schedule", "@daily"), nil, nil, a("run once:", "--schedule", "run cron")},
		{"output flag on run", runOnce("--output", "json"), nil, nil, a("--output")},
		{"flag without value", a("info", "--log-level"), nil, nil, a("--log-level", "needs a value")},
		{"bad flag syntax", a("info", "---x"), nil, nil, a("---x")},
		{"info with child args", a("info", "--", "ls"), nil, nil, a("info:", `"ls"`)},
		{"watch stray arg", a("watch", "extra"), nil, nil, a("watch:", `"extra"`)},
		{"version stray arg", a("version", "now"), nil, nil, a("version:", `"now"`)},
		{"run stray arg without --", a("run", "once", "--candidate-id", "c", "/bin/true"), nil, nil, a(`"/bin/true"`, `"--"`)},
		{"bool flag with separate value", a("run", "once", "--candidate-id", "c", "--debug", "false", "--", "x"), nil, nil, a(`"false"`, "=")},
		{"help unknown topic", a("help", "nope"), nil, nil, a(`help: unknown command "nope"`)},
		{"missing candidate id", a("run", "once", "--", "x"), nil, nil, a("run once: --candidate-id is required", "BALLOT_CANDIDATE_ID", `"candidate-id"`)},
		{"missing schedule", a("run", "cron", "--candidate-id", "c", "--", "x"), nil, nil, a("run cron: --schedule is required", "BALLOT_SCHEDULE")},
		{"missing command", a("run", "once", "--candidate-id", "c"), nil, nil, a("run once: no command given", `"--"`, "--on-promote or --on-demote")},
		{"missing command after --", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--"), nil, nil, a("run cron: no command given")},
		{"missing command, health check is no hook", a("run", "once", "--candidate-id", "c", "--health-check", "true"), nil, nil, a("run once: no command given")},
		{"missing command, hooks of another command in file", a("run", "once", "--candidate-id", "c", "--config-file", "$DIR/c.json"), nil,
			map[string]string{"c.json": `{"output": "json", "wait": "1s"}`}, a("run once: no command given")},
		{"missing command and candidate id", a("run", "once", "--on-promote", "p"), nil, nil, a("--candidate-id is required")},
		{"empty command", a("run", "once", "--candidate-id", "c", "--", ""), nil, nil, a("empty")},

		// values
		{"bad log level", a("info", "--log-level", "loud"), nil, nil, a(`--log-level "loud"`, "not a log level", "trace, debug, info, warn, error, fatal, panic")},
		{"bad log format", a("info", "--log-format=xml"), nil, nil, a(`--log-format "xml"`, "human, json, raw")},
		{"bad output", a("watch", "--output", "yaml"), nil, nil, a(`--output "yaml"`, "human, json")},
		{"bad debug", a("info", "--debug=yes"), nil, nil, a(`--debug "yes"`, "true or false")},
		{"bad policy flag", runOnce("--on-child-success", "restart"), nil, nil, a(`--on-child-success "restart"`, "rerun, reelect, exit, ignore")},
		{"bad policy env", runOnce(), map[string]string{"BALLOT_ON_CHILD_ERROR": "panic"}, nil, a(`environment BALLOT_ON_CHILD_ERROR "panic"`, "rerun, reelect, exit, ignore")},
		{"bad election policy", runOnce("--on-election-failure", "reelect"), nil, nil, a(`--on-election-failure "reelect"`, "retry, run-anyway, exit")},
		{"bad connection policy", runOnce("--on-connection-loss", "rerun"), nil, nil, a(`--on-connection-loss "rerun"`, "reelect, exit, ignore")},
		{"bad wrap env", runOnce(), map[string]string{"BALLOT_WRAP_CHILD_LOGS": "maybe"}, nil, a(`environment BALLOT_WRAP_CHILD_LOGS "maybe"`, "true or false")},
		{"zero session timeout", a("info", "--zookeeper-session-timeout", "0s"), nil, nil, a(`--zookeeper-session-timeout "0s"`, "greater than zero")},
		{"negative session timeout", a("info", "--zookeeper-session-timeout", "-1s"), nil, nil, a(`"-1s"`, "negative")},
		{"unitless duration env", a("info"), map[string]string{"ZOOKEEPER_SESSION_TIMEOUT": "5"}, nil, a(`environment ZOOKEEPER_SESSION_TIMEOUT "5"`, "not a duration", "5s")},
		{"negative grace", runOnce("--stop-grace-period", "-2s"), nil, nil, a(`--stop-grace-period "-2s"`, "negative")},
		{"negative deadline", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--starting-deadline", "-1m", "--", "x"), nil, nil, a(`--starting-deadline "-1m"`, "negative")},
		{"negative timeout env", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--", "x"), map[string]string{"BALLOT_TIMEOUT": "-5s"}, nil, a(`environment BALLOT_TIMEOUT "-5s"`, "negative")},
		{"bad timezone", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--timezone", "Mars/Olympus", "--", "x"), nil, nil, a(`--timezone "Mars/Olympus"`, "time zone")},
		{"empty timezone", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--timezone=", "--", "x"), nil, nil, a(`--timezone ""`)},
		{"empty schedule", a("run", "cron", "--candidate-id", "c", "--schedule", " ", "--", "x"), nil, nil, a(`--schedule " "`, "empty")},
		{"empty candidate id", a("run", "once", "--candidate-id=", "--", "x"), nil, nil, a(`--candidate-id ""`, "empty")},
		{"candidate id with newline", a("run", "once", "--candidate-id", "a\nb", "--", "x"), nil, nil, a(`--candidate-id "a\nb"`, "newline")},
		{"relative base path", a("info", "--zookeeper-base-path", "ballot"), nil, nil, a(`--zookeeper-base-path "ballot"`, "start with /")},
		{"root base path", a("info", "--zookeeper-base-path", "/"), nil, nil, a(`--zookeeper-base-path "/"`, "below /")},
		{"trailing slash base path", a("info"), map[string]string{"ZOOKEEPER_BASE_PATH": "/a/b/"}, nil, a(`environment ZOOKEEPER_BASE_PATH "/a/b/"`, "end with /")},
		{"empty segment base path", a("info", "--zookeeper-base-path", "/a//b"), nil, nil, a(`"/a//b"`, "empty segment")},
		{"dot segment base path", a("info", "--zookeeper-base-path", "/a/../b"), nil, nil, a(`"/a/../b"`, `".."`)},
		{"control char base path", a("info", "--zookeeper-base-path", "/a\x01b"), nil, nil, a(`"/a\x01b"`, "U+0001")},
		{"reserved base path", a("info", "--zookeeper-base-path", "/zookeeper/x"), nil, nil, a(`"/zookeeper/x"`, "reserved")},
		{"bad port", a("info", "--zookeeper-servers", "zk1:0"), nil, nil, a(`--zookeeper-servers "zk1:0"`, `"0"`, "1 to 65535")},
		{"port too big env", a("info"), map[string]string{"ZOOKEEPER_SERVERS": "a,b:70000"}, nil, a(`environment ZOOKEEPER_SERVERS "a,b:70000"`, `"b:70000"`, "65535")},
		{"non-numeric port", a("info", "--zookeeper-servers", "zk1:http"), nil, nil, a(`"zk1:http"`, `"http"`)},
		{"empty port", a("info", "--zookeeper-servers", "zk1:"), nil, nil, a(`"zk1:"`, "port")},
		{"empty server entry", a("info", "--zookeeper-servers", "a,,b"), nil, nil, a(`--zookeeper-servers "a,,b"`, "empty server entry")},
		{"empty servers flag", a("info", "--zookeeper-servers="), nil, nil, a(`--zookeeper-servers ""`, "empty server entry")},
		{"missing host", a("info", "--zookeeper-servers", ":2181"), nil, nil, a(`":2181"`, "host")},
		{"unbracketed IPv6", a("info", "--zookeeper-servers", "::1"), nil, nil, a(`"::1"`, "brackets")},
		{"bad bracket", a("info", "--zookeeper-servers", "[::1"), nil, nil, a(`"[::1"`, "]")},
		{"chroot not after the last server", a("info", "--zookeeper-servers", "zk1/app,zk2"), nil, nil, a(`"zk1/app,zk2"`, "after the last server")},
		{"chroot ends with slash", a("info", "--zookeeper-servers", "zk1:2181/app/"), nil, nil, a(`"zk1:2181/app/"`, `chroot "/app/"`, "must not end with /")},
		{"chroot empty segment", a("info"), map[string]string{"ZOOKEEPER_SERVERS": "zk1//app"}, nil, a(`environment ZOOKEEPER_SERVERS "zk1//app"`, "empty segment")},
		{"chroot reserved", a("info", "--zookeeper-servers", "zk1/zookeeper/x"), nil, nil, a(`"zk1/zookeeper/x"`, "reserved")},
		{"chroot dot segment", a("info", "--zookeeper-servers", "zk1/a/../b"), nil, nil, a(`"zk1/a/../b"`, `".."`)},
		{"two chroots", a("info", "--zookeeper-servers", "zk1/a", "--zookeeper-servers", "zk2/b"), nil, nil, a(`--zookeeper-servers "zk2/b"`, `chroot "/b" differs`, `"/a"`)},
		{"chroot on a middle array entry", infoCfg, nil, map[string]string{"c.json": `{"zookeeper-servers": ["zk1/app", "zk2"]}`}, a(`key "zookeeper-servers": entry "zk1/app"`, "after the last server")},
		{"bad host chars", a("info", "--zookeeper-servers", "zk 1"), nil, nil, a(`"zk 1"`, "host name")},

		// secure ZooKeeper (the files are read later: zkaccess_test.go)
		{"certificate without key", a("info", "--zookeeper-tls-cert", "c.pem"), nil, nil, a(`--zookeeper-tls-cert "c.pem"`, "--zookeeper-tls-key")},
		{"key without certificate", a("info"), map[string]string{"BALLOT_ZOOKEEPER_TLS_KEY": "k.pem"}, nil, a(`environment BALLOT_ZOOKEEPER_TLS_KEY "k.pem"`, "--zookeeper-tls-cert")},
		{"TLS off but a CA given", a("info", "--zookeeper-tls=false", "--zookeeper-tls-ca", "ca.pem"), nil, nil, a(`--zookeeper-tls "false" contradicts --zookeeper-tls-ca`)},
		{"TLS off in file, server name by flag", a("info", "--config-file", "$DIR/c.json", "--zookeeper-tls-server-name", "zk"), nil,
			map[string]string{"c.json": `{"zookeeper-tls": false}`}, a(`key "zookeeper-tls" "false" contradicts --zookeeper-tls-server-name`)},
		{"bad TLS bool", a("info", "--zookeeper-tls=on"), nil, nil, a(`--zookeeper-tls "on"`, "true or false")},
		{"empty CA file name", infoCfg, nil, map[string]string{"c.json": `{"zookeeper-tls-ca": ""}`}, a(`key "zookeeper-tls-ca" ""`, "must name a file")},
		{"CA file name not a string", infoCfg, nil, map[string]string{"c.json": `{"zookeeper-tls-ca": ["a"]}`}, a(`key "zookeeper-tls-ca"`, "expected a string")},
		{"bad server name", a("info", "--zookeeper-tls-server-name", "zk one"), nil, nil, a(`--zookeeper-tls-server-name "zk one"`, "not a host name")},
		{"empty server name", a("info", "--zookeeper-tls-server-name="), nil, nil, a(`--zookeeper-tls-server-name ""`, "must not be empty")},
		{"bad ACL", a("info", "--zookeeper-acl", "private"), nil, nil, a(`--zookeeper-acl "private"`, "open, creator, creator-world-read")},
		{"creator ACL without credentials", runOnce("--zookeeper-acl", "creator"), nil, nil, a(`--zookeeper-acl "creator"`, "needs credentials", "--zookeeper-auth-file")},
		{"creator-world-read ACL without credentials env", a("watch"), map[string]string{"BALLOT_ZOOKEEPER_ACL": "creator-world-read"}, nil, a(`environment BALLOT_ZOOKEEPER_ACL "creator-world-read"`, "needs credentials")},
		{"empty auth file name", a("info", "--zookeeper-auth-file="), nil, nil, a(`--zookeeper-auth-file ""`, "must name a file")},
		{"unknown key close to auth file", infoCfg, nil, map[string]string{"c.json": `{"zookeeper-auth": "u:p"}`}, a(`unknown key "zookeeper-auth"`, `did you mean "zookeeper-acl"`)},

		// hooks, leader data, health
		{"unterminated single quote", runOnce("--on-promote", "echo 'a"), nil, nil, a(`--on-promote "echo 'a"`, "unterminated single quote")},
		{"unterminated double quote env", runOnce(), map[string]string{"BALLOT_ON_DEMOTE": `echo "a\"`}, nil, a(`environment BALLOT_ON_DEMOTE "echo \"a\\\""`, "unterminated double quote")},
		{"unterminated quote in file", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"health-check": "curl 'x"}`}, a(`key "health-check" "curl 'x"`, "unterminated single quote")},
		{"trailing backslash", runOnce("--health-check", `check \`), nil, nil, a(`--health-check "check \\"`, "backslash")},
		{"empty hook flag", runOnce("--on-promote="), nil, nil, a(`--on-promote ""`, "empty command line")},
		{"blank hook env", runOnce(), map[string]string{"BALLOT_HEALTH_CHECK": " \t\n"}, nil, a("environment BALLOT_HEALTH_CHECK", "empty command line")},
		{"empty quoted command name", runOnce("--on-demote", "'' x"), nil, nil, a(`--on-demote "'' x"`, "command name is an empty string")},
		{"empty hook string in file", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"on-promote": ""}`}, a(`key "on-promote" ""`, "empty command line")},
		{"empty hook array", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"on-promote": []}`}, a(`key "on-promote" []`, "empty command line")},
		{"hook array with a number", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"on-demote": ["kill", 9]}`}, a(`key "on-demote"`, "element 2", "expected a string, got 9")},
		{"hook array with null", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"on-demote": [null]}`}, a(`key "on-demote"`, "element 1", "got null")},
		{"hook array nested", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"health-check": [["a"]]}`}, a(`key "health-check"`, "element 1", `got ["a"]`)},
		{"hook array empty command name", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"on-promote": ["", "x"]}`}, a(`key "on-promote" ["","x"]`, "empty string")},
		{"hook array with NUL", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"on-promote": ["a", "b\u0000"]}`}, a(`key "on-promote"`, "NUL")},
		{"hook as object", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"on-promote": {"cmd": "x"}}`}, a(`key "on-promote"`, "command line string or an array of strings", `got {"cmd":"x"}`)},
		{"hook as bool", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"health-check": true}`}, a(`key "health-check"`, "got true")},
		{"health-failures 0", runOnce("--health-failures", "0"), nil, nil, a(`--health-failures "0"`, "at least 1")},
		{"health-failures -1 env", runOnce(), map[string]string{"BALLOT_HEALTH_FAILURES": "-1"}, nil, a(`environment BALLOT_HEALTH_FAILURES "-1"`, "at least 1")},
		{"health-failures abc", runOnce("--health-failures", "abc"), nil, nil, a(`--health-failures "abc"`, "not a whole number")},
		{"health-failures 2.5 flag", runOnce("--health-failures", "2.5"), nil, nil, a(`--health-failures "2.5"`, "not a whole number")},
		{"health-failures string in file", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"health-failures": "3"}`}, a(`key "health-failures"`, `expected a whole number such as 3, got "3"`)},
		{"health-failures fraction in file", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"health-failures": 2.5}`}, a(`key "health-failures"`, "expected a whole number such as 3, got 2.5")},
		{"health-failures 0 in file", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"health-failures": 0}`}, a(`key "health-failures" 0`, "at least 1")},
		{"health-failures null in file", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"health-failures": null}`}, a(`key "health-failures"`, "got null")},
		{"hook-timeout 0", runOnce("--hook-timeout", "0"), nil, nil, a(`--hook-timeout "0"`, "greater than zero")},
		{"hook-timeout negative in file", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"hook-timeout": "-1s"}`}, a(`key "hook-timeout" "-1s"`, "negative")},
		{"health-interval 0 env", runOnce(), map[string]string{"BALLOT_HEALTH_INTERVAL": "0s"}, nil, a(`environment BALLOT_HEALTH_INTERVAL "0s"`, "greater than zero")},
		{"health-timeout unitless", runOnce("--health-timeout", "5"), nil, nil, a(`--health-timeout "5"`, "not a duration")},
		{"leader-data missing file", runOnce("--leader-data", "@$DIR/missing-file"), nil, nil, a(`--leader-data "@$DIR/missing-file"`, "cannot read file $DIR/missing-file", "no such file")},
		{"leader-data missing file env", runOnce(), map[string]string{"BALLOT_LEADER_DATA": "@nope.txt"}, nil, a(`environment BALLOT_LEADER_DATA "@nope.txt"`, "nope.txt")},
		{"leader-data directory", runOnce("--leader-data", "@$DIR"), nil, nil, a(`--leader-data "@$DIR"`, "directory")},
		{"leader-data bare @", runOnce("--leader-data", "@"), nil, nil, a(`--leader-data "@"`, "names no file", "@@")},
		{"leader-data file too big", runOnce("--leader-data", "@$DIR/big"), nil, map[string]string{"big": strings.Repeat("x", 512<<10+1)}, a(`--leader-data "@$DIR/big"`, "512 KiB")},
		{"leader-data literal too big in file", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"leader-data": "` + strings.Repeat("y", 512<<10+1) + `"}`}, a(`key "leader-data"`, "512 KiB")},
		{"leader-data not a string in file", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"leader-data": {"port": 8080}}`}, a(`key "leader-data"`, "expected a string")},
		{"hook flag before the command", a("--on-promote", "p", "run", "once", "--candidate-id", "c", "--", "x"), nil, nil, a("--on-promote", "after the command")},
		{"hook flag on leader", a("leader", "--on-promote", "p"), nil, nil, a("leader:", "unknown flag --on-promote", "run once and run cron")},

		// leader
		{"leader with candidate id", a("leader", "--candidate-id", "c"), nil, nil, a("leader:", "unknown flag --candidate-id", "run once, run cron and step-down")},
		{"leader stray arg", a("leader", "now"), nil, nil, a("leader:", `unexpected argument "now"`)},
		{"leader with command", a("leader", "--", "ls", "-l"), nil, nil, a("leader:", "takes no command", `"ls -l"`)},
		{"leader negative wait", a("leader", "--wait", "-1s"), nil, nil, a(`--wait "-1s"`, "negative")},
		{"leader bad wait env", a("leader"), map[string]string{"BALLOT_WAIT": "forever"}, nil, a(`environment BALLOT_WAIT "forever"`, "not a duration")},
		{"leader wait number in file", a("leader", "--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"wait": 30}`}, a(`key "wait"`, "duration", "got 30")},
		{"leader bad output", a("leader", "--output", "xml"), nil, nil, a(`--output "xml"`, "human, json")},
		{"wait on info", a("info", "--wait", "1s"), nil, nil, a("info:", "unknown flag --wait", "leader and step-down only")},
		{"wait on run", runOnce("--wait", "1s"), nil, nil, a("run once:", "--wait", "leader and step-down only")},
		{"wait before the command", a("--wait", "1s", "leader"), nil, nil, a("--wait", "after the command", "leader and step-down only")},
		{"output on run names leader", runOnce("--output", "json"), nil, nil, a("--output", "info, watch and leader")},
		{"help unknown topic lists leader", a("help", "leaders"), nil, nil, a(`"leaders"`, "leader, step-down, pause, resume, version")},
		{"unknown command lists leader", a("lead"), nil, nil, a(`"lead"`, "watch, leader, step-down, pause, resume, version")},

		// config files
		{"missing explicit file flag", a("info", "--config-file", "$DIR/nope.json"), nil, nil, a("--config-file", "nope.json", "no such file")},
		{"missing explicit file env", a("info"), map[string]string{"BALLOT_CONFIG_FILE": "$DIR/nope.json"}, nil, a("environment BALLOT_CONFIG_FILE", "nope.json", "no such file")},
		{"empty config-file flag", a("info", "--config-file="), nil, nil, a(`--config-file ""`)},
		{"config file is a directory", a("info", "--config-file", "$DIR"), nil, nil, a("--config-file", "directory")},
		{"default config is a directory", a("info"), nil, map[string]string{"etc/ballot.json/x": ""}, a("etc/ballot.json", "directory")},
		{"unknown key", infoCfg, nil, map[string]string{"c.json": `{"zookeper-servers": ["a"]}`}, a("c.json", `unknown key "zookeper-servers"`, `"zookeeper-servers"`)},
		{"unknown key far from all", infoCfg, nil, map[string]string{"c.json": `{"colour": "blue"}`}, a(`unknown key "colour"`, "known keys:", "candidate-id")},
		{"unknown key snake case", infoCfg, nil, map[string]string{"c.json": `{"log_level": "info"}`}, a(`unknown key "log_level"`, `"log-level"`)},
		{"config-file key", infoCfg, nil, map[string]string{"c.json": `{"config-file": "/x"}`}, a(`unknown key "config-file"`)},
		{"unknown key for unused command", infoCfg, nil, map[string]string{"c.json": `{"shedule": "@daily"}`}, a(`unknown key "shedule"`, `"schedule"`)},
		{"duplicate key", infoCfg, nil, map[string]string{"c.json": `{"output": "json", "output": "human"}`}, a(`key "output"`, "more than once")},
		{"wrong type bool", infoCfg, nil, map[string]string{"c.json": `{"debug": "yes"}`}, a(`key "debug"`, "expected true or false", `got "yes"`)},
		{"wrong type duration", infoCfg, nil, map[string]string{"c.json": `{"zookeeper-session-timeout": 5}`}, a(`key "zookeeper-session-timeout"`, "duration", "got 5")},
		{"wrong type string", infoCfg, nil, map[string]string{"c.json": `{"log-level": 3}`}, a(`key "log-level"`, "expected a string", "got 3")},
		{"null value", infoCfg, nil, map[string]string{"c.json": `{"output": null}`}, a(`key "output"`, "got null")},
		{"servers as string", infoCfg, nil, map[string]string{"c.json": `{"zookeeper-servers": "a,b"}`}, a(`key "zookeeper-servers"`, "array of strings", `got "a,b"`)},
		{"servers multi-line value stays one line", infoCfg, nil, map[string]string{"c.json": "{\"zookeeper-servers\": [\n1,\n2]}"}, a(`key "zookeeper-servers"`, "got [1,2]")},
		{"servers empty list", infoCfg, nil, map[string]string{"c.json": `{"zookeeper-servers": []}`}, a(`key "zookeeper-servers"`, "empty")},
		{"servers empty entry", infoCfg, nil, map[string]string{"c.json": `{"zookeeper-servers": ["a", ""]}`}, a(`key "zookeeper-servers"`, `entry ""`, "empty")},
		{"servers bad port in file", infoCfg, nil, map[string]string{"c.json": `{"zookeeper-servers": ["a:99999"]}`}, a(`key "zookeeper-servers"`, `"a:99999"`, "65535")},
		{"bad policy in file", a("run", "once", "--config-file", "$DIR/c.json", "--", "x"), nil, map[string]string{"c.json": `{"candidate-id": "c", "on-child-error": "restart"}`}, a("c.json", `key "on-child-error" "restart"`, "use one of rerun, reelect, exit, ignore")},
		{"empty candidate in file", a("run", "once", "--config-file", "$DIR/c.json", "--", "x"), nil, map[string]string{"c.json": `{"candidate-id": ""}`}, a(`key "candidate-id" ""`, "empty")},
		{"bad path in file", infoCfg, nil, map[string]string{"c.json": `{"zookeeper-base-path": "/a/./b"}`}, a(`key "zookeeper-base-path" "/a/./b"`)},
		{"yaml by extension", a("info", "--config-file", "$DIR/ballot.yaml"), nil, map[string]string{"ballot.yaml": `{"output": "json"}`}, a("ballot.yaml", "looks like YAML", "JSON only")},
		{"yml by extension", a("info", "--config-file", "$DIR/ballot.yml"), nil, map[string]string{"ballot.yml": "output: json\n"}, a("ballot.yml", "YAML")},
		{"yaml by content", infoCfg, nil, map[string]string{"c.json": "zookeeper-servers:\n  - zk1\n"}, a("c.json", "looks like YAML")},
		{"yaml document marker", infoCfg, nil, map[string]string{"c.json": "---\noutput: json\n"}, a("c.json", "looks like YAML")},
		{"yaml with comment", infoCfg, nil, map[string]string{"c.json": "# settings\noutput: json\n"}, a("c.json", "looks like YAML")},
		{"syntax error", infoCfg, nil, map[string]string{"c.json": "{\n  \"output\": \"json\",\n}\n"}, a("c.json", "invalid JSON at line 3, column 1")},
		{"syntax error mid-line", infoCfg, nil, map[string]string{"c.json": "{\n  \"output\" \"json\"\n}"}, a("c.json", "line 2, column 12")},
		{"truncated", infoCfg, nil, map[string]string{"c.json": "{\"output\": \"json\""}, a("c.json", "invalid JSON at line 1, column 18", "end of file")},
		{"trailing garbage", infoCfg, nil, map[string]string{"c.json": "{\"output\": \"json\"}\n}"}, a("c.json", "after the JSON object", "line 2, column 1")},
		{"two objects", infoCfg, nil, map[string]string{"c.json": `{} {}`}, a("c.json", "after the JSON object", "line 1, column 4")},
		{"not an object", infoCfg, nil, map[string]string{"c.json": `["output"]`}, a("c.json", "JSON object", "array")},
		{"empty file", infoCfg, nil, map[string]string{"c.json": " \n"}, a("c.json", "empty")},
		{"bad default file", a("info"), map[string]string{"HOME": "$DIR/home"}, map[string]string{"home/.config/ballot/ballot.json": `{"output": "xml"}`}, a("home/.config/ballot/ballot.json", `key "output" "xml"`)},
	}
	if len(tests) < 30 {
		t.Fatalf("only %d invalid cases", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := configTestEnv(t, tt.files)
			s, err := parseIn(dir, tt.args, tt.env)
			if err == nil {
				t.Fatalf("parseCommandLine(%q) = %+v, want error", tt.args, s)
			}
			var ue *usageError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v is %T, want *usageError", err, err)
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") {
				t.Errorf("message is not one line: %q", msg)
			}
			for _, w := range tt.want {
				w = strings.ReplaceAll(w, "$DIR", dir)
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not contain %q", msg, w)
				}
			}
			// Temporary directory names are long; count them as "$DIR".
			if len(strings.ReplaceAll(msg, dir, "$DIR")) > 500 && !strings.Contains(tt.name, "too big") && !strings.Contains(msg, "known keys:") {
				t.Errorf("message is %d bytes long: %q", len(msg), msg)
			}
		})
	}
}

func TestParseCommandLineHelp(t *testing.T) {
	tests := []struct {
		args []string
		want []string // substrings of the help text
	}{
		{a("help"), a("leader election", "run once", "info", "Exit codes", "125", "127", "ZOOKEEPER_SERVERS", "localhost:2181")},
		{a("--help"), a("Global flags", "A flag beats the")},
		{a("-h"), a("Commands:")},
		{a("--debug", "help", "help"), a("Commands:")},
		{a("help", "run"), a("run once", "run cron", "--schedule", "--candidate-id", "Policies")},
		{a("run", "--help"), a("run once", "run cron")},
		{a("help", "run", "once"), a("--candidate-id", "BALLOT_CANDIDATE_ID", "--on-child-success", "reelect", "--stop-grace-period", "10s", "BALLOT_STOP_GRACE_PERIOD", "--wrap-child-logs", "Policies")},
		{a("run", "once", "--help"), a("ballot run once")},
		{a("run", "once", "-h", "--", "x"), a("ballot run once")},
		{a("run", "once", "--log-level", "loud", "--help"), a("ballot run once")},
		{a("help", "run", "cron"), a("--schedule", "BALLOT_SCHEDULE", "--timezone", "UTC", "BALLOT_TIMEZONE", "--starting-deadline", "--timeout", "BALLOT_TIMEOUT")},
		{a("run", "cron", "-help"), a("ballot run cron")},
		{a("info", "--help"), a("ballot info", "--output", "human", "BALLOT_OUTPUT", "exit code 1")},
		{a("help", "watch"), a("ballot watch", "--output")},
		{a("watch", "-h"), a("ballot watch")},
		{a("help", "version"), a("ballot version")},
		{a("help"), a("leader", "published data", "no leader has acknowledged")},
		{a("help", "leader"), a("ballot leader", "--wait DURATION", "BALLOT_WAIT", "default: 0", "--output", "BALLOT_OUTPUT", "exit 1", "--zookeeper-servers")},
		{a("leader", "--help"), a("ballot leader")},
		{a("leader", "--wait", "-1s", "-h"), a("ballot leader")},
		{a("help", "run", "once"), a("--on-promote COMMAND", "BALLOT_ON_PROMOTE", "default: none", "--on-demote", "--hook-timeout", "30s",
			"--leader-data", "@@", "512 KiB", "--health-check", "--health-interval", "--health-timeout", "--health-failures N", "default: 3",
			"Hooks:", "without a shell", "may be left out", "before the session can expire", "network partition")},
		{a("help", "run", "cron"), a("less than this late", "missed times are skipped and logged", "resign after each run", "next scheduled time")},
		{a("version", "--help"), a("ballot version")},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			configTestEnv(t, nil)
			_, err := parseIn("", tt.args, nil)
			var h *helpRequested
			if !errors.As(err, &h) {
				t.Fatalf("error = %v, want *helpRequested", err)
			}
			for i, line := range strings.Split(h.text, "\n") {
				if len(line) > 100 {
					t.Errorf("help line %d is %d characters: %q", i+1, len(line), line)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(h.text, w) {
					t.Errorf("help text does not contain %q:\n%s", w, h.text)
				}
			}
			if cmd := strings.Join(tt.args, " "); !strings.Contains(cmd, "run") && strings.Contains(h.text, "--candidate-id ID\n") {
				t.Errorf("help for %q lists run flags", cmd)
			}
		})
	}
}

// TestParseHelpListsEveryFlag checks the help texts against the parameter table.
func TestParseHelpListsEveryFlag(t *testing.T) {
	texts := map[string]string{"": helpText(""), "run once": helpText(cmdRunOnce), "run cron": helpText(cmdRunCron),
		"info": helpText(cmdInfo), "watch": helpText(cmdWatch), "leader": helpText(cmdLeader)}
	for _, p := range params {
		for cmd, text := range texts {
			if cmd == "" && p.scope != scopeGlobal || cmd != "" && (p.scope == scopeGlobal || !p.scope.usedBy(cmd)) {
				continue
			}
			if !strings.Contains(text, "--"+p.name) || !strings.Contains(text, "env "+p.env()) {
				t.Errorf("help for %q lacks --%s or env %s", cmd, p.name, p.env())
			}
			def := strings.SplitN(p.def, "\n", 2)[0]
			if p.opt {
				def = "none"
			}
			if p.shown != "" {
				def = strings.SplitN(p.shown, "\n", 2)[0]
			}
			if !p.req && !strings.Contains(text, "default: "+def) {
				t.Errorf("help for %q lacks the default of --%s", cmd, p.name)
			}
			if line := strings.TrimSpace("--" + p.name + " " + p.arg); !strings.Contains(text, "  "+line+"\n") {
				t.Errorf("help for %q lacks the line %q", cmd, line)
			}
		}
	}
}

func TestConfigExampleParses(t *testing.T) {
	example, err := filepath.Abs("ballot.json.example")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig(example, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range params {
		if _, ok := cfg.values[p.name]; !ok && p.name != "config-file" && p.name != "once-key" {
			t.Errorf("ballot.json.example lacks key %q", p.name)
		}
	}
	configTestEnv(t, nil)
	env := map[string]string{"BALLOT_CONFIG_FILE": example}
	for _, args := range [][]string{a("run", "once", "--", "x"), a("run", "cron", "--", "x"), a("run", "once"), a("info"), a("watch"), a("leader")} {
		s, err := parseIn("", args, env)
		if err != nil {
			t.Fatalf("%q with CONFIG_FILE=%s: %v", args, example, err)
		}
		if s.ConfigFile != example {
			t.Errorf("ConfigFile = %q", s.ConfigFile)
		}
		for name, src := range s.Sources {
			if name != "config-file" && name != "once-key" && src != "config file "+example {
				t.Errorf("%q: Sources[%q] = %q", args, name, src)
			}
		}
	}
}

func TestConfigDefaultPaths(t *testing.T) {
	got := defaultConfigPaths("/home/u")
	want := a("/home/u/.config/ballot/ballot.json", "/etc/ballot/ballot.json", "./ballot.json")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaultConfigPaths = %q, want %q", got, want)
	}
	if got := defaultConfigPaths(""); !reflect.DeepEqual(got, want[1:]) {
		t.Errorf("defaultConfigPaths without HOME = %q", got)
	}
}

func TestConfigDefaultsAreValid(t *testing.T) {
	for _, p := range params {
		if p.apply == nil || p.req || p.opt {
			if p.opt && p.def != "" {
				t.Errorf("%s is optional but has default %q", p.name, p.def)
			}
			continue
		}
		var s Settings
		if err := p.apply(&s, p.def); err != nil {
			t.Errorf("default %q of %s: %v", p.def, p.name, err)
		}
	}
}

func TestParseServerNormalisation(t *testing.T) {
	for in, want := range map[string]string{
		"zk":              "zk:2181",
		"zk:1":            "zk:1",
		"zk:02181":        "zk:2181",
		"10.0.0.1":        "10.0.0.1:2181",
		"[::1]":           "[::1]:2181",
		"[2001:db8::1]:7": "[2001:db8::1]:7",
		"my_host.local":   "my_host.local:2181",
	} {
		got, err := normalizeServer(in)
		if err != nil || got != want {
			t.Errorf("normalizeServer(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range a("zk:+1", "zk:-1", "[zk]:1", "[::1]x", "[::1]:", "zk:1:2", "a@b") {
		if got, err := normalizeServer(in); err == nil {
			t.Errorf("normalizeServer(%q) = %q, want error", in, got)
		}
	}
}

func TestParseSplitCommandLine(t *testing.T) {
	valid := []struct {
		in   string
		want []string
	}{
		{"/bin/true", a("/bin/true")},
		{"sh -c 'echo a b'", a("sh", "-c", "echo a b")},
		{`a\ b`, a("a b")},
		{`"a\ b"`, a(`a\ b`)}, // inside "...", \ escapes only \ " $ ` and newline
		{"'x y' z", a("x y", "z")},
		{"  a \t b\n c  ", a("a", "b", "c")},
		{`a"b"'c'd`, a("abcd")},
		{`"a \"b\" \$x \` + "`" + ` \\ \q"`, a(`a "b" $x ` + "` " + `\ \q`)},
		{`'a\b "c"'`, a(`a\b "c"`)},
		{`\'x\" \$`, a(`'x"`, "$")},
		{"a\\\nb", a("ab")},     // backslash-newline: a line continuation
		{"\"a\\\nb\"", a("ab")}, // also inside "..."
		{"x ''", a("x", "")},    // an empty quoted word is kept
		{`x "" y`, a("x", "", "y")},
		{"echo $HOME ~ *.go `id` ; | > # &&", a("echo", "$HOME", "~", "*.go", "`id`", ";", "|", ">", "#", "&&")},
		{"é 'ü ö'", a("é", "ü ö")},
	}
	for _, tt := range valid {
		got, err := splitCommandLine(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitCommandLine(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	invalid := map[string]string{
		"":            "empty command line",
		" \t\n ":      "empty command line",
		"''":          "command name is an empty string",
		`"" x`:        "command name is an empty string",
		"echo 'a":     "unterminated single quote",
		`echo "a`:     "unterminated double quote",
		`echo "a\"`:   "unterminated double quote",
		`'it''s`:      "unterminated single quote",
		`echo \`:      "backslash",
		"echo a\x00b": "NUL",
	}
	for in, want := range invalid {
		got, err := splitCommandLine(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("splitCommandLine(%q) = %q, %v; want an error with %q", in, got, err, want)
		}
	}
}

// TestEnvironmentNames: only BALLOT_<NAME> is read, plus the five names the
// older ZooKeeper ballot documented; variables set for other programs
// change nothing.
func TestEnvironmentNames(t *testing.T) {
	configTestEnv(t, nil)
	cron := a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--", "job")
	for _, tc := range []struct {
		name  string
		args  []string
		env   map[string]string
		check func(s *Settings) bool
	}{
		{"DEBUG for another program", cron, map[string]string{"DEBUG": "express:*"},
			func(s *Settings) bool { return !s.Debug && s.Sources["debug"] == "default" }},
		{"TIMEOUT for another program", cron, map[string]string{"TIMEOUT": "30s"},
			func(s *Settings) bool { return s.Timeout == 0 && s.Sources["timeout"] == "default" }},
		{"other unprefixed names", cron, map[string]string{"SCHEDULE": "bogus", "CANDIDATE_ID": "x", "OUTPUT": "xml", "CONFIG_FILE": "/nope.json"},
			func(s *Settings) bool { return s.Schedule == "@daily" && s.CandidateID == "c" && s.ConfigFile == "" }},
		{"BALLOT_ names", cron, map[string]string{"BALLOT_TIMEOUT": "30s", "BALLOT_DEBUG": "true"},
			func(s *Settings) bool {
				return s.Timeout == 30*time.Second && s.Debug && s.Sources["timeout"] == "environment BALLOT_TIMEOUT"
			}},
		{"legacy names", a("info"), map[string]string{"ZOOKEEPER_SERVERS": "zk9", "ZOOKEEPER_BASE_PATH": "/legacy",
			"ZOOKEEPER_SESSION_TIMEOUT": "7s", "LOG_LEVEL": "warn", "LOG_FORMAT": "json"},
			func(s *Settings) bool {
				return s.ZooKeeperServers[0] == "zk9:2181" && s.BasePath == "/legacy" && s.SessionTimeout == 7*time.Second &&
					s.LogLevel == slog.LevelWarn && s.LogFormat == "json" && s.Sources["zookeeper-base-path"] == "environment ZOOKEEPER_BASE_PATH"
			}},
		{"BALLOT_ beats the legacy name", a("info"), map[string]string{"ZOOKEEPER_BASE_PATH": "/legacy", "BALLOT_ZOOKEEPER_BASE_PATH": "/new"},
			func(s *Settings) bool {
				return s.BasePath == "/new" && s.Sources["zookeeper-base-path"] == "environment BALLOT_ZOOKEEPER_BASE_PATH"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseIn("", tc.args, tc.env)
			if err != nil {
				t.Fatalf("%v", err)
			}
			if !tc.check(s) {
				t.Errorf("settings %+v", s)
			}
		})
	}
}
