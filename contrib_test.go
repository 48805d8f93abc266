package main

// contrib/: the units, the init script and the environment files stay
// true: the files parse as ballot's environment (read by systemd and by sh
// alike), the units' ExecStart parses with them, systemd-analyze verifies
// the units where it is installed, and the init script starts and stops a
// real ballot.

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envFile reads KEY=VALUE lines as systemd's EnvironmentFile= does, for the
// subset the contrib files use: comments, blank lines, double quotes.
func envFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: not KEY=VALUE: %q", path, line)
		}
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		} else if strings.ContainsAny(v, " \t'\"$`\\") {
			t.Errorf("%s: %s: quote a value with spaces in double quotes, for sh and systemd alike", path, k)
		}
		env[k] = v
	}
	return env
}

// shEnv is what sh makes of the file: the variables it sets.
func shEnv(t *testing.T, path string, keys []string) map[string]string {
	t.Helper()
	script := "set -a; . \"$1\"; set +a"
	for _, k := range keys {
		script += "; printf '%s\\0' \"$" + k + "\""
	}
	out, err := exec.Command("sh", "-c", script, "sh", path).Output()
	if err != nil {
		t.Fatalf("sh . %s: %v", path, err)
	}
	vals := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	env := map[string]string{}
	for i, k := range keys {
		env[k] = vals[i]
	}
	return env
}

// checkEnvFile: path is the same environment to systemd and to sh, and each
// BALLOT_ variable is one of ballot's parameters.
func checkEnvFile(t *testing.T, path string) map[string]string {
	env := envFile(t, path)
	var keys []string
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if sh := shEnv(t, path, keys); !reflect.DeepEqual(sh, env) {
		t.Errorf("%s: sh reads %q, systemd %q", path, sh, env)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, envPrefix) {
			continue
		}
		known := false
		for _, p := range params {
			known = known || p.env() == k
		}
		if !known {
			t.Errorf("%s: %s is none of ballot's parameters", path, k)
		}
	}
	return env
}

// unitService is a unit's [Service] settings (repeated keys in order) and
// whether it has an [Install] section.
func unitService(t *testing.T, path string) (map[string][]string, bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	svc := map[string][]string{}
	section, install := "", false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#':
		case line[0] == '[':
			section = line
			install = install || line == "[Install]"
		case section == "[Service]":
			k, v, _ := strings.Cut(line, "=")
			svc[k] = append(svc[k], v)
		}
	}
	return svc, install
}

