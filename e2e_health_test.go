package main

// Health checks: a failing check keeps a candidate out of the line and
// makes a leader hand over.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHealthGating: a candidate stands for election only while its health
// check passes, and a leader whose check starts failing resigns.
func TestHealthGating(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	t.Run("never-healthy", func(t *testing.T) {
		e := newHookElection(t, c)
		a := e.add("a", nil, nil, "tick")
		e.leader(10 * time.Second)
		b := e.add("b", []string{"--health-check", "false", "--health-interval", "200ms"}, nil, "tick")
		b.WaitEvent(logEvHealthWait, 10*time.Second)
		waitTenures(t, e.ticks, 1, 10*time.Second)
		a.Signal(syscall.SIGTERM)
		a.Wait(10 * time.Second)
		gone := time.Now()
		for time.Since(gone) < 3*200*time.Millisecond+200*time.Millisecond {
			if r := leaderQuery(t, c.Servers(), e.base); r.code != 1 {
				t.Fatalf("ballot leader exit %d (%q) with b's health check failing, want 1", r.code, r.stdout)
			}
			if ps := e.proposals(); len(ps) != 0 {
				t.Fatalf("b stands for election with a failing health check: %v", ps)
			}
		}
		if b.Logged("elected leader") || b.Logged("command started") || b.Exited() {
			t.Errorf("b was elected (or exited) with a failing health check")
		}
	})
	t.Run("turns-unhealthy", func(t *testing.T) {
		e := newHookElection(t, c)
		okFile := filepath.Join(t.TempDir(), "ok")
		if err := os.WriteFile(okFile, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		a := e.add("a", hookFlags(e.events, "--health-check", shellWords("test", "-f", okFile),
			"--health-interval", "200ms", "--health-failures", "2"), nil, "tick")
		e.leader(10 * time.Second)
		b := e.add("b", hookFlags(e.events), nil, "tick")
		b.WaitEvent(logEvFollowing, 10*time.Second)
		waitTenures(t, e.ticks, 1, 10*time.Second)

		if err := os.Remove(okFile); err != nil {
			t.Fatal(err)
		}
		removed := time.Now()
		a.WaitEvent(logEvUnhealthy, 5*time.Second)
		demote := waitEvent(t, e.events, "demote", "a", 5*time.Second)
		promote := waitEvent(t, e.events, "promote", "b", 10*time.Second)
		waitTenures(t, e.ticks, 2, 10*time.Second)
		if demote.reason != "unhealthy" {
			t.Errorf("a's demote reason is %q, want unhealthy", demote.reason)
		}
		ls := leaderships(t, e.events, e.ticks)
		if len(ls) != 2 || ls[0].cand != "a" || ls[1].cand != "b" {
			t.Fatalf("want leaderships a then b: %v", readEvents(t, e.events))
		}
		t.Log(checkOwnOrder(t, ls[0]))
		t.Log(checkOwnOrder(t, ls[1]))
		t.Log(checkHandover(t, ls[0], ls[1]))
		t.Logf("check file removed → a's command stopped %s, a's demote %s..%s, b promoted %s",
			ms(ls[0].ticks.last.Sub(removed)), ms(demote.start.Sub(removed)), ms(demote.end.Sub(removed)), ms(promote.start.Sub(removed)))
		if ls[0].ticks.last.Sub(removed) > 2*time.Second {
			t.Errorf("a's command ran %s after its health check started failing", ls[0].ticks.last.Sub(removed))
		}
		if n := strings.Count(a.out.String(), "health check passes"); n != 1 {
			t.Errorf("a logged \"health check passes\" %d times before the check file came back, want 1", n)
		}

		proposalsBefore := strings.Count(a.out.String(), "proposal made")
		if err := os.WriteFile(okFile, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for strings.Count(a.out.String(), "health check passes") < 2 || strings.Count(a.out.String(), "proposal made") <= proposalsBefore {
			if time.Now().After(deadline) {
				t.Fatalf("a did not stand again within 5s of its health check passing again")
			}
			time.Sleep(10 * time.Millisecond)
		}
		a.WaitEvent(logEvFollowing, 5*time.Second)
		if l := e.leader(5 * time.Second); l != b {
			t.Errorf("leader is %s after a stood again, want b", l.name)
		}
		checkNoOverlap(t, e.ticks)
		e.checkTokensGrow()
	})
}
