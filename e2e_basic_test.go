package main

// End-to-end tests of ballot's basic contract, each running the real binary
// (ballotBin, built by TestMain) against a real ZooKeeper:
//
//   - bad input of every kind is refused with exit 2 and one line, before
//     anything is created in ZooKeeper or any command is run;
//   - a command that cannot be found or executed is refused with 127/126;
//   - the exit policy passes the command's exit code (or 128+signal) on,
//     and the proposal is deleted at once;
//   - the command's output is wrapped in each log format, or passed through;
//   - on-election-failure exit / run-anyway / retry with ZooKeeper down;
//   - signals are forwarded to the command, SIGTERM stops it;
//   - --debug logs where each setting came from.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// basicResult is one finished run of ballot with its streams kept apart.
type basicResult struct {
	stdout, stderr string
	code           int  // exit code; -1 if killed by a signal
	signaled       bool // ballot itself died of a signal
	elapsed        time.Duration
}

// basicRun runs ballot to completion (killing it after timeout, which fails
// the test) with stdout and stderr captured separately, in dir.
func basicRun(t *testing.T, env []string, dir string, timeout time.Duration, args ...string) basicResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, ballotBin, args...)
	cmd.Env = env
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := basicResult{elapsed: time.Since(start)}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	if ctx.Err() != nil {
		t.Fatalf("ballot %q did not exit within %s\nstdout:\n%s\nstderr:\n%s", args, timeout, r.stdout, r.stderr)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signaled = true
		}
	default:
		t.Fatalf("run ballot: %v", err)
	}
	return r
}

// basicZKConn connects a client for checking what ballot left in ZooKeeper.
func basicZKConn(t *testing.T, c *zkCluster) *zk.Conn {
	t.Helper()
	conn, _ := harnessConnect(t, c.Servers(), 4*time.Second)
	return conn
}

// basicChildren lists the children of path, failing the test on error
// (ErrNoNode included: callers expect the path to exist).
func basicChildren(t *testing.T, conn *zk.Conn, path string) []string {
	t.Helper()
	ch, _, err := conn.Children(path)
	if err != nil {
		t.Fatalf("children of %s: %v", path, err)
	}
	sort.Strings(ch)
	return ch
}

// leftAfterExit lists what a candidate that exited cleanly left under the
// election path, but for the handover record, which stays by design and
// must say the baton was given back.
func leftAfterExit(t *testing.T, conn *zk.Conn, base string) []string {
	t.Helper()
	var left []string
	for _, c := range basicChildren(t, conn, base) {
		if c != handoverName {
			left = append(left, c)
			continue
		}
		b, _, err := conn.Get(base + "/" + c)
		if err != nil {
			t.Fatalf("read the handover record: %v", err)
		}
		if !strings.Contains(string(b), `"state":"released"`) {
			t.Errorf("the baton was not given back on exit: %s", b)
		}
	}
	return left
}

func basicExists(t *testing.T, conn *zk.Conn, path string) bool {
	t.Helper()
	ok, _, err := conn.Exists(path)
	if err != nil {
		t.Fatalf("exists %s: %v", path, err)
	}
	return ok
}

// basicDeadPort is a 127.0.0.1 port with nothing listening.
func basicDeadPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func basicLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// ---------------------------------------------------------------------------
// Commands that cannot be run.

func TestCommandNotFound(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	conn := basicZKConn(t, c)
	dir := t.TempDir()
	plain := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\ntouch "+filepath.Join(dir, "marker")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Executable, but no program: the kernel refuses it (exec format error).
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("touch "+filepath.Join(dir, "marker")+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		command string
		code    int
		want    []string
	}{
		{"not a program", text, 126, []string{fmt.Sprintf("%q", text), "not a program", "ELF", "#!"}},
		{"an empty executable file", empty, 126, []string{fmt.Sprintf("%q", empty), "not a program"}},
		{"absolute path missing", "/nonexistent/cmd", 127, []string{`"/nonexistent/cmd"`, "not found"}},
		{"not in PATH", "ballot-no-such-command", 127, []string{`"ballot-no-such-command"`, "not found"}},
		{"not executable", plain, 126, []string{fmt.Sprintf("%q", plain), "cannot be executed", "permission denied"}},
		{"a directory", dir, 126, []string{fmt.Sprintf("%q", dir), "cannot be executed"}},
	}
	for i, tc := range cases {
		i, tc := i, tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := fmt.Sprintf("/notfound/case-%d", i)
			args := runArgs(c.Servers(), base, "c1", "--on-child-error", "exit", "--", tc.command, "arg")
			r := basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, args...)
			if r.code != tc.code || r.signaled {
				t.Errorf("exit code %d, want %d", r.code, tc.code)
			}
			if r.stdout != "" {
				t.Errorf("stdout not empty:\n%s", r.stdout)
			}
			if lines := basicLines(r.stderr); len(lines) != 1 || !strings.HasPrefix(r.stderr, "ballot: ") {
				t.Errorf("stderr is not one \"ballot: \" line:\n%s", r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not contain %q: %q", w, r.stderr)
				}
			}
			if basicExists(t, conn, base) {
				t.Errorf("base path %s was created", base)
			}
			t.Logf("%s: %s", r.elapsed.Round(time.Millisecond), strings.TrimSpace(r.stderr))
		})
	}
	t.Cleanup(func() {
		if fileExists(filepath.Join(dir, "marker")) {
			t.Errorf("the non-executable script ran")
		}
		if basicExists(t, conn, "/notfound") {
			t.Errorf("/notfound was created")
		}
	})
}

