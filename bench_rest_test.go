//go:build bench

package main

// 13. Writes at rest: what an election writes while nothing changes, by
// the zxid's advance over an idle window (every committed transaction
// advances it, a next in line's check-only proof included; pings and
// reads do not; no session is opened or closed in the window). A run once
// leader renews its lease; nobody else writes at rest: a run cron leader
// between runs lets its lease lapse, and the next in line proves its
// place only while a handover may come (README: Between runs, Handovers
// in one write).

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

type benchRestRow struct {
	name   string
	writes int64 // zxid advance over el
	el     time.Duration
	note   string
}

func (r benchRestRow) perMin() float64 { return float64(r.writes) * 60 / r.el.Seconds() }

type benchRestResult struct{ rows []benchRestRow }

func benchRestMeasure(t *testing.T, b *benchEnv, name, note string) benchRestRow {
	z0, t0 := benchZxid(b.zk), time.Now()
	time.Sleep(benchLoadWindow)
	z1, el := benchZxid(b.zk), time.Since(t0)
	r := benchRestRow{name: name, writes: z1 - z0, el: el, note: note}
	t.Logf("at rest: %s: %d writes in %s (%.1f a minute)", name, r.writes, el.Round(time.Millisecond), r.perMin())
	return r
}

func benchRest(t *testing.T, b *benchEnv) benchRestResult {
	var r benchRestResult
	const settle = 2 * time.Second // the publisher's last writes (at least 1 s apart) are in

	// run once: a leader, then its next in line, then three more.
	e := b.election(t, "rest-once", "", "wait")
	e.add("l")
	e.waitStarts(1, 30*time.Second)
	time.Sleep(settle)
	r.rows = append(r.rows, benchRestMeasure(t, b, "run once: the leader alone", "its renewals, 8 per T"))
	e.add("n").WaitLog(`"event":"standing-by"`, 30*time.Second)
	time.Sleep(settle)
	r.rows = append(r.rows, benchRestMeasure(t, b, "run once: the leader and its next in line", "the next in line proves its place only when a handover may come"))
	for _, id := range []string{"f1", "f2", "f3"} {
		e.add(id).WaitLog(`"msg":"following"`, 30*time.Second)
	}
	time.Sleep(settle)
	r.rows = append(r.rows, benchRestMeasure(t, b, "run once: the leader, its next in line and 3 more followers", "followers write nothing"))
	e.stopAll()

	// run cron between runs: one election, then 20 daily jobs.
	cron := func(name string) *benchElection {
		c := b.election(t, name, "", "wait", "--log-level", "debug")
		c.mode = []string{"run", "cron", "--schedule", "0 3 * * *"}
		return c
	}
	one := cron("rest-cron")
	one.add("c1").WaitLog(`"event":"lease-at-rest"`, 30*time.Second)
	one.add("c2").WaitLog(`"event":"standing-by"`, 30*time.Second)
	time.Sleep(settle)
	r.rows = append(r.rows, benchRestMeasure(t, b, "run cron between runs: a leader and its next in line", "the lease lapses between runs; taken again just before the next"))
	one.stopAll()

	var jobs []*benchElection
	for i := 1; i <= 20; i++ {
		j := cron(fmt.Sprintf("rest-daily-%02d", i))
		j.add("a").WaitLog(`"event":"lease-at-rest"`, 30*time.Second)
		j.add("b").WaitLog(`"event":"standing-by"`, 30*time.Second)
		jobs = append(jobs, j)
	}
	time.Sleep(settle)
	r.rows = append(r.rows, benchRestMeasure(t, b, "20 daily jobs (`0 3 * * *`), 2 candidates each, between runs", "2880 a minute before leases lapsed between runs"))
	for _, j := range jobs {
		j.stopAll()
	}
	return r
}

func (r benchRestResult) section() string {
	var s strings.Builder
	s.WriteString("## 13. Writes at rest\n\n")
	fmt.Fprintf(&s, "What elections write while nothing changes, at the default T = 5 s: the advance of the ensemble's zxid over a %d s idle window "+
		"(every committed transaction advances it, a next in line's check-only proof included; pings and reads do not; no session is opened or closed in the window). "+
		"A run once leader renews its lease (8 per T, 96 a minute); its next in line proves its place only when a handover may come; "+
		"a run cron leader lets its lease lapse between runs and takes it again just before the next.\n\n", int(benchLoadWindow.Seconds()))
	s.WriteString("| at rest | writes | writes a minute | |\n|---|---|---|---|\n")
	for _, w := range r.rows {
		fmt.Fprintf(&s, "| %s | %d in %.0f s | %.1f | %s |\n", w.name, w.writes, w.el.Seconds(), w.perMin(), w.note)
	}
	s.WriteString("\n")
	return s.String()
}
