package main

// What a newcomer hits in the first hour (issue 36): a command that exits
// 0 at once must not spin.

import (
	"strings"
	"testing"
	"time"
)

// TestQuickSuccessBacksOff: `true` under rerun and under reelect is rerun
// on the quick-run back-off schedule (run 1 → 2 at once, then 100 ms,
// 200 ms, 400 ms, 800 ms, 1.6 s, 3.2 s ...), not ~90 times a second, and
// the first quick success is said once, at WARN. Counted in events: when
// ballot says it waits 3.2 s (the pause after the 7th run), exactly 7
// runs have started, whatever the box's speed.
func TestQuickSuccessBacksOff(t *testing.T) {
	c := startZK(t, 1)
	const T = 2 * time.Second // runArgs' session timeout
	for _, policy := range []string{"rerun", "reelect"} {
		t.Run(policy, func(t *testing.T) {
			e := newElection(t, c)
			p := startBallot(t, policy, ballotEnv(t),
				runArgs(c.Servers(), e.base, policy, "--no-wait", "--on-child-success", policy, "--", "true")...)
			// The pauses before the 7th wait add up to 3.1 s; each
			// reelection may take a few T on a busy box (5 T each).
			p.WaitLog("wait=3.2s", 3100*time.Millisecond+7*5*T)
			out := p.out.String()
			before := out[:strings.Index(out, "wait=3.2s")]
			if n := strings.Count(before, "event="+string(logEvCommandStarted)); n != 7 {
				t.Errorf("%d command-started events before the 3.2 s pause, want 7", n)
			}
			if n := strings.Count(out, "a command that daemonizes must run in the foreground"); n != 1 {
				t.Errorf("the quick-success warning said %d times, want once", n)
			}
			if !logLineHas(out, "the command exited 0 after", "WARN") {
				t.Errorf("no WARN line \"the command exited 0 after ...\"")
			}
		})
	}
}

// logLineHas: some line of out contains both sub and want.
func logLineHas(out, sub, want string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, sub) && strings.Contains(line, want) {
			return true
		}
	}
	return false
}