// ---------------------------------------------------------------------------
// The exit policy passes the command's exit status on.

func TestExitPolicyPassesChildCode(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	conn := basicZKConn(t, c)
	cases := []struct {
		name  string
		child []string
		code  int
	}{
		{"exit 7", []string{"exit", "7", "100ms"}, 7},
		{"exit 0", []string{"exit", "0", "100ms"}, 0},
		{"exit 1 at once", []string{"exit", "1", "0s"}, 1},
		{"SIGKILL", []string{"die", "SIGKILL"}, 128 + int(syscall.SIGKILL)},
		{"SIGTERM", []string{"die", "SIGTERM"}, 128 + int(syscall.SIGTERM)},
		{"SIGHUP", []string{"die", "SIGHUP"}, 128 + int(syscall.SIGHUP)},
	}
	for i, tc := range cases {
		i, tc := i, tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := fmt.Sprintf("/exitcode/case-%d", i)
			args := runArgs(c.Servers(), base, "c1", "--on-child-success", "exit", "--on-child-error", "exit",
				"--", selfExe(), tc.child[1])
			if len(tc.child) > 2 {
				args = append(args, tc.child[2])
			}
			p := startBallot(t, tc.name, ballotEnv(t, "BALLOT_TEST_CHILD="+tc.child[0]), args...)
			start := time.Now()
			code := p.Wait(20 * time.Second)
			if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("ballot itself died of %v", ws.Signal())
			}
			if code != tc.code {
				t.Errorf("exit code %d, want %d", code, tc.code)
			}
			// The proposal is deleted before ballot exits, not left to
			// expire with the session.
			if ch := leftAfterExit(t, conn, base); len(ch) != 0 {
				t.Errorf("proposals left under %s right after exit: %q", base, ch)
			}
			if !p.Logged("elected leader") || !p.Logged("resigning") {
				t.Errorf("ballot did not log its election and resignation")
			}
			t.Logf("exit %d after %s", code, time.Since(start).Round(time.Millisecond))
		})
	}
}

// ---------------------------------------------------------------------------
// The command's output in each log format.

