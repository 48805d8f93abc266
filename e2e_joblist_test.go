package main

// ballot jobs end to end: run cron elections one level under a base path
// (a crontab's jobs), listed one line each, against a real ZooKeeper.

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"

	"ballot/internal/zookeeper"
)

func TestJobsList(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	base := "/ballot/test/" + t.Name()
	// T = 2s. A candidate leads within T of its start and a job runs
	// every 2s, so each event below comes within 2T; 5T is slack for a
	// busy 2-core box.
	const T = 2 * time.Second
	wait := 5 * T
	job := func(name, id string, cmd ...string) *ballotProc {
		args := []string{"--zookeeper-servers", c.ConnString(), "--zookeeper-base-path", base + "/" + name,
			"--zookeeper-session-timeout", T.String(), "run", "cron", "--candidate-id", id, "--schedule", "*/2 * * * * *",
			"--on-child-success", "ignore", "--on-child-error", "ignore", "--"} // the leader stays between runs
		return startBallot(t, name+"-"+id, ballotEnv(t), append(args, cmd...)...)
	}
	// A node under the base path that is no election: not listed.
	conn := basicZKConn(t, c)
	if err := zookeeper.CreateParents(conn, base+"/not-a-job/child", zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Set(base+"/not-a-job", []byte("someone else's"), -1); err != nil {
		t.Fatal(err)
	}

	// backup: a leads, b next in line; rotate fails; report is paused.
	job("backup", "a", "true").WaitEvent(logEvElected, wait)
	job("backup", "b", "true").WaitEvent(logEvFollowing, wait)
	job("rotate", "b", "false")
	job("report", "c", "true")
	ended := func(ok func(*historyItem) bool) func([]*historyItem) bool {
		return func(items []*historyItem) bool { return len(items) > 0 && items[0].State == "ended" && ok(items[0]) }
	}
	waitHistory(t, c, base+"/backup", wait, "a run of backup", ended((*historyItem).succeeded))
	waitHistory(t, c, base+"/rotate", wait, "a failed run of rotate", ended(func(it *historyItem) bool {
		return it.ExitCode != nil && *it.ExitCode == 1
	}))
	waitHistory(t, c, base+"/report", wait, "a run of report", ended((*historyItem).succeeded))
	if out, code := reader(t, c.ConnString(), base+"/report", "pause", "--reason", "test"); code != 0 {
		t.Fatalf("pause: exit %d\n%s", code, out)
	}
	waitHistory(t, c, base+"/report", wait, "a time of report skipped", ended(func(it *historyItem) bool { return it.Kind == historySkip }))

	// A run of backup or rotate may be going on at the moment of a read:
	// read until none is (each goes on for milliseconds every 2s).
	var out string
	deadline := time.Now().Add(wait)
	for {
		var code int
		out, code = reader(t, c.ConnString(), base, "jobs")
		if code != 0 {
			t.Fatalf("jobs: exit %d, want 0\n%s", code, out)
		}
		if !strings.Contains(out, "running") || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("ballot jobs:\n%s", out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > summaryWidth {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "JOB ") {
		t.Fatalf("want a header, 3 jobs and a footer:\n%s", out)
	}
	want := []struct {
		job, leader, last, next string
	}{
		{"backup", "a", "ok ", "in "},
		{"report", "c [paused]", "skipped ", "paused"},
		{"rotate", "b", "exit 1 ", "in "},
	}
	for i, w := range want {
		cols := strings.Split(lines[i+1], "  ")
		var fields []string
		for _, f := range cols {
			if f = strings.TrimSpace(f); f != "" {
				fields = append(fields, f)
			}
		}
		if len(fields) != 4 || fields[0] != w.job || fields[1] != w.leader || !strings.HasPrefix(fields[2], w.last) ||
			!strings.HasPrefix(fields[3], w.next) && !(w.next == "in " && strings.HasPrefix(fields[3], "overdue ")) {
			t.Errorf("line %q: want %s, leader %q, last %q…, next %q…", lines[i+1], w.job, w.leader, w.last, w.next)
		}
	}
	if want := "3 jobs, 3 hosts standing, 1 paused; leaderships: a 1, b 1, c 1"; lines[4] != want {
		t.Errorf("footer %q, want %q", lines[4], want)
	}

	// --output json: the same jobs, with full values; read, as above,
	// until no run is going on.
	var raw string
	var jobs []jobEntry
	for deadline := time.Now().Add(wait); ; {
		var code int
		raw, code = reader(t, c.ConnString(), base, "jobs", "--output", "json")
		if err := json.Unmarshal([]byte(raw), &jobs); err != nil || code != 0 {
			t.Fatalf("jobs --output json: exit %d, %v\n%s", code, err, raw)
		}
		if !slices.ContainsFunc(jobs, func(j jobEntry) bool { return j.Last != nil && j.Last.State == "running" }) ||
			time.Now().After(deadline) {
			break
		}
	}
	var names []string
	for _, j := range jobs {
		names = append(names, j.Job)
		if j.Election != base+"/"+j.Job || j.Leader == nil || j.Leader.FencingToken == 0 || j.Leader.FencingToken != j.Leader.Czxid ||
			j.Last == nil || j.NextRun == nil || j.ReadAt.IsZero() {
			t.Errorf("job %s: %s", j.Job, raw)
			continue
		}
		if _, err := time.Parse(time.RFC3339, j.NextRun.Time); err != nil {
			t.Errorf("job %s: next run %q: %v", j.Job, j.NextRun.Time, err)
		}
		if got := jobLeaderText(j); got != want[len(names)-1].leader {
			t.Errorf("job %s: json's leader says %q, the list %q", j.Job, got, want[len(names)-1].leader)
		}
	}
	if !slices.Equal(names, []string{"backup", "report", "rotate"}) {
		t.Fatalf("json lists %v:\n%s", names, raw)
	}
	backup, report, rotate := jobs[0], jobs[1], jobs[2]
	if ids := []string{backup.Candidates[0].ID, backup.Candidates[1].ID}; len(backup.Candidates) != 2 || !slices.Equal(ids, []string{"a", "b"}) {
		t.Errorf("backup's line: %v, want a then b", backup.Candidates)
	}
	if !slices.Equal(report.Marks, []string{markPaused}) || report.Paused == nil || report.Paused.Reason != "test" || report.Last.Kind != historySkip {
		t.Errorf("report: marks %v, paused %v, last %+v", report.Marks, report.Paused, report.Last)
	}
	if rotate.Last.ExitCode == nil || *rotate.Last.ExitCode != 1 || rotate.Last.FencingToken != rotate.Leader.FencingToken {
		t.Errorf("rotate's last run: %+v", rotate.Last)
	}

	// info at the base path: no election of its own, and says where they are.
	info, code := reader(t, c.ConnString(), base, "info")
	if code != 1 || !strings.Contains(info, "3 elections one level down, none here: ballot jobs lists them") {
		t.Errorf("info at the base path: exit %d, want 1 and a pointer to ballot jobs:\n%s", code, info)
	}
}

// TestJobsEmptyBase: no election under the base path, one line, exit 1
// (as info without a leader).
func TestJobsEmptyBase(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	base := "/ballot/test/" + t.Name()
	conn := basicZKConn(t, c)
	// An election two levels down, under a node of another tool's: not a
	// job of base.
	deep := base + "/other/deeper/election"
	if err := zookeeper.CreateParents(conn, deep+"/"+handoverName, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Set(deep, []byte(`{"batonWaitMs":2000}`), -1); err != nil { // the first leader's record
		t.Fatal(err)
	}
	for _, tc := range []struct {
		base string
		args []string
		want string
	}{
		{base, nil, "no jobs: no election under " + base + "\n"},
		{base + "/missing", nil, "no jobs: " + base + "/missing does not exist\n"},
		{base + "/other", nil, "no jobs: no election under " + base + "/other\n"},
		{deep, nil, "no jobs under " + deep + ": it is an election itself (ballot info shows it)\n"},
		{base, []string{"--output", "json"}, "[]\n"},
	} {
		out, code := reader(t, c.ConnString(), tc.base, append([]string{"jobs"}, tc.args...)...)
		if out != tc.want || code != exitNo {
			t.Errorf("jobs %v at %s: exit %d, %q; want exit 1, %q", tc.args, tc.base, code, out, tc.want)
		}
	}
	// No ZooKeeper: one line on stderr, exit 125.
	r := basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, "--zookeeper-servers", basicDeadPort(t),
		"--zookeeper-base-path", base, "--zookeeper-session-timeout", "2s", "jobs")
	if lines := basicLines(r.stderr); r.code != exitFailure || r.stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "ballot: jobs: ") {
		t.Errorf("jobs without ZooKeeper: exit %d, stdout %q, stderr %q; want 125 and one line", r.code, r.stdout, r.stderr)
	}
}

// TestJobsListMany: 200 elections, each a copy of a real run cron
// election's nodes (its line, baton, records and history), all listed.
// The time `ballot jobs` takes is logged, a figure for docs/operating.md,
// not a bound (the box is shared).
func TestJobsListMany(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	base := "/ballot/test/" + t.Name()
	const T, n = 2 * time.Second, 200
	for _, id := range []string{"a", "b"} {
		startBallot(t, id, ballotEnv(t), "--zookeeper-servers", c.ConnString(), "--zookeeper-base-path", base+"/job-000",
			"--zookeeper-session-timeout", T.String(), "run", "cron", "--candidate-id", id, "--schedule", "*/2 * * * * *",
			"--", "true")
	}
	// Runs every 2s, a leader within T: three runs within 5T.
	waitHistory(t, c, base+"/job-000", 5*T, "three runs", func(items []*historyItem) bool {
		return len(items) >= 3 && items[0].State == "ended"
	})
	conn := basicZKConn(t, c)
	type node struct {
		rel       string
		data      []byte
		ephemeral bool
	}
	var tree []node
	var walk func(rel string)
	walk = func(rel string) {
		names, _, err := conn.Children(base + "/job-000" + rel)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			data, st, err := conn.Get(base + "/job-000" + rel + "/" + name)
			if errors.Is(err, zk.ErrNoNode) {
				continue // a run's moment
			}
			if err != nil {
				t.Fatal(err)
			}
			tree = append(tree, node{rel + "/" + name, data, st.EphemeralOwner != 0})
			walk(rel + "/" + name)
		}
	}
	record, _, err := conn.Get(base + "/job-000")
	if err != nil {
		t.Fatal(err)
	}
	walk("")
	acl := zk.WorldACL(zk.PermAll)
	for i := 1; i < n; i++ {
		job := fmt.Sprintf("%s/job-%03d", base, i)
		ops := []any{&zk.CreateRequest{Path: job, Data: record, Acl: acl}}
		for _, nd := range tree {
			var flags int32
			if nd.ephemeral {
				flags = zk.FlagEphemeral
			}
			ops = append(ops, &zk.CreateRequest{Path: job + nd.rel, Data: nd.data, Acl: acl, Flags: flags})
		}
		if _, err := conn.Multi(ops...); err != nil {
			t.Fatalf("copy the election to %s: %v", job, err)
		}
	}

	start := time.Now()
	out, code := reader(t, c.ConnString(), base, "jobs")
	human := time.Since(start)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) < n+2 {
		t.Fatalf("jobs over %d elections: exit %d, %d lines:\n%s", n, code, len(lines), out)
	}
	for i, l := range lines[1 : n+1] {
		if !strings.HasPrefix(l, fmt.Sprintf("job-%03d ", i)) || utf8.RuneCountInString(l) > summaryWidth {
			t.Errorf("line %d: %q", i+1, l)
		}
	}
	start = time.Now()
	raw, code := reader(t, c.ConnString(), base, "jobs", "--output", "json")
	inJSON := time.Since(start)
	var jobs []jobEntry
	if err := json.Unmarshal([]byte(raw), &jobs); err != nil || code != 0 || len(jobs) != n {
		t.Fatalf("jobs --output json: exit %d, %d jobs, %v", code, len(jobs), err)
	}
	t.Logf("ballot jobs over %d elections (%d nodes each): %s; --output json (%d bytes): %s",
		n, len(tree)+1, human.Round(time.Millisecond), len(raw), inJSON.Round(time.Millisecond))
}
