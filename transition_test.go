package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"ballot/internal/slog"
)

// TestBecomeEffects: each transition, from one place, leaves the phase,
// the lease the watchdog and metrics read, systemd's status, the metrics,
// the published state and the operator's lines as a leadership's life
// needs them: elected, paused, resumed, then resigning or lost.
func TestBecomeEffects(t *testing.T) {
	type state struct {
		phase           phase
		lease           bool // a lease stored
		status          string
		leader, paused  bool
		published       string
		lines           string // events logged by the transition, in order
		leadingDemotion bool   // c.demoteOwed: the demote hook is owed
	}
	clk := &testClock{boot: bootTime(time.Hour), wall: time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)}
	pause := &pauseRecord{Reason: "maintenance", By: "ops", Since: clk.wall}
	for _, end := range []phase{phaseResigning, phaseLost} {
		t.Run(string(end), func(t *testing.T) {
			var b bytes.Buffer
			r := &runner{set: &Settings{CandidateID: "host-a"}, log: newLogger(&b, "json", slog.LevelDebug), notify: &notifier{},
				metrics: newMetrics(filepath.Join(t.TempDir(), "m.prom"), "/e", "host-a", nil, nil), phase: phaseFollowing}
			c := &candidate{proposalFacts: proposalFacts{node: "n-0000000001", token: 7, slots: 1}, pub: &publisher{kick: make(chan struct{}, 1)}}
			l := testLease(2*time.Second, 0, clk, true)
			type becomeStep struct {
				p    phase
				t    change
				want state
			}
			steps := []becomeStep{
				{phaseLeading, change{c: c, l: l}, state{phaseLeading, true, "leading; leader host-a; fencing token 7", true, false, stateLeading, "phase elected", true}},
				{phasePaused, change{c: c, pause: pause}, state{phasePaused, true, "leading, paused: maintenance; leader host-a; fencing token 7", true, true, stateLeading, "paused phase", true}},
				{phaseLeading, change{c: c, pause: pause}, state{phaseLeading, true, "leading, paused: maintenance; leader host-a; fencing token 7", true, false, stateLeading, "phase", true}},
				{phasePaused, change{c: c, pause: pause}, state{phasePaused, true, "leading, paused: maintenance; leader host-a; fencing token 7", true, true, stateLeading, "paused phase", true}},
				{phaseLeading, change{c: c, pause: pause, resumed: true}, state{phaseLeading, true, "leading; leader host-a; fencing token 7", true, false, stateLeading, "resumed phase", true}},
			}
			if end == phaseResigning {
				steps = append(steps, becomeStep{end, change{c: c, reason: "step-down"}, state{end, false, "resigning (step-down)", false, false, stateResigning, "phase resigning", true}})
			} else {
				steps = append(steps, becomeStep{end, change{c: c, reason: "session-expired"}, state{end, false, "leadership lost (session-expired)", false, false, stateLeading, "phase", true}})
			}
			for i, s := range steps {
				b.Reset()
				r.become(s.p, s.t)
				var events []string
				for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
					if a, ok := parseLogLine(line); ok {
						events = append(events, a["event"])
					}
				}
				got := state{r.phase, r.lease.Load() != nil, r.notify.last, r.metrics.leader, r.metrics.paused, c.pub.status.State,
					strings.Join(events, " "), c.demoteOwed}
				if got != s.want {
					t.Errorf("step %d, become(%s): %+v, want %+v", i, s.p, got, s.want)
				}
			}
		})
	}
}

// TestJoiningLogsRuntime: at debug, each candidacy's joining line carries
// the process's goroutines and heap (issue 37: a long run's logs show
// whether they grow with leaderships); the other phases' lines do not.
func TestJoiningLogsRuntime(t *testing.T) {
	runtime.GC() // heap_live_bytes is the last collection's
	var buf bytes.Buffer
	r := &runner{log: newLogger(&buf, "json", slog.LevelDebug), phase: phaseResigning}
	r.enter(phaseJoining)
	r.enter(phaseFollowing)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 phase lines, got:\n%s", buf.String())
	}
	var joining, following map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &joining); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &following); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"goroutines", "heap_inuse_bytes", "heap_live_bytes"} {
		if v, ok := joining[k].(float64); !ok || v <= 0 {
			t.Errorf("joining line: %s = %v, want a positive number: %s", k, joining[k], lines[0])
		}
		if _, ok := following[k]; ok {
			t.Errorf("following line carries %s: %s", k, lines[1])
		}
	}
}
