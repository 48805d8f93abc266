//go:build bench

package main

// The benchmark (issue 6). Run it with
//
//	make bench      # go test -tags bench -run '^TestBench' -count=1 -v -timeout 30m .
//
// It takes 3 to 5 minutes on 2 cores. It runs `make cross` and measures,
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
// The supervised command is this test binary, in a mode chosen by the
// environment variable BALLOT_BENCH_CHILD and dispatched from an init
// function, before TestMain: its first act is to read the clock.
//
//	stamp FILE HOLD   append "START cand token pid unixnano" to FILE; then,
//	                  HOLD a duration: sleep HOLD, append "EXIT …", exit 0;
//	                  HOLD "wait": wait for SIGUSR1 (append "EXIT …") or
//	                  SIGTERM/SIGINT (append "TERM …"), exit 0.

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func init() {
	if os.Getenv("BALLOT_BENCH_CHILD") == "stamp" {
		now := time.Now() // the command's first instruction, for the benchmark
		os.Exit(benchStampChild(now, os.Args[1:]))
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
// statistics

type benchDist struct {
	n                  int
	min, med, p99, max time.Duration
}

// benchSummarize: nearest-rank percentiles.
func benchSummarize(ds []time.Duration) benchDist {
	if len(ds) == 0 {
		return benchDist{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := func(p float64) time.Duration {
		k := int(p*float64(len(s))+0.999999) - 1
		if k < 0 {
			k = 0
		}
		if k >= len(s) {
			k = len(s) - 1
		}
		return s[k]
	}
	return benchDist{n: len(s), min: s[0], med: rank(0.5), p99: rank(0.99), max: s[len(s)-1]}
}

func benchMs(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.2f ms", ms)
}

func (d benchDist) row(name string) string {
	return fmt.Sprintf("| %s | %d | %s | %s | %s | %s |", name, d.n, benchMs(d.min), benchMs(d.med), benchMs(d.p99), benchMs(d.max))
}

func benchVerdict(ok bool) string {
	if ok {
		return "target met"
	}
	return "**target missed**"
}

// ---------------------------------------------------------------------------
// processes

type benchEnv struct {
	t       *testing.T
	dir     string
	bin     string // the ballot binary under test
	zk      *zkCluster
	home    string
	version string
}

type benchProc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	code int
}

func (b *benchEnv) env(extra ...string) []string {
	env := []string{"HOME=" + b.home, "PATH=" + os.Getenv("PATH"), "BALLOT_BENCH_CHILD=stamp"}
	return append(env, extra...)
}

// start runs ballot with args, its output (stdout and stderr) in logPath.
func (b *benchEnv) start(name, logPath string, args ...string) *benchProc {
	b.t.Helper()
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		b.t.Fatal(err)
	}
	defer f.Close()
	p := &benchProc{name: name, log: logPath, done: make(chan struct{})}
	p.cmd = exec.Command(b.bin, args...)
	p.cmd.Env = b.env()
	p.cmd.Dir = b.home
	p.cmd.Stdout, p.cmd.Stderr = f, f
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		b.t.Fatalf("start ballot %s: %v", name, err)
	}
	go func() {
		err := p.cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			p.code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				p.code = 128 + int(ws.Signal())
			}
		}
		close(p.done)
	}()
	b.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
		}
	})
	return p
}

func (p *benchProc) pid() int { return p.cmd.Process.Pid }

func (p *benchProc) signal(s syscall.Signal) { _ = p.cmd.Process.Signal(s) }

func (p *benchProc) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(timeout):
		t.Fatalf("ballot %s did not exit within %s; log:\n%s", p.name, timeout, benchTail(p.log, 30))
		return -1
	}
}

func (p *benchProc) output() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

func (p *benchProc) count(s string) int { return strings.Count(p.output(), s) }

