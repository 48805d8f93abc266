package main

import (
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"ballot/internal/slog"
)

// TestStartGivesUpOnAStoppedKeeper: a keeper stopped as soon as it runs
// never reports the start; without a lease to bound the wait, the start
// limit does: the keeper is killed and the start fails. The keeper here is
// this test binary (startChild runs its own executable), which stops
// itself (testChildMain's stopself).
func TestStartGivesUpOnAStoppedKeeper(t *testing.T) {
	const limit = 300 * time.Millisecond
	log := newLogger(io.Discard, "human", slog.LevelInfo)
	began := time.Now()
	c, err := startChild(log, childSpec{Argv: []string{"true"}, StartLimit: limit,
		Env: []string{"BALLOT_TEST_CHILD=stopself", "GORACE=atexit_sleep_ms=0"}})
	if err != nil {
		t.Fatal(err)
	}
	waited := time.Since(began)
	select {
	case <-c.Done():
	case <-time.After(10 * limit):
		t.Fatalf("the stopped keeper was not reaped %s after the start gave up", 10*limit)
	}
	ex := c.Exit()
	if c.pid != 0 || ex.Started || ex.Code != exitFailure || !strings.Contains(ex.Reason, "within "+limit.String()) {
		t.Fatalf("pid %d, exit %+v: want a failed start that says why", c.pid, ex)
	}
	if waited < limit {
		t.Fatalf("gave up after %s, before the limit of %s", waited, limit)
	}
	if err := syscall.Kill(c.keeper.Process.Pid, 0); err == nil {
		t.Errorf("the keeper %d still exists", c.keeper.Process.Pid)
	}
	t.Logf("gave up on the stopped keeper after %s", waited.Round(time.Millisecond))
}
