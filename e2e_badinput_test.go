package main

// Bad inputs: every one gets one clear line naming the parameter, the bad
// value and what is allowed, with its exit code; nothing is started and
// nothing is left behind.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// badInput is one bad invocation. Unless args is set, the command line is
//
//	--zookeeper-servers {zk} --zookeeper-base-path {base}
//	--zookeeper-session-timeout 2s pre... run once --candidate-id c1 post...
//	-- {touch} {marker}
//
// minus the parts named in omit (servers, base, timeout, cand, cmd), so
// that a case can give a parameter by environment or config file instead.
// Placeholders {zk}, {base}, {dir}, {cfg}, {marker}, {touch} are expanded in
// args, pre, post, env, cfg and want; cfg is written to {cfg}
// ({dir}/cfgName, default ballot.json) when not empty.
type badInput struct {
	name      string
	args      []string
	pre, post []string
	omit      string
	env       []string
	cfg       string
	cfgName   string
	want      []string // substrings of the one stderr line
	code      int      // the exit code, when not exitUsage (check: 3)
}

func badInputs() []badInput {
	return []badInput{
		// Command line shape.
		{name: "no command at all", args: []string{"--zookeeper-servers", "{zk}"},
			want: []string{"no command given"}},
		{name: "unknown subcommand", args: []string{"--zookeeper-servers", "{zk}", "frobnicate"},
			want: []string{"unknown command", `"frobnicate"`}},
		{name: "run alone", args: []string{"--zookeeper-servers", "{zk}", "run"},
			want: []string{"run:", `"once"`, `"cron"`}},
		{name: "run unknown mode", args: []string{"run", "sometimes", "--candidate-id", "c1", "--", "{touch}", "{marker}"},
			want: []string{"run:", `"sometimes"`}},
		{name: "unknown global flag", pre: []string{"--bogus-flag", "x"},
			want: []string{"unknown flag", "--bogus-flag"}},
		{name: "unknown run flag", post: []string{"--no-such-flag=1"},
			want: []string{"run once", "unknown flag", "--no-such-flag"}},
		{name: "run flag before the command", pre: []string{"--on-child-error", "exit"},
			want: []string{"--on-child-error", "after the command"}},
		{name: "cron flag on run once", post: []string{"--schedule", "@hourly"},
			want: []string{"run once", "--schedule", "run cron"}},
		{name: "once key with a child policy", post: []string{"--once-key", "k", "--on-child-success", "rerun"},
			want: []string{"--on-child-success rerun", "does not apply with --once-key"}},
		{name: "once key with run-anyway", post: []string{"--once-key", "k", "--on-election-failure", "run-anyway"},
			want: []string{"--on-election-failure run-anyway", "contradicts --once-key"}},
		{name: "once key empty", post: []string{"--once-key="},
			want: []string{"--once-key", "must not be empty"}},
		{name: "once key without a command", omit: "cmd", post: []string{"--once-key", "k", "--on-promote", "{touch} {marker}"},
			want: []string{"--once-key", "needs a command"}},
		{name: "retry unfinished without a once key", post: []string{"--once-retry-unfinished"},
			want: []string{"--once-retry-unfinished", "needs --once-key"}},
		{name: "retries without a once key", post: []string{"--retries", "2"},
			want: []string{"--retries", "needs --once-key"}},
		{name: "on-run-end without a once key", post: []string{"--on-run-end", "{touch} {marker}"},
			want: []string{"--on-run-end", "needs --once-key"}},
		{name: "on-run-end empty", post: []string{"--once-key", "k", "--on-run-end="},
			want: []string{"--on-run-end", "empty"}},
		{name: "history output bytes too many", post: []string{"--once-key", "k", "--history-output-bytes", "70000"},
			want: []string{`--history-output-bytes "70000"`, "out of range", "65536"}},
		{name: "history output bytes negative", post: []string{"--once-key", "k", "--history-output-bytes=-1"},
			want: []string{`--history-output-bytes "-1"`, "out of range"}},
		{name: "ping url without a once key", post: []string{"--ping-url", "http://127.0.0.1:9/secret-uuid"},
			want: []string{"--ping-url", "needs --once-key"}},
		{name: "ping url not http", post: []string{"--once-key", "k", "--ping-url", "ftp://hc-ping.com/secret-uuid"},
			want: []string{`--ping-url "ftp://hc-ping.com/…"`, "https:// or http://"}},
		{name: "ping url no host", post: []string{"--once-key", "k", "--ping-url", "https:///secret-uuid"},
			want: []string{"--ping-url", "no host"}},
		{name: "ping url file missing", post: []string{"--once-key", "k", "--ping-url-file", "/nonexistent/ping-url"},
			want: []string{`--ping-url-file "/nonexistent/ping-url"`, "cannot read it"}},
		{name: "ping url twice", post: []string{"--once-key", "k", "--ping-url", "http://127.0.0.1:9/x", "--ping-url-file", "/etc/hostname"},
			want: []string{"--ping-url"}},
		{name: "ping ca not PEM", post: []string{"--once-key", "k", "--ping-url", "https://127.0.0.1:9/x", "--ping-ca", "/etc/passwd"},
			want: []string{`--ping-ca "/etc/passwd"`, "no PEM certificate"}},
		{name: "once key negative retries", post: []string{"--once-key", "k", "--retries", "-1"},
			want: []string{`--retries "-1"`, "must not be negative"}},
		{name: "timeout negative", post: []string{"--timeout", "-1s"},
			want: []string{`--timeout "-1s"`, "must not be negative"}},
		{name: "priority not a number", post: []string{"--priority", "abc"},
			want: []string{`--priority "abc"`, "not a whole number"}},
		{name: "retry unfinished with slots", post: []string{"--slots", "2", "--once-key", "k", "--once-retry-unfinished"},
			want: []string{"--once-retry-unfinished", "not with --slots 2"}},
		{name: "preempt-after with slots", post: []string{"--slots", "2", "--preempt-after", "10s"},
			want: []string{"--preempt-after 10s", "not with --slots 2", "leave it out, or give 0"}},
		{name: "rerun-limit without rerun", post: []string{"--rerun-limit", "3/10m"},
			want: []string{"--rerun-limit 3/10m0s", "needs --on-child-error rerun", "now reelect"}},
		{name: "rerun-limit with slots", post: []string{"--on-child-error", "rerun", "--rerun-limit", "3/10m", "--slots", "2"},
			want: []string{"--rerun-limit 3/10m0s", "not with --slots 2"}},
		{name: "rerun-limit with a once key", post: []string{"--once-key", "k", "--rerun-limit", "1/1m"},
			want: []string{"--rerun-limit 1/1m0s", "not with --once-key"}},
		{name: "rerun-limit without a window", post: []string{"--on-child-error", "rerun", "--rerun-limit", "3"},
			want: []string{`--rerun-limit "3"`, "N/DURATION"}},
		{name: "cron H out of its range",
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "cron",
				"--candidate-id", "c1", "--schedule", "H(0-99) * * * *", "--", "{touch}", "{marker}"},
			want: []string{"--schedule", `"H(0-99) * * * *"`, "minute field H(0-99)", "0 <= a <= b <= 59"}},
		{name: "cron spread below a second",
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "cron",
				"--candidate-id", "c1", "--schedule", "@hourly", "--spread", "0.5s", "--", "{touch}", "{marker}"},
			want: []string{"--spread", `"0.5s"`, "at least 1s"}},
		{name: "slots zero", post: []string{"--slots", "0"},
			want: []string{`--slots "0"`, "out of range"}},
		{name: "preempt-after negative", post: []string{"--preempt-after", "-1s"},
			want: []string{`--preempt-after "-1s"`, "must not be negative"}},
		{name: "wait-timeout zero", post: []string{"--wait-timeout", "0"},
			want: []string{`--wait-timeout "0"`, "greater than zero"}},
		{name: "wait-timeout negative in a config file", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"wait-timeout": "-1s"}`,
			want: []string{"{cfg}", `"wait-timeout" "-1s"`, "must not be negative"}},
		{name: "wait-timeout with no-wait", post: []string{"--wait-timeout", "1m", "--no-wait"},
			want: []string{"--wait-timeout 1m0s", "contradicts --no-wait"}},
		{name: "metrics file in a missing directory", post: []string{"--metrics-file", "{dir}/nope/ballot.prom"},
			want: []string{"--metrics-file", "nope/ballot.prom", "does not exist"}},
		{name: "once key in a config file", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"once-key": "2026-11-23"}`,
			want: []string{"{cfg}", `"once-key"`, "not accepted in a config file"}},
		{name: "stray argument", post: []string{"stray"},
			want: []string{"run once", "unexpected argument", `"stray"`, `"--"`}},
		{name: "bool flag value without =", post: []string{"--wrap-child-logs", "false"},
			want: []string{"unexpected argument", `"false"`, "--wrap-child-logs=false"}},
		{name: "flag without value", omit: "cand cmd", post: []string{"--candidate-id"},
			want: []string{"--candidate-id", "needs a value"}},
		{name: "missing candidate id", omit: "cand",
			want: []string{"run once", "--candidate-id", "required", "BALLOT_CANDIDATE_ID"}},
		{name: "empty candidate id", omit: "cand", post: []string{"--candidate-id", ""},
			want: []string{"--candidate-id", `""`, "empty"}},
		{name: "candidate id with newline by env", omit: "cand", env: []string{"BALLOT_CANDIDATE_ID=a\nb"},
			want: []string{"BALLOT_CANDIDATE_ID", `"a\nb"`, "newline"}},
		{name: "missing command", omit: "cmd",
			want: []string{"run once", "no command given", `"--"`}},
		{name: "empty command", omit: "cmd", post: []string{"--", ""},
			want: []string{"run once", "command", "empty string"}},
		{name: "version with stray argument", args: []string{"version", "now"},
			want: []string{"version", `"now"`}},

		// ZooKeeper servers.
		{name: "servers flag empty", pre: []string{"--zookeeper-servers", ""},
			want: []string{"--zookeeper-servers", `""`, "empty server entry"}},
		{name: "servers flag empty entry", omit: "servers", pre: []string{"--zookeeper-servers", "{zk},,{zk}"},
			want: []string{"--zookeeper-servers", "{zk},,{zk}", "empty server entry"}},
		{name: "servers flag port too big", pre: []string{"--zookeeper-servers", "zk1:99999"},
			want: []string{"--zookeeper-servers", "zk1:99999", `bad port "99999"`}},
		{name: "servers flag port not a number", pre: []string{"--zookeeper-servers", "zk1:http"},
			want: []string{"--zookeeper-servers", "zk1:http", `bad port "http"`}},
		{name: "servers flag ipv6 without brackets", pre: []string{"--zookeeper-servers", "::1"},
			want: []string{"--zookeeper-servers", "::1", "brackets"}},
		{name: "servers flag chroot trailing slash", pre: []string{"--zookeeper-servers", "zk1/chroot/"},
			want: []string{"--zookeeper-servers", "zk1/chroot/", "chroot", "end with /"}},
		{name: "servers env chroot before the last server", omit: "servers", env: []string{"ZOOKEEPER_SERVERS={zk}/app,{zk}"},
			want: []string{"ZOOKEEPER_SERVERS", "after the last server"}},
		{name: "servers env port zero", omit: "servers", env: []string{"ZOOKEEPER_SERVERS=zk1:0"},
			want: []string{"ZOOKEEPER_SERVERS", "zk1:0", `bad port "0"`}},
		{name: "servers env bad host", omit: "servers", env: []string{"ZOOKEEPER_SERVERS=zk 1"},
			want: []string{"ZOOKEEPER_SERVERS", `"zk 1"`, "not a host name"}},
		{name: "servers config not an array", omit: "servers", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"zookeeper-servers": "{zk}"}`,
			want: []string{"{cfg}", `"zookeeper-servers"`, "array", `"{zk}"`}},
		{name: "servers config empty list", omit: "servers", env: []string{"BALLOT_CONFIG_FILE={cfg}"},
			cfg:  `{"zookeeper-servers": []}`,
			want: []string{"{cfg}", `"zookeeper-servers"`, "empty"}},
		{name: "servers config bad port", omit: "servers", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"zookeeper-servers": ["{zk}", "zk2:70000"]}`,
			want: []string{"{cfg}", `"zookeeper-servers"`, `"zk2:70000"`, "bad port"}},

		// Secure ZooKeeper: the files are read before anything connects.
		{name: "TLS CA file missing", pre: []string{"--zookeeper-tls-ca", "{dir}/missing-ca.pem"},
			want: []string{"--zookeeper-tls-ca", "{dir}/missing-ca.pem", "no such file"}},
		{name: "TLS CA file not PEM", env: []string{"BALLOT_ZOOKEEPER_TLS_CA={cfg}"}, cfgName: "ca.pem", cfg: "not a certificate\n",
			want: []string{"environment BALLOT_ZOOKEEPER_TLS_CA", "{cfg}", "no PEM certificate"}},
		{name: "TLS client certificate not PEM", pre: []string{"--zookeeper-tls-cert", "{cfg}", "--zookeeper-tls-key", "{cfg}"},
			cfgName: "client.pem", cfg: "garbage\n",
			want: []string{"--zookeeper-tls-cert", "{cfg}", "no PEM certificate"}},
		{name: "TLS key without certificate", pre: []string{"--zookeeper-tls-key", "{dir}/client.key"},
			want: []string{"--zookeeper-tls-key", "--zookeeper-tls-cert"}},
		{name: "TLS off with a CA", pre: []string{"--zookeeper-tls=false", "--zookeeper-tls-ca", "{dir}/ca.pem"},
			want: []string{"--zookeeper-tls", "contradicts", "--zookeeper-tls-ca"}},
		{name: "auth file missing", pre: []string{"--zookeeper-auth-file", "{dir}/auth"},
			want: []string{"--zookeeper-auth-file", "{dir}/auth", "no such file"}},
		{name: "auth file without a colon", pre: []string{"--zookeeper-auth-file", "{cfg}"}, cfgName: "auth", cfg: "alice\n",
			want: []string{"--zookeeper-auth-file", "{cfg}", "no colon", "user:password"}},
		{name: "credentials instead of an auth file", pre: []string{"--zookeeper-auth-file", "alice:secret"},
			want: []string{"--zookeeper-auth-file", "never the credentials themselves"}},
		{name: "creator ACL without credentials", env: []string{"BALLOT_ZOOKEEPER_ACL=creator"},
			want: []string{"BALLOT_ZOOKEEPER_ACL", `"creator"`, "needs credentials"}},
		{name: "ACL unknown", post: []string{"--zookeeper-acl", "secret"},
			want: []string{"--zookeeper-acl", `"secret"`, "open, creator, creator-world-read"}},

		// Base path.
		{name: "base path relative", omit: "base", pre: []string{"--zookeeper-base-path", "ballot/election"},
			want: []string{"--zookeeper-base-path", `"ballot/election"`, "absolute"}},
		{name: "base path trailing slash", omit: "base", pre: []string{"--zookeeper-base-path", "{base}/"},
			want: []string{"--zookeeper-base-path", `"{base}/"`, "end with /"}},
		{name: "base path reserved", omit: "base", pre: []string{"--zookeeper-base-path", "/zookeeper/ballot"},
			want: []string{"--zookeeper-base-path", "/zookeeper/ballot", "reserved"}},
		{name: "base path double slash", omit: "base", pre: []string{"--zookeeper-base-path", "/ballot//x"},
			want: []string{"--zookeeper-base-path", "/ballot//x", "empty segment"}},
		{name: "base path env relative", omit: "base", env: []string{"ZOOKEEPER_BASE_PATH=election"},
			want: []string{"ZOOKEEPER_BASE_PATH", `"election"`, "absolute"}},
		{name: "base path config dot segment", omit: "base", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"zookeeper-base-path": "/ballot/../x"}`,
			want: []string{"{cfg}", `"zookeeper-base-path"`, `"/ballot/../x"`, ".."}},

		// Durations.
		{name: "session timeout zero", omit: "timeout", pre: []string{"--zookeeper-session-timeout", "0s"},
			want: []string{"--zookeeper-session-timeout", `"0s"`, "greater than zero"}},
		{name: "session timeout negative", omit: "timeout", pre: []string{"--zookeeper-session-timeout=-1s"},
			want: []string{"--zookeeper-session-timeout", `"-1s"`, "negative"}},
		{name: "session timeout without unit", omit: "timeout", pre: []string{"--zookeeper-session-timeout", "5"},
			want: []string{"--zookeeper-session-timeout", `"5"`, "not a duration"}},
		{name: "session timeout env garbage", omit: "timeout", env: []string{"ZOOKEEPER_SESSION_TIMEOUT=soon"},
			want: []string{"ZOOKEEPER_SESSION_TIMEOUT", `"soon"`, "not a duration"}},
		{name: "session timeout config number", omit: "timeout", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"zookeeper-session-timeout": 5}`,
			want: []string{"{cfg}", `"zookeeper-session-timeout"`, "got 5"}},
		{name: "grace period negative", post: []string{"--stop-grace-period", "-5s"},
			want: []string{"--stop-grace-period", `"-5s"`, "negative"}},
		{name: "grace period env garbage", env: []string{"BALLOT_STOP_GRACE_PERIOD=forever"},
			want: []string{"BALLOT_STOP_GRACE_PERIOD", `"forever"`, "not a duration"}},
		{name: "grace period config garbage", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"stop-grace-period": "10 seconds"}`,
			want: []string{"{cfg}", `"stop-grace-period"`, `"10 seconds"`, "not a duration"}},

		// Logging.
		{name: "log level flag", pre: []string{"--log-level", "verbose"},
			want: []string{"--log-level", `"verbose"`, "not a log level"}},
		{name: "log level env", env: []string{"LOG_LEVEL=loud"},
			want: []string{"LOG_LEVEL", `"loud"`, "not a log level"}},
		{name: "log format flag", post: []string{"--log-format=xml"},
			want: []string{"--log-format", `"xml"`, "not a log format"}},
		{name: "log format config", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"log-format": "yaml"}`,
			want: []string{"{cfg}", `"log-format"`, `"yaml"`, "not a log format"}},
		{name: "debug env not a boolean", env: []string{"BALLOT_DEBUG=yes"},
			want: []string{"BALLOT_DEBUG", `"yes"`, "not a boolean"}},
		{name: "debug flag not a boolean", pre: []string{"--debug=maybe"},
			want: []string{"--debug", `"maybe"`, "not a boolean"}},
		{name: "wrap child logs config string", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"wrap-child-logs": "false"}`,
			want: []string{"{cfg}", `"wrap-child-logs"`, "true or false", `"false"`}},
		{name: "quiet flag not a boolean", post: []string{"--quiet=sometimes"},
			want: []string{"--quiet", `"sometimes"`, "not a boolean"}},
		{name: "candidate id given twice", post: []string{"--candidate-id", "c2"},
			want: []string{`--candidate-id given 2 times ("c1", "c2")`, "takes one value"}},
		{name: "global flag given twice", pre: []string{"--zookeeper-session-timeout", "3s"},
			want: []string{`--zookeeper-session-timeout given 2 times ("2s", "3s")`, "give it once"}},

		// Policies.
		{name: "on-child-success flag", post: []string{"--on-child-success", "bogus"},
			want: []string{"--on-child-success", `"bogus"`, "rerun, reelect, exit, ignore"}},
		{name: "on-child-error env", env: []string{"BALLOT_ON_CHILD_ERROR=explode"},
			want: []string{"BALLOT_ON_CHILD_ERROR", `"explode"`, "rerun, reelect, exit, ignore"}},
		{name: "on-election-failure config", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"on-election-failure": "panic"}`,
			want: []string{"{cfg}", `"on-election-failure"`, `"panic"`, "retry, run-anyway, exit"}},
		{name: "on-election-failure flag", post: []string{"--on-election-failure", "reelect"},
			want: []string{"--on-election-failure", `"reelect"`, "retry, run-anyway, exit"}},
		{name: "on-connection-loss flag", post: []string{"--on-connection-loss", "retry"},
			want: []string{"--on-connection-loss", `"retry"`, "reelect, exit, ignore"}},
		{name: "on-connection-loss env", env: []string{"BALLOT_ON_CONNECTION_LOSS=run-anyway"},
			want: []string{"BALLOT_ON_CONNECTION_LOSS", `"run-anyway"`, "reelect, exit, ignore"}},

		// Config files themselves.
		{name: "config unknown key", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"candidate_id": "c1"}`,
			want: []string{"{cfg}", "unknown key", `"candidate_id"`, `"candidate-id"`}},
		{name: "config names another config", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"config-file": "/etc/other.json"}`,
			want: []string{"{cfg}", "unknown key", `"config-file"`}},
		{name: "config duplicate key", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"log-level": "info", "log-level": "debug"}`,
			want: []string{"{cfg}", `"log-level"`, "more than once"}},
		{name: "config YAML by extension", pre: []string{"--config-file", "{cfg}"}, cfgName: "ballot.yaml",
			cfg:  `{"log-level": "info"}`,
			want: []string{"{dir}/ballot.yaml", "YAML", "JSON only"}},
		{name: "config YAML by content", pre: []string{"--config-file", "{cfg}"},
			cfg:  "# ballot\nlog-level: info\ncandidate-id: c1\n",
			want: []string{"{cfg}", "YAML", "JSON only"}},
		{name: "config JSON syntax error", pre: []string{"--config-file", "{cfg}"},
			cfg:  "{\n  \"log-level\": \"info\",\n}\n",
			want: []string{"{cfg}", "invalid JSON", "line 3"}},
		{name: "config trailing data", env: []string{"BALLOT_CONFIG_FILE={cfg}"},
			cfg:  `{"log-level": "info"} {"log-level": "debug"}`,
			want: []string{"{cfg}", "after the JSON object"}},
		{name: "config not an object", pre: []string{"--config-file", "{cfg}"},
			cfg:  `["log-level", "info"]`,
			want: []string{"{cfg}", "JSON object", "array"}},
		{name: "config empty", pre: []string{"--config-file", "{cfg}"},
			cfg:  "\n",
			want: []string{"{cfg}", "empty"}},
		{name: "config flag missing file", pre: []string{"--config-file", "{dir}/missing.json"},
			want: []string{"--config-file", "{dir}/missing.json", "no such file"}},
		{name: "config env missing file", env: []string{"BALLOT_CONFIG_FILE={dir}/gone.json"},
			want: []string{"BALLOT_CONFIG_FILE", "{dir}/gone.json", "no such file"}},
		{name: "config flag directory", pre: []string{"--config-file", "{dir}"},
			want: []string{"--config-file", "{dir}", "directory"}},
		{name: "config found by default search", cfgName: "ballot.json",
			cfg:  `{"on-child-success": "again"}`,
			want: []string{"config file ./ballot.json", `"on-child-success"`, `"again"`}},

		// run crontab: a bad FILE starts no job (the good first job
		// neither: every line is checked before anything connects).
		{name: "crontab bad job name",
			args:    []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "crontab", "--candidate-id", "c1", "{cfg}"},
			cfgName: "jobs.tab", cfg: "ok * * * * * {touch} {marker}\nbad/name @daily {touch} {marker}\n",
			want: []string{"{cfg}:2: job name \"bad/name\": contains '/'", "letters, digits"}},
		{name: "crontab process flag on a line",
			args:    []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "crontab", "--candidate-id", "c1", "{cfg}"},
			cfgName: "jobs.tab", cfg: "ok * * * * * --zookeeper-session-timeout 3s {touch} {marker}\n",
			want: []string{"{cfg}:1: --zookeeper-session-timeout: not per job", "command line"}},
		{name: "crontab two jobs one name",
			args:    []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "crontab", "--candidate-id", "c1", "{cfg}"},
			cfgName: "jobs.tab", cfg: "ok * * * * * {touch} {marker}\n# again:\nok @hourly {touch} {marker}\n",
			want: []string{"{cfg}:3: job name \"ok\": already the name of the job at {cfg}:1"}},
		{name: "crontab metrics file on a line",
			args:    []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "crontab", "--candidate-id", "c1", "{cfg}"},
			cfgName: "jobs.tab", cfg: "ok * * * * * --metrics-file {dir}/m.prom {touch} {marker}\n",
			want: []string{"{cfg}:1: --metrics-file: not per job", "command line"}},
		{name: "crontab metrics file in a missing directory",
			args:    []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "crontab", "--candidate-id", "c1", "--metrics-file", "{dir}/nope/m.prom", "{cfg}"},
			cfgName: "jobs.tab", cfg: "ok * * * * * {touch} {marker}\n",
			want: []string{"--metrics-file", "nope/m.prom", "does not exist"}},
		{name: "crontab missing FILE",
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "crontab", "--candidate-id", "c1", "{dir}/missing.tab"},
			want: []string{"run crontab {dir}/missing.tab: no such file"}},
		{name: "crontab check of a bad file",
			args:    []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "crontab", "{cfg}", "--check"},
			cfgName: "jobs.tab", cfg: "ok 0 25 * * * {touch} {marker}\n",
			want: []string{"{cfg}:1: schedule \"0 25 * * *\": not a valid cron expression: hour field 25: allowed 0-23"}},

		// run cron parameters.
		{name: "cron bad timezone",
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "cron",
				"--candidate-id", "c1", "--schedule", "@hourly", "--timezone", "Mars/Olympus_Mons", "--", "{touch}", "{marker}"},
			want: []string{"--timezone", `"Mars/Olympus_Mons"`, "time zone"}},
		{name: "cron timezone env", env: []string{"BALLOT_TIMEZONE=Not/AZone"},
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "cron",
				"--candidate-id", "c1", "--schedule", "@hourly", "--", "{touch}", "{marker}"},
			want: []string{"BALLOT_TIMEZONE", `"Not/AZone"`, "time zone"}},
		{name: "cron missing schedule",
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "cron",
				"--candidate-id", "c1", "--", "{touch}", "{marker}"},
			want: []string{"run cron", "--schedule", "required"}},
		{name: "cron bad schedule expression",
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "cron",
				"--candidate-id", "c1", "--schedule", "61 * * * *", "--", "{touch}", "{marker}"},
			want: []string{"--schedule", `"61 * * * *"`, "cron expression"}},
		{name: "cron schedule field out of range",
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "cron",
				"--candidate-id", "c1", "--schedule", "0 25 * * *", "--", "{touch}", "{marker}"},
			want: []string{"--schedule", `"0 25 * * *"`, "hour field 25: allowed 0-23"}},
		{name: "cron negative deadline",
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "cron",
				"--candidate-id", "c1", "--schedule", "@hourly", "--starting-deadline=-1m", "--", "{touch}", "{marker}"},
			want: []string{"--starting-deadline", `"-1m"`, "negative"}},
		{name: "cron negative retries",
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "cron",
				"--candidate-id", "c1", "--schedule", "@hourly", "--retries", "-2", "--", "{touch}", "{marker}"},
			want: []string{"--retries", `"-2"`, "negative"}},
		{name: "cron retry-delay not a duration",
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "cron",
				"--candidate-id", "c1", "--schedule", "@hourly", "--retry-delay", "soon", "--", "{touch}", "{marker}"},
			want: []string{"--retry-delay", `"soon"`, "not a duration"}},
		{name: "cron history output bytes not a number",
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "cron",
				"--candidate-id", "c1", "--schedule", "@hourly", "--history-output-bytes", "4k", "--", "{touch}", "{marker}"},
			want: []string{"--history-output-bytes", `"4k"`, "not a whole number"}},
		{name: "cron on-run-end unterminated quote",
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "cron",
				"--candidate-id", "c1", "--schedule", "@hourly", "--on-run-end", "sh -c 'oops", "--", "{touch}", "{marker}"},
			want: []string{"--on-run-end", "quote"}},
		{name: "cron overlap limit zero",
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "cron",
				"--candidate-id", "c1", "--schedule", "@hourly", "--overlap", "allow", "--overlap-limit", "0", "--", "{touch}", "{marker}"},
			want: []string{"--overlap-limit", `"0"`, "1 to 100"}},
		{name: "cron starting-deadline word",
			args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "run", "cron",
				"--candidate-id", "c1", "--schedule", "@hourly", "--starting-deadline", "never", "--", "{touch}", "{marker}"},
			want: []string{"--starting-deadline", `"never"`, "auto"}},

		// Hooks, leader data, health and the leader command.
		{name: "on-promote unterminated quote", post: []string{"--on-promote", "{touch} '{marker}"},
			want: []string{"--on-promote", "unterminated single quote"}},
		{name: "on-demote blank env", env: []string{"BALLOT_ON_DEMOTE= \t "},
			want: []string{"environment BALLOT_ON_DEMOTE", "empty command line"}},
		{name: "on-promote empty array in config", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"on-promote": []}`,
			want: []string{"{cfg}", `"on-promote"`, "empty command line"}},
		{name: "health-check array with a number", pre: []string{"--config-file", "{cfg}"},
			cfg:  `{"health-check": ["{touch}", 1]}`,
			want: []string{"{cfg}", `"health-check"`, "element 2", "expected a string"}},
		{name: "health-failures zero", post: []string{"--health-failures", "0"},
			want: []string{"--health-failures", `"0"`, "at least 1"}},
		{name: "health-failures string in config", env: []string{"BALLOT_CONFIG_FILE={cfg}"},
			cfg:  `{"health-failures": "3"}`,
			want: []string{"{cfg}", `"health-failures"`, `expected a whole number such as 3, got "3"`}},
		{name: "hook-timeout zero env", env: []string{"BALLOT_HOOK_TIMEOUT=0s"},
			want: []string{"environment BALLOT_HOOK_TIMEOUT", `"0s"`, "greater than zero"}},
		{name: "leader-data missing file", post: []string{"--leader-data", "@{dir}/missing-file"},
			want: []string{"--leader-data", "{dir}/missing-file", "no such file"}},
		{name: "no command and no hooks", omit: "cmd", post: []string{"--health-check", "{touch} {marker}"},
			want: []string{"run once", "no command given", "--on-promote"}},
		{name: "wait on run once", post: []string{"--wait", "1s"},
			want: []string{"run once", "unknown flag --wait", "leader, step-down, trigger and drain only"}},
		{name: "leader with candidate id", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "leader", "--candidate-id", "c1"},
			want: []string{"leader:", "unknown flag --candidate-id"}},
		{name: "leader negative wait", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "leader", "--wait=-1s"},
			want: []string{"--wait", `"-1s"`, "negative"}},
		// Writers: nothing written under {base} either.
		{name: "trigger bad wait", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "trigger", "--wait", "forever"},
			want: []string{"--wait", `"forever"`, "not a duration"}},
		{name: "drain bad until-reboot", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "drain", "--candidate-id", "c", "--until-reboot=soon"},
			want: []string{"--until-reboot", `"soon"`, "true or false"}},
		{name: "trigger bad output", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "trigger", "--output", "xml"},
			want: []string{"--output", `"xml"`, "not an output format"}},
		{name: "drain without candidate id", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "drain"},
			want: []string{"drain:", "--candidate-id is required"}},
		{name: "undrain empty candidate id", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "undrain", "--candidate-id="},
			want: []string{"--candidate-id", `""`, "must not be empty"}},

		// history, check and info's summary.
		{name: "history limit zero", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "history", "--limit", "0"},
			want: []string{"--limit", `"0"`, "at least 1"}},
		{name: "history limit not a number", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "history", "--limit", "ten"},
			want: []string{"--limit", `"ten"`, "whole number"}},
		{name: "history limit env", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "history"},
			env: []string{"BALLOT_LIMIT=-5"}, want: []string{"BALLOT_LIMIT", `"-5"`, "at least 1"}},
		{name: "history bad output", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "history", "--output", "yaml"},
			want: []string{"--output", `"yaml"`, "human, json"}},
		{name: "jobs bad output", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "jobs", "--output", "table"},
			want: []string{"--output", `"table"`, "human, json"}},
		{name: "jobs unknown flag", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "jobs", "--sort", "next"},
			want: []string{"jobs:", "unknown flag --sort"}},
		{name: "jobs verbose", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "jobs", "--verbose"},
			want: []string{"jobs:", "--verbose", "info"}},
		{name: "info verbose not a boolean", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "info", "--verbose=perhaps"},
			want: []string{"--verbose", `"perhaps"`, "not a boolean"}},
		{name: "check negative max-age", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "check", "--max-age", "-1h"},
			want: []string{"--max-age", `"-1h"`, "negative"}, code: exitUnknown},
		{name: "check zero max-age", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "check", "--max-age=0"},
			want: []string{"--max-age", `"0"`, "greater than zero"}, code: exitUnknown},
		{name: "check max-age not a duration", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "check", "--max-age", "26"},
			want: []string{"--max-age", `"26"`, "not a duration"}, code: exitUnknown},
		{name: "check fail-critical not a boolean", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "check", "--fail-critical=sometimes"},
			want: []string{"--fail-critical", `"sometimes"`, "not a boolean"}, code: exitUnknown},
		{name: "check output flag", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "check", "--output", "json"},
			want: []string{"check:", "unknown flag --output"}, code: exitUnknown},
		{name: "check max-age in config", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "--config-file", "{cfg}", "check"},
			cfg: `{"max-age": "forever"}`, want: []string{"{cfg}", `"max-age"`, "not a duration"}, code: exitUnknown},
		{name: "check stray argument", args: []string{"--zookeeper-servers", "{zk}", "--zookeeper-base-path", "{base}", "check", "26h"},
			want: []string{"check:", "unexpected argument", `"26h"`}, code: exitUnknown},
		{name: "completion for an unknown shell", args: []string{"completion", "fish"},
			want: []string{"completion:", "bash or zsh", `"fish"`}},
	}
}

