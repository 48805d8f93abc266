package main

// run crontab --check through the real binary: the summary of a good file
// and exit 0, one line and exit 2 for a bad one; nothing started, nothing
// connected to, either way.

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestCrontabCheckE2E(t *testing.T) {
	t.Parallel()
	// A listener in place of ZooKeeper: --check must never dial it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan string, 64) // each connection's remote address
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c.RemoteAddr().String()
			c.Close()
		}
	}()
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.tab", "# NAME SCHEDULE OPTIONS COMMAND\n"+
		"backup  0 3 * * *  --timeout 1h --retries 2  touch "+marker+" --all\n"+
		"report  @daily                               touch "+marker+" > /dev/null 2>&1\n"+
		"rotate  H 4 * * *  --overlap skip -- --weird-cmd-starting-with-dashes\n")
	bad := write("bad.tab", "backup 0 3 * * * touch "+marker+"\nreport @daily --zookeeper-servers zk9 touch "+marker+"\n")
	// The auth file does not exist: --check reads no credentials either.
	args := func(file string) []string {
		return []string{"--zookeeper-servers", ln.Addr().String(), "--zookeeper-base-path", "/crontab/check",
			"--zookeeper-auth-file", filepath.Join(dir, "no-such-auth"), "run", "crontab", "--check", file}
	}
	env := ballotEnv(t, "TZ=UTC")

	r := basicRun(t, env, dir, 20*time.Second, args(good)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("check of a good file: exit %d, stderr %q", r.code, r.stderr)
	}
	want := []string{
		`^backup  0 3 \* \* \*  next \d{4}-\d\d-\d\d 03:00:00 UTC  touch ` + regexp.QuoteMeta(marker) + ` --all$`,
		`^report  @daily     next \d{4}-\d\d-\d\d 00:00:00 UTC  touch ` + regexp.QuoteMeta(marker) + ` > /dev/null 2>&1$`,
		`^rotate  H 4 \* \* \*  next \d{4}-\d\d-\d\d 04:\d\d:00 UTC  --weird-cmd-starting-with-dashes$`,
	}
	lines := basicLines(r.stdout)
	if len(lines) != len(want) {
		t.Fatalf("check printed %d lines, want %d:\n%s", len(lines), len(want), r.stdout)
	}
	for i, w := range want {
		if !regexp.MustCompile(w).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want %s", i+1, lines[i], w)
		}
	}

	r = basicRun(t, env, dir, 20*time.Second, args(bad)...)
	wantErr := "ballot: " + bad + ":2: --zookeeper-servers: not per job; it is the whole process's (one session, one log, one candidate), so give it on ballot run crontab's command line\n"
	if r.code != exitUsage || r.stdout != "" || r.stderr != wantErr {
		t.Errorf("check of a bad file: exit %d, stdout %q, stderr %q; want exit 2 and %q", r.code, r.stdout, r.stderr, wantErr)
	}
	if strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr is not one line: %q", r.stderr)
	}

	// Both processes have exited, so any dial of theirs is queued ahead of
	// this one: the listener accepts in order.
	sentinel, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer sentinel.Close()
	for a := range accepted {
		if a == sentinel.LocalAddr().String() {
			break
		}
		t.Errorf("--check connected to the ZooKeeper address (from %s)", a)
	}
	if fileExists(marker) {
		t.Error("--check ran a job's command")
	}
}
