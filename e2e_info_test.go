package main

// End-to-end tests of `ballot info` and `ballot watch`: the real binary
// against a real ZooKeeper, with real candidates (session timeout 2s).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/zookeeper"
)

// runBallotInfo runs `ballot info` and returns its stdout, stderr and exit
// code.
func runBallotInfo(t *testing.T, servers []string, base string, args ...string) (string, string, int) {
	t.Helper()
	all := append([]string{"--zookeeper-servers", strings.Join(servers, ","), "--zookeeper-base-path", base,
		"--zookeeper-session-timeout", "2s", "info"}, args...)
	if !strings.Contains(strings.Join(args, " "), "--output") {
		all = append(all, "--verbose") // the detail these tests read; the summary has its own test
	}
	cmd := exec.Command(ballotBin, all...)
	cmd.Env = ballotEnv(t)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ballot info: %v", err)
	}
	return out.String(), errb.String(), code
}

// infoJSON runs `ballot info --output json` and parses its output, which
// must be one JSON document.
func infoJSON(t *testing.T, servers []string, base string) (*infoElection, int) {
	t.Helper()
	out, stderr, code := runBallotInfo(t, servers, base, "--output", "json")
	var inf infoElection
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&inf); err != nil {
		t.Fatalf("info --output json (exit %d) is not JSON: %v\nstdout:\n%s\nstderr:\n%s", code, err, out, stderr)
	}
	if dec.More() {
		t.Fatalf("info --output json printed more than one JSON document:\n%s", out)
	}
	return &inf, code
}

