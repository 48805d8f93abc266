package main

// A cron leader whose clock is ahead of ZooKeeper's records no future
// scheduled time (which would make every leader skip the runs until then).

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/slog"
	"ballot/internal/zookeeper"
)

// TestCronClockAheadOfZooKeeper: a leader whose clock is ahead of
// ZooKeeper's records no scheduled time ahead of it.
func TestCronClockAheadOfZooKeeper(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	t.Run("decision from real mtimes", func(t *testing.T) { t.Parallel(); aheadFromRealMtimes(t, c) })
	t.Run("record refuses a time ahead", func(t *testing.T) { t.Parallel(); recordRefusesTimeAhead(t, c) })
	t.Run("leader skips a time ahead", func(t *testing.T) { t.Parallel(); leaderSkipsTimeAhead(t, c) })
}

// aheadFromRealMtimes: the decision, from the mtime of a real ZooKeeper
// write, with this host's clock shifted.
func aheadFromRealMtimes(t *testing.T, c *zkCluster) {
	conn := zkConnect(t, c.Servers(), 2*time.Second)
	defer conn.Close()
	if _, err := conn.Create("/clock-mtime", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	sent := bootNow()
	st, err := conn.Set("/clock-mtime", []byte("x"), -1)
	if err != nil {
		t.Fatal(err)
	}
	r := zkClockReading{mtime: time.UnixMilli(st.Mtime), sent: sent}
	// ZooKeeper runs on this host: its clock is this host's.
	for _, tc := range []struct {
		shift  time.Duration
		refuse bool
	}{
		{0, false},
		{-time.Hour, false}, // behind: runs late, loses nothing
		{clockAheadLimit / 2, false},
		{clockAheadLimit + time.Second, true},
		{time.Hour, true},
	} {
		ahead := aheadOfZooKeeper(time.Now().Add(tc.shift), r, bootNow())
		if refused := ahead > clockAheadLimit; refused != tc.refuse {
			t.Errorf("clock shifted by %s: ahead by %s, refused %v, want %v", tc.shift, ahead, refused, tc.refuse)
		}
	}
}

// cronLeaderOnZK is an elected run cron leader, in this process, with its
// lease renewed on ZooKeeper; log collects its log lines.
func cronLeaderOnZK(t *testing.T, c *zkCluster, base string, log *syncBuffer) *cronLeader {
	t.Helper()
	lg := newLogger(log, "human", slog.LevelInfo)
	set := &Settings{ZooKeeperServers: c.Servers(), ZooKeeperACL: "open", Timezone: time.UTC, StopGracePeriod: time.Second}
	acc, err := loadZKAccess(set)
	if err != nil {
		t.Fatal(err)
	}
	s, err := zookeeper.DialSession(lg, acc, 2*time.Second, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	seedElection(t, c.Servers(), base)
	cand, err := propose(lg, s, base, "a", cmdRunCron, 0, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	taken, err := cand.takeBaton(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{set: set, log: lg, stopping: make(chan struct{}),
		metrics: newMetrics(filepath.Join(t.TempDir(), "m.prom"), base, "a", nil, nil)}
	w := &cronWork{r: r, sched: everySchedule{every: time.Second}}
	r.work, r.rules = w, runRules{scheduled: true, records: true, preempts: true, triggered: true}
	l := holdLease(cand, taken, set.StopGracePeriod, nil, true)
	t.Cleanup(l.Stop)
	r.lease.Store(l)
	return &cronLeader{r: r, w: w, v: &leadershipView{r: r, c: cand, l: l}, st: cronState{path: base + "/" + cronName, version: -1}}
}

// recordRefusesTimeAhead: a leader whose clock was stepped an hour
// forward does not record a scheduled time an hour ahead; a time on
// ZooKeeper's clock is recorded as usual.
func recordRefusesTimeAhead(t *testing.T, c *zkCluster) {
	base := "/ballot/test/cron-clock"
	cl := cronLeaderOnZK(t, c, base, &syncBuffer{})
	conn := zkConnect(t, c.Servers(), 2*time.Second)
	defer conn.Close()

	ahead := time.Now().Add(time.Hour).Truncate(time.Second)
	var refused *clockAheadError
	if err := cl.v.recordCron(&cl.st, ahead, cl.w.startOf(ahead), 1); !errors.As(err, &refused) {
		t.Errorf("recording a time an hour ahead: %v, want refused as ahead of ZooKeeper's clock", err)
	}
	if ok, _, err := conn.Exists(cl.st.path); err != nil || ok {
		t.Fatalf("the cron record exists (%v, %v): a time an hour ahead was recorded", ok, err)
	}
	now := time.Now().Truncate(time.Second)
	if err := cl.v.recordCron(&cl.st, now, cl.w.startOf(now), 1); err != nil {
		t.Fatalf("recording the time now: %v", err)
	}
}

// leaderSkipsTimeAhead: with its clock an hour ahead, the leader skips
// the time it finds due, logs it and counts it in the metrics file, stays
// leader, and runs nothing.
func leaderSkipsTimeAhead(t *testing.T, c *zkCluster) {
	base := "/ballot/test/cron-clock-skip"
	log := &syncBuffer{}
	cl := cronLeaderOnZK(t, c, base, log)
	_, over := cl.startDue(time.Now().Add(time.Hour))
	if over || cl.cmd != nil || cl.skipped.IsZero() {
		t.Fatalf("over %v, command %v, skipped %v: want the time skipped and the leadership on", over, cl.cmd, cl.skipped)
	}
	if !strings.Contains(log.String(), "clock is ahead of ZooKeeper's") {
		t.Errorf("the skip is not logged:\n%s", log.String())
	}
	if m := cl.r.metrics.render(); !strings.Contains(m, `reason="clock-ahead"} 1`) {
		t.Errorf("the skip is not counted:\n%s", m)
	}
}
