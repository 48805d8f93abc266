package main

// --slots N (slots.go): at most N commands at once, each in a slot of its
// own with its own fencing token; the guarantees of one leader hold per
// slot.

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// slotTenures reads a tick file written with TICK_SLOT: tenures keyed
// slot/token.
func slotTenures(t testing.TB, file string) []*tenure { return readTenures(t, file) }

// maxConcurrent is the most tenures that ticked at one moment.
func maxConcurrent(ts []*tenure) (most int, at time.Time) {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, tn := range ts {
		edges = append(edges, edge{tn.first, +1}, edge{tn.last, -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].delta > edges[j].delta // touching counts as overlapping
	})
	n := 0
	for _, e := range edges {
		n += e.delta
		if n > most {
			most, at = n, e.at
		}
	}
	return most, at
}

// checkSlots fails the test if more than n commands ticked at once, if a
// slot outside 0…n-1 ran, or if a slot's fencing tokens did not grow from
// one tenure to the next; it returns the slots seen.
func checkSlotTenures(t *testing.T, file string, n int) map[int]int {
	t.Helper()
	ts := slotTenures(t, file)
	if most, at := maxConcurrent(ts); most > n {
		t.Errorf("%d commands at once at %s (--slots %d)", most, at.Format("15:04:05.000000"), n)
	}
	last := map[int]int64{}
	seen := map[int]int{}
	for _, tn := range ts { // in order of their first tick
		slot, token, ok := strings.Cut(tn.token, "/")
		k, err1 := strconv.Atoi(slot)
		tok, err2 := strconv.ParseInt(token, 10, 64)
		if !ok || err1 != nil || err2 != nil || k < 0 || k >= n {
			t.Errorf("tenure %q: not a slot 0…%d and a fencing token", tn.token, n-1)
			continue
		}
		if tok <= last[k] {
			t.Errorf("slot %d: fencing token %d after %d", k, tok, last[k])
		}
		last[k] = tok
		seen[k]++
	}
	return seen
}