func hasNote(notes []string, sub string) bool {
	for _, n := range notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

func findCandidate(inf *infoElection, id string) *infoCandidate {
	for i := range inf.Candidates {
		if inf.Candidates[i].ID == id {
			return &inf.Candidates[i]
		}
	}
	return nil
}

// checkCoherent checks what must hold for any info output: the exit code
// follows the leader rule, and the leader is the first candidate.
func checkCoherent(t *testing.T, inf *infoElection, code int) {
	t.Helper()
	switch {
	case code == 0 && (inf.Leader == nil || len(inf.Candidates) == 0):
		t.Errorf("exit 0 but no leader: %+v", inf)
	case code == 1 && (inf.Leader != nil || len(inf.Candidates) != 0):
		t.Errorf("exit 1 but leader %+v and %d candidates", inf.Leader, len(inf.Candidates))
	case code != 0 && code != 1:
		t.Errorf("exit %d, want 0 or 1", code)
	}
	if inf.Leader != nil && inf.Leader.ProposalNode != inf.Candidates[0].ProposalNode {
		t.Errorf("leader %s is not the first candidate %s", inf.Leader.ProposalNode, inf.Candidates[0].ProposalNode)
	}
	for i, c := range inf.Candidates {
		if c.Position != i+1 || (i > 0 && c.Sequence <= inf.Candidates[i-1].Sequence) {
			t.Errorf("candidates out of election order: %d at position %d (sequence %d)", i, c.Position, c.Sequence)
		}
	}
	if inf.Clock != "local" {
		t.Errorf("clock %q, want local (readers never write a clock node) notes %v", inf.Clock, inf.Notes)
	}
}

func TestInfo(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)

	t.Run("NoPath", func(t *testing.T) {
		base := "/ballot/test/info-nopath"
		out, stderr, code := runBallotInfo(t, c.Servers(), base)
		if code != 1 || !strings.Contains(out, "no candidates") || !strings.Contains(out, "leader: null") {
			t.Errorf("exit %d, want 1 and \"no candidates\"; stdout:\n%s\nstderr:\n%s", code, out, stderr)
		}
		inf, code := infoJSON(t, c.Servers(), base)
		if code != 1 || inf.Exists || inf.Leader != nil || len(inf.Candidates) != 0 || !hasNote(inf.Notes, "does not exist") {
			t.Errorf("json: exit %d, %+v", code, inf)
		}
	})

	t.Run("EmptyPath", func(t *testing.T) {
		base := "/ballot/test/info-empty"
		conn := zkConnect(t, c.Servers(), 2*time.Second)
		if err := zookeeper.CreateParents(conn, base, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		inf, code := infoJSON(t, c.Servers(), base)
		if code != 1 || !inf.Exists || inf.Leader != nil || !hasNote(inf.Notes, "no candidates") {
			t.Errorf("exit %d, %+v", code, inf)
		}
		checkCoherent(t, inf, code)
	})

	t.Run("LeaderAndFollowers", func(t *testing.T) {
		e := newElection(t, c)
		a := e.add("a", nil, nil, "tick")
		e.leader(10 * time.Second)
		b := e.add("b", nil, nil, "tick")
		b.WaitEvent(logEvFollowing, 10*time.Second)
		cc := e.add("c", nil, nil, "tick")
		cc.WaitEvent(logEvFollowing, 10*time.Second, "place_in_line", "3")
		waitTenures(t, e.ticks, 1, 10*time.Second)

		out, stderr, code := runBallotInfo(t, c.Servers(), e.base)
		t.Logf("ballot info:\n%s", out)
		if code != 0 {
			t.Fatalf("exit %d, want 0; stderr: %s", code, stderr)
		}
		for _, want := range []string{"election: " + e.base, "leader:\n  id: a\n", "allCandidates:\n- position: 1\n  id: a\n",
			"- position: 2\n  id: b\n", "- position: 3\n  id: c\n", "  - is leader\n", "  - next in line\n", "fencingToken: "} {
			if !strings.Contains(out, want) {
				t.Errorf("human output lacks %q", want)
			}
		}

		// The leader says "leading" and shows its command within a second
		// of its election (its state changed: it writes).
		var inf *infoElection
		deadline := time.Now().Add(5 * time.Second)
		for {
			inf, code = infoJSON(t, c.Servers(), e.base)
			if inf.Leader != nil && inf.Leader.State == "leading" && inf.Leader.Command != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		checkCoherent(t, inf, code)
		if code != 0 || inf.Leader == nil || inf.Leader.ID != "a" {
			t.Fatalf("exit %d, leader %+v, want a", code, inf.Leader)
		}
		var ids []string
		for _, c := range inf.Candidates {
			ids = append(ids, c.ID)
		}
		if strings.Join(ids, ",") != "a,b,c" {
			t.Errorf("candidates %v, want a,b,c in order", ids)
		}
		l := inf.Leader
		if !hasNote(l.Notes, "is leader") || !hasNote(inf.Candidates[1].Notes, "next in line") || hasNote(inf.Candidates[2].Notes, "next in line") {
			t.Errorf("notes: leader %v, second %v, third %v", l.Notes, inf.Candidates[1].Notes, inf.Candidates[2].Notes)
		}
		if l.PID != a.Pid() || l.Host == "" || l.FencingToken == 0 || l.FencingToken != l.Czxid || l.SessionID == "0x0" {
			t.Errorf("leader facts: %+v (ballot pid %d)", l, a.Pid())
		}
		if toks := e.tokens(); len(toks) != 1 || toks[0] != l.FencingToken {
			t.Errorf("fencing token %d, the command got %v", l.FencingToken, toks)
		}
		if l.SessionTimeoutMs != 2000 || l.ProposalTime == nil || l.ProposalAgeMs <= 0 || l.ProposalAgeMs > 60000 {
			t.Errorf("leader proposal: timeout %d, time %v, age %dms", l.SessionTimeoutMs, l.ProposalTime, l.ProposalAgeMs)
		}
		// The candidate side: state, command.
		if l.State != "leading" || l.Command == nil || l.Command.PID == 0 || l.Command.RunningForMs <= 0 {
			t.Errorf("leader says state %q, command %+v; want leading with a command", l.State, l.Command)
		}
		for _, c := range inf.Candidates {
			if !hasNote(c.Notes, "state last changed") || hasNote(c.Notes, "heartbeat") {
				t.Errorf("%s: notes %v", c.ID, c.Notes)
			}
			if c.Position > 1 && c.State != "following" {
				t.Errorf("%s says %q, want following", c.ID, c.State)
			}
		}
		if hasNote(inf.Notes, "election may be in progress") {
			t.Errorf("settled election, yet notes say %v", inf.Notes)
		}
		// Stable field names.
		raw, _, _ := runBallotInfo(t, c.Servers(), e.base, "--output", "json")
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"election", "zookeeper", "readAt", "clock", "exists", "leader", "allCandidates", "notes"} {
			if _, ok := m[k]; !ok {
				t.Errorf("JSON lacks %q", k)
			}
		}
		lm, _ := m["leader"].(map[string]any)
		for _, k := range []string{"position", "id", "host", "pid", "proposalNode", "sequence", "czxid", "fencingToken",
			"sessionId", "sessionTimeout", "proposalTime", "proposalAgeMs", "lastWriteAgeMs",
			"state", "command", "notes"} {
			if _, ok := lm[k]; !ok {
				t.Errorf("JSON leader lacks %q: %v", k, lm)
			}
		}
	})

	t.Run("Handover", func(t *testing.T) {
		e := newElection(t, c)
		a := e.add("a", nil, nil, "tick")
		e.leader(10 * time.Second)
		b := e.add("b", nil, nil, "tick")
		b.WaitEvent(logEvFollowing, 10*time.Second)

		a.Signal(syscall.SIGTERM)
		leaders := map[string]int{}
		deadline := time.Now().Add(5 * time.Second)
		for {
			inf, code := infoJSON(t, c.Servers(), e.base)
			checkCoherent(t, inf, code)
			if inf.Leader != nil {
				leaders[inf.Leader.ID]++
				if inf.Leader.ID != "a" && inf.Leader.ID != "b" {
					t.Errorf("leader %q", inf.Leader.ID)
				}
				if inf.Leader.ID == "b" && inf.Leader.State == "leading" && a.Exited() {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("b did not become a leader saying so within 5s: leaders seen %v", leaders)
			}
		}
		t.Logf("leaders seen while handing over: %v", leaders)
		if inf, _ := infoJSON(t, c.Servers(), e.base); len(inf.Candidates) != 1 || findCandidate(inf, "a") != nil {
			t.Errorf("after the handover: %d candidates, a still there: %v", len(inf.Candidates), findCandidate(inf, "a") != nil)
		}
	})

	t.Run("IdleCandidatesDoNotWrite", func(t *testing.T) {
		// Nothing changes, so nothing is written: liveness is the session's
		// business, not a heartbeat's.
		e := newElection(t, c)
		e.add("a", nil, nil, "tick")
		e.leader(10 * time.Second)
		b := e.add("b", nil, nil, "tick")
		b.WaitEvent(logEvFollowing, 10*time.Second)
		time.Sleep(2 * publishGap) // the last state changes are written
		versions := func() map[string]int32 {
			inf, code := infoJSON(t, c.Servers(), e.base)
			checkCoherent(t, inf, code)
			v := map[string]int32{}
			for _, c := range inf.Candidates {
				v[c.ID] = c.DataVersion
			}
			return v
		}
		before := versions()
		time.Sleep(3 * time.Second) // more than a session timeout: old heartbeats came every second
		after := versions()
		if len(before) != 2 || fmt.Sprint(before) != fmt.Sprint(after) {
			t.Errorf("idle candidates wrote their proposals: versions %v, then %v", before, after)
		}
	})

	t.Run("ForeignNodes", func(t *testing.T) {
		base := "/ballot/test/info-foreign"
		conn := zkConnect(t, c.Servers(), 2*time.Second)
		if err := zookeeper.CreateParents(conn, base, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string]string{
			"_c_x-proposal-0000009999": "garbage \x00\xff",
			"_c_y-proposal-0000009998": `{"candidateId": "y", "pid": `,
			"cron":                     "not json",
			"somethingelse":            "hello",
		} {
			if _, err := conn.Create(base+"/"+name, []byte(data), 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
		}
		// Only foreign proposals: the lowest of them is the leader all the same.
		out, stderr, code := runBallotInfo(t, c.Servers(), base)
		t.Logf("ballot info:\n%s", out)
		if code != 0 || !strings.Contains(out, "proposal data cannot be parsed (another tool or a bad write)") {
			t.Errorf("exit %d; stderr %s", code, stderr)
		}
		inf, code := infoJSON(t, c.Servers(), base)
		checkCoherent(t, inf, code)
		if code != 0 || inf.Leader == nil || inf.Leader.Sequence != 9998 || inf.Leader.ID != "" || inf.Leader.ParseError == "" ||
			!hasNote(inf.Leader.Notes, "cannot be parsed") || !hasNote(inf.Leader.Notes, "not ephemeral") {
			t.Errorf("exit %d, leader %+v", code, inf.Leader)
		}
		if len(inf.OtherNodes) != 1 || inf.OtherNodes[0].Name != "somethingelse" || inf.Cron == nil || inf.Cron.ParseError == "" {
			t.Errorf("other nodes %+v, cron %+v", inf.OtherNodes, inf.Cron)
		}

		// A real candidate comes first (lower sequence) and leads.
		e := &election{t: t, zk: c, base: base, ticks: t.TempDir() + "/ticks"}
		e.add("a", nil, nil, "tick")
		waitTenures(t, e.ticks, 1, 10*time.Second)
		inf, code = infoJSON(t, c.Servers(), base)
		checkCoherent(t, inf, code)
		if code != 0 || inf.Leader == nil || inf.Leader.ID != "a" || len(inf.Candidates) != 3 ||
			!hasNote(inf.Candidates[1].Notes, "cannot be parsed") || !hasNote(inf.Candidates[2].Notes, "cannot be parsed") {
			t.Errorf("exit %d, candidates %+v", code, inf.Candidates)
		}
	})

	t.Run("ReadOnlyParent", func(t *testing.T) {
		// Nothing can be created next to the base path: info reads all
		// the same (readers never write), on this host's clock.
		base := "/ballot/test/info-readonly/election"
		conn := zkConnect(t, c.Servers(), 2*time.Second)
		if err := zookeeper.CreateParents(conn, base, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.SetACL("/ballot/test/info-readonly", zk.WorldACL(zk.PermRead), -1); err != nil {
			t.Fatal(err)
		}
		inf, code := infoJSON(t, c.Servers(), base)
		if code != 1 || inf.Clock != "local" || !inf.Exists {
			t.Errorf("exit %d, clock %q, notes %q", code, inf.Clock, inf.Notes)
		}
	})

	t.Run("Unreachable", func(t *testing.T) {
		ports, err := zkFreePorts(1)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		out, stderr, code := runBallotInfo(t, []string{fmt.Sprintf("127.0.0.1:%d", ports[0])}, "/ballot/x")
		took := time.Since(start)
		if code != 125 || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "cannot reach ZooKeeper") {
			t.Errorf("exit %d after %s; stdout %q; stderr %q; want 125 and one line", code, took, out, stderr)
		}
		if took > 5*time.Second {
			t.Errorf("took %s to give up, want about 2s", took)
		}
		t.Logf("exit %d after %s: %s", code, took.Round(time.Millisecond), strings.TrimSpace(stderr))
	})
}

// waitLines waits until out holds each of want, in this order, on separate
// lines.
func waitLines(t *testing.T, p *ballotProc, timeout time.Duration, want ...string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		lines := strings.Split(p.out.String(), "\n")
		i := 0
		for _, l := range lines {
			if i < len(want) && strings.Contains(l, want[i]) {
				i++
			}
		}
		if i == len(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ballot %s: after %s, %q not seen (in order %q); output:\n%s", p.name, timeout, want[i], want, p.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestWatch(t *testing.T) {
	t.Parallel()
	c := startZK(t, 1)
	e := newFreshElection(t, c)
	args := func(format string) []string {
		return []string{"--zookeeper-servers", c.ConnString(), "--zookeeper-base-path", e.base,
			"--zookeeper-session-timeout", "2s", "watch", "--output", format}
	}
	hw := startBallot(t, "watch-human", ballotEnv(t), args("human")...)
	jw := startBallot(t, "watch-json", ballotEnv(t), args("json")...)
	// watch's output, not its log: these words are what watch is for.
	hw.WaitLog("no candidates yet: "+e.base+" does not exist", 10*time.Second)
	jw.WaitLog(`"event":"noCandidates"`, 10*time.Second)

	a := e.add("a", nil, nil, "tick")
	waitLines(t, hw, 10*time.Second, "candidate joined: a (…-", "leader changed: none → a (…-")
	b := e.add("b", []string{"--on-child-success", "ignore"}, nil, "exit", "0", "1s")
	b.WaitEvent(logEvFollowing, 10*time.Second)
	waitLines(t, hw, 10*time.Second, "candidate joined: b (…-")

	a.Signal(syscall.SIGTERM)
	a.Wait(10 * time.Second)
	b.WaitEvent(logEvChildPolicy, 10*time.Second, "policy", "ignore")
	waitLines(t, hw, 10*time.Second,
		"no candidates yet",
		"candidate joined: a (…-",
		"leader changed: none → a (…-",
		"candidate joined: b (…-",
		"candidate left: a (…-",
		"leader changed: a (…-", // → b
		"leader b (…-",          // state, command started
		"command exited with status 0 after 1")
	// Each watch is its own process with its own session: the JSON one may
	// print the last event a moment after the human one.
	jw.WaitLog(`"change":"commandExited"`, 10*time.Second)
	if !strings.Contains(hw.out.String(), ") → b (…-") {
		t.Errorf("no leader change to b:\n%s", hw.out.String())
	}

	hw.Signal(syscall.SIGTERM)
	jw.Signal(syscall.SIGINT)
	if code := hw.Wait(5 * time.Second); code != 0 {
		t.Errorf("watch exited %d after SIGTERM, want 0", code)
	}
	if code := jw.Wait(5 * time.Second); code != 0 {
		t.Errorf("watch exited %d after SIGINT, want 0", code)
	}
	t.Logf("ballot watch:\n%s", hw.out.String())
	if strings.Contains(hw.out.String(), "candidate left: b") {
		t.Logf("b left the election; its log:\n%s", b.out.String())
	}

	// JSON: one object per line, the same events in the same order.
	var events []string
	for _, line := range strings.Split(strings.TrimSpace(jw.out.String()), "\n") {
		var ev watchEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("watch --output json line is not JSON: %v\n%s", err, line)
		}
		if ev.Time.IsZero() || ev.Message == "" {
			t.Errorf("event without time or message: %s", line)
		}
		name := ev.Event
		if ev.Change != "" {
			name += "/" + ev.Change
		}
		if ev.Candidate != nil {
			name += ":" + ev.Candidate.ID
		}
		events = append(events, name)
	}
	got := strings.Join(events, " ")
	t.Logf("json events: %s", got)
	want := []string{"snapshot", "noCandidates", "candidateJoined:a", "leaderChanged:a", "candidateJoined:b",
		"candidateLeft:a", "leaderChanged:b", "leaderStateChanged/commandExited:b"}
	i := 0
	for _, ev := range events {
		if i < len(want) && ev == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("json events %v lack %q (want in order %v)", events, want[i], want)
	}
}

// TestWatchSessionExpiry: watch is cut off from ZooKeeper for longer than
// its session timeout; it says so, opens a new session and reports what
// changed meanwhile.
func TestWatchSessionExpiry(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newElection(t, c)
	proxy := newTCPProxy(t, c.Servers())
	w := startBallot(t, "watch", ballotEnv(t), "--zookeeper-servers", proxy.Addr(), "--zookeeper-base-path", e.base,
		"--zookeeper-session-timeout", "2s", "watch")
	w.WaitLog("no candidates yet", 10*time.Second) // watch's output, as an operator reads it
	e.add("a", nil, nil, "tick")
	waitLines(t, w, 10*time.Second, "candidate joined: a (…-")

	proxy.Blackhole(true)
	w.WaitLog("connection to ZooKeeper lost", 5*time.Second) // watch's output line
	e.add("b", nil, nil, "tick").WaitEvent(logEvFollowing, 10*time.Second)
	time.Sleep(2500 * time.Millisecond) // past the session timeout
	proxy.Blackhole(false)
	waitLines(t, w, 10*time.Second, "connection to ZooKeeper lost", "session expired; starting a new one",
		"reconnected: new session 0x", "candidate joined: b (…-")
	w.Signal(syscall.SIGTERM)
	if code := w.Wait(5 * time.Second); code != 0 {
		t.Errorf("watch exited %d, want 0", code)
	}
	t.Logf("ballot watch:\n%s", w.out.String())
}
