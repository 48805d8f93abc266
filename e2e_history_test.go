package main

// The run history, ballot history and ballot check, end to end: real
// candidates against a real ZooKeeper (session timeout 2s), one server
// shared by independent subtests.

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// reader runs a reader command (history, check, info) on base and returns
// its stdout and exit code; stderr must be empty.
func reader(t *testing.T, servers, base string, args ...string) (string, int) {
	t.Helper()
	all := append([]string{"--zookeeper-servers", servers, "--zookeeper-base-path", base, "--zookeeper-session-timeout", "2s"}, args...)
	r := basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, all...)
	if r.stderr != "" {
		t.Errorf("ballot %s wrote on stderr:\n%s", strings.Join(args, " "), r.stderr)
	}
	return r.stdout, r.code
}

// historyOf is `ballot history --output json`'s entries, newest first.
func historyOf(t *testing.T, c *zkCluster, base string) []*historyItem {
	t.Helper()
	out, code := reader(t, c.ConnString(), base, "history", "--output", "json", "--limit", "100")
	var rep historyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 {
		t.Fatalf("history --output json: exit %d, %v:\n%s", code, err, out)
	}
	return rep.Entries
}

// waitHistory reads the history from ZooKeeper until cond holds.
func waitHistory(t *testing.T, c *zkCluster, base string, timeout time.Duration, what string, cond func([]*historyItem) bool) []*historyItem {
	t.Helper()
	conn := basicZKConn(t, c)
	deadline := time.Now().Add(timeout)
	for {
		items, err := readHistory(conn, base, historyKeep, nil)
		if err == nil {
			settleHistory(items, map[int64]bool{batonOf(conn, base): true}, time.Now())
			if cond(items) {
				return items
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s; history: %s", timeout, what, entriesText(items))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// batonOf is the fencing token of the baton's holder, 0 if none.
func batonOf(conn *zk.Conn, base string) int64 {
	raw, _, err := conn.Get(base + "/" + batonName)
	var br batonRecord
	if err != nil || json.Unmarshal(raw, &br) != nil {
		return 0
	}
	return br.FencingToken
}

func entriesText(items []*historyItem) string {
	b, _ := json.Marshal(items)
	return string(b)
}

// find is the first (newest) entry that matches.
func find(items []*historyItem, match func(*historyItem) bool) *historyItem {
	for _, it := range items {
		if match(it) {
			return it
		}
	}
	return nil
}

func TestHistory(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)

	// A cron leader SIGKILLed mid-run: its run was recorded as running;
	// the next leader records it as leadership-lost, then its own runs.
	t.Run("CronLeaderKilledMidRun", func(t *testing.T) {
		t.Parallel()
		e := newCronElection(t, c)
		a := e.add("a", "* * * * * *", "1h")
		e.leader(10 * time.Second)
		b := e.add("b", "* * * * * *", "50ms", "--on-child-success", "rerun")
		b.WaitEvent(logEvFollowing, 10*time.Second)
		byA := func(it *historyItem) bool { return it.Kind == historyCron && it.CandidateID == "a" }
		waitHistory(t, c, e.base, 10*time.Second, "a's run", func(items []*historyItem) bool { return find(items, byA) != nil })
		items := historyOf(t, c, e.base)
		if run := find(items, byA); run == nil || run.State != "running" || run.Ended != "" || run.StartedAt == nil || run.FencingToken == 0 {
			t.Fatalf("a's run going on: %s", entriesText(items))
		}
		a.Signal(syscall.SIGKILL)
		a.Wait(5 * time.Second)
		items = waitHistory(t, c, e.base, 15*time.Second, "a's run closed and one run of b", func(items []*historyItem) bool {
			lost := find(items, byA)
			return lost != nil && lost.Ended == endLeadershipLost &&
				find(items, func(it *historyItem) bool { return it.CandidateID == "b" && it.succeeded() }) != nil
		})
		lost, won := find(items, byA), find(items, func(it *historyItem) bool { return it.CandidateID == "b" && it.Kind == historyCron })
		if lost.ClosedBy != "b" || lost.ExitCode != nil || won.FencingToken <= lost.FencingToken {
			t.Errorf("a's run closed by %q (exit %v, token %d); b's token %d", lost.ClosedBy, lost.ExitCode, lost.FencingToken, won.FencingToken)
		}
		if u := find(items, func(it *historyItem) bool { return it.Ended == "" && it.CandidateID != "b" }); u != nil {
			t.Errorf("an entry of a gone leader is still open: %s", entriesText(items))
		}

		out, code := reader(t, c.ConnString(), e.base, "history", "--limit", "5")
		t.Logf("ballot history --limit 5 (exit %d):\n%s", code, out)
		if code != 0 || !strings.Contains(out, "leadership lost") || !strings.Contains(out, "recorded by b") {
			t.Errorf("history's human output lacks the lost run")
		}
		out, code = reader(t, c.ConnString(), e.base, "check", "--max-age", "1h")
		t.Logf("ballot check --max-age 1h (exit %d):\n%s", code, out)
		if code != checkOK || !strings.HasPrefix(out, "BALLOT OK - ") || !strings.Contains(out, "| ") || strings.Count(out, "\n") != 1 {
			t.Errorf("check after b's runs: exit %d", code)
		}
		// The leader publishes its next run within a second of taking over.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if inf, _ := infoJSON(t, c.Servers(), e.base); inf.Leader != nil && inf.Leader.NextRun != nil {
				break
			}
		}
		out, code = reader(t, c.ConnString(), e.base, "info")
		t.Logf("ballot info (exit %d):\n%s", code, out)
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if n := len([]rune(l)); n > summaryWidth {
				t.Errorf("info's summary line is %d columns: %q", n, l)
			}
		}
		for _, want := range []string{"leader    b", "line      1  b", "last run  cron ", "next run  "} {
			if !strings.Contains(out, want) {
				t.Errorf("info's summary lacks %q", want)
			}
		}
		inf, _ := infoJSON(t, c.Servers(), e.base)
		if inf.LastRun == nil || inf.LastRun.CandidateID != "b" {
			t.Errorf("info --output json: lastRun %+v", inf.LastRun)
		}

		b.Signal(syscall.SIGTERM)
		b.Wait(10 * time.Second)
		out, code = reader(t, c.ConnString(), e.base, "check", "--max-age", "1h")
		t.Logf("ballot check with no candidate (exit %d):\n%s", code, out)
		if code != checkCritical || !strings.Contains(out, "no leader") {
			t.Errorf("check without candidates: exit %d", code)
		}
	})

	// A once key started on three hosts at once is one entry; a failed
	// run makes check warn (or go critical with --fail-critical).
	t.Run("OnceKeyFromThreeHostsThenAFailure", func(t *testing.T) {
		t.Parallel()
		base := "/ballot/test/history-once"
		seedElection(t, c.Servers(), base)
		dir := t.TempDir()
		var ps []*ballotProc
		for _, id := range []string{"h1", "h2", "h3"} {
			ps = append(ps, onceCandidate(t, c, base, id, "2026-11-24", nil, dir+"/ticks", "run", dir+"/runs", "200ms"))
		}
		for _, p := range ps {
			if code := p.Wait(20 * time.Second); code != 0 {
				t.Errorf("%s exited %d", p.name, code)
			}
		}
		items := historyOf(t, c, base)
		if len(items) != 1 || items[0].Kind != historyOnce || items[0].Key != "2026-11-24" || !items[0].succeeded() ||
			items[0].DurationMs == nil || items[0].State != "ended" {
			t.Fatalf("history after one key from three hosts: %s", entriesText(items))
		}
		if out, code := reader(t, c.ConnString(), base, "check"); code != checkOK || !strings.Contains(out, "as between --once-key runs") {
			t.Errorf("check: exit %d, %s", code, out) // every candidate has exited, as they do after a key's run
		}

		failing := onceCandidate(t, c, base, "h2", "2026-11-25", nil, dir+"/ticks", "exit", "3", "10ms")
		if code := failing.Wait(15 * time.Second); code != 3 {
			t.Fatalf("the failing run exited %d, want 3", code)
		}
		items = historyOf(t, c, base)
		if len(items) != 2 || items[0].Key != "2026-11-25" || items[0].Ended != endExited || items[0].ExitCode == nil || *items[0].ExitCode != 3 {
			t.Fatalf("history after a failed run: %s", entriesText(items))
		}
		if out, code := reader(t, c.ConnString(), base, "check"); code != checkWarning || !strings.Contains(out, "last run key 2026-11-25 exited 3") {
			t.Errorf("check after a failed run: exit %d, %s", code, out)
		}
		// A run going on is not judged: the failed one stays the last.
		hold := onceCandidate(t, c, base, "h3", "2026-11-26", nil, dir+"/ticks", "tick", dir+"/hold")
		waitHistory(t, c, base, 10*time.Second, "h3's run", func(items []*historyItem) bool { return len(items) == 3 })
		out, code := reader(t, c.ConnString(), base, "check")
		t.Logf("ballot check, a run going on after a failed one (exit %d):\n%s", code, out)
		if code != checkWarning || !strings.Contains(out, "last run key 2026-11-25 exited 3") {
			t.Errorf("check after a failed run: exit %d", code)
		}
		if out, code := reader(t, c.ConnString(), base, "check", "--fail-critical"); code != checkCritical {
			t.Errorf("check --fail-critical after a failed run: exit %d, %s", code, out)
		}
		hold.Signal(syscall.SIGTERM)
		hold.Wait(10 * time.Second)
		items = historyOf(t, c, base)
		if items[0].Key != "2026-11-26" || items[0].Ended != endStopped || items[0].Reason == "" {
			t.Errorf("a run stopped by SIGTERM: %s", entriesText(items[:1]))
		}
	})

	// While paused, a cron leader records its skipped times as one entry
	// that grows; check warns.
	t.Run("Pause", func(t *testing.T) {
		t.Parallel()
		e := newCronElection(t, c)
		e.add("a", "* * * * * *", "10ms", "--on-child-success", "rerun")
		waitHistory(t, c, e.base, 10*time.Second, "a run", func(items []*historyItem) bool {
			return find(items, (*historyItem).succeeded) != nil
		})
		if out, code := control(t, e.election, "pause", "--reason", "disk swap"); code != 0 {
			t.Fatalf("pause: exit %d: %s", code, out)
		}
		paused := func(it *historyItem) bool { return it.Kind == historySkip && strings.Contains(it.Reason, "paused") }
		items := waitHistory(t, c, e.base, 10*time.Second, "two skipped times", func(items []*historyItem) bool {
			sk := find(items, paused)
			return sk != nil && sk.Skipped >= 2
		})
		n := 0
		for _, it := range items {
			if paused(it) {
				n++
			}
		}
		if n != 1 || find(items, paused).LastSkipped == nil {
			t.Errorf("%d entries for the skipped times of one pause, want 1 that grows: %s", n, entriesText(items))
		}
		out, code := reader(t, c.ConnString(), e.base, "check", "--max-age", "1h")
		t.Logf("ballot check while paused (exit %d):\n%s", code, out)
		if code != checkWarning || !strings.Contains(out, "paused by") || !strings.Contains(out, "disk swap") {
			t.Errorf("check while paused: exit %d", code)
		}
		control(t, e.election, "resume")
	})

	// The history keeps the newest historyKeep entries; a run's end
	// deletes the oldest past it, and closes an entry a dead leader left
	// open.
	t.Run("Bounded", func(t *testing.T) {
		t.Parallel()
		base := "/ballot/test/history-bounded"
		seedElection(t, c.Servers(), base)
		conn := basicZKConn(t, c)
		if _, err := conn.Create(historyDir(base), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		var first string
		for i := 0; i <= historyKeep+5; i++ {
			e := historyEntry{Format: historyFormat, Kind: historyOnce, Key: fmt.Sprintf("old-%d", i), CandidateID: "gone", FencingToken: 1, Ended: endExited}
			switch i {
			case historyKeep + 4:
				e.Ended, e.Key = "", "left-open" // its leader died mid-run...
			case historyKeep + 5:
				e.Kind, e.Key, e.Ended = historySkip, "", endSkipped // ...and its successor skipped a time first
			}
			data, _ := json.Marshal(e)
			p, err := conn.Create(historyDir(base)+"/"+historyPrefix, data, zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = p
			}
		}
		dir := t.TempDir()
		if code := onceCandidate(t, c, base, "h1", "new", nil, dir+"/ticks", "exit", "0", "10ms").Wait(15 * time.Second); code != 0 {
			t.Fatalf("the run exited %d", code)
		}
		items, err := readHistory(conn, base, 1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != historyKeep || items[0].Key != "new" || items[2].Key != "left-open" || items[2].Ended != endLeadershipLost || items[2].ClosedBy != "h1" {
			t.Fatalf("%d entries kept, want %d; the newest three: %s", len(items), historyKeep, entriesText(items[:3]))
		}
		if ok, _, _ := conn.Exists(first); ok {
			t.Errorf("the oldest entry %s is still there", first)
		}
	})

	// What check cannot judge is UNKNOWN: a missing election, an
	// election that never ran without --max-age, ZooKeeper unreachable.
	t.Run("Unknown", func(t *testing.T) {
		t.Parallel()
		out, code := reader(t, c.ConnString(), "/ballot/test/nowhere", "check", "--max-age", "26h")
		t.Logf("ballot check, missing election (exit %d):\n%s", code, out)
		if code != exitUnknown || !strings.HasPrefix(out, "BALLOT UNKNOWN - ") || !strings.Contains(out, "does not exist") {
			t.Errorf("check on a missing election: exit %d", code)
		}
		if out, code := reader(t, c.ConnString(), "/ballot/test/nowhere", "history"); code != 0 || !strings.Contains(out, "does not exist") {
			t.Errorf("history on a missing election: exit %d, %s", code, out)
		}
		base := "/ballot/test/never-ran"
		seedElection(t, c.Servers(), base)
		if out, code := reader(t, c.ConnString(), base, "check"); code != exitUnknown || !strings.Contains(out, "give --max-age") {
			t.Errorf("check without --max-age on an election that never ran: exit %d, %s", code, out)
		}
		if out, code := reader(t, c.ConnString(), base, "check", "--max-age", "1h"); code != checkCritical || !strings.Contains(out, "no leader") {
			t.Errorf("check --max-age on a young election without candidates: exit %d, %s", code, out)
		}
		r := basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, "--zookeeper-servers", basicDeadPort(t),
			"--zookeeper-session-timeout", "2s", "check", "--max-age", "1h")
		if r.code != exitUnknown || !strings.HasPrefix(r.stdout, "BALLOT UNKNOWN - ") {
			t.Errorf("check with ZooKeeper unreachable: exit %d, %s%s", r.code, r.stdout, r.stderr)
		}
	})
}