func TestContribUnits(t *testing.T) {
	configTestEnv(t, nil)
	fleet := checkEnvFile(t, "contrib/ballot-tls.env")
	for _, tc := range []struct {
		unit, instance, envFile, cmd, commandVar string
	}{
		{"ballot@.service", "myservice", "contrib/myservice.env", cmdRunOnce, "COMMAND"},
		{"ballot-cron@.service", "sync-inventory", "contrib/sync-inventory.env", cmdRunCron, "JOB"},
	} {
		t.Run(tc.unit, func(t *testing.T) {
			svc, install := unitService(t, filepath.Join("contrib", tc.unit))
			if !install {
				t.Errorf("no [Install] section: systemctl enable would not work")
			}
			if got := svc["Type"]; !slices.Equal(got, a("notify")) {
				t.Errorf("Type=%v, want notify", got)
			}
			if tc.cmd == cmdRunOnce && len(svc["WatchdogSec"]) != 1 {
				t.Errorf("no WatchdogSec=")
			}
			// The environment as systemd builds it: Environment=, then the
			// files in order (the fleet's, then the instance's).
			env := map[string]string{}
			for _, e := range svc["Environment"] {
				k, v, _ := strings.Cut(strings.ReplaceAll(e, "%i", tc.instance), "=")
				env[k] = v
			}
			files := svc["EnvironmentFile"]
			if len(files) != 2 || files[0] != "-/etc/ballot/ballot.env" || !strings.HasSuffix(files[1], "/%i.env") {
				t.Fatalf("EnvironmentFile=%q, want the fleet's optional file, then the instance's", files)
			}
			for _, src := range []map[string]string{fleet, checkEnvFile(t, tc.envFile)} {
				for k, v := range src {
					env[k] = v
				}
			}
			execStart := svc["ExecStart"]
			if len(execStart) != 1 {
				t.Fatalf("ExecStart=%q", execStart)
			}
			var args []string
			for _, w := range strings.Fields(execStart[0]) {
				switch {
				case w == "$"+tc.commandVar:
					args = append(args, strings.Fields(env[tc.commandVar])...)
				case strings.HasPrefix(w, "$"):
					t.Errorf("ExecStart uses %s, which no file sets", w)
				default:
					args = append(args, strings.ReplaceAll(strings.ReplaceAll(w, "%H", "host-a"), "%i", tc.instance))
				}
			}
			if args[0] != "/usr/bin/ballot" {
				t.Errorf("ExecStart runs %s", args[0])
			}
			s, err := parseCommandLine(args[1:], func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("ExecStart %q with the environment files: %v", args, err)
			}
			if s.Command != tc.cmd || !slices.Equal(s.Args, strings.Fields(env[tc.commandVar])) || s.CandidateID != "host-a" ||
				s.BasePath != env["BALLOT_ZOOKEEPER_BASE_PATH"] || !s.ZooKeeperTLS || s.ZooKeeperACL != aclCreatorWorldRead {
				t.Errorf("ExecStart parses to %+v", s)
			}

			// systemd's own check, with the binary the tests built.
			if _, err := exec.LookPath("systemd-analyze"); err == nil {
				dir := t.TempDir()
				data, err := os.ReadFile(filepath.Join("contrib", tc.unit))
				if err != nil {
					t.Fatal(err)
				}
				name := strings.Replace(tc.unit, "@", "@"+tc.instance, 1)
				text := strings.ReplaceAll(string(data), "/usr/bin/ballot", ballotBin)
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command("systemd-analyze", "verify", "--man=no", "./"+name)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
					t.Errorf("systemd-analyze verify %s: %v\n%s", tc.unit, err, out)
				}
			}
		})
	}
}

