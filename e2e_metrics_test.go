package main

// End to end: the metrics file a leader and a follower write.

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var promSample = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*)\} (-?[0-9.e+]+)$`)

// parseProm reads Prometheus text format strictly enough for node_exporter:
// every sample is name{labels} value, of a metric announced by # TYPE.
// Samples are keyed by name and the labels other than election and
// candidate (e.g. `ballot_command_exits_total{code="0"}`).
func parseProm(t *testing.T, text string) map[string]float64 {
	t.Helper()
	typed := map[string]bool{}
	out := map[string]float64{}
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if f := strings.Fields(line); len(f) >= 4 && f[0] == "#" && f[1] == "TYPE" {
			typed[f[2]] = f[3] == "gauge" || f[3] == "counter"
			continue
		}
		if strings.HasPrefix(line, "# HELP ") {
			continue
		}
		m := promSample.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("not a Prometheus sample: %q", line)
		}
		if !typed[m[1]] {
			t.Fatalf("sample of %s without a # TYPE line", m[1])
		}
		var extra []string
		for _, l := range regexp.MustCompile(`([a-z_]+)="((?:[^"\\]|\\.)*)"`).FindAllStringSubmatch(m[2], -1) {
			if l[1] != "election" && l[1] != "candidate" {
				extra = append(extra, l[1]+`="`+l[2]+`"`)
			}
		}
		key := m[1]
		if len(extra) > 0 {
			key += "{" + strings.Join(extra, ",") + "}"
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("value of %q: %v", line, err)
		}
		out[key] = v
	}
	return out
}