func TestWrapChildLogs(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	conn := basicZKConn(t, c)
	run := func(t *testing.T, base string, flags ...string) string {
		args := runArgs(c.Servers(), base, "c1",
			append(append([]string{"--on-child-success", "exit"}, flags...), "--", selfExe())...)
		p := startBallot(t, t.Name(), ballotEnv(t, "BALLOT_TEST_CHILD=echo"), args...)
		if code := p.Wait(20 * time.Second); code != 0 {
			t.Fatalf("exit code %d, want 0", code)
		}
		if ch := leftAfterExit(t, conn, base); len(ch) != 0 {
			t.Errorf("proposals left: %q", ch)
		}
		return p.out.String()
	}

	t.Run("human", func(t *testing.T) {
		t.Parallel()
		out := run(t, "/wrap/human", "--log-format", "human")
		for _, stream := range []string{"stdout", "stderr"} {
			found := false
			for _, l := range basicLines(out) {
				if strings.Contains(l, " INFO  to "+stream+" ") && strings.Contains(l, "stream="+stream) &&
					strings.Contains(l, "pid=") {
					found = true
				}
			}
			if !found {
				t.Errorf("no human log line for the command's %s in:\n%s", stream, out)
			}
		}
	})

	t.Run("json", func(t *testing.T) {
		t.Parallel()
		out := run(t, "/wrap/json", "--log-format", "json")
		found := map[string]bool{}
		for _, l := range basicLines(out) {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Errorf("not a JSON object: %q: %v", l, err)
				continue
			}
			for _, k := range []string{"time", "level", "msg"} {
				if _, ok := m[k]; !ok {
					t.Errorf("no %q in %q", k, l)
				}
			}
			stream, _ := m["stream"].(string)
			if stream == "" {
				continue
			}
			found[stream] = true
			if m["msg"] != "to "+stream || m["level"] != "INFO" {
				t.Errorf("command line on %s: %q", stream, l)
			}
			switch pid := m["pid"].(type) {
			case float64:
				if pid <= 0 {
					t.Errorf("bad pid in %q", l)
				}
			case string:
				if pid == "" || pid == "0" {
					t.Errorf("bad pid in %q", l)
				}
			default:
				t.Errorf("no pid in %q", l)
			}
		}
		if !found["stdout"] || !found["stderr"] {
			t.Errorf("command lines missing (found %v) in:\n%s", found, out)
		}
	})

	t.Run("raw", func(t *testing.T) {
		t.Parallel()
		out := run(t, "/wrap/raw", "--log-format", "raw")
		lines := basicLines(out)
		for _, want := range []string{"to stdout", "to stderr"} {
			found := false
			for _, l := range lines {
				found = found || l == want
			}
			if !found {
				t.Errorf("no line %q in:\n%s", want, out)
			}
		}
	})

	t.Run("not wrapped", func(t *testing.T) {
		t.Parallel()
		base := "/wrap/none"
		args := runArgs(c.Servers(), base, "c1", "--on-child-success", "exit", "--wrap-child-logs=false",
			"--", selfExe())
		r := basicRun(t, ballotEnv(t, "BALLOT_TEST_CHILD=echo"), t.TempDir(), 20*time.Second, args...)
		if r.code != 0 {
			t.Fatalf("exit code %d, want 0; stderr:\n%s", r.code, r.stderr)
		}
		// ballot logs on stderr only, so its stdout is the command's.
		if r.stdout != "to stdout\n" {
			t.Errorf("stdout is %q, want the command's own output %q", r.stdout, "to stdout\n")
		}
		found := false
		for _, l := range basicLines(r.stderr) {
			found = found || l == "to stderr"
		}
		if !found {
			t.Errorf("the command's stderr line is not verbatim on stderr:\n%s", r.stderr)
		}
		if !strings.Contains(r.stderr, "elected leader") {
			t.Errorf("ballot's own log is not on stderr:\n%s", r.stderr)
		}
		if ch := leftAfterExit(t, conn, base); len(ch) != 0 {
			t.Errorf("proposals left: %q", ch)
		}
	})
}

// ---------------------------------------------------------------------------
// Signals are forwarded to the command.

func TestSignalForwarding(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	conn := basicZKConn(t, c)
	base := "/signals/e"
	file := filepath.Join(t.TempDir(), "signals")
	p := startBallot(t, "leader", ballotEnv(t, "BALLOT_TEST_CHILD=trap"),
		runArgs(c.Servers(), base, "c1", "--", selfExe(), file)...)
	p.WaitEvent(logEvCommandStarted, 20*time.Second)

	// records is the trap child's file: "ready", then one line per signal.
	records := func() []string { return fileLines(t, file) }
	waitRecords := func(n int) []string {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			r := records()
			if len(r) >= n {
				return r
			}
			if time.Now().After(deadline) {
				t.Fatalf("the command recorded %q, waited for %d lines", r, n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitRecords(1)

	want := []string{"ready"}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGQUIT} {
		p.Signal(sig)
		want = append(want, sig.String())
		waitRecords(len(want))
		// Give a duplicate delivery time to show up.
		time.Sleep(100 * time.Millisecond)
		if got := records(); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("after %s the command recorded %q, want %q", sigName(sig), got, want)
			want = got
		}
		if p.Exited() {
			t.Fatalf("ballot exited (code %d) on %s", p.code, sigName(sig))
		}
	}

	p.Signal(syscall.SIGTERM)
	start := time.Now()
	code := p.Wait(5 * time.Second)
	took := time.Since(start)
	if code != 0 {
		t.Errorf("exit code %d, want the command's 0", code)
	}
	if took > 3*time.Second {
		t.Errorf("took %s to exit after SIGTERM", took)
	}
	if got := records(); len(got) == 0 || got[len(got)-1] != syscall.SIGTERM.String() {
		t.Errorf("the command did not record SIGTERM last: %q", got)
	}
	if ch := leftAfterExit(t, conn, base); len(ch) != 0 {
		t.Errorf("proposals left under %s: %q", base, ch)
	}
	t.Logf("exit %d %s after SIGTERM; recorded %q", code, took.Round(time.Millisecond), records())
}