// TestContribCrontab: ballot-crontab.service's ExecStart parses with the
// fleet's environment, its reload checks the file before the SIGHUP, and
// ballot.crontab, the example file, loads.
func TestContribCrontab(t *testing.T) {
	configTestEnv(t, nil)
	env := checkEnvFile(t, "contrib/ballot-tls.env")
	svc, install := unitService(t, "contrib/ballot-crontab.service")
	if !install {
		t.Errorf("no [Install] section: systemctl enable would not work")
	}
	for _, e := range svc["Environment"] {
		k, v, _ := strings.Cut(e, "=")
		if _, set := env[k]; !set {
			env[k] = v // the fleet's file wins over Environment=
		}
	}
	// run crontab says READY once every job has proposed and feeds the
	// watchdog (TestCrontabSystemdNotify): systemd should wait for it.
	if got := svc["Type"]; !slices.Equal(got, a("notify")) || len(svc["WatchdogSec"]) != 1 || !slices.Equal(svc["NotifyAccess"], a("main")) {
		t.Errorf("Type=%q WatchdogSec=%q NotifyAccess=%q, want notify, one watchdog, main", got, svc["WatchdogSec"], svc["NotifyAccess"])
	}
	if files := svc["EnvironmentFile"]; !slices.Equal(files, a("-/etc/ballot/ballot.env")) {
		t.Errorf("EnvironmentFile=%q, want the fleet's optional file", files)
	}
	getenv := func(k string) string { return env[k] }
	const file = "/etc/ballot/crontab"
	parse := func(line string) *Settings {
		t.Helper()
		args := strings.Fields(strings.ReplaceAll(line, "%H", "host-a"))
		if args[0] != "/usr/bin/ballot" {
			t.Fatalf("%q runs %s", line, args[0])
		}
		s, err := parseCommandLine(args[1:], getenv)
		if err != nil {
			t.Fatalf("%q with the fleet's environment: %v", line, err)
		}
		return s
	}
	start := svc["ExecStart"]
	if len(start) != 1 {
		t.Fatalf("ExecStart=%q", start)
	}
	s := parse(start[0])
	if s.Command != cmdRunCrontab || s.CrontabCheck || s.CrontabFile != file || s.CandidateID != "host-a" ||
		s.BasePath != env["BALLOT_ZOOKEEPER_BASE_PATH"] || !s.ZooKeeperTLS {
		t.Errorf("ExecStart parses to %+v", s)
	}
	// The reload: --check of the same file first, so that a bad file fails
	// the reload and never reaches the running process.
	reload := svc["ExecReload"]
	if len(reload) != 2 || reload[1] != "/bin/kill -HUP $MAINPID" {
		t.Fatalf("ExecReload=%q, want the check, then kill -HUP $MAINPID", reload)
	}
	if c := parse(reload[0]); c.Command != cmdRunCrontab || !c.CrontabCheck || c.CrontabFile != file || c.BasePath != s.BasePath {
		t.Errorf("ExecReload %q parses to %+v", reload[0], c)
	}

	// The example file, as the unit would load it.
	s.CrontabFile = "contrib/ballot.crontab"
	jobs, err := loadCrontab(s)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range jobs {
		names = append(names, j.Name)
	}
	if want := a("backup", "report", "rotate-logs", "sync-inventory", "cleanup-tmp"); !slices.Equal(names, want) {
		t.Errorf("contrib/ballot.crontab's jobs are %q, want %q", names, want)
	}

	if _, err := exec.LookPath("systemd-analyze"); err == nil {
		dir := t.TempDir()
		data, err := os.ReadFile("contrib/ballot-crontab.service")
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(data), "/usr/bin/ballot", ballotBin)
		if err := os.WriteFile(filepath.Join(dir, "ballot-crontab.service"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("systemd-analyze", "verify", "--man=no", "./ballot-crontab.service")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	}
}

// TestContribInitScript: init.d/ballot starts a real ballot that runs the
// command of NAME.env, reports it running, and stops it gracefully: the
// command gets SIGTERM from ballot, and ballot is gone when stop returns.
func TestContribInitScript(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	dir := t.TempDir()
	trap := filepath.Join(dir, "signals")
	svcEnv := "# as an operator would write it\n" +
		"BALLOT_ZOOKEEPER_SERVERS=" + c.ConnString() + "\n" +
		"BALLOT_ZOOKEEPER_SESSION_TIMEOUT=2s\n" +
		"BALLOT_STOP_GRACE_PERIOD=5s\n" +
		"COMMAND=\"" + selfExe() + " " + trap + "\"\n"
	if err := os.WriteFile(filepath.Join(dir, "svc.env"), []byte(svcEnv), 0o644); err != nil {
		t.Fatal(err)
	}
	checkEnvFile(t, filepath.Join(dir, "svc.env"))
	pidfile, logfile := filepath.Join(dir, "ballot-svc.pid"), filepath.Join(dir, "log")
	script, err := filepath.Abs("contrib/init.d/ballot")
	if err != nil {
		t.Fatal(err)
	}
	run := func(action string) (string, int) {
		cmd := exec.Command("sh", script, action)
		cmd.Env = ballotEnv(t, "NAME=svc", "BALLOT="+ballotBin, "ENVDIR="+dir, "PIDFILE="+pidfile, "LOG="+logfile,
			"BALLOT_TEST_CHILD=trap")
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	logOnFailure := func() {
		if t.Failed() {
			data, _ := os.ReadFile(logfile)
			t.Logf("ballot's log:\n%s", data)
		}
	}
	defer logOnFailure()

	if out, code := run("start"); code != 0 {
		t.Fatalf("start: exit %d: %s", code, out)
	}
	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(string(data), &pid); err != nil {
		t.Fatalf("pid file %q: %v", data, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })

	// The command runs once this candidate leads: a new election's first
	// leader waits 3/4 T (1.5 s) first; 15 T bounds the wait for the event.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, _ := os.ReadFile(trap); strings.HasPrefix(string(b), "ready\n") {
			break
		}
		if time.Now().After(deadline) || !processAlive(pid) {
			t.Fatalf("the command did not start (ballot alive: %v)", processAlive(pid))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if out, code := run("status"); code != 0 || !strings.Contains(out, "is running") {
		t.Errorf("status: exit %d: %s", code, out)
	}

	if out, code := run("stop"); code != 0 {
		t.Errorf("stop: exit %d: %s", code, out)
	}
	if processAlive(pid) {
		t.Errorf("ballot %d still runs after stop", pid)
	}
	if b, _ := os.ReadFile(trap); string(b) != "ready\nterminated\n" {
		t.Errorf("the command's signals: %q, want one SIGTERM (from ballot)", b)
	}
	if _, err := os.Stat(pidfile); err == nil {
		t.Errorf("stop left the pid file")
	}
	if out, code := run("status"); code != 3 {
		t.Errorf("status after stop: exit %d, want 3: %s", code, out)
	}
	if b, _ := os.ReadFile(logfile); !strings.Contains(string(b), "command started") {
		t.Errorf("ballot's log lacks the command's start")
	}
}

// TestGettingStarted runs README's "Getting started": scripts/zk.sh on a
// free port, then each ./ballot line of the block, and stops the server.
func TestGettingStarted(t *testing.T) {
	t.Parallel()
	_, block, _ := strings.Cut(section(t, readme(t), "### Getting started"), "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if strings.HasPrefix(l, "./ballot ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 4 || !strings.HasPrefix(block, "scripts/zk.sh 2181 &") {
		t.Fatalf("README's Getting started block changed; update this test:\n%s", block)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()

	tmp := t.TempDir()
	zk := exec.Command("bash", "scripts/zk.sh", port)
	zk.Env = append(os.Environ(), "TMPDIR="+tmp)
	stderr := &syncBuffer{}
	zk.Stdout, zk.Stderr = stderr, stderr
	if err := zk.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	done := make(chan struct{})
	go func() { waitErr = zk.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = zk.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = zk.Process.Kill()
		}
	})
	// A JVM's start on a busy 2-core machine: bounded, not timed.
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(stderr.String(), "ZooKeeper serving on 127.0.0.1:"+port) {
		select {
		case <-done:
			t.Fatalf("scripts/zk.sh %s exited: %v\n%s", port, waitErr, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("scripts/zk.sh %s: not serving:\n%s", port, stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}

	t.Logf("zk.sh serving after %v", time.Since(deadline.Add(-90*time.Second)).Round(time.Millisecond))
	// Another on the same port is refused with one line.
	busy := exec.Command("bash", "scripts/zk.sh", port)
	if out, err := busy.CombinedOutput(); busy.ProcessState.ExitCode() != 2 || strings.Count(string(out), "\n") != 1 {
		t.Errorf("scripts/zk.sh on a busy port: %v, %q; want exit 2 and one line", err, out)
	}

	wantCode := []int{0, 0, 0, 1} // info: no leader any more
	for i, line := range lines {
		args := strings.Fields(strings.ReplaceAll(line, "127.0.0.1:2181", "127.0.0.1:"+port))[1:]
		cmd := exec.Command(ballotBin, args...)
		cmd.Env = ballotEnv(t)
		cmd.Dir = tmp
		start := time.Now()
		out, _ := cmd.CombinedOutput()
		t.Logf("%s: %v", line, time.Since(start).Round(time.Millisecond))
		if code := cmd.ProcessState.ExitCode(); code != wantCode[i] {
			t.Errorf("%s: exit %d, want %d:\n%s", line, code, wantCode[i], out)
		}
		switch i {
		case 0:
			if !strings.Contains(string(out), "hello stream=stdout") {
				t.Errorf("%s: the command did not run:\n%s", line, out)
			}
		case 1:
			if strings.Contains(string(out), "command started") {
				t.Errorf("%s: ran the command of a recorded key:\n%s", line, out)
			}
		case 2:
			if !strings.Contains(string(out), "once first-try") {
				t.Errorf("%s: the history lacks the run:\n%s", line, out)
			}
		}
	}

	if err := zk.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	stopAt := time.Now()
	defer func() { t.Logf("zk.sh stopped after %v", time.Since(stopAt).Round(time.Millisecond)) }()
	select {
	case <-done:
		if waitErr != nil {
			t.Errorf("scripts/zk.sh after SIGTERM: %v", waitErr)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("scripts/zk.sh did not stop on SIGTERM:\n%s", stderr)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("scripts/zk.sh left %v in its TMPDIR", entries)
	}
	if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
		c.Close()
		t.Errorf("127.0.0.1:%s still answers after scripts/zk.sh stopped", port)
	}
}