// waitSlotTenures waits for n tenures in the tick file, each of the last
// ones ticking.
func waitSlotTenures(t *testing.T, file string, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for len(slotTenures(t, file)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %d tenures, have %d", timeout, n, len(slotTenures(t, file)))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSlots(t *testing.T) {
	t.Parallel()
	zkc := startZK(t, 1)

	t.Run("two at once, a released slot goes to the next", func(t *testing.T) {
		t.Parallel()
		e := newElection(t, zkc)
		slots := []string{"--slots", "2"}
		var ps []*ballotProc
		for _, id := range []string{"a", "b", "c"} {
			ps = append(ps, e.addSlotted(id, slots))
		}
		waitSlotTenures(t, e.ticks, 2, 20*time.Second)
		var follower *ballotProc // the one that joined last, whichever that is
		for deadline := time.Now().Add(10 * time.Second); follower == nil; time.Sleep(10 * time.Millisecond) {
			for _, p := range ps {
				if len(p.Events(logEvFollowing)) > 0 && len(p.Events(logEvElected)) == 0 {
					follower = p
				}
			}
			if time.Now().After(deadline) {
				t.Fatal("no candidate follows")
			}
		}
		// info: a row per slot, each holder with its slot; leader: one
		// line per holder.
		out, _, code := runBallotInfo(t, zkc.Servers(), e.base)
		for _, want := range []string{"slot 0", "slot 1", "held by", "leading, slot 0", "leading, slot 1"} {
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("info (exit %d) lacks %q:\n%s", code, want, out)
			}
		}
		r := basicRun(t, ballotEnv(t), t.TempDir(), 20*time.Second, "--zookeeper-servers", zkc.ConnString(),
			"--zookeeper-base-path", e.base, "leader")
		if r.code != 0 || strings.Count(r.stdout, "\n") != 2 {
			t.Errorf("leader: exit %d, want one line per holder:\n%s%s", r.code, r.stdout, r.stderr)
		}
		// Whoever holds slot 0 or 1 goes; c takes its slot.
		holder := ps[0]
		if holder == follower {
			holder = ps[1]
		}
		holder.Signal(syscall.SIGTERM)
		holder.Wait(10 * time.Second)
		waitSlotTenures(t, e.ticks, 3, 20*time.Second)
		seen := checkSlotTenures(t, e.ticks, 2)
		if len(seen) != 2 {
			t.Errorf("slots used %v, want 0 and 1", seen)
		}
		for _, p := range ps {
			p.Signal(syscall.SIGTERM)
		}
		for _, p := range ps {
			p.Wait(10 * time.Second)
		}
		checkSlotTenures(t, e.ticks, 2)
	})

	// run cron with --slots 2: each scheduled time runs once per slot
	// (BALLOT_SLOT tells the runs apart), never twice in one slot.
	t.Run("run cron runs each time once per slot", func(t *testing.T) {
		t.Parallel()
		e := newCronElection(t, zkc)
		for _, id := range []string{"a", "b", "c"} {
			env := ballotEnv(t, "BALLOT_TEST_CHILD=run", "TICK_FILE="+e.ticks, "TICK_SLOT=1")
			args := []string{"--zookeeper-servers", zkc.ConnString(), "--zookeeper-base-path", e.base,
				"--zookeeper-session-timeout", "2s", "run", "cron", "--candidate-id", id, "--schedule", "* * * * * *",
				"--slots", "2", "--on-child-success", "rerun", "--", selfExe(), e.runs, "100ms"}
			e.cands = append(e.cands, startBallot(t, id, env, args...))
		}
		both := func() (string, bool) { // a time run in both slots
			by := map[string]map[string]int{}
			for _, r := range e.readRuns() {
				slot, _, _ := strings.Cut(r.token, "/")
				if by[r.scheduled] == nil {
					by[r.scheduled] = map[string]int{}
				}
				by[r.scheduled][slot]++
			}
			for at, slots := range by {
				if slots["0"] == 1 && slots["1"] == 1 {
					return at, true
				}
			}
			return "", false
		}
		deadline := time.Now().Add(20 * time.Second)
		for _, ok := both(); !ok; _, ok = both() {
			if time.Now().After(deadline) {
				t.Fatalf("no scheduled time ran in both slots within 20s: %v", e.readRuns())
			}
			time.Sleep(50 * time.Millisecond)
		}
		for _, p := range e.cands {
			p.Signal(syscall.SIGTERM)
		}
		for _, p := range e.cands {
			p.Wait(10 * time.Second)
		}
		seen := map[string]bool{}
		for _, r := range e.readRuns() {
			slot, _, _ := strings.Cut(r.token, "/")
			if k := r.scheduled + " slot " + slot; seen[k] {
				t.Errorf("%s ran twice", k)
			} else {
				seen[k] = true
			}
			if slot != "0" && slot != "1" {
				t.Errorf("a run in slot %q", slot)
			}
		}
		checkSlotTenures(t, e.ticks, 2)
	})

	t.Run("a candidate that disagrees on N is refused", func(t *testing.T) {
		t.Parallel()
		e := newElection(t, zkc)
		a := e.addSlotted("a", []string{"--slots", "2"})
		a.WaitEvent(logEvElected, 20*time.Second)
		for _, n := range []string{"3", "1"} {
			d := e.addSlotted("d"+n, []string{"--slots", n})
			if code := d.Wait(20 * time.Second); code != exitUsage {
				t.Errorf("--slots %s in a --slots 2 election: exit %d, want %d:\n%s", n, code, exitUsage, d.out.String())
			}
			// The operator's line: both values, named.
			if len(d.Events(logEvSlotsMismatch)) != 1 || !d.Logged("--slots "+n+": the election runs with --slots 2") {
				t.Errorf("--slots %s: no clear error:\n%s", n, d.out.String())
			}
		}
		if n := len(e.proposals()); n != 1 {
			t.Errorf("%d proposals left, want a's alone", n)
		}
		a.Signal(syscall.SIGTERM)
		a.Wait(10 * time.Second)
	})
}

// addSlotted is add for --slots tests: the command ticks slot/token.
func (e *election) addSlotted(id string, runFlags []string) *ballotProc {
	e.t.Helper()
	env := ballotEnv(e.t, "BALLOT_TEST_CHILD=tick", "TICK_FILE="+e.ticks, "TICK_SLOT=1")
	args := append(runArgs(e.zk.Servers(), e.base, id, runFlags...), "--", selfExe(), e.ticks)
	p := startBallot(e.t, id, env, args...)
	e.cands = append(e.cands, p)
	return p
}

// holders are the candidates whose sessions hold a slot's baton now.
func (e *election) holders(slots int) []*ballotProc {
	e.t.Helper()
	conn := zkConnect(e.t, e.zk.Servers(), 2*time.Second)
	defer conn.Close()
	owners := map[int64]bool{}
	for k := 0; k < slots; k++ {
		if ok, st, err := conn.Exists(e.base + "/" + slotName(batonName, k)); err == nil && ok {
			owners[st.EphemeralOwner] = true
		}
	}
	children, _, _ := conn.Children(e.base)
	var out []*ballotProc
	for _, n := range sortedProposals(children) {
		data, st, err := conn.Get(e.base + "/" + n)
		if err != nil || !owners[st.EphemeralOwner] {
			continue
		}
		for _, p := range e.cands {
			if !p.Exited() && strings.Contains(string(data), `"pid":`+strconv.Itoa(p.Pid())+`,`) {
				out = append(out, p)
			}
		}
	}
	return out
}

