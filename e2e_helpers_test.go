package main

// End-to-end helpers: the real ballot binary, built once per test run, run
// against real ZooKeeper servers from zk_harness_test.go. The test binary
// doubles as the command ballot supervises (see testChildMain), so children
// need no shell and record exactly what the tests check.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"ballot/internal/keeper"
)

var ballotBin string // path of the built binary

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == keeper.Arg && os.Getenv("BALLOT_TEST_KEEPER") != "" {
		// The keeper of a child started by a helper that plays ballot
		// (startChild runs its own executable): sharedKeepersMain.
		os.Exit(keeperMain(os.Args[2:]))
	}
	if mode := os.Getenv("BALLOT_TEST_CHILD"); mode != "" {
		os.Exit(testChildMain(mode, os.Args[1:]))
	}
	dir, err := os.MkdirTemp("", "ballot-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ballotBin = filepath.Join(dir, "ballot")
	args := []string{"build", "-o", ballotBin}
	if raceEnabled && os.Getenv("BALLOT_E2E_NORACE") == "" {
		// The real binary is built with the race detector too: its
		// goroutines are what the end-to-end tests exercise.
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot build ballot:", err)
		os.Exit(1)
	}
	code := m.Run()
	stopSharedZK()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testChildMain is the supervised command in end-to-end tests.
//
//	tick FILE [grandchild]  append "token pid unixnano" every 2ms until killed;
//	                        with grandchild, also start a setsid'ed grandchild
//	                        that ticks into the same file
//	slowstop FILE DURATION  tick; on SIGTERM go on ticking for DURATION, then exit 0
//	stubborn FILE           tick like tick, ignoring SIGTERM, SIGINT and SIGHUP (as
//	                        many daemons do): only SIGKILL ends it
//	exit CODE DELAY         tick into $TICK_FILE (if set) for DELAY, then exit CODE
//	quitfile FILE           tick into $TICK_FILE until FILE exists, then exit 0
//	trap FILE               write each signal received to FILE, exit 0 on SIGTERM
//	echo                    print a line on stdout and one on stderr, exit 0
//	attempt FILE MARKER DURATION
//	                        append "scheduled-time attempt candidate unixnano" to
//	                        FILE, sleep DURATION, exit 1 if MARKER is "-" or is
//	                        missing (then create it), else 0
//	run FILE DURATION       append "scheduled-time token candidate" to FILE, tick
//	                        into $TICK_FILE for DURATION, exit 0
//	die SIGNAL              kill itself with SIGNAL (SIGKILL, SIGTERM, SIGINT, SIGHUP, SIGUSR1)
//	event FILE EVENT [DELAY [CODE]]
//	                        a hook: sleep DELAY, append "start end EVENT token
//	                        candidate reason role" (start/end in unixnano; reason
//	                        is $BALLOT_DEMOTE_REASON, role $BALLOT_ROLE, "-" if
//	                        unset) to FILE in one write, exit CODE
//	alarm-kill, alarm-cont  the boot-clock alarm's tests (alarmChildMain)
//	stopself                stop at once with SIGSTOP (as a keeper: one that
//	                        never reports)
func testChildMain(mode string, args []string) int {
	token := os.Getenv("BALLOT_FENCING_TOKEN")
	if os.Getenv("TICK_SLOT") != "" {
		token = os.Getenv("BALLOT_SLOT") + "/" + token // --slots tests: slot/token
	}
	tick := func(file string, stop <-chan struct{}) {
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		line := func() {
			fmt.Fprintf(f, "%s %d %d\n", token, os.Getpid(), time.Now().UnixNano())
		}
		line()
		t := time.NewTicker(2 * time.Millisecond)
		for {
			select {
			case <-t.C:
				line()
			case <-stop:
				return
			}
		}
	}
	switch mode {
	case "sharedkeepers":
		return sharedKeepersMain(args)
	case "tick":
		if len(args) > 1 && args[1] == "grandchild" {
			gc := exec.Command(os.Args[0], args[0])
			gc.Env = append(os.Environ(), "BALLOT_TEST_CHILD=tick")
			gc.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := gc.Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
			fmt.Printf("grandchild %d\n", gc.Process.Pid)
		}
		tick(args[0], nil)
	case "slowstop":
		// slowstop FILE DURATION: tick; on SIGTERM keep ticking for
		// DURATION (a daemon flushing its state), then exit 0.
		d, _ := time.ParseDuration(args[1])
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM)
		stop := make(chan struct{})
		go func() { <-sigs; time.Sleep(d); close(stop) }()
		tick(args[0], stop)
		return 0
	case "stubborn":
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		tick(args[0], nil)
	case "exit":
		code, _ := strconv.Atoi(args[0])
		d, _ := time.ParseDuration(args[1])
		stop := make(chan struct{})
		if f := os.Getenv("TICK_FILE"); f != "" {
			go tick(f, stop)
		}
		time.Sleep(d)
		close(stop)
		return code
	case "quitfile":
		stop := make(chan struct{})
		go tick(os.Getenv("TICK_FILE"), stop)
		for {
			if _, err := os.Stat(args[0]); err == nil {
				close(stop)
				return 0
			}
			time.Sleep(time.Millisecond)
		}
	case "trap":
		sigs := make(chan os.Signal, 8)
		signal.Notify(sigs, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGINT)
		f, _ := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		fmt.Fprintln(f, "ready")
		for s := range sigs {
			fmt.Fprintln(f, s.(syscall.Signal).String())
			if s == syscall.SIGTERM {
				return 0
			}
		}
	case "run":
		// run FILE DURATION: one line per scheduled run, ticking meanwhile;
		// deaf to SIGTERM with IGNORE_TERM set, as the stubborn command is
		if os.Getenv("IGNORE_TERM") != "" {
			signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		}
		f, _ := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		fmt.Fprintf(f, "%s %s %s\n", os.Getenv("BALLOT_SCHEDULED_TIME"), token, os.Getenv("BALLOT_CANDIDATE_ID"))
		f.Close()
		d, _ := time.ParseDuration(args[1])
		stop := make(chan struct{})
		if tf := os.Getenv("TICK_FILE"); tf != "" {
			go tick(tf, stop)
		}
		time.Sleep(d)
		close(stop)
	case "attempt":
		// attempt FILE MARKER DURATION: one line per attempt, then exit 1
		// if MARKER is "-" or does not exist yet (it is created), else 0
		f, _ := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		sched := os.Getenv("BALLOT_SCHEDULED_TIME")
		if sched == "" {
			sched = "-" // run once
		}
		fmt.Fprintf(f, "%s %s %s %d\n", sched, os.Getenv("BALLOT_ATTEMPT"), os.Getenv("BALLOT_CANDIDATE_ID"), time.Now().UnixNano())
		f.Close()
		d, _ := time.ParseDuration(args[2])
		time.Sleep(d)
		if args[1] == "-" {
			return 1
		}
		if _, err := os.Stat(args[1]); err != nil {
			_ = os.WriteFile(args[1], nil, 0o644)
			return 1
		}
	case "echo":
		fmt.Println("to stdout")
		fmt.Fprintln(os.Stderr, "to stderr")
	case "event":
		start := time.Now()
		var d time.Duration
		if len(args) > 2 {
			d, _ = time.ParseDuration(args[2])
		}
		code := 0
		if len(args) > 3 {
			code, _ = strconv.Atoi(args[3])
		}
		time.Sleep(d)
		orDash := func(name string) string {
			if v := os.Getenv(name); v != "" {
				return v
			}
			return "-"
		}
		f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		fmt.Fprintf(f, "%d %d %s %s %s %s %s\n", start.UnixNano(), time.Now().UnixNano(), args[1], orDash("BALLOT_FENCING_TOKEN"),
			orDash("BALLOT_CANDIDATE_ID"), orDash("BALLOT_DEMOTE_REASON"), orDash("BALLOT_ROLE"))
		f.Close()
		return code
	case "stopself":
		_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		return 3
	case "alarm-kill", "alarm-cont":
		return alarmChildMain(mode, args)
	case "die":
		sig := map[string]syscall.Signal{"SIGKILL": syscall.SIGKILL, "SIGTERM": syscall.SIGTERM,
			"SIGINT": syscall.SIGINT, "SIGHUP": syscall.SIGHUP, "SIGUSR1": syscall.SIGUSR1}[args[0]]
		if sig == 0 {
			fmt.Fprintln(os.Stderr, "die: unknown signal", args[0])
			return 3
		}
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
		time.Sleep(10 * time.Second)
		return 3
	}
	return 0
}

