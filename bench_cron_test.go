//go:build bench

package main

// 12. run cron through a host's death and a failed run (issue 31): how late
// a scheduled time missed by the leader's host death starts on the
// successor (the default catch-up), and how long after a failed attempt
// the retry's command starts (--retries 1 --retry-delay 0).

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

type benchCronResult struct {
	catchUp benchDist // S → the successor's command's first instruction
	killed  time.Duration
	retry   benchDist // attempt 1's SIGTERM (--timeout) → attempt 2's first instruction
}

const benchCronT = time.Second // the elections' session timeout

func benchCron(t *testing.T, b *benchEnv) benchCronResult {
	return benchCronResult{catchUp: benchSummarize(benchCronCatchUp(t, b, 6)), killed: 3 * benchCronT / 4,
		retry: benchSummarize(benchCronRetry(t, b, 8))}
}

// benchCronCatchUp: two candidates run a 100 ms command every 4 s (4T, more
// than the T + 3T/4 a host's death costs); the leader's host dies (ballot,
// keeper: SIGSTOP then SIGKILL, nobody closes its session) 3T/4 before a
// scheduled time S, reps times. Returns, for each, S → the successor's
// command's first instruction.
func benchCronCatchUp(t *testing.T, b *benchEnv, reps int) []time.Duration {
	const every = 4 * benchCronT
	e := b.election(t, "cron-catchup", benchCronT.String(), "100ms", "--on-child-success", "rerun")
	e.mode = []string{"run", "cron", "--schedule", "*/4 * * * * *"}
	ids := []string{"c1", "c2"}
	e.add(ids[0])
	e.waitStarts(1, 20*time.Second) // a run recorded: the election is not new
	e.add(ids[1])
	e.current[ids[1]].WaitLog(`"msg":"following"`, 10*time.Second)
	var out []time.Duration
	for i := 0; i < reps; i++ {
		leader, _ := e.leader()
		s := time.Now().Truncate(every).Add(every)
		for time.Until(s) < 3*benchCronT/4+200*time.Millisecond {
			s = s.Add(every)
		}
		time.Sleep(time.Until(s.Add(-3 * benchCronT / 4)))
		hostDies(e.current[leader])
		var got time.Time
		for deadline := s.Add(every); got.IsZero(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("cron catch-up: the time %s missed by %s's host's death never ran", s.Format(time.TimeOnly), leader)
			}
			for _, st := range benchStarts(benchReadStamps(e.stamps)) {
				if st.cand != leader && !st.t.Before(s) {
					got = st.t
					break
				}
			}
		}
		out = append(out, got.Sub(s))
		e.current[leader].Wait(10 * time.Second)
		q := e.add(leader) // the host is back, at the end of the line
		q.WaitLog(`"msg":"following"`, 10*time.Second)
	}
	e.stopAll()
	return out
}

// benchCronRetry: one candidate, a command that waits to be stopped, every
// 2 s, --timeout 300ms (a timed-out run is a failure), --retries 1
// --retry-delay 0. Returns, for each scheduled time, attempt 1's SIGTERM
// (as the command saw it) → attempt 2's first instruction: the command's
// exit after the stop, the end's records and attempt 2's fenced record,
// its keeper and exec.
func benchCronRetry(t *testing.T, b *benchEnv, reps int) []time.Duration {
	e := b.election(t, "cron-retry", benchCronT.String(), "wait", "--on-child-error", "rerun",
		"--timeout", "300ms", "--stop-grace-period", "1s", "--retries", "1", "--retry-delay", "0s")
	e.mode = []string{"run", "cron", "--schedule", "*/2 * * * * *"}
	e.add("c1")
	deadline := time.Now().Add(time.Duration(reps+3) * 2 * time.Second)
	var out []time.Duration
	for len(out) < reps {
		if time.Now().After(deadline) {
			t.Fatalf("cron retry: %d second attempts seen, want %d", len(out), reps)
		}
		time.Sleep(200 * time.Millisecond)
		out = out[:0]
		ss := benchReadStamps(e.stamps)
		for i := 0; i+2 < len(ss); i++ {
			// attempt 1 START, its TERM, attempt 2 START, less than 2 s apart
			if ss[i].kind == "START" && ss[i+1].kind == "TERM" && ss[i+2].kind == "START" && ss[i+2].t.Sub(ss[i].t) < 2*time.Second {
				out = append(out, ss[i+2].t.Sub(ss[i+1].t))
				i += 2
			}
		}
	}
	e.stopAll()
	return out
}

func (r benchCronResult) section() string {
	var s strings.Builder
	s.WriteString("## 12. run cron: a missed time caught up, a failed run retried\n\n")
	fmt.Fprintf(&s, "*Catch-up*: two `run cron` candidates (T = %s, a 100 ms command every 4 s, default flags: `--starting-deadline auto`); "+
		"the leader's host dies (its ballot and keeper stopped, then SIGKILLed: nobody closes its session) %s before a scheduled time S. "+
		"The successor leads about T + 3T/4 later and runs S, once: the figure is S → its command's first instruction. "+
		"With `--starting-deadline 0` S would be skipped.\n\n", benchCronT, r.killed)
	fmt.Fprintf(&s, "*Retry*: one candidate, `--timeout 300ms --retries 1 --retry-delay 0`, a command that runs until stopped: "+
		"attempt 1's SIGTERM (as the command saw it) → attempt 2's first instruction (attempt 1's exit, its end recorded, attempt 2 recorded in the fenced write, its keeper, exec).\n\n")
	s.WriteString("| figure | n | min | median | p99 | max |\n|---|---|---|---|---|---|\n")
	s.WriteString(r.catchUp.row("catch-up: S → the successor's run") + "\n")
	s.WriteString(r.retry.row("retry: attempt 1 stopped → attempt 2") + "\n\n")
	return s.String()
}