// waitProm waits until the metrics file satisfies ok.
func waitProm(t *testing.T, file string, ok func(m map[string]float64) bool) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if err == nil {
			if m := parseProm(t, string(b)); ok(m) {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never got there; it says:\n%s", file, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMetricsFile: the file follows leadership, command exits and cron
// runs, and says ballot_up 0 once ballot has exited.
func TestMetricsFile(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	dir := t.TempDir()
	e := newElection(t, c)
	start := func(id string) (*ballotProc, string) {
		file := filepath.Join(dir, id+".prom")
		args := []string{"--zookeeper-servers", c.ConnString(), "--zookeeper-base-path", e.base, "--zookeeper-session-timeout", "2s",
			"run", "cron", "--candidate-id", id, "--metrics-file", file, "--on-child-success", "ignore",
			"--schedule", "* * * * * *", "--", selfExe(), "0", "10ms"}
		return startBallot(t, id, ballotEnv(t, "BALLOT_TEST_CHILD=exit"), args...), file
	}
	a, af := start("a")
	waitProm(t, af, func(m map[string]float64) bool {
		return m["ballot_leader"] == 1 && m[`ballot_command_exits_total{code="0"}`] >= 2 && m["ballot_cron_last_success_timestamp_seconds"] > 0
	})
	b, bf := start("b")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	mb := waitProm(t, bf, func(m map[string]float64) bool { return m["ballot_zookeeper_connected"] == 1 })
	if mb["ballot_up"] != 1 || mb["ballot_leader"] != 0 || mb["ballot_command_running"] != 0 || mb["ballot_leadership_changes_total"] != 0 {
		t.Errorf("the follower's metrics: %v", mb)
	}
	ma := waitProm(t, af, func(m map[string]float64) bool { return true })
	if ma["ballot_up"] != 1 || ma["ballot_zookeeper_connected"] != 1 || ma["ballot_leadership_changes_total"] != 1 ||
		ma["ballot_cron_last_run_timestamp_seconds"] < ma["ballot_cron_last_success_timestamp_seconds"] ||
		ma["ballot_cron_last_run_timestamp_seconds"] > float64(time.Now().Unix()) {
		t.Errorf("the leader's metrics: %v", ma)
	}

	a.Signal(syscall.SIGTERM)
	a.Wait(10 * time.Second)
	ma = waitProm(t, af, func(m map[string]float64) bool { return true })
	if ma["ballot_up"] != 0 || ma["ballot_leader"] != 0 || ma["ballot_leadership_changes_total"] != 2 {
		t.Errorf("after a exited: %v", ma)
	}
	waitProm(t, bf, func(m map[string]float64) bool {
		return m["ballot_leader"] == 1 && m["ballot_leadership_changes_total"] == 1 && m["ballot_cron_last_run_timestamp_seconds"] > 0
	})
	// b rewrites its file through a temporary one: look once it has exited.
	b.Signal(syscall.SIGTERM)
	b.Wait(10 * time.Second)
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestCrontabMetricsFile: run crontab --metrics-file writes one file with
// every job's series, labelled by the job's election as run cron's are,
// each family once; a job a reload removes leaves the file once its runner
// has ended, a job it adds appears; on exit every job says ballot_up 0.
func TestCrontabMetricsFile(t *testing.T) {
	t.Parallel()
	ct := newCrontab(t, sharedZK(t))
	file := filepath.Join(ct.dir, "crontab.prom")
	ct.write(ct.line("one", "@every 1s", "0"), ct.line("two", "@every 1s", "0"), ct.line("three", "@every 1s", "0"))
	a := ct.start("a", "--metrics-file", file)
	// Each wait below is for a job's first run, or a runner's end: the
	// session's dial (≤ T, start's --zookeeper-session-timeout 2s), the
	// job's seeded election (no holder to wait out; ≤ T if one were), its
	// next @every 1s time, and the file rewritten on that change; twice
	// that for a busy machine.
	const T, every = 2 * time.Second, time.Second
	within := 2 * (2*T + every)
	election := func(job string) string { return ct.base + "/" + job }
	byJob := func(text string) map[string]map[string]float64 {
		out := map[string]map[string]float64{}
		for _, job := range []string{"one", "two", "three", "four"} {
			if strings.Contains(text, `{election="`+election(job)+`",candidate="a"`) {
				out[job] = parseProm(t, filterElection(text, election(job)))
			}
		}
		return out
	}
	// A counter never goes back while ballot runs: not when a job's
	// settings change either (its new runner carries them on).
	seen := map[string]float64{}
	wait := func(what string, ok func(jobs map[string]map[string]float64) bool) string {
		t.Helper()
		var text string
		for deadline := time.Now().Add(within); ; time.Sleep(50 * time.Millisecond) {
			if b, err := os.ReadFile(file); err == nil {
				text = string(b)
				jobs := byJob(text)
				for job, m := range jobs {
					for k, v := range m {
						if strings.Contains(k, "_total") {
							if v < seen[job+" "+k] {
								t.Errorf("job %s: %s went back from %v to %v", job, k, seen[job+" "+k], v)
							}
							seen[job+" "+k] = v
						}
					}
				}
				if ok(jobs) {
					return text
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s; %s says:\n%s", what, within, file, text)
			}
		}
	}
	ran := func(jobs ...string) func(map[string]map[string]float64) bool {
		return func(m map[string]map[string]float64) bool {
			for _, j := range jobs {
				if m[j]["ballot_cron_last_run_timestamp_seconds"] == 0 {
					return false
				}
			}
			return true
		}
	}
	text := wait("every job's last run", ran("one", "two", "three"))
	families := checkFamiliesOnce(t, text)
	want := election("one") + " " + election("three") + " " + election("two") + " "
	if families["ballot_up"] != want || families["ballot_cron_last_run_timestamp_seconds"] != want {
		t.Errorf("ballot_up's samples are of %q, last run's of %q; want each job once, by election: %q",
			families["ballot_up"], families["ballot_cron_last_run_timestamp_seconds"], want)
	}
	for job, m := range byJob(text) {
		if m["ballot_up"] != 1 || m["ballot_leadership_changes_total"] < 1 {
			t.Errorf("job %s: %v", job, m)
		}
	}

	// three removed, four added, two changed (its command).
	ct.write(ct.line("one", "@every 1s", "0"), ct.line("two", "@every 1s", "0.01"), ct.line("four", "@every 1s", "0"))
	reloaded := float64(time.Now().Unix())
	a.Signal(syscall.SIGHUP)
	a.WaitEvent(logEvReloaded, within, "left", "three", "joined", "four", "changed", "two")
	text = wait("three gone, four run, two run again", func(m map[string]map[string]float64) bool {
		_, three := m["three"]
		return !three && ran("one", "two", "four")(m) && m["two"]["ballot_cron_last_run_timestamp_seconds"] > reloaded
	})
	checkFamiliesOnce(t, text)

	a.Signal(syscall.SIGTERM)
	if code := a.Wait(within); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	checkFamiliesOnce(t, string(b))
	jobs := byJob(string(b))
	if len(jobs) != 3 {
		t.Errorf("after exit the file has jobs %v, want one, two, four:\n%s", jobs, b)
	}
	for _, job := range []string{"one", "two", "four"} {
		if m, ok := jobs[job]; !ok || m["ballot_up"] != 0 || m["ballot_leader"] != 0 || m["ballot_cron_last_run_timestamp_seconds"] == 0 {
			t.Errorf("job %s after exit: %v", job, m)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(ct.dir, ".*tmp*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	for _, j := range []string{"one", "two", "three", "four"} {
		ct.checkOnce(j)
	}
}
