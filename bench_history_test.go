//go:build bench

package main

// 10. What the run history costs: a run cron leader running every second
// (--on-child-success rerun, and the default reelect), once recording its
// runs and once with the history made unreadable to it (an ACL that grants
// ballot nothing: it then records nothing and says so). The same binary,
// the same schedule; the difference per run is the history's.

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// benchHistoryWindow: each measurement's window (about as many runs).
const benchHistoryWindow = 15 * time.Second

type benchHistoryRow struct {
	policy   string
	recorded bool
	runs     int64
	requests int64 // the leaders' requests (Σ Δlcxid, pings excluded)
	writes   int64 // zxid advance (renewals included: the same in both)
	entry    int64 // bytes of one entry (its data), when recorded
	entries  int   // entries kept at the end
}

func (r benchHistoryRow) per(v int64) float64 { return float64(v) / float64(max(r.runs, 1)) }

func benchHistory(t *testing.T, b *benchEnv) []benchHistoryRow {
	var rows []benchHistoryRow
	for _, policy := range []string{"rerun", "reelect"} {
		for _, recorded := range []bool{false, true} {
			rows = append(rows, benchHistoryMeasure(t, b, policy, recorded))
		}
	}
	return rows
}

func benchHistoryMeasure(t *testing.T, b *benchEnv, policy string, recorded bool) benchHistoryRow {
	row := benchHistoryRow{policy: policy, recorded: recorded}
	name := fmt.Sprintf("history-%s-%v", policy, recorded)
	e := b.election(t, name, "", "10ms")
	if !recorded {
		// Nobody but "nobody" may read or write it: the leader cannot
		// list the history, so it records nothing.
		if _, err := b.conn.Create(historyDir(e.base), nil, 0, zk.DigestACL(zk.PermAll, "nobody", "x")); err != nil {
			t.Fatal(err)
		}
	}
	var ps []*ballotProc
	for _, id := range []string{"c1", "c2"} {
		args := []string{"--zookeeper-servers", strings.Join(b.zk.Servers(), ","), "run", "cron", "--candidate-id", id,
			"--schedule", "* * * * * *", "--on-child-success", policy}
		args = append(append(args, e.flags...), "--", b.checker, e.stamps, e.hold)
		cmd := exec.Command(b.bin, args...)
		cmd.Dir = b.home
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		p := startProc(t, id, cmd, b.env("stamp"))
		e.current[id] = p
		ps = append(ps, p)
	}
	e.waitStarts(2, 30*time.Second)
	sessions := map[string]bool{}
	for _, p := range ps {
		sessions[benchSessionOf(p)] = true
	}
	runs0, z0, c0 := len(benchStarts(benchReadStamps(e.stamps))), benchZxid(b.zk), benchCons(b.zk)
	time.Sleep(benchHistoryWindow)
	runs1, z1, c1 := len(benchStarts(benchReadStamps(e.stamps))), benchZxid(b.zk), benchCons(b.zk)
	for _, p := range ps { // a session lost meanwhile: its successor's requests count too
		sessions[benchSessionOf(p)] = true
	}
	row.runs, row.writes = int64(runs1-runs0), z1-z0
	for sid, after := range c1 {
		if before, ok := c0[sid]; ok && sessions[sid] {
			row.requests += after.lcxid - before.lcxid
		}
	}
	e.stopAll()
	if recorded {
		names, _, err := b.conn.Children(historyDir(e.base))
		if err != nil {
			t.Fatal(err)
		}
		row.entries = len(names)
		var sum, n int64
		for _, nm := range names {
			raw, _, err := b.conn.Get(historyDir(e.base) + "/" + nm)
			var h historyEntry
			if err == nil && json.Unmarshal(raw, &h) == nil && h.Kind == historyCron {
				sum, n = sum+int64(len(raw)), n+1
			}
		}
		if n > 0 {
			row.entry = sum / n
		}
	}
	t.Logf("history %s recorded=%v: %d runs, %.2f requests/run, %.2f writes/run, entry %d bytes, %d entries",
		policy, recorded, row.runs, row.per(row.requests), row.per(row.writes), row.entry, row.entries)
	return row
}

func benchHistorySection(rows []benchHistoryRow) string {
	var s strings.Builder
	s.WriteString("## 10. What recording a run costs\n\n" +
		"A run cron leader runs a 10 ms command every second for " + benchHistoryWindow.String() + ", with a follower in line, once recording its runs in the history " +
		"and once with the history node made unreadable to it (an ACL for another identity: it records nothing). *Requests* are the two candidates' " +
		"(Σ Δ`lcxid` from `cons`, pings excluded); *writes* the zxid's advance (the lease renewals included, the same in both). " +
		"A run's entry is created inside the multi-op that already records the run (no request more, its bytes more) and rewritten at the run's end " +
		"(one multi-op more); each leadership also lists the history once and reads the previous leadership's newest run (two reads, answered by the member the client is connected to). With `reelect` every run is a new leadership, and its baseline of about 20 requests per run varies by about one between windows.\n\n")
	s.WriteString("| on-child-success | history | runs | requests per run | writes per run | entry (bytes of data) | entries kept |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		rec, entry := "not recorded", "–"
		if r.recorded {
			rec, entry = "recorded", fmt.Sprint(r.entry)
		}
		fmt.Fprintf(&s, "| %s | %s | %d | %.2f | %.2f | %s | %d |\n", r.policy, rec, r.runs, r.per(r.requests), r.per(r.writes), entry, r.entries)
	}
	for i := 0; i+1 < len(rows); i += 2 {
		off, on := rows[i], rows[i+1]
		fmt.Fprintf(&s, "\n%s: the history costs %+.2f requests and %+.2f writes per run, and about %d bytes of data per run (the entry, written twice).",
			on.policy, on.per(on.requests)-off.per(off.requests), on.per(on.writes)-off.per(off.writes), 2*on.entry)
	}
	s.WriteString("\n\n")
	return s.String()
}