// waitCount waits until the log holds at least n occurrences of s.
func (p *benchProc) waitCount(t *testing.T, s string, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for p.count(s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("ballot %s did not log %q %d times within %s; log:\n%s", p.name, s, n, timeout, benchTail(p.log, 30))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func benchTail(file string, n int) string {
	b, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// benchElection is a set of candidates on one election path whose commands
// stamp into one file.
type benchElection struct {
	b       *benchEnv
	name    string
	base    string
	stamps  string
	logs    string
	flags   []string // global + run flags before "--"
	hold    string
	current map[string]*benchProc // the running incarnation of each candidate
	runs    map[string]int
}

func (b *benchEnv) election(name, sessionTimeout, hold string, runFlags ...string) *benchElection {
	dir := filepath.Join(b.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	e := &benchElection{b: b, name: name, base: "/bench/" + name, stamps: filepath.Join(dir, "stamps"),
		logs: dir, hold: hold, current: map[string]*benchProc{}, runs: map[string]int{}}
	e.flags = []string{"--zookeeper-servers", b.zk.ConnString(), "--zookeeper-base-path", e.base, "--log-format", "json"}
	if sessionTimeout != "" {
		e.flags = append(e.flags, "--zookeeper-session-timeout", sessionTimeout)
	}
	e.flags = append(e.flags, runFlags...)
	return e
}

// add starts (or restarts) candidate id.
func (e *benchElection) add(id string) *benchProc {
	e.b.t.Helper()
	e.runs[id]++
	args := append([]string{"run", "once", "--candidate-id", id}, e.flags...)
	args = append(args, "--", selfExe(), e.stamps, e.hold)
	p := e.b.start(id, filepath.Join(e.logs, fmt.Sprintf("%s.%d.log", id, e.runs[id])), args...)
	e.current[id] = p
	return p
}

// waitStarts waits until the stamp file holds at least n START stamps and
// returns them.
func (e *benchElection) waitStarts(t *testing.T, n int, timeout time.Duration) []benchStamp {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st := benchStarts(benchReadStamps(e.stamps))
		if len(st) >= n {
			return st
		}
		if time.Now().After(deadline) {
			var logs []string
			for id, p := range e.current {
				logs = append(logs, fmt.Sprintf("--- %s:\n%s", id, benchTail(p.log, 15)))
			}
			sort.Strings(logs)
			t.Fatalf("%s: waited %s for %d command starts, have %d\n%s", e.name, timeout, n, len(st), strings.Join(logs, "\n"))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (e *benchElection) stopAll(t *testing.T) {
	for _, p := range e.current {
		p.signal(syscall.SIGTERM)
	}
	for _, p := range e.current {
		p.wait(t, 30*time.Second)
	}
}

// ---------------------------------------------------------------------------
// ZooKeeper counters

var (
	benchSidRe    = regexp.MustCompile(`sid=(0x[0-9a-f]+)`)
	benchRecvdRe  = regexp.MustCompile(`recved=(\d+)`)
	benchLcxidRe  = regexp.MustCompile(`lcxid=(0x[0-9a-f]+)`)
	benchSessLog  = regexp.MustCompile(`"msg":"ZooKeeper session established","session":"(0x[0-9a-f]+)"`)
	benchZxidLine = regexp.MustCompile(`(?m)^Zxid: (0x[0-9a-f]+)`)
)

type benchConn struct{ recved, lcxid int64 }

// cons returns, per session id, the packets received and the last client
// request id (lcxid: go-zookeeper numbers each request 1, 2, 3…; pings do
// not count) over every member.
func benchCons(c *zkCluster) map[string]benchConn {
	out := map[string]benchConn{}
	for _, addr := range c.Servers() {
		s, err := zkFourLetterWord(addr, "cons", 2*time.Second)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(s, "\n") {
			sid := benchSidRe.FindStringSubmatch(l)
			if sid == nil {
				continue
			}
			var bc benchConn
			if m := benchRecvdRe.FindStringSubmatch(l); m != nil {
				bc.recved, _ = strconv.ParseInt(m[1], 10, 64)
			}
			if m := benchLcxidRe.FindStringSubmatch(l); m != nil {
				v, _ := strconv.ParseUint(strings.TrimPrefix(m[1], "0x"), 16, 64)
				bc.lcxid = int64(v)
				if v == 0xffffffffffffffff {
					bc.lcxid = 0
				}
			}
			out[sid[1]] = bc
		}
	}
	return out
}

// packets is zk_packets_received summed over the members.
func benchPackets(c *zkCluster) int64 {
	var sum int64
	for i := 0; i < c.Size(); i++ {
		v, _ := strconv.ParseInt(c.Mntr(i)["zk_packets_received"], 10, 64)
		sum += v
	}
	return sum
}

// zxid is the highest Zxid any member reports (srvr).
func benchZxid(c *zkCluster) int64 {
	var best int64
	for _, addr := range c.Servers() {
		s, err := zkFourLetterWord(addr, "srvr", 2*time.Second)
		if err != nil {
			continue
		}
		if m := benchZxidLine.FindStringSubmatch(s); m != nil {
			v, _ := strconv.ParseInt(strings.TrimPrefix(m[1], "0x"), 16, 64)
			if v > best {
				best = v
			}
		}
	}
	return best
}

func benchZKVersion(c *zkCluster) string {
	s, _ := zkFourLetterWord(c.Servers()[0], "srvr", 2*time.Second)
	for _, l := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(l, "Zookeeper version: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// sessionOf reads the (last) session id a ballot log reports.
func benchSessionOf(p *benchProc) string {
	m := benchSessLog.FindAllStringSubmatch(p.output(), -1)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1][1]
}

var benchTimeoutLog = regexp.MustCompile(`"session_timeout":(\d+)`)

// benchNegotiated reads the negotiated session timeout a ballot log reports.
func benchNegotiated(p *benchProc) string {
	m := benchTimeoutLog.FindStringSubmatch(p.output())
	if m == nil {
		return "?"
	}
	ns, _ := strconv.ParseInt(m[1], 10, 64)
	return time.Duration(ns).String()
}

// ---------------------------------------------------------------------------
// /proc

func benchRSS(pid int) (rssKiB, pssKiB int64) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				rssKiB, _ = strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			}
		}
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "Pss:"); ok {
				pssKiB, _ = strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			}
		}
	}
	return
}

// benchCPU is utime+stime of pid in clock ticks (USER_HZ, 100 on Linux).
func benchCPU(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// after the comm: state(0) ppid(1) … utime(11) stime(12)
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// benchRuntime is the time pid's threads have spent on a CPU, in ns, from
// /proc/PID/task/*/schedstat (precise, but without exited threads; an idle
// Go process keeps its threads).
func benchRuntime(pid int) int64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum int64
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if fs := strings.Fields(string(b)); len(fs) > 0 {
			v, _ := strconv.ParseInt(fs[0], 10, 64)
			sum += v
		}
	}
	return sum
}

func benchPPid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	pp, _ := strconv.Atoi(f[1])
	return pp
}

// ---------------------------------------------------------------------------
// the report

type benchReport struct {
	mu       sync.Mutex
	sections map[string]string
}

func (r *benchReport) set(name, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sections[name] = text
}

var benchOrder = []string{"handover", "sigterm", "crash", "cold", "herd", "footprint", "binaries"}

// ---------------------------------------------------------------------------

