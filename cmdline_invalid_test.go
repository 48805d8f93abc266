package main

// Command lines that do not parse: one clear line each.

import (
	"errors"
	"strings"
	"testing"
)

func TestParseCommandLineInvalid(t *testing.T) {
	t.Parallel()
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
		{"run without mode", a("run"), nil, nil, a("run:", `"once", "cron" or "crontab"`)},
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
		{"bad quiet", runOnce("--quiet=sometimes"), nil, nil, a(`--quiet "sometimes"`, "true or false")},
		{"repeated candidate id", a("run", "once", "--candidate-id", "x", "--candidate-id", "y", "--", "x"), nil, nil, a(`--candidate-id given 2 times ("x", "y")`, "takes one value")},
		{"global flag twice before the command", a("--log-level", "error", "--log-level", "debug", "info"), nil, nil, a(`--log-level given 2 times ("error", "debug")`, "give it once")},
		{"global flag twice after the command", a("--log-level", "warn", "info", "--log-level", "error", "--log-level", "debug"), nil, nil, a(`--log-level given 2 times ("error", "debug")`, "give it once")},
		{"repeated bool flag", runOnce("--no-wait", "--no-wait=false"), nil, nil, a(`--no-wait given 2 times ("true", "false")`)},
		{"repeated config file", a("info", "--config-file", "a.json", "--config-file", "b.json"), nil, nil, a(`--config-file given 2 times`)},
		{"repeated hook", runOnce("--on-promote", "a", "--on-promote", "b"), nil, nil, a(`--on-promote given 2 times ("a", "b")`)},
		{"quiet on info", a("info", "--quiet"), nil, nil, a("info:", "--quiet", "run once")},
		{"zero session timeout", a("info", "--zookeeper-session-timeout", "0s"), nil, nil, a(`--zookeeper-session-timeout "0s"`, "greater than zero")},
		{"negative session timeout", a("info", "--zookeeper-session-timeout", "-1s"), nil, nil, a(`"-1s"`, "negative")},
		{"unitless duration env", a("info"), map[string]string{"ZOOKEEPER_SESSION_TIMEOUT": "5"}, nil, a(`environment ZOOKEEPER_SESSION_TIMEOUT "5"`, "not a duration", "5s")},
		{"negative grace", runOnce("--stop-grace-period", "-2s"), nil, nil, a(`--stop-grace-period "-2s"`, "negative")},
		{"negative deadline", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--starting-deadline", "-1m", "--", "x"), nil, nil, a(`--starting-deadline "-1m"`, "negative")},
		{"unknown deadline word", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--starting-deadline", "never", "--", "x"), nil, nil, a(`--starting-deadline "never"`, "not a duration", "auto")},
		{"overlap limit zero", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--overlap", "allow", "--overlap-limit", "0", "--", "x"), nil, nil, a(`--overlap-limit "0"`, "out of range", "1 to 100")},
		{"overlap limit not a number", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--overlap-limit", "many", "--", "x"), nil, nil, a(`--overlap-limit "many"`, "whole number")},
		{"overlap limit too many env", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--", "x"), map[string]string{"BALLOT_OVERLAP_LIMIT": "101"}, nil, a(`environment BALLOT_OVERLAP_LIMIT "101"`, "out of range", "1 to 100")},
		{"bad overlap", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--overlap", "parallel", "--", "x"), nil, nil, a(`--overlap "parallel"`, "skip, queue, replace")},
		{"history output bytes too many env", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--", "x"), map[string]string{"BALLOT_HISTORY_OUTPUT_BYTES": "65537"}, nil, a(`environment BALLOT_HISTORY_OUTPUT_BYTES "65537"`, "out of range")},
		{"history output bytes not a number", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--history-output-bytes", "lots", "--", "x"), nil, nil, a(`--history-output-bytes "lots"`, "whole number")},
		{"on-run-end empty", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--on-run-end", "", "--", "x"), nil, nil, a("--on-run-end", "empty")},
		{"show-output not a bool", a("history", "--show-output=maybe"), nil, nil, a("--show-output", "maybe")},
		{"jobs unknown flag", a("jobs", "--all"), nil, nil, a("jobs:", "unknown flag --all")},
		{"jobs bad output env", a("jobs"), map[string]string{"BALLOT_OUTPUT": "yaml"}, nil, a(`environment BALLOT_OUTPUT "yaml"`, "human, json")},
		{"jobs stray argument", a("jobs", "backup"), nil, nil, a("jobs:", `"backup"`)},
		{"ping url env not a URL", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--", "x"), map[string]string{"BALLOT_PING_URL": "hc-ping.com/secret-uuid"}, nil, a(`environment BALLOT_PING_URL "…"`, "https:// or http://")},
		{"ping ca empty", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--ping-ca", "", "--", "x"), nil, nil, a(`--ping-ca ""`, "must name a file")},
		{"negative retries", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--retries", "-1", "--", "x"), nil, nil, a(`--retries "-1"`, "negative")},
		{"retries not a number", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--retries", "many", "--", "x"), nil, nil, a(`--retries "many"`, "whole number")},
		{"too many retries env", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--", "x"), map[string]string{"BALLOT_RETRIES": "1000"}, nil, a(`environment BALLOT_RETRIES "1000"`, "at most 100")},
		{"negative retry delay", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--retry-delay", "-5s", "--", "x"), nil, nil, a(`--retry-delay "-5s"`, "negative")},
		{"unitless retry delay", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--retry-delay", "5", "--", "x"), nil, nil, a(`--retry-delay "5"`, "not a duration")},
		{"spread below a second", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--spread", "500ms", "--", "x"), nil, nil, a(`--spread "500ms"`, "at least 1s")},
		{"spread negative env", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--", "x"), map[string]string{"BALLOT_SPREAD": "-1h"}, nil, a(`environment BALLOT_SPREAD "-1h"`, "negative")},
		{"spread number in file", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--config-file", "$DIR/c.json", "--", "x"), nil, map[string]string{"c.json": `{"spread": 3600}`}, a(`key "spread"`, "duration", "got 3600")},
		{"spread on run once", runOnce("--spread", "1h"), nil, nil, a("run once", "--spread", "run cron")},
		{"rerun-limit without window", runOnce("--rerun-limit", "3"), nil, nil, a(`--rerun-limit "3"`, "N/DURATION", "3/10m")},
		{"rerun-limit not a count", runOnce("--rerun-limit", "x/10m"), nil, nil, a(`--rerun-limit "x/10m"`, "whole number")},
		{"rerun-limit too many env", runOnce(), map[string]string{"BALLOT_RERUN_LIMIT": "101/1h"}, nil, a(`environment BALLOT_RERUN_LIMIT "101/1h"`, "out of range", "0", "100")},
		{"rerun-limit window too short", runOnce("--rerun-limit", "3/500ms"), nil, nil, a(`--rerun-limit "3/500ms"`, "at least 1s")},
		{"rerun-limit unitless window in file", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"rerun-limit": "3/10"}`}, a(`key "rerun-limit" "3/10"`, "Go duration")},
		{"rerun-limit on run cron", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--rerun-limit", "3/10m", "--", "x"), nil, nil, a("run cron:", "--rerun-limit", "run once only")},
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
		{"timeout negative on run once", runOnce("--timeout", "-1s"), nil, nil, a(`--timeout "-1s"`, "negative")},
		{"timeout unitless env", runOnce(), map[string]string{"BALLOT_TIMEOUT": "30"}, nil, a(`environment BALLOT_TIMEOUT "30"`, "not a duration")},
		{"wait-timeout 0", runOnce("--wait-timeout", "0"), nil, nil, a(`--wait-timeout "0"`, "greater than zero", "--no-wait")},
		{"wait-timeout negative", runOnce("--wait-timeout", "-1s"), nil, nil, a(`--wait-timeout "-1s"`, "negative")},
		{"wait-timeout unitless env", runOnce(), map[string]string{"BALLOT_WAIT_TIMEOUT": "5"}, nil, a(`environment BALLOT_WAIT_TIMEOUT "5"`, "not a duration")},
		{"wait-timeout number in file", runOnce("--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"wait-timeout": 30}`}, a(`key "wait-timeout"`, "duration", "got 30")},
		{"priority not a number", runOnce("--priority", "abc"), nil, nil, a(`--priority "abc"`, "not a whole number")},
		{"priority out of range", runOnce("--priority", "1001"), nil, nil, a(`--priority "1001"`, "out of range", "-1000 to 1000")},
		{"priority in env", runOnce(), map[string]string{"BALLOT_PRIORITY": "high"}, nil, a(`environment BALLOT_PRIORITY "high"`, "not a whole number")},
		{"slots zero", runOnce("--slots", "0"), nil, nil, a(`--slots "0"`, "out of range", "1 to 100")},
		{"slots not a number", runOnce("--slots", "two"), nil, nil, a(`--slots "two"`, "not a whole number")},
		{"preempt-after negative", runOnce("--preempt-after", "-1s"), nil, nil, a(`--preempt-after "-1s"`, "negative")},
		{"preempt-after unitless", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--preempt-after", "30", "--", "x"), nil, nil, a(`--preempt-after "30"`, "not a duration")},
		{"wait-timeout on run cron", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--wait-timeout", "1m", "--", "x"), nil, nil, a("run cron:", "--wait-timeout", "run once only")},
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
		{"hook flag on leader", a("leader", "--on-promote", "p"), nil, nil, a("leader:", "unknown flag --on-promote", "run once, run cron and run crontab only")},

		// leader
		{"leader with candidate id", a("leader", "--candidate-id", "c"), nil, nil, a("leader:", "unknown flag --candidate-id", "run once, run cron, run crontab, step-down, drain and undrain only")},
		{"leader stray arg", a("leader", "now"), nil, nil, a("leader:", `unexpected argument "now"`)},
		{"leader with command", a("leader", "--", "ls", "-l"), nil, nil, a("leader:", "takes no command", `"ls -l"`)},
		{"leader negative wait", a("leader", "--wait", "-1s"), nil, nil, a(`--wait "-1s"`, "negative")},
		{"leader bad wait env", a("leader"), map[string]string{"BALLOT_WAIT": "forever"}, nil, a(`environment BALLOT_WAIT "forever"`, "not a duration")},
		{"leader wait number in file", a("leader", "--config-file", "$DIR/c.json"), nil, map[string]string{"c.json": `{"wait": 30}`}, a(`key "wait"`, "duration", "got 30")},
		{"leader bad output", a("leader", "--output", "xml"), nil, nil, a(`--output "xml"`, "human, json")},
		{"wait on info", a("info", "--wait", "1s"), nil, nil, a("info:", "unknown flag --wait", "leader, step-down, trigger and drain only")},
		{"wait on run", runOnce("--wait", "1s"), nil, nil, a("run once:", "--wait", "leader, step-down, trigger and drain only")},
		{"wait before the command", a("--wait", "1s", "leader"), nil, nil, a("--wait", "after the command", "leader, step-down, trigger and drain only")},
		{"output on run names leader", runOnce("--output", "json"), nil, nil, a("--output", "info, watch, leader, history, trigger and jobs")},
		{"help unknown topic lists leader", a("help", "leaders"), nil, nil, a(`"leaders"`, "leader, history, check, step-down, pause, resume, trigger, drain, undrain, version")},
		{"unknown command lists leader", a("lead"), nil, nil, a(`"lead"`, "watch, leader, history, check, step-down, pause, resume, trigger, drain, undrain, version")},

		// run crontab (its FILE's lines: crontab_test.go)
		{"crontab without FILE or jobs", a("run", "crontab", "--candidate-id", "c"), nil, nil,
			a(`run crontab: no crontab FILE given, and no "jobs" in a config file`)},
		{"crontab with two FILEs", a("run", "crontab", "--candidate-id", "c", "a.tab", "b.tab"), nil, nil,
			a(`run crontab: unexpected argument "b.tab"; it takes one crontab FILE`)},
		{"crontab with a command", a("run", "crontab", "--candidate-id", "c", "a.tab", "--", "x"), nil, nil,
			a(`run crontab: takes no command after "--", but got "x"; each job's command is on its line`)},
		{"crontab with an empty FILE", a("run", "crontab", "--candidate-id", "c", ""), nil, nil,
			a("run crontab: the crontab FILE is an empty string")},
		{"crontab with --schedule", a("run", "crontab", "--candidate-id", "c", "--schedule", "@daily", "a.tab"), nil, nil,
			a("run crontab: unknown flag --schedule; it applies to run cron only")},
		{"crontab with a run once flag", a("run", "crontab", "--candidate-id", "c", "--once-key", "k", "a.tab"), nil, nil,
			a("run crontab: unknown flag --once-key; it applies to run once only")},
		{"crontab without candidate", a("run", "crontab", "a.tab"), nil, nil, a("run crontab: --candidate-id is required")},
		{"crontab bad flag after FILE", a("run", "crontab", "--candidate-id", "c", "a.tab", "--timeout", "x"), nil, nil,
			a(`--timeout "x": not a duration`)},
		{"crontab --check from the environment", a("run", "crontab", "--candidate-id", "c", "a.tab"), map[string]string{"BALLOT_CHECK": "true"}, nil,
			a(`environment BALLOT_CHECK "true": --check is for the command line only`)},
		{"crontab FILE and config jobs", a("run", "crontab", "--candidate-id", "c", "--config-file", "$DIR/c.json", "a.tab"), nil,
			map[string]string{"c.json": `{"jobs": [{"name": "a", "schedule": "@daily", "command": "true"}]}`},
			a(`run crontab a.tab: config file $DIR/c.json has "jobs" too; give the jobs one way`)},
		{"check flag on run cron", a("run", "cron", "--candidate-id", "c", "--schedule", "@daily", "--check", "--", "x"), nil, nil,
			a("run cron: unknown flag --check; it applies to run crontab only")},

		// trigger, drain, undrain
		{"drain without candidate id", a("drain"), nil, nil, a("drain:", "--candidate-id is required")},
		{"undrain without candidate id", a("undrain"), nil, nil, a("undrain:", "--candidate-id is required")},
		{"drain empty candidate id", a("drain", "--candidate-id="), nil, nil, a(`--candidate-id ""`, "must not be empty")},
		{"drain reason on two lines", a("drain", "--candidate-id", "c", "--reason", "a\nb"), nil, nil, a(`--reason "a\nb"`, "one line")},
		{"undrain with reason", a("undrain", "--candidate-id", "c", "--reason", "x"), nil, nil, a("undrain:", "unknown flag --reason", "pause and drain only")},
		{"undrain with wait", a("undrain", "--candidate-id", "c", "--wait", "1s"), nil, nil, a("undrain:", "unknown flag --wait")},
		{"trigger with candidate id", a("trigger", "--candidate-id", "c"), nil, nil, a("trigger:", "unknown flag --candidate-id")},
		{"trigger negative wait", a("trigger", "--wait", "-1s"), nil, nil, a(`--wait "-1s"`, "negative")},
		{"trigger unitless wait", a("trigger", "--wait", "30"), nil, nil, a(`--wait "30"`, "not a duration")},
		{"trigger with command", a("trigger", "--", "ls"), nil, nil, a("trigger:", "takes no command", `"ls"`)},
		{"trigger stray arg", a("trigger", "now"), nil, nil, a("trigger:", `unexpected argument "now"`)},
		{"drain bad until-reboot", a("drain", "--candidate-id", "c", "--until-reboot=soon"), nil, nil, a(`--until-reboot "soon"`, "true or false")},
		{"drain until-reboot env", a("drain", "--candidate-id", "c"), map[string]string{"BALLOT_UNTIL_REBOOT": "maybe"}, nil, a(`environment BALLOT_UNTIL_REBOOT "maybe"`, "true or false")},
		{"undrain until-reboot", a("undrain", "--candidate-id", "c", "--until-reboot"), nil, nil, a("undrain:", "unknown flag --until-reboot", "drain only")},
		{"pause until-reboot", a("pause", "--until-reboot"), nil, nil, a("pause:", "unknown flag --until-reboot", "drain only")},
		{"trigger bad output", a("trigger", "--output", "yaml"), nil, nil, a(`--output "yaml"`, "not an output format", "use one of human, json")},

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
		{"completion without a shell", a("completion"), nil, nil, a("completion:", "bash or zsh")},
		{"completion for an unknown shell", a("completion", "fish"), nil, nil, a("completion:", "bash or zsh", `"fish"`)},
		{"completion for two shells", a("completion", "bash", "zsh"), nil, nil, a("completion:", `"bash zsh"`)},
		{"help --man with a topic", a("help", "--man", "run"), nil, nil, a(`help: unknown command "--man run"`)},
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
