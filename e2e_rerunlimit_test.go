package main

// --rerun-limit N/D: restart in place up to N times within D, then hand
// over to a ready next in line, which gets its own count; with nobody
// ready, restart here with a growing pause.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rerunLimitRuns reads "candidate unix-nanos" lines, one per run.
func rerunLimitRuns(t *testing.T, file string) (by map[string][]time.Time) {
	t.Helper()
	by = map[string][]time.Time{}
	for _, l := range fileLines(t, file) {
		if fs := strings.Fields(l); len(fs) == 2 {
			if ns, err := strconv.ParseInt(fs[1], 10, 64); err == nil {
				by[fs[0]] = append(by[fs[0]], time.Unix(0, ns))
			}
		}
	}
	return by
}

// TestRerunLimitHandsOverThenRestartsHere: a and b fail every run once a
// gate opens, under --on-child-error rerun --rerun-limit 2/1m. a, leading,
// reruns twice (3 runs), then hands over to b, which waits in line, and
// stands again sitting out for the window (info, its metrics file). b
// reruns twice too; at its limit the next in line is a, sitting out: b
// restarts here, pausing 1 s, then 2 s, and a never leads again. The
// window (1 min) outlasts the test, so nothing leaves it meanwhile.
func TestRerunLimitHandsOverThenRestartsHere(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	dir := t.TempDir()
	gate, runs := filepath.Join(dir, "gate"), filepath.Join(dir, "runs")
	script := `while [ ! -e "$GATE" ]; do sleep 0.05; done
echo "$BALLOT_CANDIDATE_ID $(date +%s%N)" >> "$RUNS"; exit 3`
	env := ballotEnv(t, "GATE="+gate, "RUNS="+runs)
	start := func(id string) (*ballotProc, string) {
		prom := filepath.Join(dir, id+".prom")
		args := append(runArgs(c.Servers(), e.base, id, "--on-child-error", "rerun", "--rerun-limit", "2/1m",
			"--metrics-file", prom), "--", "sh", "-c", script)
		return startBallot(t, id, env, args...), prom
	}
	a, aprom := start("a")
	a.WaitEvent(logEvCommandStarted, 10*time.Second)
	b, _ := start("b")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}

	ev := a.WaitEvent(logEvRerunLimit, 20*time.Second)
	if ev["outcome"] != "handed-over" || ev["successor"] != "b" || ev["failures"] != "3" {
		t.Errorf("a at its limit: %v, want handed-over to b after 3 failures", ev)
	}
	b.WaitEvent(logEvElected, 10*time.Second)
	ev = b.WaitEvent(logEvRerunLimit, 20*time.Second)
	if ev["outcome"] != "restarted-here" || ev["wait"] != "1s" {
		t.Errorf("b at its limit: %v, want restarted-here after 1s (a sits out)", ev)
	}
	var byB []time.Time
	for deadline := time.Now().Add(20 * time.Second); len(byB) < 5; time.Sleep(50 * time.Millisecond) {
		if byB = rerunLimitRuns(t, runs)["b"]; time.Now().After(deadline) {
			t.Fatalf("b ran %d times, want 5: it restarts here past its limit", len(byB))
		}
	}
	if g3, g4 := byB[3].Sub(byB[2]), byB[4].Sub(byB[3]); g3 < time.Second || g4 < 2*time.Second {
		t.Errorf("b's pauses past its limit: %s, %s; want at least 1s, then 2s", g3, g4)
	}
	if byA := rerunLimitRuns(t, runs)["a"]; len(byA) != 3 {
		t.Errorf("a ran %d times, want 3 (the first run and 2 reruns): it must not lead again while sitting out", len(byA))
	}

	inf, _ := infoJSON(t, c.Servers(), e.base)
	var sits *infoCandidate
	for i := range inf.Candidates {
		if inf.Candidates[i].ID == "a" {
			sits = &inf.Candidates[i]
		}
	}
	if sits == nil || sits.SitsOutUntil == nil || sits.SitsOutForMs <= 0 || sits.SitsOutForMs > time.Minute.Milliseconds() {
		t.Errorf("info: a should sit out for at most the window: %+v", sits)
	}
	out, _ := reader(t, c.ConnString(), e.base, "info")
	if !strings.Contains(out, "sits out ") {
		t.Errorf("info's summary does not say a sits out:\n%s", out)
	}
	waitProm(t, aprom, func(m map[string]float64) bool {
		return m[`ballot_rerun_limit_reached_total{outcome="handed-over"}`] == 1 &&
			m["ballot_sitting_out_until_timestamp_seconds"] > float64(time.Now().Unix())
	})
}

// TestRerunLimitAloneRestartsHere: a single candidate at its limit (0/1m:
// no rerun in place) has nobody to hand over to: it keeps the lead and
// restarts here after a pause of 1 s, then 2 s, saying so once.
func TestRerunLimitAloneRestartsHere(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	runs := filepath.Join(t.TempDir(), "runs")
	env := ballotEnv(t, "RUNS="+runs)
	a := startBallot(t, "a", env, append(runArgs(c.Servers(), e.base, "a", "--on-child-error", "rerun", "--rerun-limit", "0/1m"),
		"--", "sh", "-c", `echo "$BALLOT_CANDIDATE_ID $(date +%s%N)" >> "$RUNS"; exit 3`)...)
	ev := a.WaitEvent(logEvRerunLimit, 20*time.Second)
	if ev["outcome"] != "restarted-here" || ev["successor"] != "none" || ev["failures"] != "1" || ev["wait"] != "1s" {
		t.Errorf("a alone at its limit: %v, want restarted-here after 1s", ev)
	}
	var byA []time.Time
	for deadline := time.Now().Add(20 * time.Second); len(byA) < 3; time.Sleep(50 * time.Millisecond) {
		if byA = rerunLimitRuns(t, runs)["a"]; time.Now().After(deadline) {
			t.Fatalf("a ran %d times, want 3: alone, it restarts here", len(byA))
		}
	}
	if g1, g2 := byA[1].Sub(byA[0]), byA[2].Sub(byA[1]); g1 < time.Second || g2 < 2*time.Second {
		t.Errorf("a's pauses past its limit: %s, %s; want at least 1s, then 2s", g1, g2)
	}
	if n := len(a.Events(logEvRerunLimit)); n != 1 {
		t.Errorf("the limit was logged %d times, want once while the failures stay past it", n)
	}
	if a.Logged("resigning") {
		t.Errorf("a resigned, alone in line:\n%s", a.out.String())
	}
}
