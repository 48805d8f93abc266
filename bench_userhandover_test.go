//go:build bench

package main

// A clean handover measured the way a user does (issue 31): the command is
// an ordinary Go program (go build, default flags) that prints its own
// clock to stdout every 20 ms for 1.5 s, under two `run once`
// candidates with reelect; ballot relays its output (--wrap-child-logs).
// Figures per handover: the old command's last line → the new one's first,
// by the times the programs printed and by the times ballot logged the
// relayed lines; and where the time goes, from ballot's own events.
//
//	go test -tags bench -count=1 -run '^TestBenchUserHandover$' -v .
//
// BENCH_USER_CANDIDATES=3: three candidates, as the bench's clean handover;
// BENCH_USER_T=5s: the session timeout (default 2s, the bench's; 5s is
// ballot's default, a user's; the ensemble's maxSessionTimeout allows it).
//
// Not a section of BENCHMARKS.md's generated part: a probe of where the
// bench's clean handover (its checker stamps a file at its first
// instruction) and a user's view differ.

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

const benchUserProgram = `package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	hold, _ := time.ParseDuration(os.Args[1])
	end := time.Now().Add(hold)
	for {
		fmt.Printf("out %d\n", time.Now().UnixNano())
		if time.Now().After(end) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
`

// benchUserHold is how long each run prints: over 1 s, so that ballot's
// back-off of quick runs (command.go, backoffFor: a run under 1 s counts)
// does not hold a candidate out of line; with 200 ms and two candidates
// the "handover" was that back-off (median 201 ms, up to 9.7 s).
const benchUserHold = "1500ms"

type benchUserLine struct {
	cand    string
	printed time.Time // the program's own clock
	logged  time.Time // ballot's log line of it
}

func TestBenchUserHandover(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "prog")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(src, "main.go"), []byte(benchUserProgram), 0o644)
	_ = os.WriteFile(filepath.Join(src, "go.mod"), []byte("module prog\n\ngo 1.21\n"), 0o644)
	prog := filepath.Join(dir, "prog-bin")
	build := exec.Command("go", "build", "-o", prog, ".")
	build.Dir = src
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if fi, err := os.Stat(prog); err == nil {
		t.Logf("command: an ordinary Go program of %d KiB (go build, default flags)", fi.Size()>>10)
	}
	zkc := startZKWith(t, zkOptions{N: 3, TickTime: 200 * time.Millisecond, Fsync: true,
		ExtraConfig: []string{"maxSessionTimeout=20000"}})
	base := "/bench/user-handover"
	seedElection(t, zkc.Servers(), base)
	procs := map[string]*ballotProc{}
	ids := []string{"c1", "c2"}
	if os.Getenv("BENCH_USER_CANDIDATES") == "3" { // as the bench's clean handover
		ids = append(ids, "c3")
	}
	sessionTimeout := "2s" // the bench's clean handover's
	if v := os.Getenv("BENCH_USER_T"); v != "" {
		sessionTimeout = v
	}
	for _, id := range ids {
		procs[id] = startBallot(t, id, ballotEnv(t), "--zookeeper-servers", zkc.ConnString(), "--zookeeper-base-path", base,
			"--zookeeper-session-timeout", sessionTimeout, "--log-format", "json", "run", "once", "--candidate-id", id,
			"--on-child-success", "reelect", "--", prog, benchUserHold)
		time.Sleep(100 * time.Millisecond)
	}
	const warmup, n = 5, 40
	deadline := time.Now().Add(3 * time.Minute)
	var gaps [][2]benchUserLine
	for len(gaps) < warmup+n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d handovers in 3 min", len(gaps))
		}
		time.Sleep(500 * time.Millisecond)
		gaps = benchUserHandovers(benchUserLines(procs))
	}
	for _, p := range procs {
		p.Signal(15)
	}
	for _, p := range procs {
		p.Wait(20 * time.Second)
	}
	gaps = gaps[warmup : warmup+n]
	var printed, logged []time.Duration
	for _, g := range gaps {
		printed = append(printed, g[1].printed.Sub(g[0].printed))
		logged = append(logged, g[1].logged.Sub(g[0].logged))
	}
	t.Logf("%s", benchSummarize(printed).row("last line → first line, as the programs printed them"))
	t.Logf("%s", benchSummarize(logged).row("last line → first line, as ballot logged them"))
	// Where the time goes: old last line (printed) → old `command ended` →
	// `resigning` → new `elected leader` → new `command started` → new
	// first line (printed).
	runs := map[string][]*ballotProc{}
	for id, p := range procs {
		runs[id] = []*ballotProc{p}
	}
	ev := benchLogEvents(runs,
		"command ended", "resigning", "elected leader", "command started")
	names := []string{"last line → command ended", "command ended → resigning", "resigning → elected leader",
		"elected leader → command started", "command started → first line printed", "first line printed → logged"}
	steps := make([][]time.Duration, len(names))
	for _, g := range gaps {
		// To the first line's relay: `command started` may follow its print.
		ts, ok := benchSteps(ev, g[0].printed, g[1].logged, []benchStep{{g[0].cand, "command ended"}, {g[0].cand, "resigning"},
			{g[1].cand, "elected leader"}, {g[1].cand, "command started"}})
		if !ok {
			continue
		}
		ts = append([]time.Time{g[0].printed}, append(ts, g[1].printed, g[1].logged)...)
		for i := range steps {
			steps[i] = append(steps[i], ts[i+1].Sub(ts[i]))
		}
	}
	for i, name := range names {
		t.Logf("%s", benchSummarize(steps[i]).row(name))
	}
}

// benchUserLines are the program's lines every candidate relayed, in the
// order they were printed.
func benchUserLines(procs map[string]*ballotProc) []benchUserLine {
	var out []benchUserLine
	for cand, p := range procs {
		sc := bufio.NewScanner(strings.NewReader(p.out.String()))
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			var rec struct {
				Time   time.Time `json:"time"`
				Msg    string    `json:"msg"`
				Stream string    `json:"stream"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Stream != "stdout" || !strings.HasPrefix(rec.Msg, "out ") {
				continue
			}
			ns, err := strconv.ParseInt(strings.TrimPrefix(rec.Msg, "out "), 10, 64)
			if err != nil {
				continue
			}
			out = append(out, benchUserLine{cand: cand, printed: time.Unix(0, ns), logged: rec.Time})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].printed.Before(out[j].printed) })
	return out
}

// benchUserHandovers pairs each candidate's last line with the next
// candidate's first.
func benchUserHandovers(lines []benchUserLine) (pairs [][2]benchUserLine) {
	for i := 1; i < len(lines); i++ {
		if lines[i].cand != lines[i-1].cand {
			pairs = append(pairs, [2]benchUserLine{lines[i-1], lines[i]})
		}
	}
	return pairs
}
