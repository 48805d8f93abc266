//go:build bench

package main

// The benchmark (issue 6). Run it with
//
//	make bench      # go test -tags bench -run '^TestBench' -count=1 -v -timeout 45m .
//
// It takes about 22 minutes on 2 cores (the herd 3–4, the steady section
// 5, the write load 2–3, the soak 3, the history's cost 1, the faults
// against their bounds 5; the random-fault run is opt-in). It runs `make cross` and measures,
// against a real 3-member ZooKeeper ensemble on loopback (tickTime 200 ms,
// forceSync on), the stripped static binary built for this machine. It
// writes BENCHMARKS.md (or $BENCH_OUT): only the part between the
// bench:begin and bench:end markers, so what is written by hand around it
// stays. It asserts nothing about timings: a figure that misses its target
// is reported as such; the test fails only when the benchmark itself
// cannot run. Sections can be run alone (-run '^TestBench$/handover'), and
// BENCH_BALLOT=/path/to/ballot measures another build (a prototype)
// without the cross build; either way the report is printed, not written.
//
// The supervised command is a small static checker the benchmark builds
// (bench_checker_test.go; BENCH_CHECKER=test-binary: this test binary, as
// before), in a mode chosen by the environment variable BALLOT_BENCH_CHILD
// (for the test binary, dispatched from an init function, before
// TestMain): its first act is to read the clock.
//
//	stamp FILE HOLD   append "START cand token pid unixnano" to FILE; then,
//	                  HOLD a duration: sleep HOLD, append "EXIT …", exit 0;
//	                  HOLD "wait": wait for SIGUSR1 (append "EXIT …") or
//	                  SIGTERM/SIGINT (append "TERM …"), exit 0.
//
// This file has the entry point and the candidates; the scenarios are in
// bench_scenarios_test.go and, from 5 on, a file each; what they read off
// ZooKeeper, /proc and ballot's logs in bench_probes_test.go, and the
// report in bench_report_test.go.
// The candidates are ballotProcs, as in the end-to-end tests.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/zookeeper"
)

func init() {
	switch os.Getenv("BALLOT_BENCH_CHILD") {
	case "stamp":
		now := time.Now() // the command's first instruction, for the benchmark
		os.Exit(benchStampChild(now, os.Args[1:]))
	case "tick":
		os.Exit(benchTickChild(os.Args[1:]))
	case "stubborn": // tick, deaf to SIGTERM, as many daemons are
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		os.Exit(benchTickChild(os.Args[1:]))
	}
}

// benchTickChild appends "TICK cand token pid unixnano" to FILE every
// EVERY until killed (SIGTERM ends it at once): a long-running command
// whose ticks show when it ran and when it was restarted.
func benchTickChild(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tick FILE EVERY")
		return 3
	}
	f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	every, err := time.ParseDuration(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	id, token := os.Getenv("BALLOT_CANDIDATE_ID"), os.Getenv("BALLOT_FENCING_TOKEN")
	for {
		_, _ = f.Write([]byte(fmt.Sprintf("TICK %s %s %d %d\n", id, token, os.Getpid(), time.Now().UnixNano())))
		time.Sleep(every)
	}
}

func benchStampChild(start time.Time, args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: stamp FILE HOLD|wait")
		return 3
	}
	f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	id, token := os.Getenv("BALLOT_CANDIDATE_ID"), os.Getenv("BALLOT_FENCING_TOKEN")
	if id == "" {
		id = "-"
	}
	if token == "" {
		token = "0"
	}
	stamp := func(kind string, t time.Time) {
		// one write(2) on an O_APPEND file: lines never interleave
		_, _ = f.Write([]byte(fmt.Sprintf("%s %s %s %d %d\n", kind, id, token, os.Getpid(), t.UnixNano())))
	}
	stamp("START", start)
	if args[1] == "wait" {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGTERM, syscall.SIGINT)
		if s := <-sigs; s == syscall.SIGUSR1 {
			stamp("EXIT", time.Now())
		} else {
			stamp("TERM", time.Now())
		}
		return 0
	}
	hold, err := time.ParseDuration(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	time.Sleep(hold)
	stamp("EXIT", time.Now())
	return 0
}