// expand replaces the placeholders of a badInput.
func (b badInput) expand(vars map[string]string, s string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

func (b badInput) commandLine(vars map[string]string) []string {
	args := b.args
	if args == nil {
		omit := map[string]bool{}
		for _, o := range strings.Fields(b.omit) {
			omit[o] = true
		}
		if !omit["servers"] {
			args = append(args, "--zookeeper-servers", "{zk}")
		}
		if !omit["base"] {
			args = append(args, "--zookeeper-base-path", "{base}")
		}
		if !omit["timeout"] {
			args = append(args, "--zookeeper-session-timeout", "2s")
		}
		args = append(args, b.pre...)
		args = append(args, "run", "once")
		if !omit["cand"] {
			args = append(args, "--candidate-id", "c1")
		}
		args = append(args, b.post...)
		if !omit["cmd"] {
			args = append(args, "--", "{touch}", "{marker}")
		}
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = b.expand(vars, a)
	}
	return out
}

func TestBadInputs(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	conn := basicZKConn(t, c)
	touch, err := exec.LookPath("touch")
	if err != nil {
		t.Fatal(err)
	}
	cases := badInputs()
	if len(cases) < 28 {
		t.Fatalf("only %d bad inputs", len(cases))
	}

	// vars gives a case its own directory, config file, marker and base
	// path (all bad cases live under /bad, which must never appear).
	vars := func(t *testing.T, i int, cfgName string) map[string]string {
		dir := t.TempDir()
		if cfgName == "" {
			cfgName = "ballot.json"
		}
		return map[string]string{
			"zk":     c.ConnString(),
			"base":   fmt.Sprintf("/bad/case-%02d", i),
			"dir":    dir,
			"cfg":    filepath.Join(dir, cfgName),
			"marker": filepath.Join(dir, "marker"),
			"touch":  touch,
		}
	}

	// The control case shows the checks below are not vacuous: the same
	// command line, valid, runs the command and creates the base path.
	t.Run("control", func(t *testing.T) {
		v := vars(t, 0, "")
		v["base"] = "/control/ok"
		args := badInput{post: []string{"--on-child-success", "exit"}}.commandLine(v)
		r := basicRun(t, ballotEnv(t), v["dir"], 20*time.Second, args...)
		if r.code != 0 || !fileExists(v["marker"]) || !basicExists(t, conn, v["base"]) {
			t.Fatalf("valid run: exit %d, marker %v, base path %v; output:\n%s%s",
				r.code, fileExists(v["marker"]), basicExists(t, conn, v["base"]), r.stdout, r.stderr)
		}
	})

	t.Run("cases", func(t *testing.T) {
		seen := map[string]bool{}
		for i, tc := range cases {
			if seen[tc.name] {
				t.Fatalf("duplicate case name %q", tc.name)
			}
			seen[tc.name] = true
			i, tc := i+1, tc
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				v := vars(t, i, tc.cfgName)
				if tc.cfg != "" {
					if err := os.WriteFile(v["cfg"], []byte(tc.expand(v, tc.cfg)), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				env := ballotEnv(t)
				for _, e := range tc.env {
					env = append(env, tc.expand(v, e))
				}
				args := tc.commandLine(v)
				r := basicRun(t, env, v["dir"], 20*time.Second, args...)

				want := exitUsage
				if tc.code != 0 {
					want = tc.code
				}
				if r.code != want || r.signaled {
					t.Errorf("exit code %d (signaled %v), want %d", r.code, r.signaled, want)
				}
				if r.stdout != "" {
					t.Errorf("stdout not empty:\n%s", r.stdout)
				}
				lines := basicLines(r.stderr)
				if len(lines) != 1 || !strings.HasSuffix(r.stderr, "\n") {
					t.Errorf("stderr is %d lines, want exactly one:\n%s", len(lines), r.stderr)
				}
				if !strings.HasPrefix(r.stderr, "ballot: ") {
					t.Errorf("stderr does not start with \"ballot: \": %q", r.stderr)
				}
				for _, w := range tc.want {
					if w = tc.expand(v, w); !strings.Contains(r.stderr, w) {
						t.Errorf("stderr does not contain %q: %q", w, r.stderr)
					}
				}
				if fileExists(v["marker"]) {
					t.Errorf("the command ran")
				}
				if basicExists(t, conn, v["base"]) {
					t.Errorf("base path %s was created", v["base"])
				}
				if t.Failed() {
					t.Logf("args: %q\nenv: %q", args, tc.env)
				}
				t.Logf("%s: %s", r.elapsed.Round(time.Millisecond), strings.TrimSpace(r.stderr))
			})
		}
	})

	// Nothing at all was created by the bad cases: the server holds only
	// /zookeeper and the control case's tree.
	root := basicChildren(t, conn, "/")
	if strings.Join(root, " ") != "control zookeeper" {
		t.Errorf("ZooKeeper root holds %q, want only control and zookeeper", root)
	}
}