func TestBench(t *testing.T) {
	t0 := time.Now()
	load0 := benchLoadavg()
	dir := t.TempDir()
	rep := &benchReport{sections: map[string]string{}}

	// The binaries: `make cross`, exactly as shipped; the one for this
	// machine is the one measured (copied, so a concurrent build cannot
	// change it under the benchmark). BENCH_BALLOT=/path measures another
	// binary (a prototype) instead, without the cross build: the report is
	// then printed, not written.
	bin := filepath.Join(dir, "ballot")
	var bins []string
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
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("no ballot binary for this machine (%s): %v", runtime.GOARCH, err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	vout, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("ballot version: %v", err)
	}
	version := strings.TrimSpace(string(vout))
	t.Logf("measuring %s", version)

	b := &benchEnv{t: t, dir: dir, bin: bin, home: filepath.Join(dir, "home"), version: version}
	if err := os.MkdirAll(b.home, 0o755); err != nil {
		t.Fatal(err)
	}
	// maxSessionTimeout: ballot's default session timeout (5 s) is kept, as
	// on an ensemble with the usual tickTime of 2 s.
	b.zk = startZKWith(t, zkOptions{N: 3, TickTime: 200 * time.Millisecond, Fsync: true,
		ExtraConfig: []string{"maxSessionTimeout=20000"}})
	zkVersion := benchZKVersion(b.zk)

	if bins != nil {
		t.Run("binaries", func(t *testing.T) { benchBinaries(t, rep, bins, version) })
	}
	t.Run("handover", func(t *testing.T) { benchHandover(t, b, rep) })
	t.Run("sigterm", func(t *testing.T) { benchSigterm(t, b, rep) })
	t.Run("crash", func(t *testing.T) { benchCrash(t, b, rep) })
	t.Run("cold", func(t *testing.T) { benchCold(t, b, rep) })
	t.Run("herd", func(t *testing.T) { benchHerd(t, b, rep) })
	t.Run("footprint", func(t *testing.T) { benchFootprint(t, b, rep) })

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

const (
	benchBegin = "<!-- bench:begin: generated by make bench; edit outside the markers -->\n"
	benchEnd   = "<!-- bench:end -->\n"
)

// benchWriteReport replaces the generated part of the report, between the
// markers, and keeps whatever was written by hand around it.
func benchWriteReport(path, generated string) error {
	old, err := os.ReadFile(path)
	before, after := "# Benchmarks\n\n", ""
	if err == nil {
		o := string(old)
		if i, j := strings.Index(o, benchBegin), strings.Index(o, benchEnd); i >= 0 && j > i {
			before, after = o[:i], o[j+len(benchEnd):]
		}
	}
	return os.WriteFile(path, []byte(before+benchBegin+generated+benchEnd+after), 0o644)
}

func benchLoadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func benchHeader(version, zkVersion string, took time.Duration, load0 string) string {
	var memTotal string
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
				memTotal = fmt.Sprintf("%.1f GiB", float64(kb)/1024/1024)
			}
		}
	}
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	var uts syscall.Utsname
	_ = syscall.Uname(&uts)
	kernel := benchUtsString(uts.Release[:])
	var h strings.Builder
	fmt.Fprintf(&h, `Measured by `+"`make bench`"+` (`+"`go test -tags bench -run '^TestBench' -count=1 -v -timeout 30m .`"+`,
[bench_test.go](bench_test.go)) on %s; the run took %s.

| | |
|---|---|
| machine | %d cores (%s), %s memory, Linux %s; load average %s at the start, %s at the end |
| Go | %s |
| ballot | `+"`%s`"+`: the stripped static `+"`make cross`"+` build for this machine |
| ZooKeeper | %s (Debian), 3 members on 127.0.0.1, tickTime 200 ms, maxSessionTimeout 20 s, forceSync=yes, OpenJDK |

Everything (the 3 ZooKeeper JVMs, every ballot, the commands) runs on this
one machine, so ZooKeeper and ballot compete for the same %d cores. Times
are wall-clock (CLOCK_REALTIME, one host). The command is the test binary
in a mode whose first act, in an `+"`init`"+` function, is to read the
clock; every figure includes starting it (the cold start table shows
that cost alone, for comparison). Percentiles are
nearest-rank: with fewer than 100 samples p99 is the maximum.

`, time.Now().UTC().Format("2006-01-02 15:04 MST"), took.Round(time.Second),
		runtime.NumCPU(), cpu, memTotal, kernel, load0, benchLoadavg(), runtime.Version(), version, zkVersion, runtime.NumCPU())
	return h.String()
}

func benchUtsString(a []int8) string {
	var b []byte
	for _, c := range a {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// ---------------------------------------------------------------------------
// 7. binaries

func benchBinaries(t *testing.T, rep *benchReport, bins []string, version string) {
	var s strings.Builder
	s.WriteString("## 7. Binary size\n\n`make cross` (`CGO_ENABLED=0 go build -trimpath -ldflags \"-s -w …\"`); target ≤ 4 MiB for linux/amd64.\n\n")
	s.WriteString("| target | bytes | MiB | static | stripped |\n|---|---|---|---|---|\n")
	for _, p := range bins {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		static, stripped := "?", "?"
		if f, err := elf.Open(p); err == nil {
			static, stripped = "yes", "yes"
			for _, pr := range f.Progs {
				if pr.Type == elf.PT_INTERP || pr.Type == elf.PT_DYNAMIC {
					static = "no"
				}
			}
			if f.Section(".symtab") != nil {
				stripped = "no"
			}
			f.Close()
		}
		name := strings.TrimPrefix(filepath.Base(p), "ballot-")
		mib := float64(fi.Size()) / (1 << 20)
		mark := ""
		if name == "linux-amd64" {
			mark = " — " + benchVerdict(mib <= 4)
		}
		fmt.Fprintf(&s, "| %s | %d | %.2f%s | %s | %s |\n", name, fi.Size(), mib, mark, static, stripped)
		t.Logf("%s: %d bytes (%.2f MiB) static=%s stripped=%s", name, fi.Size(), mib, static, stripped)
	}
	fmt.Fprintf(&s, "\n`ballot version` of the amd64 build: `%s`.\n\n", version)
	rep.set("binaries", s.String())
}

// ---------------------------------------------------------------------------
// 1. clean handover

// benchLogEvent is one timestamped line of a ballot log (human format,
// millisecond resolution).
type benchLogEvent struct {
	t    time.Time
	cand string
	msg  string
}

func benchLogEvents(files map[string][]string, msgs ...string) []benchLogEvent {
	want := map[string]bool{}
	for _, m := range msgs {
		want[m] = true
	}
	var out []benchLogEvent
	for cand, fs := range files {
		for _, file := range fs {
			f, err := os.Open(file)
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 64*1024), 1024*1024)
			for sc.Scan() {
				var rec struct {
					Time time.Time `json:"time"`
					Msg  string    `json:"msg"`
				}
				if json.Unmarshal(sc.Bytes(), &rec) != nil || !want[rec.Msg] {
					continue
				}
				out = append(out, benchLogEvent{t: rec.Time, cand: cand, msg: rec.Msg})
			}
			f.Close()
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].t.Before(out[j].t) })
	return out
}

