package main

// Starting without ZooKeeper (on-election-failure), and what --debug says
// about where each value came from.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestElectionFailurePolicies(t *testing.T) {
	t.Parallel()
	args := func(t *testing.T, extra ...string) []string {
		return runArgs([]string{basicDeadPort(t)}, "/ballot/unreachable", "c1", extra...)
	}

	t.Run("exit", func(t *testing.T) {
		t.Parallel()
		p := startBallot(t, "exit", ballotEnv(t, "BALLOT_TEST_CHILD=echo"),
			args(t, "--on-election-failure", "exit", "--", selfExe())...)
		start := time.Now()
		code := p.Wait(10 * time.Second)
		took := time.Since(start)
		if code != exitFailure {
			t.Errorf("exit code %d, want %d", code, exitFailure)
		}
		if took > 5*time.Second {
			t.Errorf("took %s to give up", took)
		}
		var errs []string
		for _, l := range basicLines(p.out.String()) {
			if strings.Contains(l, " ERROR ") {
				errs = append(errs, l)
			}
		}
		if len(errs) != 1 || !strings.Contains(errs[0], "election") {
			t.Errorf("want one error line about the election, got %q", errs)
		}
		if p.Logged("to stdout") {
			t.Errorf("the command ran")
		}
		t.Logf("exit %d after %s", code, took.Round(time.Millisecond))
	})

	t.Run("run-anyway", func(t *testing.T) {
		t.Parallel()
		p := startBallot(t, "run-anyway", ballotEnv(t, "BALLOT_TEST_CHILD=echo"),
			args(t, "--on-election-failure", "run-anyway", "--on-child-success", "exit", "--", selfExe())...)
		start := time.Now()
		code := p.Wait(10 * time.Second)
		if code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
		for _, want := range []string{"mutual exclusion is given up", "to stdout", "to stderr"} {
			if !p.Logged(want) {
				t.Errorf("output lacks %q", want)
			}
		}
		t.Logf("exit %d after %s", code, time.Since(start).Round(time.Millisecond))
	})

	t.Run("retry", func(t *testing.T) {
		t.Parallel()
		began := time.Now()
		p := startBallot(t, "retry", ballotEnv(t, "BALLOT_TEST_CHILD=echo"),
			args(t, "--on-election-failure", "retry", "--", selfExe())...)
		// A failed attempt lasts the 2s connection wait plus up to 1s for
		// the client to close, so the first warning may come just after 3s.
		p.WaitEvent(logEvJoinRetry, 10*time.Second, "level", "WARN")
		time.Sleep(time.Until(began.Add(3 * time.Second)))
		if p.Exited() {
			t.Fatalf("ballot exited (code %d) instead of retrying", p.code)
		}
		p.Signal(syscall.SIGTERM)
		start := time.Now()
		code := p.Wait(10 * time.Second)
		took := time.Since(start)
		if code != 0 {
			t.Errorf("exit code %d after SIGTERM, want 0", code)
		}
		if took > 3*time.Second {
			t.Errorf("took %s to exit after SIGTERM, want under 3s", took)
		}
		if p.Logged("to stdout") {
			t.Errorf("the command ran")
		}
		t.Logf("exit %d %s after SIGTERM", code, took.Round(time.Millisecond))
	})

	// A stop signal is not held up by a connection attempt: with a 10s
	// session timeout ballot waits up to 10s for a session, but SIGTERM in
	// the middle of that wait ends it at once.
	t.Run("retry, SIGTERM while connecting", func(t *testing.T) {
		t.Parallel()
		p := startBallot(t, "retry-connecting", ballotEnv(t, "BALLOT_TEST_CHILD=echo"),
			args(t, "--on-election-failure", "retry", "--zookeeper-session-timeout", "10s", "--", selfExe())...)
		p.WaitEvent(logEvStarting, 10*time.Second)
		time.Sleep(time.Second)
		if p.Exited() || p.Logged("cannot join") {
			t.Fatalf("ballot is not connecting any more")
		}
		p.Signal(syscall.SIGTERM)
		start := time.Now()
		code := p.Wait(15 * time.Second)
		took := time.Since(start)
		if code != 0 {
			t.Errorf("exit code %d after SIGTERM, want 0", code)
		}
		if took > 2*time.Second {
			t.Errorf("took %s to exit after SIGTERM while connecting, want under 2s", took)
		}
		t.Logf("exit %d %s after SIGTERM", code, took.Round(time.Millisecond))
	})
}

