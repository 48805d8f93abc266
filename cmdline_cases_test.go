package main

// More command lines that parse (cmdline_valid_test.go runs them).

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"ballot/internal/slog"
)

// validSyntaxCases: server lists, chroot, TLS and credentials, flag syntax, config file search.
var validSyntaxCases = []validCase{
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
}

// validRunCases: hooks, leader data, health checks, ballot leader.
var validRunCases = []validCase{
	{
		// --quiet: a floor of warn on ballot's own lines, the command's
		// output unwrapped; a level above warn stays, --debug still wins.
		name: "quiet",
		args: a("run", "once", "--candidate-id", "c", "--quiet", "--", "x"),
		check: func(t *testing.T, s *Settings, dir string) {
			if !s.Quiet || s.LogLevel != slog.LevelWarn || s.WrapChildLogs {
				t.Errorf("Quiet %v, LogLevel %v, WrapChildLogs %v", s.Quiet, s.LogLevel, s.WrapChildLogs)
			}
		},
	},
	{
		name: "quiet keeps a higher log level, env",
		args: a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--log-level", "error", "--", "x"),
		env:  map[string]string{"BALLOT_QUIET": "true"},
		check: func(t *testing.T, s *Settings, dir string) {
			if !s.Quiet || s.LogLevel != slog.LevelError || s.WrapChildLogs {
				t.Errorf("Quiet %v, LogLevel %v, WrapChildLogs %v", s.Quiet, s.LogLevel, s.WrapChildLogs)
			}
		},
	},
	{
		name:  "quiet overrides wrap-child-logs and info from the config file",
		args:  a("run", "once", "--candidate-id", "c", "--config-file", "$DIR/c.json", "--quiet", "--", "x"),
		files: map[string]string{"c.json": `{"log-level": "info", "wrap-child-logs": true}`},
		check: func(t *testing.T, s *Settings, dir string) {
			if s.LogLevel != slog.LevelWarn || s.WrapChildLogs {
				t.Errorf("LogLevel %v, WrapChildLogs %v", s.LogLevel, s.WrapChildLogs)
			}
		},
	},
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
