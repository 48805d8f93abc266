//go:build bench

package main

// 18. A fleet's crontab: J daily jobs on H hosts, each host one
// `ballot run crontab FILE` process (issue 34), beside the same jobs as one
// `run cron` process a job a host (what a crontab cost before). At rest:
// RSS and PSS a host (ballot and any keeper), sessions, ZooKeeper writes
// and packets a minute, CPU; how the leaderships spread over the hosts;
// then every-minute jobs while they run; then one host SIGKILLed: how long
// each of its jobs goes without a leader.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

type benchCrontabRow struct {
	name          string
	jobs, hosts   int
	procs         int     // ballot processes a host (ballot and keepers)
	rss, pss      int64   // KiB a host, the largest
	sessions      int     // on the ensemble, all hosts
	writes        float64 // a minute
	packets       float64 // a minute, received by the ensemble
	cpuMs         float64 // a minute, a host, the largest (utime+stime)
	spread        []int   // leaderships a host
	failover      benchDist
	failoverJobs  int
	runningWrites float64 // a minute with every job running each minute
}

// benchCrontabSizes is BENCH_CRONTAB ("20x2,200x5"): jobs x hosts.
func benchCrontabSizes(t *testing.T) [][2]int {
	spec := os.Getenv("BENCH_CRONTAB")
	if spec == "" {
		spec = "20x2,20x5,200x2,200x5"
	}
	var out [][2]int
	for _, s := range strings.Split(spec, ",") {
		j, h, ok := strings.Cut(s, "x")
		jn, e1 := strconv.Atoi(j)
		hn, e2 := strconv.Atoi(h)
		if !ok || e1 != nil || e2 != nil || jn < 1 || hn < 1 {
			t.Fatalf("BENCH_CRONTAB=%q: want JOBSxHOSTS,… such as 20x2,200x5", spec)
		}
		out = append(out, [2]int{jn, hn})
	}
	return out
}

// benchDescendants is pid and every process below it.
func benchDescendants(pid int) []int {
	parent := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp := parentPid(p); pp > 0 {
			parent[pp] = append(parent[pp], p)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, parent[out[i]]...)
	}
	return out
}

// benchCrontabHosts starts one process a host running every job.
type benchCrontabFleet struct {
	t     *testing.T
	b     *benchEnv
	base  string
	jobs  []string
	hosts map[string][]*ballotProc // host → its processes
	file  string
}

