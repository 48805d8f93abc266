package main

// ballot trigger: a run now, fenced and recorded like a scheduled one,
// once per request however many ask and whoever leads.

import (
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cronCandidate starts a run cron candidate whose schedule never comes
// during the test (1 January): every run is a triggered one. Its command
// exits code after d, ticking meanwhile.
func cronCandidate(t *testing.T, e *election, id, code, d string, extra ...string) *ballotProc {
	t.Helper()
	args := []string{"--zookeeper-servers", e.zk.ConnString(), "--zookeeper-base-path", e.base, "--zookeeper-session-timeout", "2s",
		"run", "cron", "--candidate-id", id, "--schedule", "0 0 1 1 *"}
	args = append(append(args, extra...), "--", selfExe(), code, d)
	p := startBallot(t, id, ballotEnv(t, "BALLOT_TEST_CHILD=exit", "TICK_FILE="+e.ticks), args...)
	e.cands = append(e.cands, p)
	return p
}

// triggered reads the election's history: the triggered runs and skips.
func triggered(t *testing.T, e *election) []*historyItem {
	t.Helper()
	out, code := control(t, e, "history", "--output", "json")
	if code != 0 {
		t.Fatalf("history: exit %d: %s", code, out)
	}
	var rep struct {
		Entries []*historyItem `json:"entries"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("history --output json: %v: %s", err, out)
	}
	var got []*historyItem
	for _, it := range rep.Entries {
		if it.Trigger != nil {
			got = append(got, it)
		}
	}
	return got
}

// TestTrigger: two triggers sent while nobody leads are one request; it
// runs once when a leader comes, however many candidates come; --wait
// gives both the run's exit code; history says who asked. A later trigger
// runs at once on the leader; one while a run goes on is skipped
// (--overlap skip), and --wait says so.
func TestTrigger(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)

	// Nobody leads and --wait runs out: the request is withdrawn.
	if out, code := control(t, e, "trigger", "--wait", "500ms"); code != 1 || !strings.Contains(out, "withdrawn") {
		t.Fatalf("trigger --wait without a leader: exit %d, want 1 and withdrawn: %s", code, out)
	}
	if inf, _ := infoJSON(t, c.Servers(), e.base); inf.Trigger != nil {
		t.Fatalf("the request outlived its trigger --wait: %+v", inf.Trigger)
	}

	// Nobody leads: both wait for the one request's run.
	waiters := make([]*exec.Cmd, 2)
	outs := make([]*syncBuffer, 2)
	for i := range waiters {
		cmd := exec.Command(ballotBin, "--zookeeper-servers", c.ConnString(), "--zookeeper-base-path", e.base,
			"--zookeeper-session-timeout", "2s", "trigger", "--wait", "60s")
		cmd.Env = ballotEnv(t)
		outs[i] = &syncBuffer{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waiters[i] = cmd
		// The second joins the first's request: it starts once that one
		// said it asked (its request exists).
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(outs[i].String(), "no candidate leads") {
			if time.Now().After(deadline) {
				t.Fatalf("trigger %d did not ask: %s", i, outs[i].String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !strings.Contains(outs[1].String(), "already asked for") {
		t.Errorf("the second trigger did not join the first: %s", outs[1].String())
	}
	if out, _ := control(t, e, "info", "--verbose"); !strings.Contains(out, "(ballot trigger)") {
		t.Errorf("info does not show the pending trigger:\n%s", out)
	}
	// ignore: the leader stays for the next trigger. Each run lasts 2T
	// (T = 2s), so that a trigger sent once one has started (a dial and a
	// write, well under T) comes while it goes on.
	a := cronCandidate(t, e, "a", "3", "4s", "--on-child-error", "ignore")
	b := cronCandidate(t, e, "b", "3", "4s", "--on-child-error", "ignore")
	for i, w := range waiters {
		err := w.Wait()
		ee, _ := err.(*exec.ExitError)
		if ee == nil || ee.ExitCode() != 3 || !strings.Contains(outs[i].String(), "exit code 3") {
			t.Errorf("trigger %d --wait: %v, want exit 3 (the run's): %s", i, err, outs[i].String())
		}
	}
	runs := triggered(t, e)
	if len(runs) != 1 || runs[0].Kind != historyCron || runs[0].ExitCode == nil || *runs[0].ExitCode != 3 || !strings.Contains(runs[0].Trigger.By, "@") {
		t.Fatalf("history: want one triggered run that exited 3, with who asked; got %+v", runs)
	}
	if n := len(readTenures(t, e.ticks)); n != 1 {
		t.Errorf("%d runs for one request, want 1", n)
	}
	leader := a
	if runs[0].CandidateID == "b" {
		leader = b
	}
	leader.WaitEvent(logEvTriggered, 5*time.Second)

	// A leader in place: the run starts at once; a second request while it
	// runs is skipped (--overlap skip) and --wait says so.
	out, code := control(t, e, "trigger")
	if code != 0 || strings.Contains(out, "no candidate leads") {
		t.Fatalf("trigger: exit %d: %s", code, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(leader.Events(logEvTriggered)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the second trigger did not start a run on %s", leader.name)
		}
		time.Sleep(10 * time.Millisecond)
	}
	logTriggerLatency(t, leader)
	if out, code := control(t, e, "trigger", "--wait", "20s"); code != 1 || !strings.Contains(out, "skipped") {
		t.Errorf("trigger while a run goes on (--overlap skip): exit %d, want 1 and skipped: %s", code, out)
	}
	checkNoOverlap(t, e.ticks)
	if out, _ := control(t, e, "history"); !strings.Contains(out, "triggered by") {
		t.Errorf("history does not say who triggered:\n%s", out)
	}

	// A run once election: refused, nothing written.
	o := newElection(t, c)
	o.base += "-once"
	o.add("x", nil, nil, "tick")
	o.leader(10 * time.Second)
	if out, code := control(t, o, "trigger"); code != 1 || !strings.Contains(out, "run once election") {
		t.Errorf("trigger of a run once election: exit %d, want 1: %s", code, out)
	}
	if inf, _ := infoJSON(t, c.Servers(), o.base); inf.Trigger != nil {
		t.Errorf("trigger of a run once election wrote a request: %+v", inf.Trigger)
	}
}

// logTriggerLatency logs, for the leader's last triggered run, the time
// from the request (the trigger's clock: this host) to the run's start.
func logTriggerLatency(t *testing.T, p *ballotProc) {
	t.Helper()
	lines := strings.Split(p.out.String(), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if !strings.Contains(l, "event="+string(logEvTriggered)) {
			continue
		}
		at, err1 := time.Parse(time.RFC3339Nano, strings.Fields(l)[0])
		_, req, _ := strings.Cut(l, "requested_at=")
		asked, err2 := time.Parse(time.RFC3339Nano, strings.Fields(req)[0])
		if err1 == nil && err2 == nil {
			t.Logf("trigger: the run started %s after the request was written", at.Sub(asked).Round(time.Millisecond))
		}
		return
	}
}

// TestTriggerOverlap: a trigger while a run goes on waits for its end
// under --overlap queue, and stops it under --overlap replace.
func TestTriggerOverlap(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	for _, policy := range []string{"queue", "replace"} {
		e := newElection(t, c)
		e.base += "-" + policy
		// Each run lasts 2T (T = 2s): the second trigger, a dial and a
		// write, comes while the first run goes on.
		l := cronCandidate(t, e, "a", "3", "4s", "--on-child-error", "ignore", "--overlap", policy, "--stop-grace-period", "1s")
		l.WaitEvent(logEvElected, 10*time.Second)
		if out, code := control(t, e, "trigger"); code != 0 {
			t.Fatalf("%s: trigger: exit %d: %s", policy, code, out)
		}
		l.WaitEvent(logEvTriggered, 10*time.Second)
		out, code := control(t, e, "trigger", "--wait", "30s")
		if code != 3 {
			t.Fatalf("%s: the second trigger --wait: exit %d, want 3 (its run's): %s", policy, code, out)
		}
		runs := triggered(t, e) // newest first
		if len(runs) != 2 || runs[0].StartedAt == nil || runs[1].EndedAt == nil {
			t.Fatalf("%s: history: want two triggered runs, both recorded; got %+v", policy, runs)
		}
		second, first := runs[0], runs[1]
		switch policy {
		case "queue":
			if second.StartedAt.Before(*first.EndedAt) || first.Ended != endExited {
				t.Errorf("queue: the second run started at %s, before the first ended (%s, %s)", second.StartedAt, first.EndedAt, first.Ended)
			}
		case "replace":
			if first.Ended != endStopped || !strings.Contains(first.Reason, "replaced") {
				t.Errorf("replace: the first run ended %q (%s), want stopped: replaced", first.Ended, first.Reason)
			}
		}
	}
}

// TestTriggerAcrossFailover: a request queued behind a run (--overlap
// queue) when its leader dies is left to the next leader, which runs it
// once.
func TestTriggerAcrossFailover(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	flags := []string{"--on-child-error", "ignore", "--overlap", "queue"}
	a := cronCandidate(t, e, "a", "3", "4s", flags...)
	a.WaitEvent(logEvElected, 10*time.Second)
	b := cronCandidate(t, e, "b", "3", "4s", flags...)
	b.WaitEvent(logEvFollowing, 10*time.Second)
	if out, code := control(t, e, "trigger"); code != 0 {
		t.Fatalf("trigger: exit %d: %s", code, out)
	}
	a.WaitEvent(logEvTriggered, 10*time.Second)
	// The second request waits behind a's run (4 s = 2T: a dial and a
	// write come well within it); a dies meanwhile.
	w := exec.Command(ballotBin, "--zookeeper-servers", c.ConnString(), "--zookeeper-base-path", e.base,
		"--zookeeper-session-timeout", "2s", "trigger", "--wait", "60s")
	w.Env = ballotEnv(t)
	wout := &syncBuffer{}
	w.Stdout, w.Stderr = wout, wout
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(wout.String(), "asked for a run"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the second trigger did not ask: %s", wout.String())
		}
	}
	a.Signal(syscall.SIGKILL)
	b.WaitEvent(logEvTriggered, 15*time.Second)
	err := w.Wait()
	if ee, _ := err.(*exec.ExitError); ee == nil || ee.ExitCode() != 3 {
		t.Fatalf("the second trigger --wait: %v, want exit 3 (its run's on b): %s", err, wout.String())
	}
	runs := triggered(t, e)
	ids := map[string]int{}
	for _, r := range runs {
		ids[r.Trigger.ID]++
	}
	if len(runs) != 2 || len(ids) != 2 || runs[0].CandidateID != "b" || runs[1].CandidateID != "a" {
		t.Fatalf("history: want the first request run on a, the second once on b; got %+v", runs)
	}
	if n := len(b.Events(logEvTriggered)); n != 1 {
		t.Errorf("b ran %d triggered runs, want 1", n)
	}
	checkNoOverlap(t, e.ticks)
}

// triggerJSON runs trigger --output json with args: its report (stdout
// alone, one JSON object) and exit code.
func triggerJSON(t *testing.T, e *election, args ...string) (triggerReport, int) {
	t.Helper()
	all := append([]string{"--zookeeper-servers", e.zk.ConnString(), "--zookeeper-base-path", e.base,
		"--zookeeper-session-timeout", "2s", "trigger", "--output", "json"}, args...)
	cmd := exec.Command(ballotBin, all...)
	cmd.Env = ballotEnv(t)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var rep triggerReport
	dec := json.NewDecoder(strings.NewReader(stdout.String()))
	if err := dec.Decode(&rep); err != nil || dec.More() {
		t.Fatalf("trigger --output json %q: not one JSON object (%v): stdout %q, stderr %q", args, err, stdout.String(), stderr.String())
	}
	return rep, code
}

// TestTriggerJSON: trigger --output json says what happened: the request,
// whether a leader was there, and with --wait the outcome and the run's
// history entry.
func TestTriggerJSON(t *testing.T) {
	t.Parallel()
	e := newElection(t, sharedZK(t))

	// Nobody leads, --wait runs out: not taken, withdrawn.
	rep, code := triggerJSON(t, e, "--wait", "500ms")
	if code != 1 || rep.Outcome != triggerNotTaken || rep.Led || rep.Joined || rep.Request.ID == "" ||
		!strings.Contains(rep.Request.By, "@") || rep.Election != e.base || !strings.Contains(rep.Message, "withdrawn") || rep.Run != nil {
		t.Fatalf("trigger --wait without a leader: exit %d, %+v; want 1, not-taken, withdrawn", code, rep)
	}

	// A leader: the run's entry, its exit code trigger's.
	a := cronCandidate(t, e, "a", "3", "200ms", "--on-child-error", "ignore")
	a.WaitEvent(logEvElected, 10*time.Second)
	rep, code = triggerJSON(t, e, "--wait", "30s")
	r := rep.Run
	if code != 3 || rep.Outcome != triggerEnded || !rep.Led || r == nil || r.Node == "" || r.CandidateID != "a" ||
		r.ExitCode == nil || *r.ExitCode != 3 || r.Ended != endExited || r.State != "ended" ||
		r.StartedAt == nil || r.EndedAt == nil || r.Trigger == nil || r.Trigger.ID != rep.Request.ID {
		t.Fatalf("trigger --wait with a leader: exit %d, %+v, run %+v; want 3, ended, the run's entry", code, rep, r)
	}
	if runs := triggered(t, e); len(runs) != 1 || runs[0].Node != r.Node {
		t.Errorf("history has %+v, want the one run trigger named (%s)", runs, r.Node)
	}

	// Without --wait: asked, a leader there.
	if rep, code = triggerJSON(t, e); code != 0 || rep.Outcome != triggerAsked || !rep.Led || rep.Run != nil {
		t.Errorf("trigger: exit %d, %+v; want 0, asked, led", code, rep)
	}
	for deadline := time.Now().Add(10 * time.Second); len(a.Events(logEvTriggered)) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the request trigger made without --wait did not start a run on a")
		}
	}
}
