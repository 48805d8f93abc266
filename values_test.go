package main

// Parsing single values: servers, a command line, environment names,
// policies.

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"ballot/internal/slog"
)

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

// TestPolicyValues: each policy flag's value parses, in any case, to the
// constant of its own type; anything else is refused with the values
// allowed.
func TestPolicyValues(t *testing.T) {
	if got, err := oneOf("Rerun", "", policyValues...); err != nil || got != policyRerun {
		t.Errorf("child policy Rerun: %q, %v", got, err)
	}
	if got, err := oneOf("RUN-ANYWAY", "", electionValues...); err != nil || got != electionRunAnyway {
		t.Errorf("election policy RUN-ANYWAY: %q, %v", got, err)
	}
	if got, err := oneOf("exit", "", lossValues...); err != nil || got != lossExit {
		t.Errorf("loss policy exit: %q, %v", got, err)
	}
	for _, tc := range []struct {
		value string
		err   error
		want  string
	}{
		{"sometimes", func() error { _, err := oneOf("sometimes", "", lossValues...); return err }(), "use one of reelect, exit, ignore"},
		{"rerun", func() error { _, err := oneOf("rerun", "", lossValues...); return err }(), "use one of reelect, exit, ignore"},
		{"", func() error { _, err := oneOf("", "", electionValues...); return err }(), "use one of retry, run-anyway, exit"},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.value, tc.err, tc.want)
		}
	}
}