type benchStep struct{ cand, msg string }

// benchSteps finds, in order, the first event of each step at or after the
// previous one, within [from, to]; ok is false if one is missing.
func benchSteps(ev []benchLogEvent, from, to time.Time, steps []benchStep) ([]time.Time, bool) {
	var out []time.Time
	at := from
	for _, st := range steps {
		found := false
		for _, x := range ev {
			if x.t.Before(at) || x.t.After(to) || x.cand != st.cand || x.msg != st.msg {
				continue
			}
			out, at, found = append(out, x.t), x.t, true
			break
		}
		if !found {
			return nil, false
		}
	}
	return out, true
}

func (e *benchElection) logFiles() map[string][]string {
	out := map[string][]string{}
	for id, n := range e.runs {
		for i := 1; i <= n; i++ {
			out[id] = append(out[id], filepath.Join(e.logs, fmt.Sprintf("%s.%d.log", id, i)))
		}
	}
	return out
}

func benchHandover(t *testing.T, b *benchEnv, rep *benchReport) {
	const handovers, warmup = 60, 10
	e := b.election("handover", "2s", "200ms", "--on-child-success", "reelect", "--on-child-error", "reelect")
	for _, id := range []string{"c1", "c2", "c3"} {
		e.add(id)
		time.Sleep(100 * time.Millisecond)
	}
	e.waitStarts(t, warmup+handovers+2, 3*time.Minute)
	e.stopAll(t)

	ss := benchReadStamps(e.stamps)
	var gaps []time.Duration
	var pairs [][2]benchStamp
	overlaps := 0
	for i, s := range ss {
		if s.kind != "EXIT" {
			continue
		}
		for _, n := range ss[i+1:] {
			if n.kind == "START" && n.token != s.token {
				gaps = append(gaps, n.t.Sub(s.t))
				pairs = append(pairs, [2]benchStamp{s, n})
				break
			}
		}
	}
	// a START before the previous leader's EXIT would be an overlap
	var lastExit time.Time
	for _, s := range ss {
		if s.kind == "START" && !lastExit.IsZero() && s.t.Before(lastExit) {
			overlaps++
		}
		if s.kind == "EXIT" {
			lastExit = s.t
		}
	}
	if len(gaps) < warmup+handovers {
		t.Fatalf("only %d handovers recorded", len(gaps))
	}
	gaps, pairs = gaps[warmup:warmup+handovers], pairs[warmup:warmup+handovers]
	d := benchSummarize(gaps)
	t.Logf("clean handover: %s", d.row("handover"))

	// Where the time goes, from ballot's logs (JSON: nanosecond timestamps).
	ev := benchLogEvents(e.logFiles(), "command ended", "resigning", "elected leader", "command started")
	steps := make([][]time.Duration, 4)
	var keeper []time.Duration // elected leader → command started
	for _, p := range pairs {
		exit, start := p[0], p[1]
		ts, ok := benchSteps(ev, exit.t, start.t, []benchStep{{exit.cand, "command ended"}, {exit.cand, "resigning"},
			{start.cand, "elected leader"}})
		if !ok {
			continue
		}
		ts = append([]time.Time{exit.t}, append(ts, start.t)...)
		for i := range steps {
			steps[i] = append(steps[i], ts[i+1].Sub(ts[i]))
		}
		if k, ok := benchSteps(ev, ts[3], start.t.Add(time.Second), []benchStep{{start.cand, "command started"}}); ok {
			keeper = append(keeper, k[0].Sub(ts[3]))
		}
	}

	var s strings.Builder
	s.WriteString("## 1. Clean handover\n\n")
	fmt.Fprintf(&s, "3 candidates, `--on-child-success reelect`, session timeout 2 s; each command runs 200 ms and exits 0. "+
		"Time from the leader's command writing its last stamp just before `exit(0)` to the next leader's command's first instruction; "+
		"the first %d handovers warm up and are not counted. Targets: median ≤ 10 ms, p99 ≤ 50 ms.\n\n", warmup)
	s.WriteString("| | n | min | median | p99 | max |\n|---|---|---|---|---|---|\n")
	s.WriteString(d.row("exit → next command") + "\n\n")
	fmt.Fprintf(&s, "Median %s, p99 %s; overlaps (a command starting before its predecessor's exit): %d.\n\n",
		benchVerdict(d.med <= 10*time.Millisecond), benchVerdict(d.p99 <= 50*time.Millisecond), overlaps)
	if len(steps[0]) > 0 {
		s.WriteString("Where the time goes, from ballot's own logs (`--log-format json`, nanosecond timestamps):\n\n")
		s.WriteString("| step | n | min | median | p99 | max |\n|---|---|---|---|---|---|\n")
		for i, name := range []string{
			"command exits → old leader logs `command ended` (keeper reaps the tree, reports, exits)",
			"`command ended` → old leader logs `resigning`",
			"`resigning` → next leader logs `elected leader` (ZooKeeper writes and the watch)",
			"`elected leader` → command's first instruction (keeper started; it forks and execs the command, which starts)",
		} {
			s.WriteString(benchSummarize(steps[i]).row(name) + "\n")
		}
		s.WriteString(benchSummarize(keeper).row("of which `elected leader` → `command started` (the keeper has started and reports the command forked and exec'd; the command may already run)") + "\n")
		s.WriteString("\n")
	}
	rep.set("handover", s.String())
}

// ---------------------------------------------------------------------------
// 2. SIGTERM handover

// leader returns the candidate whose command started last, and that START.
func (e *benchElection) leader() (string, benchStamp) {
	st := benchStarts(benchReadStamps(e.stamps))
	if len(st) == 0 {
		return "", benchStamp{}
	}
	l := st[len(st)-1]
	return l.cand, l
}