// ballotProc is one running ballot.
type ballotProc struct {
	t    testing.TB
	name string
	cmd  *exec.Cmd
	out  *syncBuffer // stdout and stderr together
	done chan struct{}
	code int
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ballotEnv is a hermetic environment: no config file, nothing inherited
// that ballot reads.
func ballotEnv(t testing.TB, extra ...string) []string {
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	// A race-enabled binary sleeps 1s before exiting by default; the keeper
	// is one, and that second would show up in every handover.
	env = append(env, "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	return append(env, extra...)
}

// startBallot runs ballot with args; the test child mode is passed through
// the environment (BALLOT_TEST_CHILD) so it reaches the command.
func startBallot(t testing.TB, name string, env []string, args ...string) *ballotProc {
	t.Helper()
	return startProc(t, name, exec.Command(ballotBin, args...), env)
}

// startProc starts cmd, a ballot (the benchmark's is another build), with
// env, its output in p.out, in a directory of its own unless cmd has one.
// It is killed at the test's end if still running, and its output logged
// if the test failed.
func startProc(t testing.TB, name string, cmd *exec.Cmd, env []string) *ballotProc {
	t.Helper()
	p := &ballotProc{t: t, name: name, cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = env
	if p.cmd.Dir == "" {
		p.cmd.Dir = t.TempDir()
	}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start ballot %s: %v", name, err)
	}
	go func() {
		err := p.cmd.Wait()
		p.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			p.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				p.code = 128 + int(ws.Signal())
			}
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
		}
		if t.Failed() {
			t.Logf("--- output of ballot %s (exit %d):\n%s", name, p.code, p.out.String())
		}
	})
	return p
}

