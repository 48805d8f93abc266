//go:build bench

package main

// 11. Preferred leaders and slots: a preemption's handover, and how many
// candidates a released slot wakes.

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchPreempt: a leader of priority 0 (--preempt-after 300ms) and a
// candidate of priority 10 that joins, again and again: from the old
// command's stop (its TERM stamp: ballot asked it to stop for the
// handover) to the preferred candidate's command, at its first
// instruction. Between rounds the preferred one is stopped, and the other
// leads again.
func benchPreempt(t *testing.T, b *benchEnv) benchDist {
	const reps = 20
	e := b.election(t, "preempt", "2s", "wait", "--preempt-after", "300ms")
	e.perCand = func(id string) ([]string, []string) {
		if id == "pref" {
			return nil, []string{"--priority", "10"}
		}
		return nil, nil
	}
	e.add("base")
	n := len(e.waitStarts(1, 30*time.Second))
	var out []time.Duration
	for i := 0; i < reps; i++ {
		pref := e.add("pref")
		st := e.waitStarts(n+1, 30*time.Second)
		n = len(st)
		next := st[len(st)-1]
		if next.cand != "pref" {
			t.Fatalf("preempt: %s started, want pref", next.cand)
		}
		var stop benchStamp
		for _, s := range benchReadStamps(e.stamps) {
			if s.cand == "base" && s.kind == "TERM" && s.t.Before(next.t) {
				stop = s
			}
		}
		if stop.t.IsZero() {
			t.Fatalf("preempt: no TERM stamp of base before pref's start")
		}
		out = append(out, next.t.Sub(stop.t))
		pref.Signal(syscall.SIGTERM)
		pref.Wait(20 * time.Second)
		n = len(e.waitStarts(n+1, 30*time.Second)) // base leads again
	}
	e.stopAll()
	d := benchSummarize(out)
	t.Logf("preemption handover: %s", d.row("preempt"))
	return d
}

type benchSlotsResult struct {
	n     int
	gap   []time.Duration
	woken []int
}

// benchSlots: N candidates with --slots 2 (session timeout 4 s); three
// times a holder's command exits (SIGUSR1, as in the herd): the time to
// the next command in that slot, and the candidates woken besides the old
// holder and the new one (the herd's measure: 2 or more requests more than
// in a quiet window before).
func benchSlots(t *testing.T, b *benchEnv) []benchSlotsResult {
	var results []benchSlotsResult
	for _, n := range benchHerdSizes() {
		e := b.election(t, fmt.Sprintf("slots%d", n), "4s", "wait", "--slots", "2")
		for i := 0; i < n; i++ {
			e.add(fmt.Sprintf("s%03d", i))
			if i == 1 {
				e.waitStarts(2, 30*time.Second) // both slots held (the second waits W once: a new slot)
			}
		}
		for id, p := range e.current {
			if id != "s000" && id != "s001" {
				p.WaitLog(`"msg":"following"`, 60*time.Second)
			}
		}
		time.Sleep(8 * time.Second) // let start-up traffic end
		hr := benchHerdResult{n: n}
		for h := 0; h < 3; h++ {
			benchHerdHandover(t, b, e, &hr)
		}
		e.stopAll()
		results = append(results, benchSlotsResult{n: n, gap: hr.gap, woken: hr.woken})
	}
	return results
}

func benchPrefsSection(pre benchDist, slots []benchSlotsResult) string {
	var s strings.Builder
	s.WriteString("## 11. Preferred leaders and slots\n\n")
	s.WriteString("**Preemption.** A leader of priority 0 with `--preempt-after 300ms` (T = 2 s) and a candidate of priority 10 that joins, 20 times: " +
		"from the old command's stop (ballot's SIGTERM for the handover, as the command stamps it) to the preferred candidate's command, at its first instruction. " +
		"Between rounds the preferred one is stopped and the other leads again.\n\n")
	s.WriteString("| handover | n | min | median | p99 | max |\n|---|---|---|---|---|---|\n")
	s.WriteString(pre.row("preemption: old command stopped → preferred command") + "\n\n")
	s.WriteString("**A released slot.** N candidates with `--slots 2` (T = 4 s); three times a holder's command exits (SIGUSR1, as in the herd): " +
		"the time to the next command, and the candidates woken besides the old holder and the new one (2 or more requests more than in a quiet window of the same length before). " +
		"Target: the same handful at 10, 100 and 1000: the first candidate past the N (it watches every holder, and takes the slot), " +
		"and the other holders, whose lease watches see the election's children change as every leader's does.\n\n")
	s.WriteString("| candidates | release | next command after | woken |\n|---|---|---|---|\n")
	for _, r := range slots {
		for i := range r.gap {
			fmt.Fprintf(&s, "| %d | %d | %s | %d |\n", r.n, i+1, benchMs(r.gap[i]), r.woken[i])
		}
	}
	s.WriteString("\n")
	return s.String()
}