// failover stops the leader with sig reps times, restarting it as a
// follower each time, and returns the times from the signal to the next
// command's first instruction.
func (e *benchElection) failover(t *testing.T, sig syscall.Signal, reps int, wait time.Duration) []time.Duration {
	return e.failoverBy(t, func(p *benchProc) { p.signal(sig) }, sig, reps, wait)
}

// hostDies kills ballot, its keeper and its command at the same moment, as
// when the machine dies: nobody is left to end the session.
func hostDies(p *benchProc) {
	pids := append(descendantsOf(p.cmd.Process.Pid), p.cmd.Process.Pid)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGSTOP) // nothing may act in between
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func (e *benchElection) failoverBy(t *testing.T, kill func(*benchProc), sig syscall.Signal, reps int, wait time.Duration) []time.Duration {
	ids := []string{"c1", "c2", "c3"}
	for _, id := range ids {
		e.add(id)
		time.Sleep(100 * time.Millisecond)
	}
	n := len(benchStarts(benchReadStamps(e.stamps)))
	if n == 0 {
		n = len(e.waitStarts(t, 1, 30*time.Second))
	}
	for _, id := range ids[1:] {
		e.current[id].waitCount(t, `"msg":"following"`, 1, 10*time.Second)
	}
	var out []time.Duration
	for i := 0; i < reps; i++ {
		time.Sleep(300 * time.Millisecond) // settle: every candidate in line
		id, _ := e.leader()
		p := e.current[id]
		t0 := time.Now()
		kill(p)
		st := e.waitStarts(t, n+1, wait)
		n = len(st)
		next := st[len(st)-1]
		if next.cand == id {
			t.Fatalf("%s: %s led again after %v", e.name, id, sig)
		}
		out = append(out, next.t.Sub(t0))
		code := p.wait(t, 20*time.Second)
		if sig == syscall.SIGTERM && code != 0 {
			t.Logf("%s: ballot %s exited %d after SIGTERM", e.name, id, code)
		}
		q := e.add(id) // stand again, at the end of the line
		q.waitCount(t, `"msg":"following"`, 1, 10*time.Second)
	}
	e.stopAll(t)
	return out
}

func benchSigterm(t *testing.T, b *benchEnv, rep *benchReport) {
	e := b.election("sigterm", "2s", "wait", "--stop-grace-period", "5s")
	gaps := e.failover(t, syscall.SIGTERM, 25, 15*time.Second)
	d := benchSummarize(gaps)
	t.Logf("SIGTERM handover: %s", d.row("sigterm"))
	var s strings.Builder
	s.WriteString("## 2. SIGTERM handover\n\n")
	s.WriteString("3 candidates, session timeout 2 s; the leader's ballot gets SIGTERM, forwards it to its command, which exits 0 at once; ballot resigns and exits, and is started again as a follower before the next repetition. " +
		"Time from the SIGTERM to the next leader's command's first instruction.\n\n")
	s.WriteString("| | n | min | median | p99 | max |\n|---|---|---|---|---|---|\n")
	s.WriteString(d.row("SIGTERM → next command") + "\n\n")
	rep.set("sigterm", s.String())
}

// ---------------------------------------------------------------------------
// 3. crash failover

func benchCrash(t *testing.T, b *benchEnv, rep *benchReport) {
	e := b.election("crash", "1s", "wait")
	gaps := e.failover(t, syscall.SIGKILL, 12, 15*time.Second)
	d := benchSummarize(gaps)
	negotiated := benchNegotiated(e.current["c1"])
	host := b.election("host", "1s", "wait")
	hd := benchSummarize(host.failoverBy(t, hostDies, syscall.SIGKILL, 8, 15*time.Second))
	tick := b.zk.TickTime()
	target := time.Second + 2*tick + batonWait(time.Second)
	t.Logf("crash failover (negotiated %s): %s; host dies: %s", negotiated, d.row("crash"), hd.row("host"))
	var s strings.Builder
	s.WriteString("## 3. Crash failover\n\n")
	fmt.Fprintf(&s, "3 candidates, `--zookeeper-session-timeout 1s` (negotiated: %s). Time from the fault to the next leader's command's first instruction. "+
		"**ballot dies, its host lives**: the leader's ballot gets SIGKILL; its keeper kills the command's tree, then gives the baton back and closes the session. "+
		"Target: median ≤ 100 ms. **The host dies**: ballot, its keeper and its command get SIGKILL at the same moment, so nobody ends the session: "+
		"the next leader waits for the session to expire, then 3/4 of the session timeout for the dropped baton. Target ≤ session timeout + 2 × tickTime + 3/4 × session timeout = %s.\n\n",
		negotiated, benchMs(target))
	s.WriteString("| | n | min | median | p99 | max |\n|---|---|---|---|---|---|\n")
	s.WriteString(d.row("SIGKILL of ballot → next command") + "\n")
	s.WriteString(hd.row("host dies → next command") + "\n\n")
	fmt.Fprintf(&s, "ballot dies: median %s. The host dies: max %s. ZooKeeper expires sessions on tickTime boundaries (it rounds each session's deadline up to the next tick), "+
		"so a host's death takes about the session timeout, plus up to a tick, plus the baton wait, plus a handover.\n\n",
		benchVerdict(d.med <= 100*time.Millisecond), benchVerdict(hd.max <= target))
	rep.set("crash", s.String())
}

// ---------------------------------------------------------------------------
// 4. cold start