// slotsOnEnsemble: --slots 2 with five candidates on the ensemble, through
// a SIGKILLed ballot, a holder's member cut off from its peers, a stopped
// ballot and a deleted proposal: never three commands at once (the
// commands' own ticks), each slot's fencing tokens only grow, and after
// each fault two commands run again.
func slotsOnEnsemble(t *testing.T, c *zkCluster) {
	e := newElection(t, c)
	m := aFollower(t, c)
	slots := []string{"--slots", "2", "--stop-grace-period", "1s"}
	add := func(id string, servers []string) *ballotProc {
		env := ballotEnv(t, "BALLOT_TEST_CHILD=tick", "TICK_FILE="+e.ticks, "TICK_SLOT=1")
		p := startBallot(t, id, env, append(runArgs(servers, e.base, id, slots...), "--", selfExe(), e.ticks)...)
		e.cands = append(e.cands, p)
		return p
	}
	cut := add("c0", []string{c.Servers()[m]}) // the one whose member is cut off
	cut.WaitEvent(logEvElected, 20*time.Second)
	for i := 1; i < 5; i++ {
		add(fmt.Sprintf("c%d", i), others(c, m))
	}
	tenures := 2
	waitSlotTenures(t, e.ticks, tenures, 20*time.Second)
	// after waits for the next tenure: a fault ended one holder's, and
	// another candidate took its slot.
	after := func(fault string) {
		t.Helper()
		tenures++
		waitSlotTenures(t, e.ticks, tenures, 30*time.Second)
		checkSlotTenures(t, e.ticks, 2)
		t.Logf("after %s: %d tenures, never more than 2 at once", fault, tenures)
	}
	other := func(not *ballotProc) *ballotProc {
		for _, p := range e.holders(2) {
			if p != not {
				return p
			}
		}
		t.Fatalf("no holder but %v", not)
		return nil
	}

	killed := other(cut)
	killed.Signal(syscall.SIGKILL)
	after("a holder's ballot SIGKILLed")

	c.CutOff(m)
	t.Cleanup(func() { c.HealAll() }) // should after fail: the ensemble is shared
	after("a holder's ZooKeeper member cut off from its peers")
	whole(t, c)

	stopped := other(nil)
	stopped.Signal(syscall.SIGSTOP)
	after("a holder's ballot SIGSTOPped")
	stopped.Signal(syscall.SIGCONT)

	deleted := other(stopped)
	conn := zkConnect(t, c.Servers(), ensembleSession)
	children, _, _ := conn.Children(e.base)
	for _, n := range sortedProposals(children) {
		if data, _, err := conn.Get(e.base + "/" + n); err == nil && strings.Contains(string(data), `"pid":`+strconv.Itoa(deleted.Pid())+`,`) {
			if err := conn.Delete(e.base+"/"+n, -1); err != nil {
				t.Fatal(err)
			}
		}
	}
	conn.Close()
	after("a holder's proposal deleted")

	for _, p := range e.cands {
		if !p.Exited() {
			p.Signal(syscall.SIGTERM)
		}
	}
	for _, p := range e.cands {
		if !p.Exited() {
			p.Wait(20 * time.Second)
		}
	}
	checkSlotTenures(t, e.ticks, 2)
}

// TestSlotLostTake: a take whose answer was lost may have left a slot's
// baton held by our session with nothing under it; the next scan settles
// that slot first, before taking another, and a candidate whose proposal
// is gone meanwhile ends its candidacy instead of spinning.
func TestSlotLostTake(t *testing.T) {
	t.Parallel()
	zkc := startZK(t, 1)
	for _, gone := range []bool{false, true} {
		name := "another slot taken, the lost one given back"
		if gone {
			name = "proposal gone"
		}
		t.Run(name, func(t *testing.T) {
			base := "/ballot/test/" + strings.NewReplacer(" ", "-", "/", "-", ",", "").Replace(t.Name())
			seedElection(t, zkc.Servers(), base)
			p := newInProcess(t, zkc, base)
			x := p.joinSlots(p.session(), "x", 0, 2)
			// The lost take of slot 1, applied: its baton, our session's,
			// naming our proposal as a take's does.
			x.slot = 1
			if _, err := x.s.Conn.Create(x.batonPath(), x.handoverData(handoverTaken), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			x.baton.answerLost(1)
			if gone {
				if err := x.s.Conn.Delete(x.node, -1); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := x.readElection(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := x.takeSlot(nil); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("takeSlot did not return")
			}
			if gone {
				if !errors.Is(err, errProposalGone) {
					t.Fatalf("takeSlot: %v, want the proposal gone", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			held := 0
			for k := 0; k < 2; k++ {
				if ok, st, _ := x.s.Conn.Exists(base + "/" + slotName(batonName, k)); ok && st.EphemeralOwner == x.s.ID() {
					held++
				}
			}
			if held != 1 {
				t.Errorf("x's session holds %d slots' batons, want the one it took", held)
			}
		})
	}
}