func (b *benchEnv) crontabFleet(t *testing.T, name string, jobs int, schedule, command string) *benchCrontabFleet {
	dir := filepath.Join(b.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := &benchCrontabFleet{t: t, b: b, base: "/bench/" + name, hosts: map[string][]*ballotProc{}, file: filepath.Join(dir, "crontab")}
	var sb strings.Builder
	for i := 0; i < jobs; i++ {
		j := fmt.Sprintf("job%03d", i)
		f.jobs = append(f.jobs, j)
		fmt.Fprintf(&sb, "%s %s %s\n", j, schedule, command)
		b.seed(t, f.base+"/"+j)
	}
	if err := os.WriteFile(f.file, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *benchCrontabFleet) start(host string, args ...string) *ballotProc {
	// args: the command words first ("run", "crontab" or "cron"), then its flags.
	args = append([]string{"--zookeeper-servers", strings.Join(f.b.zk.Servers(), ","), "--log-format", "json",
		args[0], args[1], "--candidate-id", host}, args[2:]...)
	cmd := exec.Command(f.b.bin, args...)
	cmd.Dir = f.b.home
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := startProc(f.t, host, cmd, f.b.env("stamp"))
	f.hosts[host] = append(f.hosts[host], p)
	return p
}

// crontab: each host one process for the whole file.
func (f *benchCrontabFleet) crontab(hosts int) {
	for h := 0; h < hosts; h++ {
		f.start(fmt.Sprintf("h%d", h), "run", "crontab", "--zookeeper-base-path", f.base, f.file)
	}
}

// perJob: each host one run cron process a job, as before run crontab.
func (f *benchCrontabFleet) perJob(hosts int, schedule, command string) {
	for h := 0; h < hosts; h++ {
		for _, j := range f.jobs {
			f.start(fmt.Sprintf("h%d", h), "run", "cron", "--schedule", schedule, "--zookeeper-base-path", f.base+"/"+j,
				"--", "/bin/sh", "-c", command)
		}
	}
}

// leaders is each job's leader (candidate id) from its leader record; ""
// when it has none.
func (f *benchCrontabFleet) leaders() map[string]string {
	out := map[string]string{}
	for _, j := range f.jobs {
		data, _, err := f.b.conn.Get(f.base + "/" + j + "/" + leaderName)
		if err != nil {
			continue
		}
		var rec leaderRecord
		if json.Unmarshal(data, &rec) == nil {
			out[j] = rec.CandidateID
		}
	}
	return out
}

func (f *benchCrontabFleet) awaitLeaders(timeout time.Duration) map[string]string {
	deadline := time.Now().Add(timeout)
	for {
		l := f.leaders()
		if len(l) == len(f.jobs) {
			return l
		}
		if time.Now().After(deadline) {
			var logs []string
			for h, ps := range f.hosts {
				logs = append(logs, fmt.Sprintf("--- %s:\n%s", h, benchTail(ps[0].out.String(), 20)))
			}
			sort.Strings(logs)
			f.t.Fatalf("%s: %d of %d jobs have a leader after %s\n%s", f.base, len(l), len(f.jobs), timeout, strings.Join(logs, "\n"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (f *benchCrontabFleet) stop() {
	for _, ps := range f.hosts {
		for _, p := range ps {
			p.Signal(syscall.SIGTERM)
		}
	}
	for _, ps := range f.hosts {
		for _, p := range ps {
			p.Wait(60 * time.Second)
		}
	}
}

// measure fills the at-rest figures over one window.
func (f *benchCrontabFleet) measure(r *benchCrontabRow, sessions0 int) {
	pidsOf := map[string][]int{}
	var all []int
	for h, ps := range f.hosts {
		for _, p := range ps {
			d := benchDescendants(p.Pid())
			pidsOf[h] = append(pidsOf[h], d...)
			all = append(all, d...)
		}
	}
	s0 := benchFootTake(f.b.zk, all)
	t0 := time.Now()
	time.Sleep(benchLoadWindow)
	s1 := benchFootTake(f.b.zk, all)
	el := time.Since(t0)
	perMin := func(v int64) float64 { return float64(v) * float64(time.Minute) / float64(el) }
	r.writes, r.packets = perMin(s1.zxid-s0.zxid), perMin(s1.pkts-s0.pkts)
	r.sessions = len(s1.cons) - sessions0
	for _, pids := range pidsOf {
		var rss, pss, cpu int64
		for _, pid := range pids {
			rr, p := benchRSS(pid)
			rss, pss, cpu = rss+rr, pss+p, cpu+s1.cpu[pid]-s0.cpu[pid]
		}
		r.procs = max(r.procs, len(pids))
		r.rss, r.pss = max(r.rss, rss), max(r.pss, pss)
		r.cpuMs = max(r.cpuMs, perMin(cpu)*10) // ticks of 10 ms
	}
}

func (f *benchCrontabFleet) spread(leaders map[string]string, hosts int) []int {
	count := map[string]int{}
	for _, h := range leaders {
		count[h]++
	}
	out := make([]int, hosts)
	for h := 0; h < hosts; h++ {
		out[h] = count[fmt.Sprintf("h%d", h)]
	}
	return out
}

// failover SIGKILLs host h0 and measures, for each job it led, the time
// until another host's leader record names it (polled every 50 ms).
func (f *benchCrontabFleet) failover(leaders map[string]string) ([]time.Duration, int) {
	var led []string
	for j, h := range leaders {
		if h == "h0" {
			led = append(led, j)
		}
	}
	for _, p := range f.hosts["h0"] {
		p.Signal(syscall.SIGKILL)
	}
	t0 := time.Now()
	var ds []time.Duration
	left := map[string]bool{}
	for _, j := range led {
		left[j] = true
	}
	for len(left) > 0 && time.Since(t0) < 2*time.Minute {
		for j := range left {
			data, _, err := f.b.conn.Get(f.base + "/" + j + "/" + leaderName)
			var rec leaderRecord
			if err == nil && json.Unmarshal(data, &rec) == nil && rec.CandidateID != "h0" && rec.CandidateID != "" {
				ds = append(ds, time.Since(t0))
				delete(left, j)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return ds, len(led)
}

func benchCrontabSessions(b *benchEnv) int { return len(benchCons(b.zk)) }

func benchCrontab(t *testing.T, b *benchEnv) []benchCrontabRow {
	var rows []benchCrontabRow
	const daily, dailyCmd = "0 3 * * *", "exit 0"
	for _, size := range benchCrontabSizes(t) {
		jobs, hosts := size[0], size[1]
		name := fmt.Sprintf("crontab-%dx%d", jobs, hosts)
		t.Run(name, func(t *testing.T) {
			r := benchCrontabRow{name: "run crontab", jobs: jobs, hosts: hosts}
			sessions0 := benchCrontabSessions(b)
			f := b.crontabFleet(t, name, jobs, daily, dailyCmd)
			f.crontab(hosts)
			f.awaitLeaders(2 * time.Minute)
			time.Sleep(5 * time.Second) // the last publisher writes and handovers are in
			f.measure(&r, sessions0)
			leaders := f.awaitLeaders(time.Minute)
			r.spread = f.spread(leaders, hosts)
			ds, n := f.failover(leaders)
			r.failover, r.failoverJobs = benchSummarize(ds), n
			f.stop()
			t.Logf("%s: %+v", name, r)
			rows = append(rows, r)
		})
	}
	// What the same 20 jobs on 2 hosts cost as one run cron process a job.
	t.Run("per-job-20x2", func(t *testing.T) {
		r := benchCrontabRow{name: "run cron a job", jobs: 20, hosts: 2}
		sessions0 := benchCrontabSessions(b)
		f := b.crontabFleet(t, "crontab-perjob", 20, daily, dailyCmd)
		f.perJob(2, daily, dailyCmd)
		leaders := f.awaitLeaders(2 * time.Minute)
		time.Sleep(5 * time.Second)
		f.measure(&r, sessions0)
		r.spread = f.spread(leaders, 2)
		f.stop()
		t.Logf("per job: %+v", r)
		rows = append(rows, r)
	})
	// While runs go: 20 every-minute jobs of 20 s each on 2 hosts.
	t.Run("running-20x2", func(t *testing.T) {
		r := benchCrontabRow{name: "run crontab, every job running each minute", jobs: 20, hosts: 2}
		sessions0 := benchCrontabSessions(b)
		f := b.crontabFleet(t, "crontab-running", 20, "* * * * *", "sleep 20")
		f.crontab(2)
		f.awaitLeaders(2 * time.Minute)
		f.measure(&r, sessions0)
		r.runningWrites = r.writes
		f.stop()
		t.Logf("running: %+v", r)
		rows = append(rows, r)
	})
	return rows
}

func benchCrontabSection(rows []benchCrontabRow) string {
	var s strings.Builder
	s.WriteString("\n## 18. A crontab on a fleet: many jobs in one process\n\n")
	s.WriteString("J daily jobs (`0 3 * * *`) on H hosts, each host one `ballot run crontab FILE` process, the default session timeout (5 s); " +
		"beside it the same 20 jobs as one `run cron` process a job a host. Figures a host are the largest host's (ballot and every process below it); " +
		"writes are the zxid's advance, packets those the ensemble received, over one idle window. Failover: one host SIGKILLed while nothing runs; " +
		"for each job it led, the time until another host's leader record names it (polled every 50 ms).\n\n")
	s.WriteString("| setup | jobs × hosts | processes a host | RSS a host | PSS a host | sessions | writes/min | packets/min | CPU ms/min a host | leaderships a host | failover per job (min / median / max, n) |\n")
	s.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fo := "—"
		if r.failoverJobs > 0 {
			fo = fmt.Sprintf("%s / %s / %s, %d of %d", benchMs(r.failover.min), benchMs(r.failover.med), benchMs(r.failover.max), r.failover.n, r.failoverJobs)
		}
		var sp []string
		for _, n := range r.spread {
			sp = append(sp, strconv.Itoa(n))
		}
		spread := strings.Join(sp, " / ")
		if spread == "" {
			spread = "—"
		}
		fmt.Fprintf(&s, "| %s | %d × %d | %d | %.1f MiB | %.1f MiB | %d | %.1f | %.0f | %.0f | %s | %s |\n",
			r.name, r.jobs, r.hosts, r.procs, float64(r.rss)/1024, float64(r.pss)/1024, r.sessions, r.writes, r.packets, r.cpuMs, spread, fo)
	}
	return s.String()
}
