package main

// End-to-end tests of issue 7: the on-promote / on-demote hooks, in order
// on every path. Hooks that fail or hang: e2e_hookfail_test.go; the leader
// node: e2e_leader_test.go; health-gated candidacy: e2e_health_test.go.
//
// Hooks are the test binary in mode "event" (see testChildMain), started
// through env(1) so that they get that mode while the command keeps its
// own. Each run of a hook appends one line to an events file:
//
//	<start unixnano> <end unixnano> <event> <token> <candidate> <reason> <role>
//
// and the command ticks into the tick file ("token pid unixnano"). A
// leadership is one fencing token: its promote, its ticks, its demote.

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hookEvent is one run of a hook as it recorded itself.
type hookEvent struct {
	start, end time.Time
	event      string // promote, demote
	token      string
	cand       string
	reason     string // BALLOT_DEMOTE_REASON, "-" if unset
	role       string // BALLOT_ROLE
}

func (ev *hookEvent) String() string {
	return fmt.Sprintf("%s %s token=%s reason=%s role=%s at %s..%s", ev.cand, ev.event, ev.token, ev.reason, ev.role,
		ev.start.Format("15:04:05.000000"), ev.end.Format("15:04:05.000000"))
}

// shellWords quotes words for ballot's command line splitting.
func shellWords(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// hookCmd is a hook's command line: it records event into file after
// delay, then exits code.
func hookCmd(file, event string, delay time.Duration, code int) string {
	return shellWords("env", "BALLOT_TEST_CHILD=event", selfExe(), file, event, delay.String(), strconv.Itoa(code))
}

// hookFlags are the usual hook flags: a promote hook of 50ms and a demote
// hook of 100ms, long enough that an order ballot does not enforce would
// show.
func hookFlags(events string, extra ...string) []string {
	return append([]string{
		"--on-promote", hookCmd(events, "promote", 50*time.Millisecond, 0),
		"--on-demote", hookCmd(events, "demote", 100*time.Millisecond, 0),
	}, extra...)
}

// readEvents parses the events file, ordered by start.
func readEvents(t testing.TB, file string) []*hookEvent {
	t.Helper()
	var out []*hookEvent
	for _, l := range fileLines(t, file) {
		fs := strings.Fields(l)
		if len(fs) != 7 {
			t.Errorf("malformed line in the events file: %q", l)
			continue
		}
		a, err1 := strconv.ParseInt(fs[0], 10, 64)
		b, err2 := strconv.ParseInt(fs[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Errorf("malformed line in the events file: %q", l)
			continue
		}
		out = append(out, &hookEvent{start: time.Unix(0, a), end: time.Unix(0, b), event: fs[2], token: fs[3],
			cand: fs[4], reason: fs[5], role: fs[6]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// waitEvent waits for an event of cand (any candidate if "") and returns it.
func waitEvent(t testing.TB, file, event, cand string, timeout time.Duration) *hookEvent {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, ev := range readEvents(t, file) {
			if ev.event == event && (cand == "" || ev.cand == cand) {
				return ev
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event of %q within %s", event, cand, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// leadership is one tenure: its hooks and the ticks of its command.
type leadership struct {
	token   string
	cand    string
	promote *hookEvent
	demote  *hookEvent
	ticks   *tenure // nil if the command never ran
}

// leaderships joins hook events and ticks by fencing token, ordered by the
// start of the promote hook. It checks what holds for every leadership:
// each hook's role, one promote and at most one demote per token, and no
// command run without a promote before it.
func leaderships(t testing.TB, events, ticks string) []*leadership {
	t.Helper()
	by := map[string]*leadership{}
	var out []*leadership
	for _, ev := range readEvents(t, events) {
		switch {
		case ev.event == "promote" && ev.role != "leader":
			t.Errorf("promote hook ran with BALLOT_ROLE=%s, want leader: %s", ev.role, ev)
		case ev.event == "demote" && ev.role != "follower":
			t.Errorf("demote hook ran with BALLOT_ROLE=%s, want follower: %s", ev.role, ev)
		case ev.event == "promote" && ev.reason != "-":
			t.Errorf("promote hook has a demote reason: %s", ev)
		case ev.event == "demote" && ev.reason == "-":
			t.Errorf("demote hook has no BALLOT_DEMOTE_REASON: %s", ev)
		}
		if ev.token == "-" || ev.token == "0" {
			t.Errorf("hook ran without a fencing token: %s", ev)
		}
		l := by[ev.token]
		if l == nil {
			l = &leadership{token: ev.token, cand: ev.cand}
			by[ev.token] = l
			out = append(out, l)
		}
		if l.cand != ev.cand {
			t.Errorf("token %s used by candidates %s and %s", ev.token, l.cand, ev.cand)
		}
		switch ev.event {
		case "promote":
			if l.promote != nil {
				t.Errorf("two promotes for token %s: %s and %s", ev.token, l.promote, ev)
			}
			l.promote = ev
		case "demote":
			if l.demote != nil {
				t.Errorf("two demotes for token %s: %s and %s", ev.token, l.demote, ev)
			}
			l.demote = ev
		default:
			t.Errorf("unknown event %s", ev)
		}
	}
	for _, tn := range readTenures(t, ticks) {
		l := by[tn.token]
		if l == nil || l.promote == nil {
			t.Errorf("a command ran with token %s but no promote hook ran for it", tn.token)
			continue
		}
		l.ticks = tn
	}
	for _, l := range out {
		if l.promote == nil {
			t.Errorf("%s demoted (token %s) without a promote", l.cand, l.token)
		}
	}
	out2 := out[:0]
	for _, l := range out {
		if l.promote != nil {
			out2 = append(out2, l)
		}
	}
	sort.SliceStable(out2, func(i, j int) bool { return out2[i].promote.start.Before(out2[j].promote.start) })
	return out2
}

func ms(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }

// checkOwnOrder checks the order within one leadership: the promote hook
// ends before the command's first tick, the demote hook starts after its
// last. It returns a description of the margins.
func checkOwnOrder(t testing.TB, l *leadership) string {
	t.Helper()
	var s []string
	if l.ticks != nil {
		if !l.promote.end.Before(l.ticks.first) {
			t.Errorf("%s token %s: the command ticked at %s, before its promote hook ended at %s",
				l.cand, l.token, l.ticks.first.Format("15:04:05.000000"), l.promote.end.Format("15:04:05.000000"))
		}
		s = append(s, "promote end → first tick "+ms(l.ticks.first.Sub(l.promote.end)))
		if l.demote != nil {
			if !l.ticks.last.Before(l.demote.start) {
				t.Errorf("%s token %s: the demote hook started at %s, before the command's last tick at %s",
					l.cand, l.token, l.demote.start.Format("15:04:05.000000"), l.ticks.last.Format("15:04:05.000000"))
			}
			s = append(s, "last tick → demote start "+ms(l.demote.start.Sub(l.ticks.last)))
		}
	}
	if l.ticks == nil {
		s = append(s, "the command never ran")
	}
	if l.demote != nil && !l.promote.end.Before(l.demote.start) {
		t.Errorf("%s token %s: demote started (%s) before promote ended (%s)", l.cand, l.token, l.demote.start, l.promote.end)
	}
	return fmt.Sprintf("%s token %s: %s", l.cand, l.token, strings.Join(s, ", "))
}

// checkHandover checks a clean handover: the old leader's demote hook has
// ended before the new leader's promote hook starts, and the commands did
// not overlap.
func checkHandover(t testing.TB, old, next *leadership) string {
	t.Helper()
	if old.demote == nil {
		t.Errorf("%s token %s: no demote hook ran before %s was promoted", old.cand, old.token, next.cand)
		return ""
	}
	if !old.demote.end.Before(next.promote.start) {
		t.Errorf("%s's promote hook (token %s) started at %s, before %s's demote hook (token %s) ended at %s",
			next.cand, next.token, next.promote.start.Format("15:04:05.000000"), old.cand, old.token,
			old.demote.end.Format("15:04:05.000000"))
	}
	if old.ticks != nil && next.ticks != nil && !old.ticks.last.Before(next.ticks.first) {
		t.Errorf("commands overlapped: %s ticked until %s, %s from %s", old.cand, old.ticks.last, next.cand, next.ticks.first)
	}
	return fmt.Sprintf("%s→%s: demote end → promote start %s", old.cand, next.cand, ms(next.promote.start.Sub(old.demote.end)))
}

// hookElection is an election whose candidates have hooks recording into
// one events file.
type hookElection struct {
	*election
	events string
}

func newHookElection(t *testing.T, c *zkCluster) *hookElection {
	return &hookElection{election: newElection(t, c), events: filepath.Join(t.TempDir(), "events")}
}

// loggedAt is the time on p's first log line that contains what.
func loggedAt(t *testing.T, p *ballotProc, what string) time.Time {
	t.Helper()
	for _, line := range strings.Split(p.out.String(), "\n") {
		if strings.Contains(line, what) {
			at, err := time.Parse(time.RFC3339Nano, strings.SplitN(line, " ", 2)[0])
			if err != nil {
				t.Fatalf("%s: no time on the line %q: %v", p.name, line, err)
			}
			return at
		}
	}
	t.Fatalf("%s did not log %q", p.name, what)
	return time.Time{}
}

func waitGone(t *testing.T, pid int, timeout time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still runs after %s", what, pid, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHooksOrderCleanHandover: two candidates whose command exits after
// 300ms under reelect, so the lead alternates; every leadership is
// promote < command < demote, and each demote ends before the next
// promote starts.
func TestHooksOrderCleanHandover(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newHookElection(t, c)
	flags := hookFlags(e.events, "--on-child-success", "reelect", "--on-child-error", "reelect")
	a := e.add("a", flags, nil, "exit", "0", "300ms")
	e.leader(10 * time.Second)
	b := e.add("b", flags, nil, "exit", "0", "300ms")
	b.WaitEvent(logEvJoined, 10*time.Second)
	waitTenures(t, e.ticks, 4, 20*time.Second)
	// SIGKILL freezes the record wherever the current leadership is (a
	// SIGTERM could stop a promote hook halfway, which writes nothing):
	// every leadership but the last is complete.
	a.Signal(syscall.SIGKILL)
	b.Signal(syscall.SIGKILL)
	a.Wait(10 * time.Second)
	b.Wait(10 * time.Second)
	time.Sleep(100 * time.Millisecond) // the keepers kill what is left

	ls := leaderships(t, e.events, e.ticks)
	if len(ls) < 4 {
		t.Fatalf("%d leaderships, want at least 4", len(ls))
	}
	for i, l := range ls {
		t.Log(checkOwnOrder(t, l))
		if i > 0 {
			t.Log(checkHandover(t, ls[i-1], l))
		}
		if i == len(ls)-1 {
			break // cut by SIGKILL
		}
		if l.ticks == nil {
			t.Errorf("%s token %s: the command never ran", l.cand, l.token)
		}
		if l.demote == nil {
			t.Errorf("%s token %s: no demote hook ran", l.cand, l.token)
		} else if l.demote.reason != "command-exited" {
			t.Errorf("%s token %s: demote reason %q, want command-exited", l.cand, l.token, l.demote.reason)
		}
	}
	cands := map[string]bool{}
	for _, l := range ls {
		cands[l.cand] = true
	}
	if !cands["a"] || !cands["b"] {
		t.Errorf("the lead did not alternate: leaders %v", cands)
	}
	checkNoOverlap(t, e.ticks)
	e.checkTokensGrow()
}

// TestHooksOrderSIGTERM: SIGTERM to the leader: its command stops, its
// demote hook runs with reason stop-requested and ends before the
// follower's promote hook starts.
func TestHooksOrderSIGTERM(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newHookElection(t, c)
	a := e.add("a", hookFlags(e.events), nil, "tick")
	e.leader(10 * time.Second)
	b := e.add("b", hookFlags(e.events), nil, "tick")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	waitTenures(t, e.ticks, 1, 10*time.Second)

	a.Signal(syscall.SIGTERM)
	a.Wait(10 * time.Second)
	waitTenures(t, e.ticks, 2, 10*time.Second)
	b.Signal(syscall.SIGTERM)
	b.Wait(10 * time.Second)

	ls := leaderships(t, e.events, e.ticks)
	if len(ls) != 2 || ls[0].cand != "a" || ls[1].cand != "b" {
		t.Fatalf("want leaderships a then b, have %d: %v", len(ls), readEvents(t, e.events))
	}
	for _, l := range ls {
		t.Log(checkOwnOrder(t, l))
		if l.demote == nil || l.demote.reason != "stop-requested" {
			t.Errorf("%s: demote %v, want reason stop-requested", l.cand, l.demote)
		}
	}
	t.Log(checkHandover(t, ls[0], ls[1]))
	checkNoOverlap(t, e.ticks)
}

// TestHooksOrderConnectionLoss: the leader is cut off from ZooKeeper for
// twice the session timeout: it stops its command before the follower is
// promoted, and runs its demote hook (reason connection-lost, best effort:
// it cannot hold its proposal meanwhile) after its command's last tick.
func TestHooksOrderConnectionLoss(t *testing.T) {
	t.Parallel()
	e := newHookElection(t, sharedZK(t))
	proxy, a, b := partitioned(e.election, hookFlags(e.events, "--on-connection-loss", "reelect")...)
	proxy.Blackhole(true)
	cut := time.Now()
	a.WaitEvent(logEvLeaseRunningOut, 5*time.Second)
	demote := waitEvent(t, e.events, "demote", "a", 5*time.Second)
	promote := waitEvent(t, e.events, "promote", "b", 10*time.Second)
	b.WaitEvent(logEvCommandStarted, 10*time.Second)
	waitTenures(t, e.ticks, 2, 10*time.Second)
	if d := time.Since(cut); d < 4*time.Second {
		time.Sleep(4*time.Second - d)
	}
	proxy.Blackhole(false)
	a.WaitEvent(logEvRejoining, 10*time.Second)
	a.WaitEvent(logEvFollowing, 15*time.Second)

	if demote.reason != "connection-lost" {
		t.Errorf("a's demote reason is %q, want connection-lost", demote.reason)
	}
	ls := leaderships(t, e.events, e.ticks)
	if len(ls) < 2 || ls[0].cand != "a" || ls[1].cand != "b" {
		t.Fatalf("want leaderships a then b, have %v", readEvents(t, e.events))
	}
	t.Log(checkOwnOrder(t, ls[0]))
	t.Log(checkOwnOrder(t, ls[1]))
	if ls[0].ticks == nil || !ls[0].ticks.last.Before(promote.start) {
		t.Errorf("a's command was not stopped before b was promoted")
	}
	t.Logf("a's command stopped %s after the cut; a's demote hook ran %s..%s after the cut; b promoted %s after the cut",
		ms(ls[0].ticks.last.Sub(cut)), ms(demote.start.Sub(cut)), ms(demote.end.Sub(cut)), ms(promote.start.Sub(cut)))
	t.Logf("best effort: a's demote end → b's promote start %s", ms(promote.start.Sub(demote.end)))
	report(t, "hooks: leader partitioned for 2x session timeout, on-connection-loss=reelect", checkNoOverlap(t, e.ticks), overlapOf(t, e.ticks))
}

// TestHooksOrderSessionExpiry: the same partition under on-connection-loss
// ignore: the leader's command runs on until the heal tells it the session
// expired; then the command is killed and the demote hook runs with reason
// session-expired, after the command's last tick.
func TestHooksOrderSessionExpiry(t *testing.T) {
	t.Parallel()
	e := newHookElection(t, sharedZK(t))
	proxy, a, b := partitioned(e.election, hookFlags(e.events, "--on-connection-loss", "ignore")...)
	proxy.Blackhole(true)
	cut := time.Now()
	b.WaitEvent(logEvCommandStarted, 10*time.Second)
	promote := waitEvent(t, e.events, "promote", "b", 10*time.Second)
	if d := time.Since(cut); d < 4*time.Second {
		time.Sleep(4*time.Second - d)
	}
	if a.Logged("on-demote hook started") {
		t.Errorf("a ran its demote hook during the partition under ignore")
	}
	healed := time.Now()
	proxy.Blackhole(false)
	a.WaitEvent(logEvSessionLost, 15*time.Second)
	demote := waitEvent(t, e.events, "demote", "a", 10*time.Second)
	if demote.reason != "session-expired" {
		t.Errorf("a's demote reason is %q, want session-expired", demote.reason)
	}
	ls := leaderships(t, e.events, e.ticks)
	if len(ls) < 2 || ls[0].cand != "a" || ls[1].cand != "b" {
		t.Fatalf("want leaderships a then b, have %v", readEvents(t, e.events))
	}
	t.Log(checkOwnOrder(t, ls[0]))
	t.Log(checkOwnOrder(t, ls[1]))
	t.Logf("after the heal: a's command last ticked at +%s, a's demote hook ran +%s..+%s; b was promoted %s after the cut, %s before a's demote ended",
		ms(ls[0].ticks.last.Sub(healed)), ms(demote.start.Sub(healed)), ms(demote.end.Sub(healed)),
		ms(promote.start.Sub(cut)), ms(demote.end.Sub(promote.start)))
	report(t, "hooks: leader partitioned for 2x session timeout, on-connection-loss=ignore", nil, overlapOf(t, e.ticks))
}

// TestHooksOnlyNoCommand: run once with hooks and no command holds the
// leadership until stopped.
func TestHooksOnlyNoCommand(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newHookElection(t, c)
	args := runArgs(c.Servers(), e.base, "a", append(hookFlags(e.events), "--leader-data", "hooks only")...)
	a := startBallot(t, "a", ballotEnv(t), args...)
	a.WaitEvent(logEvHolding, 10*time.Second)
	a.WaitEvent(logEvAcknowledged, 10*time.Second) // the leader node is written after
	if r := leaderQuery(t, c.Servers(), e.base); r.code != 0 || r.stdout != "hooks only\n" {
		t.Errorf("ballot leader: exit %d, stdout %q, want 0 and \"hooks only\\n\" (stderr %q)", r.code, r.stdout, r.stderr)
	}
	if evs := readEvents(t, e.events); len(evs) != 1 || evs[0].event != "promote" {
		t.Errorf("while holding: want one promote, have %v", evs)
	}
	a.Signal(syscall.SIGTERM)
	if code := a.Wait(10 * time.Second); code != 0 {
		t.Errorf("a exited %d, want 0", code)
	}
	ls := leaderships(t, e.events, e.ticks)
	if len(ls) != 1 || ls[0].demote == nil || ls[0].demote.reason != "stop-requested" {
		t.Fatalf("want one leadership ended by a demote with reason stop-requested: %v", readEvents(t, e.events))
	}
	if r := leaderQuery(t, c.Servers(), e.base); r.code != 1 {
		t.Errorf("ballot leader after a exited: exit %d, want 1", r.code)
	}
}
