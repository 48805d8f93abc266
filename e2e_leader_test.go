package main

// ballot leader and the leader node it reads: written once a leader has
// taken the baton, gone before the next one is, readable while partitioned.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// leaderResult is how a `ballot leader` ended.
type leaderResult struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// startLeaderQuery runs `ballot leader` with args in the background.
func startLeaderQuery(t *testing.T, servers []string, base string, args ...string) <-chan leaderResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	argv := append([]string{"--zookeeper-servers", strings.Join(servers, ","), "--zookeeper-base-path", base, "leader"}, args...)
	cmd := exec.CommandContext(ctx, ballotBin, argv...)
	cmd.Env = ballotEnv(t)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	ch := make(chan leaderResult, 1)
	go func() {
		defer cancel()
		err := cmd.Wait()
		r := leaderResult{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			r.code = ee.ExitCode()
		case err != nil:
			r.code = -1
			r.stderr += err.Error()
		}
		ch <- r
	}()
	return ch
}

func leaderQuery(t *testing.T, servers []string, base string, args ...string) leaderResult {
	t.Helper()
	return <-startLeaderQuery(t, servers, base, args...)
}

// TestBallotLeader: the leader node and `ballot leader`.
func TestBallotLeader(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newHookElection(t, c)
	srv := c.Servers()

	// Nobody yet: exit 1, at once or after --wait.
	waiting := startLeaderQuery(t, srv, e.base, "--wait", "10s")
	if r := leaderQuery(t, srv, e.base); r.code != 1 || r.stdout != "" {
		t.Errorf("ballot leader with no candidate: exit %d, stdout %q, want 1 and nothing", r.code, r.stdout)
	}
	r := leaderQuery(t, srv, e.base, "--wait", "500ms")
	if r.code != 1 || r.stdout != "" {
		t.Errorf("ballot leader --wait 500ms with no candidate: exit %d, stdout %q, want 1 and nothing", r.code, r.stdout)
	}
	if r.took < 500*time.Millisecond || r.took > 3*time.Second {
		t.Errorf("ballot leader --wait 500ms with no candidate took %s", r.took)
	}
	t.Logf("ballot leader --wait 500ms with no leader: exit %d after %s (%q)", r.code, ms(r.took), strings.TrimSpace(r.stderr))
	select {
	case r := <-waiting:
		t.Fatalf("ballot leader --wait 10s returned before any candidate: exit %d, %q %q", r.code, r.stdout, r.stderr)
	default:
	}

	dataFile := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(dataFile, []byte("db2:5432"), 0o644); err != nil {
		t.Fatal(err)
	}
	// a's promote hook takes 700ms and its demote hook 3s: the leader node
	// is written only after the promote, and removed before the demote.
	slowHooks := []string{
		"--on-promote", hookCmd(e.events, "promote", 700*time.Millisecond, 0),
		"--on-demote", hookCmd(e.events, "demote", 3*time.Second, 0),
	}
	a := e.add("a", append(slowHooks, "--leader-data", "db1:5432"), nil, "tick")
	select {
	case r := <-waiting:
		returned := time.Now()
		if r.code != 0 || r.stdout != "db1:5432\n" {
			t.Errorf("ballot leader --wait 10s: exit %d, stdout %q, want 0 and db1:5432 (stderr %q)", r.code, r.stdout, r.stderr)
		}
		// a logs the acknowledgement once ZooKeeper answers its write; the
		// query may see the node first. The order is proven by the hook's end.
		a.WaitEvent(logEvAcknowledged, 10*time.Second)
		promote := waitEvent(t, e.events, "promote", "a", time.Second)
		if !promote.end.Before(returned) {
			t.Errorf("ballot leader --wait returned before a's promote hook ended")
		}
		t.Logf("ballot leader --wait 10s returned after %s, %s after a's promote hook ended", ms(r.took), ms(returned.Sub(promote.end)))
	case <-time.After(15 * time.Second):
		t.Fatalf("ballot leader --wait 10s did not return once a led")
	}
	b := e.add("b", []string{"--leader-data", "@" + dataFile}, nil, "tick")
	b.WaitEvent(logEvFollowing, 10*time.Second)

	if r := leaderQuery(t, srv, e.base); r.code != 0 || r.stdout != "db1:5432\n" {
		t.Errorf("ballot leader: exit %d, stdout %q, want 0 and \"db1:5432\\n\" (stderr %q)", r.code, r.stdout, r.stderr)
	}
	ts := waitTenures(t, e.ticks, 1, 10*time.Second)
	r = leaderQuery(t, srv, e.base, "--output", "json")
	var rec map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil || r.code != 0 {
		t.Fatalf("ballot leader --output json: exit %d, %v: %q", r.code, err, r.stdout)
	}
	if rec["data"] != "db1:5432" || rec["candidateId"] != "a" || fmt.Sprint(rec["fencingToken"]) != ts[0].token {
		t.Errorf("ballot leader --output json: %s; want data db1:5432, candidateId a, fencingToken %s", r.stdout, ts[0].token)
	}

	a.Signal(syscall.SIGTERM)
	a.WaitEvent(logEvHookStarted, 5*time.Second, "hook", "on-demote")
	if r := leaderQuery(t, srv, e.base); r.code != 1 || r.stdout != "" {
		t.Errorf("ballot leader while a's demote hook runs: exit %d, stdout %q, want 1: the leader node goes before on-demote", r.code, r.stdout)
	}
	if a.Logged("on-demote hook ended") {
		t.Errorf("a's 3s demote hook ended before the check: the check proves nothing")
	}
	a.Wait(10 * time.Second)
	b.WaitEvent(logEvAcknowledged, 10*time.Second)
	if r := leaderQuery(t, srv, e.base); r.code != 0 || r.stdout != "db2:5432\n" {
		t.Errorf("ballot leader after the handover: exit %d, stdout %q, want 0 and \"db2:5432\\n\" (stderr %q)", r.code, r.stdout, r.stderr)
	}

	b.Signal(syscall.SIGTERM)
	b.Wait(10 * time.Second)
	if _, _, err := e.connGet(leaderPath(e.base)); !errors.Is(err, zk.ErrNoNode) {
		t.Errorf("the leader node is still there after the last leader exited: %v", err)
	}
	if r := leaderQuery(t, srv, e.base); r.code != 1 || r.stdout != "" {
		t.Errorf("ballot leader after the last leader exited: exit %d, stdout %q, want 1", r.code, r.stdout)
	}
}