func benchCold(t *testing.T, b *benchEnv, rep *benchReport) {
	const reps = 40
	e := b.election("cold", "2s", "0s", "--on-child-success", "exit")
	var gaps, totals []time.Duration
	var runs [][2]time.Time // ballot started, command's first instruction
	for i := 0; i < reps; i++ {
		n := len(benchStarts(benchReadStamps(e.stamps)))
		t0 := time.Now()
		p := e.add("solo")
		st := e.waitStarts(t, n+1, 10*time.Second)
		gaps = append(gaps, st[len(st)-1].t.Sub(t0))
		runs = append(runs, [2]time.Time{t0, st[len(st)-1].t})
		if code := p.wait(t, 10*time.Second); code != 0 {
			t.Fatalf("cold start: ballot exited %d:\n%s", code, p.output())
		}
		totals = append(totals, time.Since(t0))
		time.Sleep(50 * time.Millisecond)
	}
	// The command alone, started directly: the floor under every figure.
	direct := filepath.Join(b.dir, "direct-stamps")
	var execs []time.Duration
	for i := 0; i < reps; i++ {
		cmd := exec.Command(selfExe(), direct, "0s")
		cmd.Env = b.env()
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		st := benchStarts(benchReadStamps(direct))
		execs = append(execs, st[len(st)-1].t.Sub(t0))
	}
	// ballot alone: exec to exit of `ballot version`.
	var versions []time.Duration
	for i := 0; i < reps; i++ {
		t0 := time.Now()
		if err := exec.Command(b.bin, "version").Run(); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, time.Since(t0))
	}
	msgs := []string{"ballot starting", "ZooKeeper session established", "proposal made", "elected leader"}
	ev := benchLogEvents(e.logFiles(), msgs...)
	steps := make([][]time.Duration, len(msgs)+1)
	for _, r := range runs {
		var want []benchStep
		for _, m := range msgs {
			want = append(want, benchStep{"solo", m})
		}
		ts, ok := benchSteps(ev, r[0], r[1], want)
		if !ok {
			continue
		}
		ts = append([]time.Time{r[0]}, append(ts, r[1])...)
		for i := range steps {
			steps[i] = append(steps[i], ts[i+1].Sub(ts[i]))
		}
	}
	d := benchSummarize(gaps)
	t.Logf("cold start: %s", d.row("cold"))
	var s strings.Builder
	s.WriteString("## 4. Cold start\n\n")
	s.WriteString("`ballot run once --on-child-success exit` alone on its election, ZooKeeper up (session timeout 2 s). " +
		"Time from starting ballot (just before fork/exec) to the command's first instruction: a new session, a proposal, reading the line, the keeper, the command. Target: median ≤ 30 ms.\n\n")
	s.WriteString("| | n | min | median | p99 | max |\n|---|---|---|---|---|---|\n")
	s.WriteString(d.row("ballot start → command's first instruction") + "\n")
	s.WriteString(benchSummarize(totals).row("ballot start → ballot exited (command done, resigned, session closed)") + "\n")
	s.WriteString(benchSummarize(execs).row("for comparison: the command alone, start → first instruction") + "\n")
	s.WriteString(benchSummarize(versions).row("for comparison: `ballot version`, start → exit") + "\n\n")
	fmt.Fprintf(&s, "Median %s.\n\n", benchVerdict(d.med <= 30*time.Millisecond))
	if len(steps[0]) > 0 {
		s.WriteString("Where the time goes, from ballot's own logs:\n\n")
		s.WriteString("| step | n | min | median | p99 | max |\n|---|---|---|---|---|---|\n")
		for i, name := range []string{
			"start → `ballot starting` (exec, Go runtime, configuration)",
			"→ `ZooKeeper session established` (connect; the server commits the new session)",
			"→ `proposal made` (create the proposal, read its czxid)",
			"→ `elected leader` (read the line)",
			"→ command's first instruction (keeper started; it forks and execs the command, which starts)",
		} {
			s.WriteString(benchSummarize(steps[i]).row(name) + "\n")
		}
		s.WriteString("\n")
	}
	rep.set("cold", s.String())
}

// ---------------------------------------------------------------------------
// 5. herd

type benchHerdResult struct {
	n                       int
	packets                 []int64 // zk_packets_received in the window after the handover, minus the baseline window
	requests                []int64 // client requests (Σ Δlcxid) after minus before
	oldReq, newReq, restReq []int64 // requests after minus before: old leader, new leader, everyone else
	woken                   []int   // candidates other than the old and new leader that sent 2 or more requests more than in the baseline window
	following               []int   // candidates other than the old leader that logged "following" or "elected leader" after the handover
	gap                     []time.Duration

	// idle, per candidate per minute, before the handovers
	idleWrites, idlePackets, idleRequests float64
	rssMiB, pssMiB                        float64 // all ballots together, idle
}

// benchHerdSizes: 1000 candidates take about 5.5 GiB of RSS (2.3 GiB PSS)
// and a minute to start on a 2-core machine; BENCH_HERD_MAX=100 skips them.
func benchHerdSizes() []int {
	if os.Getenv("BENCH_HERD_MAX") == "100" {
		return []int{10, 100}
	}
	return []int{10, 100, 1000}
}

func benchHerd(t *testing.T, b *benchEnv, rep *benchReport) {
	var results []benchHerdResult
	for _, n := range benchHerdSizes() {
		results = append(results, benchHerdRun(t, b, n, 3))
	}
	var s strings.Builder
	s.WriteString("## 5. Herd\n\n")
	s.WriteString("N candidates on one election (session timeout 4 s), idle followers, then 3 handovers " +
		"(SIGUSR1 to the leader's ballot, forwarded to the command, which exits 0: `reelect`). For each, two 4 s windows (exactly 3 ping periods of every client): " +
		"a quiet one before the handover and one starting at it. " +
		"*Packets* is `zk_packets_received` summed over the 3 members, window after minus window before (so pings and lease renewals cancel out). " +
		"*Requests* counts the clients' requests (pings excluded) exactly, from `cons` (each connection's last request id, `lcxid`), window after minus window before, in all and split by who sent them. " +
		"*Woken* counts the candidates, other than the old and the new leader, that sent at least 2 requests more after the handover than before (a woken follower reads the line and watches its new predecessor). Target: the same handful at 100 as at 10.\n\n")
	s.WriteString("| candidates | handover | next command after | packets (after − before) | requests (after − before) | requests (after − before): old leader / new leader / all others | woken | logged `following`/`elected` |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		for i := range r.packets {
			fmt.Fprintf(&s, "| %d | %d | %s | %d | %d | %d / %d / %d | %d | %d |\n", r.n, i+1, benchMs(r.gap[i]), r.packets[i], r.requests[i],
				r.oldReq[i], r.newReq[i], r.restReq[i], r.woken[i], r.following[i])
		}
	}
	s.WriteString("\n")
	s.WriteString("Idle, before the handovers: a 30 s window, per candidate per minute. *Writes* is the advance of the ensemble's zxid (every write is a transaction, fsynced by every member); " +
		"*packets* is `zk_packets_received` over the 3 members (the clients' pings, every T/3, and the leader's renewals); *requests* excludes pings. " +
		"Target: at most one write per election per minute; followers send only pings. Memory: RSS and PSS of every ballot process, summed.\n\n")
	s.WriteString("| candidates | writes per candidate per minute | packets per candidate per minute | requests per candidate per minute | ballots' RSS | ballots' PSS |\n|---|---|---|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&s, "| %d | %.2f | %.1f | %.2f | %.0f MiB | %.0f MiB |\n", r.n, r.idleWrites, r.idlePackets, r.idleRequests, r.rssMiB, r.pssMiB)
	}
	s.WriteString("\n")
	rep.set("herd", s.String())
}

