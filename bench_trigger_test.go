//go:build bench

package main

// 17. ballot trigger (issue 32 item 1): how soon a triggered run starts.
// The target: within 100 ms plus one round trip of the request.

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

type benchTriggerResult struct {
	start benchDist // the request written → the run's command's first instruction
}

// benchTrigger: one run cron candidate (T = 1 s) whose schedule never
// comes, a 100 ms command; `ballot trigger --wait` from another process,
// reps times, each while the leader's lease is at rest (T after the last
// run). The figure runs from the trigger's clock just before its create
// (the request's "at", same host) to the command's first instruction: the
// create's round trip, the leader's watch, the lease taken again, the
// fenced write that takes the request, the keeper and exec.
func benchTrigger(t *testing.T, b *benchEnv, reps int) benchTriggerResult {
	e := b.election(t, "trigger", benchCronT.String(), "100ms", "--on-child-success", "rerun")
	e.mode = []string{"run", "cron", "--schedule", "0 0 1 1 *"}
	p := e.add("c1")
	p.WaitLog(`"event":"elected"`, 20*time.Second)
	var out []time.Duration
	for i := 0; i < reps; i++ {
		time.Sleep(benchCronT) // the lease at rest
		cmd := exec.Command(b.bin, "--zookeeper-servers", strings.Join(b.zk.Servers(), ","), "--zookeeper-base-path", e.base,
			"trigger", "--wait", "30s")
		cmd.Env = ballotEnv(t)
		if o, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("trigger --wait: %v: %s", err, o)
		}
		items, err := readHistory(b.conn, e.base, 1, nil)
		if err != nil || len(items) != 1 || items[0].Trigger == nil {
			t.Fatalf("trigger: the newest history entry is not the triggered run: %v %+v", err, items)
		}
		at := items[0].Trigger.At
		var got time.Time
		for _, st := range benchStarts(benchReadStamps(e.stamps)) {
			if !st.t.Before(at) {
				got = st.t
				break
			}
		}
		if got.IsZero() {
			t.Fatalf("trigger: no command started after the request of %s", at.Format(time.RFC3339Nano))
		}
		out = append(out, got.Sub(at))
	}
	e.stopAll()
	return benchTriggerResult{start: benchSummarize(out)}
}

func (r benchTriggerResult) section() string {
	var s strings.Builder
	s.WriteString("## 17. ballot trigger: a run now\n\n")
	fmt.Fprintf(&s, "One `run cron` candidate (T = %s, a schedule that never comes, a 100 ms command), its lease at rest; "+
		"`ballot trigger --wait` from another process. From the request as the trigger stamped it just before its create "+
		"to the command's first instruction: the create's round trip, the leader's watch, the lease taken again (one quorum write), "+
		"the fenced write that takes the request and records the run, the keeper, exec. Target: 100 ms plus one round trip.\n\n", benchCronT)
	s.WriteString("| figure | n | min | median | p99 | max |\n|---|---|---|---|---|---|\n")
	s.WriteString(r.start.row("trigger: request → the run's first instruction") + "\n\n")
	return s.String()
}