// TestLeaderNodeWriteDuringPartition: the leader is partitioned while its
// promote hook runs. The hook ends before the lease's suspect time and the
// command starts; the leader-node write then waits for the reconnect. It
// once did so on the supervision path, so the command was not stopped at
// the lease and ran 2.9s alongside b's: the write must never be waited for.
func TestLeaderNodeWriteDuringPartition(t *testing.T) {
	t.Parallel()
	c := sharedZK(t)
	e := newHookElection(t, c)
	proxy := newTCPProxy(t, c.Servers())
	a := e.add("a", []string{"--on-promote", hookCmd(e.events, "promote", 700*time.Millisecond, 0)}, []string{proxy.Addr()}, "tick")
	a.WaitEvent(logEvHookStarted, 10*time.Second, "hook", "on-promote")
	proxy.Blackhole(true)
	cut := time.Now()
	b := e.add("b", nil, nil, "tick")
	b.WaitEvent(logEvCommandStarted, 10*time.Second)
	time.Sleep(4*time.Second - time.Since(cut))
	proxy.Blackhole(false)
	a.WaitEvent(logEvRejoining, 10*time.Second)
	gaps := checkNoOverlap(t, e.ticks)
	report(t, "leader partitioned during its promote hook", gaps, overlapOf(t, e.ticks))
}

// TestUnpublishFencedByProposal: a leader's fast path (leader node,
// proposal and release in one write) landed, its answer lost; a successor
// took and wrote its own leader node, at version 0 as every leader node is.
// The old leader's unpublishLeader then reads the leader node from a member
// behind the quorum, which still shows the old leader's node at version 0.
// Its delete by that version must not remove the successor's node: it is
// fenced by the old leader's proposal, gone. A member that lags on cue
// cannot be made with ZooKeeper (a reconnect to a member behind the
// client's last zxid is refused; one cut off from the quorum cannot pass
// the delete on), so the read is the one such a member would answer, kept
// from before, and the delete goes to the real server.
func TestUnpublishFencedByProposal(t *testing.T) {
	t.Parallel()
	zkc := sharedZK(t)
	base := "/ballot/test/unpublish-fenced"
	seedElection(t, zkc.Servers(), base)
	p := newInProcess(t, zkc, base)
	publish := func(c *candidate) ([]byte, *zk.Stat) {
		publishedLeaderNode(t, c)
		data, st, err := c.s.Conn.Get(c.leaderPath())
		if err != nil {
			t.Fatal(err)
		}
		return data, st
	}
	a := p.join(p.session(), "a")
	staleData, staleStat := publish(a)
	// The fast path lands (withdrawWithLeaderNode's ops, the release aside).
	if _, err := a.s.Conn.Multi(&zk.DeleteRequest{Path: a.leaderPath(), Version: 0}, &zk.DeleteRequest{Path: a.node, Version: -1}); err != nil {
		t.Fatal(err)
	}
	b := p.join(p.session(), "b")
	bData, bStat := publish(b)
	if bStat.Version != staleStat.Version {
		t.Fatalf("the successor's leader node at version %d, a's was %d: the stale read's version would not match anyway", bStat.Version, staleStat.Version)
	}

	if err := unpublishRead(a, staleData, staleStat); !errors.Is(err, zk.ErrNoNode) {
		t.Errorf("a's delete by a stale read: %v, want refused (a's proposal is gone)", err)
	}
	if raw, _, err := b.s.Conn.Get(b.leaderPath()); err != nil || !namesProposal(raw, b.node) {
		t.Fatalf("the successor's leader node was deleted by the old leader's stale read: %v", err)
	}
	// The live leader's own delete goes through.
	if err := unpublishRead(b, bData, bStat); err != nil {
		t.Fatalf("the leader's own unpublish: %v", err)
	}
	if ok, _, err := b.s.Conn.Exists(b.leaderPath()); ok || err != nil {
		t.Errorf("the leader node stays after its leader's unpublish: %v", err)
	}
}

// publishedLeaderNode makes c's leader node as publishLeader leaves it (an
// ephemeral of c's session at version 0, naming c's proposal) and marks it
// published, for the in-process tests of what a leadership's end does
// with it.
func publishedLeaderNode(t *testing.T, c *candidate) {
	t.Helper()
	data, _ := json.Marshal(leaderRecord{CandidateID: c.id, Proposal: c.node})
	if _, err := c.s.Conn.Create(c.leaderPath(), data, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.lead.published = true
}