func benchHerdRun(t *testing.T, b *benchEnv, n, handovers int) benchHerdResult {
	e := b.election(fmt.Sprintf("herd%d", n), "4s", "wait")
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("h%03d", i)
	}
	e.add(ids[0])
	e.waitStarts(t, 1, 30*time.Second)
	for i := 1; i < n; i += 10 {
		batch := ids[i:min(i+10, n)]
		for _, id := range batch {
			e.add(id)
		}
		for _, id := range batch {
			e.current[id].waitCount(t, `"msg":"following"`, 1, 30*time.Second)
		}
	}
	t.Logf("herd %d: all candidates in line", n)
	time.Sleep(8 * time.Second) // let start-up traffic end
	res := benchHerdResult{n: n}

	// Idle: what a settled election costs the ensemble.
	const idle = 30 * time.Second
	z0, p0, c0 := benchZxid(b.zk), benchPackets(b.zk), benchCons(b.zk)
	time.Sleep(idle)
	z1, p1, c1 := benchZxid(b.zk), benchPackets(b.zk), benchCons(b.zk)
	var reqs int64
	for sid, after := range c1 {
		reqs += after.lcxid - c0[sid].lcxid
	}
	perMin := float64(time.Minute) / float64(idle) / float64(n)
	res.idleWrites, res.idlePackets, res.idleRequests = float64(z1-z0)*perMin, float64(p1-p0)*perMin, float64(reqs)*perMin
	var rss, pss int64
	for _, p := range e.current {
		r, q := benchRSS(p.cmd.Process.Pid)
		rss, pss = rss+r, pss+q
	}
	res.rssMiB, res.pssMiB = float64(rss)/1024, float64(pss)/1024
	t.Logf("herd %d idle: %.2f writes, %.1f packets, %.2f requests per candidate per minute; ballots %.0f MiB RSS, %.0f MiB PSS",
		n, res.idleWrites, res.idlePackets, res.idleRequests, res.rssMiB, res.pssMiB)

	const w = 4 * time.Second
	sess := func() map[string]string { // session id → candidate
		m := map[string]string{}
		for id, p := range e.current {
			m[benchSessionOf(p)] = id
		}
		return m
	}
	for h := 0; h < handovers; h++ {
		old, _ := e.leader()
		logged := map[string]int{}
		for id, p := range e.current {
			logged[id] = p.count(`"msg":"following"`) + p.count(`"msg":"elected leader"`)
		}
		starts := len(benchStarts(benchReadStamps(e.stamps)))
		// two windows of the same length: [tp0, tp1) quiet, [tp1, tp2) with the handover
		p0, c0 := benchPackets(b.zk), benchCons(b.zk)
		tp0 := time.Now()
		time.Sleep(w)
		p1, c1 := benchPackets(b.zk), benchCons(b.zk)
		tp1 := time.Now()
		t0 := time.Now()
		e.current[old].signal(syscall.SIGUSR1)
		st := e.waitStarts(t, starts+1, 10*time.Second)
		next := st[len(st)-1]
		res.gap = append(res.gap, next.t.Sub(t0))
		time.Sleep(time.Until(tp1.Add(tp1.Sub(tp0))))
		p2, c2 := benchPackets(b.zk), benchCons(b.zk)
		res.packets = append(res.packets, (p2-p1)-(p1-p0))

		bySess := sess()
		var total, oldR, newR, rest int64
		woken := 0
		for sid, after := range c2 {
			id, ours := bySess[sid]
			if !ours {
				continue
			}
			before1, before0 := c1[sid], c0[sid]
			da := after.lcxid - before1.lcxid
			db := before1.lcxid - before0.lcxid
			total += da - db
			switch id {
			case old:
				oldR += da - db
			case next.cand:
				newR += da - db
			default:
				rest += da - db
				if da-db >= 2 { // a wake-up: read the line, watch the new predecessor
					woken++
				}
			}
		}
		res.requests = append(res.requests, total)
		res.oldReq = append(res.oldReq, oldR)
		res.newReq = append(res.newReq, newR)
		res.restReq = append(res.restReq, rest)
		res.woken = append(res.woken, woken)
		fol := 0
		for id, p := range e.current {
			if id != old && p.count(`"msg":"following"`)+p.count(`"msg":"elected leader"`) > logged[id] {
				fol++
			}
		}
		res.following = append(res.following, fol)
		t.Logf("herd %d handover %d: next command after %s, packets %d, requests %d (old %d new %d rest %d), woken %d, logged %d",
			n, h+1, benchMs(res.gap[h]), res.packets[h], total, oldR, newR, rest, woken, fol)
	}
	e.stopAll(t)
	return res
}

// ---------------------------------------------------------------------------
// 6. footprint