// ---------------------------------------------------------------------------
// stamps

type benchStamp struct {
	kind, cand string
	token      int64
	pid        int
	t          time.Time
}

func benchReadStamps(file string) []benchStamp {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var out []benchStamp
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) != 5 {
			continue
		}
		tok, _ := strconv.ParseInt(f[2], 10, 64)
		pid, _ := strconv.Atoi(f[3])
		ns, err := strconv.ParseInt(f[4], 10, 64)
		if err != nil {
			continue
		}
		out = append(out, benchStamp{kind: f[0], cand: f[1], token: tok, pid: pid, t: time.Unix(0, ns)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].t.Before(out[j].t) })
	return out
}

// benchStarts returns the START stamps.
func benchStarts(ss []benchStamp) []benchStamp {
	var out []benchStamp
	for _, s := range ss {
		if s.kind == "START" {
			out = append(out, s)
		}
	}
	return out
}

// ---------------------------------------------------------------------------

func TestBench(t *testing.T) {
	t0 := time.Now()
	load0 := benchLoadavg()
	dir := t.TempDir()
	rep := &benchReport{sections: map[string]string{}}

	bin, bins, version := benchBinary(t, dir)

	b := &benchEnv{dir: dir, bin: bin, home: filepath.Join(dir, "home"), version: version, checker: benchChecker(t, dir)}
	if err := os.MkdirAll(b.home, 0o755); err != nil {
		t.Fatal(err)
	}
	// maxSessionTimeout: ballot's default session timeout (5 s) is kept, as
	// on an ensemble with the usual tickTime of 2 s.
	b.zk = startZKWith(t, zkOptions{N: 3, TickTime: 200 * time.Millisecond, Fsync: true,
		ExtraConfig: []string{"maxSessionTimeout=20000"}})
	b.conn = zkConnect(t, b.zk.Servers(), 10*time.Second)
	zkVersion := benchZKVersion(b.zk)

	if bins != nil {
		t.Run("binaries", func(t *testing.T) { rep.set("binaries", benchBinaries(t, bins, version)) })
	}
	t.Run("handover", func(t *testing.T) { rep.set("handover", benchHandover(t, b).section()) })
	t.Run("sigterm", func(t *testing.T) { rep.set("sigterm", benchSigtermSection(benchSigterm(t, b))) })
	t.Run("crash", func(t *testing.T) { rep.set("crash", benchCrash(t, b).section()) })
	t.Run("cold", func(t *testing.T) { rep.set("cold", benchCold(t, b).section()) })
	t.Run("herd", func(t *testing.T) { rep.set("herd", benchHerdSection(benchHerd(t, b))) })
	t.Run("steady", func(t *testing.T) { rep.set("steady", benchSteady(t, b).section()) })
	t.Run("writes", func(t *testing.T) { rep.set("writes", benchLoad(t, b).section()) })
	t.Run("rest", func(t *testing.T) { rep.set("rest", benchRest(t, b).section()) })
	t.Run("history", func(t *testing.T) { rep.set("history", benchHistorySection(benchHistory(t, b))) })
	t.Run("prefs", func(t *testing.T) { rep.set("prefs", benchPrefsSection(benchPreempt(t, b), benchSlots(t, b))) })
	t.Run("cron", func(t *testing.T) { rep.set("cron", benchCron(t, b).section()) })
	t.Run("footprint", func(t *testing.T) {
		s := benchFootprint(t, b).section()
		t.Logf("footprint:\n%s", s)
		rep.set("footprint", s)
	})
	t.Run("soak", func(t *testing.T) { rep.set("soak", benchSoak(t, b).section()) })
	t.Run("bounds", func(t *testing.T) { rep.set("bounds", benchBounds(t, b)) })
	t.Run("random", func(t *testing.T) { rep.set("random", benchRandomFaults(t, b)) })
	t.Run("crontab", func(t *testing.T) { rep.set("crontab", benchCrontabSection(benchCrontab(t, b))) })
	t.Run("trigger", func(t *testing.T) {
		s := benchTrigger(t, b, 20).section()
		t.Logf("trigger:\n%s", s)
		rep.set("trigger", s)
	})

	var md strings.Builder
	md.WriteString(benchHeader(version, zkVersion, time.Since(t0), load0))
	complete := true
	for _, s := range benchOrder {
		if txt, ok := rep.sections[s]; ok {
			md.WriteString(txt)
		} else {
			complete = false
		}
	}
	if !complete || t.Failed() {
		t.Logf("not every section ran: report not written\n%s", md.String())
		return
	}
	outPath := os.Getenv("BENCH_OUT")
	if outPath == "" {
		outPath = "BENCHMARKS.md"
	}
	if err := benchWriteReport(outPath, md.String()); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s\n%s", outPath, md.String())
}