func (p *ballotProc) Signal(sig syscall.Signal) { _ = p.cmd.Process.Signal(sig) }
func (p *ballotProc) Pid() int                  { return p.cmd.Process.Pid }

func (p *ballotProc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits for ballot to exit and returns its exit code.
func (p *ballotProc) Wait(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(timeout):
		p.t.Fatalf("ballot %s did not exit within %s", p.name, timeout)
		return -1
	}
}

// WaitLog waits until ballot's output contains s: for words an operator
// reads (watch's output, the command's own lines). A state change is
// waited for by its event, WaitEvent (e2e_events_test.go).
func (p *ballotProc) WaitLog(s string, timeout time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.out.String(), s) {
		if time.Now().After(deadline) {
			p.t.Fatalf("ballot %s did not log %q within %s", p.name, s, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *ballotProc) Logged(s string) bool { return strings.Contains(p.out.String(), s) }

// runArgs is the usual command line of a candidate in the tests.
func runArgs(zk []string, base, id string, extra ...string) []string {
	args := []string{"--zookeeper-servers", strings.Join(zk, ","), "--zookeeper-base-path", base,
		"--zookeeper-session-timeout", "2s", "run", "once", "--candidate-id", id}
	return append(args, extra...)
}

// selfExe is the test binary, which is the command in end-to-end tests:
// ballotEnv(t, "BALLOT_TEST_CHILD=tick") and "--", selfExe(), file.
func selfExe() string {
	self, _ := os.Executable()
	return self
}

// tenure is one leadership's run as seen in the tick file: every process
// that ticked with one fencing token.
type tenure struct {
	token       string
	pids        map[string]bool
	first, last time.Time
	ticks       int
}

// fileLines is a file's complete lines, nil if it does not exist. A last
// line without its newline is still being written by another process (a
// write that crosses a page boundary can be read half done: "3691 485
// 17956" parses as a tick in 1970) and is left for the next read.
func fileLines(t testing.TB, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil
	}
	return strings.Split(string(data[:end]), "\n")
}

// readTenures parses a tick file into tenures ordered by their first tick.
func readTenures(t testing.TB, file string) []*tenure {
	t.Helper()
	by := map[string]*tenure{}
	for _, l := range fileLines(t, file) {
		fs := strings.Fields(l)
		if len(fs) != 3 {
			continue // a line cut by SIGKILL
		}
		ns, err := strconv.ParseInt(fs[2], 10, 64)
		if err != nil {
			continue
		}
		ts := time.Unix(0, ns)
		tn := by[fs[0]]
		if tn == nil {
			tn = &tenure{token: fs[0], pids: map[string]bool{}, first: ts}
			by[fs[0]] = tn
		}
		tn.pids[fs[1]] = true
		if ts.Before(tn.first) {
			tn.first = ts
		}
		if ts.After(tn.last) {
			tn.last = ts
		}
		tn.ticks++
	}
	out := make([]*tenure, 0, len(by))
	for _, tn := range by {
		out = append(out, tn)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].first.Before(out[j].first) })
	return out
}

// checkNoOverlap fails the test if two tenures ran at once, and returns the
// gaps between consecutive tenures (the failover times).
func checkNoOverlap(t testing.TB, file string) []time.Duration {
	t.Helper()
	ts := readTenures(t, file)
	var gaps []time.Duration
	for i := 1; i < len(ts); i++ {
		gap := ts[i].first.Sub(ts[i-1].last)
		if gap <= 0 {
			t.Errorf("two leaders at once: token %s ran until %s, token %s started at %s (overlap %s)",
				ts[i-1].token, ts[i-1].last.Format("15:04:05.000000"), ts[i].token,
				ts[i].first.Format("15:04:05.000000"), -gap)
		}
		gaps = append(gaps, gap)
	}
	return gaps
}

// waitTicks waits until the tick file holds at least n tenures, the last
// of which has ticked at least ticks times.
func waitTenures(t testing.TB, file string, n int, timeout time.Duration) []*tenure {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ts := readTenures(t, file)
		if len(ts) >= n && ts[len(ts)-1].ticks >= 5 {
			return ts
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %d tenures in %s, have %d", timeout, n, file, len(ts))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ticking reports whether the file grew during d.
func ticking(file string, d time.Duration) bool {
	a, _ := os.Stat(file)
	time.Sleep(d)
	b, _ := os.Stat(file)
	if a == nil || b == nil {
		return b != nil
	}
	return b.Size() > a.Size()
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	f := procStat(pid)
	return len(f) > 0 && f[0] != "Z"
}

// procStat is the fields of /proc/PID/stat after the command name, which
// may hold spaces and parentheses: state, ppid, …; nil if pid is gone.
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}