func benchFootprint(t *testing.T, b *benchEnv, rep *benchReport) {
	e := b.election("footprint", "", "wait") // default session timeout
	ids := []string{"f1", "f2", "f3", "f4", "f5"}
	for _, id := range ids {
		e.add(id)
		time.Sleep(100 * time.Millisecond)
	}
	e.waitStarts(t, 1, 30*time.Second)
	for _, id := range ids[1:] {
		e.current[id].waitCount(t, `"msg":"following"`, 1, 30*time.Second)
	}
	negotiated := benchNegotiated(e.current["f1"])
	_, lst := e.leader()
	leader := e.current[lst.cand]
	keeper := benchPPid(lst.pid)
	time.Sleep(2 * time.Second)

	type snap struct {
		cpu  map[int]int64
		run  map[int]int64
		zxid int64
		cons map[string]benchConn
		pkts int64
	}
	pids := []int{keeper}
	for _, p := range e.current {
		pids = append(pids, p.pid())
	}
	take := func() snap {
		s := snap{cpu: map[int]int64{}, run: map[int]int64{}, zxid: benchZxid(b.zk), cons: benchCons(b.zk), pkts: benchPackets(b.zk)}
		for _, pid := range pids {
			s.cpu[pid] = benchCPU(pid)
			s.run[pid] = benchRuntime(pid)
		}
		return s
	}
	const window = 60 * time.Second
	s0 := take()
	t0 := time.Now()
	time.Sleep(window)
	s1 := take()
	el := time.Since(t0)
	perMin := func(v int64) float64 { return float64(v) * float64(time.Minute) / float64(el) }

	var s strings.Builder
	s.WriteString("## 6. Footprint\n\n")
	fmt.Fprintf(&s, "5 candidates (1 leader, 4 followers) with the default `--zookeeper-session-timeout 5s` (negotiated: %s), idle for %s after the election. "+
		"RSS (`VmRSS`) and PSS (`Pss` of `smaps_rollup`: ballot and its keeper are the same binary and share its pages) at the end; CPU over the window from utime+stime of `/proc/PID/stat` (10 ms ticks: ±1 tick) and, precisely, from the threads' `/proc/PID/task/*/schedstat`. "+
		"Targets: ≤ 8 MiB RSS, ≤ 0.1%% of a core.\n\n", negotiated, el.Round(time.Second))
	s.WriteString("| process | RSS | PSS | CPU per minute (utime+stime) | CPU per minute (schedstat) | share of a core (schedstat) |\n|---|---|---|---|---|---|\n")
	row := func(name string, pids ...int) (int64, float64) {
		var rss, pss, cpu, run int64
		for _, pid := range pids {
			r, p := benchRSS(pid)
			rss += r
			pss += p
			cpu += s1.cpu[pid] - s0.cpu[pid]
			run += s1.run[pid] - s0.run[pid]
		}
		cpuMs := perMin(cpu) * 10 // ticks of 10 ms
		runMs := perMin(run) / 1e6
		share := runMs / 60000 * 100
		fmt.Fprintf(&s, "| %s | %.1f MiB | %.1f MiB | %.0f ms | %.1f ms | %.3f%% |\n", name, float64(rss)/1024, float64(pss)/1024, cpuMs, runMs, share)
		return rss, share
	}
	var worstRSS int64 // of one ballot process
	lb, leaderCPU := row("leader: ballot", leader.pid())
	row("leader: keeper", keeper)
	lr, lc := row("leader: ballot + keeper", leader.pid(), keeper)
	_, lpss := benchRSS(leader.pid())
	_, kpss := benchRSS(keeper)
	worstRSS = max(worstRSS, lb)
	var followerCPU []float64
	for _, id := range ids {
		if p := e.current[id]; p != leader {
			r, c := row("follower "+id+": ballot", p.pid())
			worstRSS = max(worstRSS, r)
			followerCPU = append(followerCPU, c)
		}
	}
	sort.Float64s(followerCPU)
	medFollower := followerCPU[(len(followerCPU)-1)/2]
	fmt.Fprintf(&s, "\nRSS of each ballot process (largest %.1f MiB): %s. The leader's ballot and keeper together: %.1f MiB RSS, %s "+
		"(%.1f MiB PSS: the two share the binary's pages). "+
		"CPU: leader %.3f%% of a core (%.3f%% with its keeper), %s; median follower %.3f%%, %s.\n\n",
		float64(worstRSS)/1024, benchVerdict(worstRSS <= 8*1024), float64(lr)/1024, benchVerdict(lr <= 8*1024), float64(lpss+kpss)/1024,
		leaderCPU, lc, benchVerdict(lc <= 0.1), medFollower, benchVerdict(medFollower <= 0.1))

	// ZooKeeper load per candidate.
	sessOf := map[string]string{}
	for id, p := range e.current {
		sessOf[benchSessionOf(p)] = id
	}
	writes := s1.zxid - s0.zxid
	fmt.Fprintf(&s, "ZooKeeper writes (zxid advance over the ensemble): %d in %s, **%.1f per minute per candidate**; packets received by the ensemble: %.0f per minute.\n\n",
		writes, el.Round(time.Second), perMin(writes)/float64(len(ids)), perMin(s1.pkts-s0.pkts))
	s.WriteString("| candidate | requests per minute (excluding pings) | packets per minute (including pings) |\n|---|---|---|\n")
	var sids []string
	for sid := range sessOf {
		sids = append(sids, sid)
	}
	sort.Slice(sids, func(i, j int) bool { return sessOf[sids[i]] < sessOf[sids[j]] })
	for _, sid := range sids {
		id := sessOf[sid]
		role := "follower"
		if e.current[id] == leader {
			role = "leader"
		}
		fmt.Fprintf(&s, "| %s (%s) | %.1f | %.1f |\n", id, role, perMin(s1.cons[sid].lcxid-s0.cons[sid].lcxid), perMin(s1.cons[sid].recved-s0.cons[sid].recved))
	}
	s.WriteString("\n")
	t.Logf("footprint:\n%s", s.String())
	e.stopAll(t)
	rep.set("footprint", s.String())
}