// ---------------------------------------------------------------------------
// the candidates

type benchEnv struct {
	dir     string
	bin     string // the ballot binary under test
	zk      *zkCluster
	conn    *zk.Conn // the benchmark's own client: seeds the elections
	home    string
	version string
	checker string // the command every candidate runs (bench_checker_test.go)
}

// env is the candidates' environment; the command runs as the child mode
// (stamp or tick).
func (b *benchEnv) env(child string, extra ...string) []string {
	env := []string{"HOME=" + b.home, "PATH=" + os.Getenv("PATH"), "BALLOT_BENCH_CHILD=" + child}
	return append(env, extra...)
}

// seed makes base an election that has had a leader before, as the tests'
// seedElection does: the path exists and the handover record says the
// baton was given back. Without it the first leader of a brand-new
// election waits W for a baton nobody recorded (it cannot tell a new
// election from one deleted under a running leader), which only the cold
// start's "brand-new election" row measures.
func (b *benchEnv) seed(t *testing.T, base string) {
	t.Helper()
	rec, _ := json.Marshal(handoverRecord{State: handoverReleased, CandidateID: "bench-seed", SessionTimeoutMs: 2000, At: time.Now().UTC()})
	var err error
	// The benchmark's own client rides out the ensemble's hiccups (a
	// member dropped under load, a ZooKeeper election) as ballot does:
	// a request lost with the connection is tried again.
	for try := 0; try < 20; try++ {
		if err = zookeeper.CreateParents(b.conn, base, zk.WorldACL(zk.PermAll)); err == nil {
			_, err = b.conn.Create(handoverPath(base), rec, 0, zk.WorldACL(zk.PermAll))
			if err == nil || errors.Is(err, zk.ErrNodeExists) {
				return
			}
		}
		if !zookeeper.Retryable(err) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("seed %s: %v", base, err)
}

// benchElection is a set of candidates on one election path whose commands
// stamp into one file.
type benchElection struct {
	t      *testing.T // the scenario's
	b      *benchEnv
	name   string
	base   string
	stamps string
	flags  []string // global + run flags before "--", but the servers
	hold   string
	child  string // the command's mode: stamp (FILE HOLD) or tick (FILE EVERY)
	// perCand, if set, gives a candidate its own ZooKeeper servers (nil:
	// the ensemble's) and extra flags.
	perCand func(id string) (servers []string, flags []string)
	mode    []string                 // nil: run once; else, say, run cron --schedule S
	current map[string]*ballotProc   // the running incarnation of each candidate
	runs    map[string][]*ballotProc // every incarnation, for the logs
}

// election is a seeded election (see seed) named name.
func (b *benchEnv) election(t *testing.T, name, sessionTimeout, hold string, runFlags ...string) *benchElection {
	e := b.freshElection(t, name, sessionTimeout, hold, runFlags...)
	b.seed(t, e.base)
	return e
}

// freshElection is an election whose path does not exist yet.
func (b *benchEnv) freshElection(t *testing.T, name, sessionTimeout, hold string, runFlags ...string) *benchElection {
	dir := filepath.Join(b.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e := &benchElection{t: t, b: b, name: name, base: "/bench/" + name, stamps: filepath.Join(dir, "stamps"),
		hold: hold, child: "stamp", current: map[string]*ballotProc{}, runs: map[string][]*ballotProc{}}
	e.flags = []string{"--zookeeper-base-path", e.base, "--log-format", "json"}
	if sessionTimeout != "" {
		e.flags = append(e.flags, "--zookeeper-session-timeout", sessionTimeout)
	}
	e.flags = append(e.flags, runFlags...)
	return e
}

// add starts (or restarts) candidate id: the binary under test, in the
// shared home, killed should the benchmark die.
func (e *benchElection) add(id string) *ballotProc {
	e.t.Helper()
	servers, extra := e.b.zk.Servers(), []string(nil)
	if e.perCand != nil {
		var own []string
		if own, extra = e.perCand(id); own != nil {
			servers = own
		}
	}
	mode := e.mode
	if mode == nil {
		mode = []string{"run", "once"}
	}
	args := append([]string{"--zookeeper-servers", strings.Join(servers, ",")}, mode...)
	args = append(args, "--candidate-id", id)
	args = append(append(args, e.flags...), extra...)
	args = append(args, "--", e.b.checker, e.stamps, e.hold)
	cmd := exec.Command(e.b.bin, args...)
	cmd.Dir = e.b.home
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := startProc(e.t, id, cmd, e.b.env(e.child))
	e.current[id] = p
	e.runs[id] = append(e.runs[id], p)
	return p
}

// waitStarts waits until the stamp file holds at least n START stamps and
// returns them.
func (e *benchElection) waitStarts(n int, timeout time.Duration) []benchStamp {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st := benchStarts(benchReadStamps(e.stamps))
		if len(st) >= n {
			return st
		}
		if time.Now().After(deadline) {
			var logs []string
			for id, p := range e.current {
				logs = append(logs, fmt.Sprintf("--- %s:\n%s", id, benchTail(p.out.String(), 15)))
			}
			sort.Strings(logs)
			e.t.Fatalf("%s: waited %s for %d command starts, have %d\n%s", e.name, timeout, n, len(st), strings.Join(logs, "\n"))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// leader returns the candidate whose command started last, and that START.
func (e *benchElection) leader() (string, benchStamp) {
	st := benchStarts(benchReadStamps(e.stamps))
	if len(st) == 0 {
		return "", benchStamp{}
	}
	l := st[len(st)-1]
	return l.cand, l
}

func (e *benchElection) stopAll() {
	for _, p := range e.current {
		p.Signal(syscall.SIGTERM)
	}
	for _, p := range e.current {
		p.Wait(30 * time.Second)
	}
}

// benchTail is the last n lines of a log.
func benchTail(log string, n int) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// benchBinary: the binaries of `make cross`, exactly as shipped, and the one
// for this machine, which is the one measured (copied into dir, so a
// concurrent build cannot change it under the benchmark), with its
// version. BENCH_BALLOT=/path measures another binary (a prototype)
// instead, without the cross build (bins is nil): the report is then
// printed, not written.
func benchBinary(t *testing.T, dir string) (bin string, bins []string, version string) {
	bin = filepath.Join(dir, "ballot")
	src := os.Getenv("BENCH_BALLOT")
	if src == "" {
		t.Log("make cross …")
		out, err := exec.Command("make", "cross").CombinedOutput()
		if err != nil {
			t.Fatalf("make cross: %v\n%s", err, out)
		}
		bins, _ = filepath.Glob("dist/ballot-linux-*")
		sort.Strings(bins)
		hostName := map[string]string{"amd64": "amd64", "arm64": "arm64", "386": "386", "riscv64": "riscv64", "arm": "armv7"}[runtime.GOARCH]
		src = "dist/ballot-linux-" + hostName
	}
	// Copied as an install copies it (tar, dpkg and install(1) write in
	// pieces; io.Copy between files is cp's copy_file_range), not in one
	// write: a 6.5 MB file written at once sits in the page cache in large
	// folios, which this kernel (6.18) maps whole around any touched page,
	// and a host then counted ~1.6 MB more of the binary than any install
	// gives it (BENCHMARKS.md, section 18).
	if err := copyBinary(src, bin); err != nil {
		t.Fatalf("no ballot binary for this machine (%s): %v", runtime.GOARCH, err)
	}
	vout, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("ballot version: %v", err)
	}
	version = strings.TrimSpace(string(vout))
	t.Logf("measuring %s", version)
	return bin, bins, version
}

// copyBinary copies the file src to dst, executable, as cp does.
func copyBinary(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