func TestDebugLogsSources(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ballot.json")
	if err := os.WriteFile(cfg, []byte(`{"on-child-error": "exit", "stop-grace-period": "3s", "log-level": "warn"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := ballotEnv(t, "BALLOT_TEST_CHILD=echo", "BALLOT_CONFIG_FILE="+cfg, "BALLOT_ON_CHILD_SUCCESS=exit",
		"ZOOKEEPER_BASE_PATH=/debug/e", "LOG_FORMAT=json")
	args := []string{"--zookeeper-servers", c.ConnString(), "--zookeeper-session-timeout", "2s",
		"--debug", "--log-level", "debug", "run", "once", "--candidate-id", "c1", "--", selfExe()}
	p := startBallot(t, "debug", env, args...)
	if code := p.Wait(20 * time.Second); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}

	sources := map[string]string{}
	var cfgRead string
	for _, l := range basicLines(p.out.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("not JSON: %q", l)
			continue
		}
		switch m["msg"] {
		case "parameter":
			if m["level"] != "DEBUG" {
				t.Errorf("source logged at %v: %q", m["level"], l)
			}
			name, _ := m["name"].(string)
			sources[name], _ = m["from"].(string)
		case "configuration file read":
			cfgRead, _ = m["path"].(string)
		}
	}
	if cfgRead != cfg {
		t.Errorf("configuration file read: %q, want %q", cfgRead, cfg)
	}
	want := map[string]string{
		"zookeeper-servers":         "flag",
		"zookeeper-session-timeout": "flag",
		"log-level":                 "flag", // the config file's "warn" is overridden
		"debug":                     "flag",
		"candidate-id":              "flag",
		"config-file":               "environment BALLOT_CONFIG_FILE",
		"zookeeper-base-path":       "environment ZOOKEEPER_BASE_PATH",
		"log-format":                "environment LOG_FORMAT",
		"on-child-success":          "environment BALLOT_ON_CHILD_SUCCESS",
		"on-child-error":            "config file " + cfg,
		"stop-grace-period":         "config file " + cfg,
		"on-election-failure":       "default",
		"on-connection-loss":        "default",
		"wrap-child-logs":           "default",
	}
	for name, from := range want {
		if sources[name] != from {
			t.Errorf("%s: logged from %q, want %q", name, sources[name], from)
		}
	}
	for _, name := range []string{"schedule", "timezone", "output"} {
		if _, ok := sources[name]; ok {
			t.Errorf("%s logged for run once, which does not use it", name)
		}
	}
	if !p.Logged(`"msg":"to stdout"`) {
		t.Errorf("the command did not run")
	}

	// The human format says the same.
	p2 := startBallot(t, "debug-human", ballotEnv(t, "BALLOT_TEST_CHILD=echo", "BALLOT_CONFIG_FILE="+cfg, "BALLOT_ON_CHILD_SUCCESS=exit"),
		"--zookeeper-servers", c.ConnString(), "--zookeeper-base-path", "/debug/h", "--zookeeper-session-timeout", "2s",
		"run", "once", "--debug", "--log-level=debug", "--candidate-id", "c1", "--", selfExe())
	if code := p2.Wait(20 * time.Second); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	for _, w := range []string{
		"DEBUG parameter name=candidate-id from=flag",
		`DEBUG parameter name=on-child-success from="environment BALLOT_ON_CHILD_SUCCESS"`,
		fmt.Sprintf(`DEBUG parameter name=stop-grace-period from="config file %s"`, cfg),
		"DEBUG parameter name=log-format from=default",
		"DEBUG configuration file read path=" + cfg,
		// and the value, as given
		"DEBUG parameter name=candidate-id from=flag value=c1",
		fmt.Sprintf(`DEBUG parameter name=stop-grace-period from="config file %s" value=3s`, cfg),
		"DEBUG parameter name=on-connection-loss from=default value=reelect",
	} {
		if !p2.Logged(w) {
			t.Errorf("human debug log lacks %q", w)
		}
	}
}
