package main

// info and watch without ZooKeeper: the model built from a snapshot, its
// human and YAML forms, and the events watch derives from two snapshots.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/zookeeper"
)

func TestInfoFmtMs(t *testing.T) {
	for ms, want := range map[int64]string{
		0: "0s", 4: "4ms", 850: "850ms", 2240: "2.2s", 9960: "10s", 32400: "32s",
		182000: "3m2s", 7500000: "2h5m", -2200: "-2.2s",
	} {
		if got := fmtMs(ms); got != want {
			t.Errorf("fmtMs(%d) = %q, want %q", ms, got, want)
		}
	}
}

func TestInfoYAMLQuoting(t *testing.T) {
	for in, want := range map[string]string{
		"alice": "alice", "": `""`, "host-5.example": "host-5.example", "12345": `"12345"`, "true": `"true"`,
		"a: b": `"a: b"`, "x\x00y": `"x\x00y"`, "bad\xff": `"bad\xff"`, "- x": `"- x"`, "#c": `"#c"`,
		"/ballot/x/_c_ab-proposal-0000000001": "/ballot/x/_c_ab-proposal-0000000001",
	} {
		if got := yq(in); got != want {
			t.Errorf("yq(%q) = %s, want %s", in, got, want)
		}
	}
}

// proposal builds a snapshot node as ZooKeeper would return it; ctime and
// mtime are ms before now.
func proposal(t *testing.T, now time.Time, seq int64, d any, ctimeAgo, mtimeAgo int64) *snapNode {
	t.Helper()
	var raw []byte
	switch v := d.(type) {
	case string:
		raw = []byte(v)
	default:
		raw, _ = json.Marshal(v)
	}
	name := fmt.Sprintf("_c_0123-proposal-%010d", seq)
	return newSnapNode(name, raw, &zk.Stat{Czxid: 100 + seq, EphemeralOwner: 0x1000 + seq,
		Ctime: now.UnixMilli() - ctimeAgo, Mtime: now.UnixMilli() - mtimeAgo, Version: 3})
}

func TestInfoBuild(t *testing.T) {
	now := time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)
	hb := func(id, state string) *proposalData {
		return &proposalData{CandidateID: id, Host: "h-" + id, PID: 7, SessionTimeout: "2s", SessionTimeoutMs: 2000,
			ProposalTime: now.Add(-time.Minute), State: state, WrittenAt: now.Add(-time.Second)}
	}
	leader := hb("a", "following") // elected, but its data does not say so yet
	leader.Child = &childStatus{PID: 99, RunningForMs: 1000}
	leader.LastExit = &exitStatus{Code: 3, AgoMs: 5000, DurationMs: 200}
	leader.NextRun = &scheduledNext{Time: "2026-11-22T11:00:10Z", InMs: 12000}
	sick := hb("b", "resigning")
	sick.Health = &healthStatus{Healthy: false, ConsecutiveFailures: 3, LastCheck: now, LastCheckAgoMs: 400}
	s := &electionSnapshot{exists: true, proposals: []*snapNode{
		proposal(t, now, 1, leader, 60000, 1600),
		proposal(t, now, 2, hb("b", "leading"), 30000, 2500), // stale, says leading
		proposal(t, now, 3, sick, 20000, 100),
		proposal(t, now, 4, &proposalData{CandidateID: "old", SessionTimeoutMs: 2000}, 10000, 10000), // no state
		proposal(t, now, 5, "{not json", 100, 100),
	}}
	inf := buildInfo("/e", []string{"zk:2181"}, s, now)
	if inf.Leader == nil || inf.Leader.ID != "a" || inf.Leader.FencingToken != 101 || len(inf.Candidates) != 5 {
		t.Fatalf("leader %+v, %d candidates", inf.Leader, len(inf.Candidates))
	}
	l := inf.Leader
	if l.Command.RunningForMs != 2600 || l.LastExit.AgoMs != 6600 || l.NextRun.InMs != 10400 || l.ProposalAgeMs != 60000 {
		t.Errorf("ages not corrected by the write's age: command %+v, exit %+v, next %+v, age %d", l.Command, l.LastExit, l.NextRun, l.ProposalAgeMs)
	}
	want := map[int][]string{
		0: {"is leader", "state last changed 1.6s ago", "proposal node created 1m0s ago"},
		1: {"next in line", "state last changed 2.5s ago", "2 candidates share the id b"},
		2: {"possibly resigning", "says it is unhealthy (3 failed health checks in a row)"},
		3: {"proposal node created 10s ago"},
		4: {"proposal data cannot be parsed (another tool or a bad write)"},
	}
	for i, subs := range want {
		for _, sub := range subs {
			if !hasNote(inf.Candidates[i].Notes, sub) {
				t.Errorf("candidate %d notes %q lack %q", i+1, inf.Candidates[i].Notes, sub)
			}
		}
	}
	for i, c := range inf.Candidates {
		if hasNote(c.Notes, "heartbeat") || hasNote(c.Notes, "session may have expired") {
			t.Errorf("candidate %d: notes still speak of heartbeats: %q", i+1, c.Notes)
		}
	}
	for _, sub := range []string{"election may be in progress: the lowest proposal (a) does not say it is leading yet",
		"election may be in progress: b says it is leading", "2 candidates share the id b"} {
		if !hasNote(inf.Notes, sub) {
			t.Errorf("notes %q lack %q", inf.Notes, sub)
		}
	}
	var b strings.Builder
	writeInfoHuman(&b, inf)
	for _, sub := range []string{"leader:\n  id: a\n", "  command: {pid: 99, runningFor: 2.6s}\n",
		"  lastExit: {status: 3, ago: 6.6s, duration: 200ms}\n", "  nextRun: {time: 2026-11-22T11:00:10Z, in 10s}\n",
		"- position: 5\n  id: null", `  data: "{not json"`, "  health: {healthy: false, consecutiveFailures: 3, lastCheck: 500ms ago}\n"} {
		if !strings.Contains(b.String(), sub) {
			t.Errorf("human output lacks %q:\n%s", sub, b.String())
		}
	}

	// The base path's ACL, and why it could not be read.
	s.acl = append(zk.DigestACL(zk.PermAll, "alice", "pw"), zk.WorldACL(zk.PermRead)...)
	inf = buildInfo("/e", nil, s, now)
	if len(inf.ACL) != 2 || inf.ACL[0].Scheme != "digest" || !strings.HasPrefix(inf.ACL[0].ID, "alice:") || inf.ACL[0].Perms != "cdrwa" ||
		inf.ACL[1] != (infoACL{Scheme: "world", ID: "anyone", Perms: "r"}) {
		t.Errorf("ACL %+v", inf.ACL)
	}
	b.Reset()
	writeInfoHuman(&b, inf)
	if want := "acl:\n- " + inf.ACL[0].Scheme + ":" + inf.ACL[0].ID + " cdrwa\n- world:anyone r\nleader:\n"; !strings.Contains(b.String(), want) {
		t.Errorf("human output lacks %q:\n%s", want, b.String())
	}
	s.acl, s.aclErr = nil, zookeeper.Error(zk.ErrNoAuth, "read the ACL of", "/e")
	if inf = buildInfo("/e", nil, s, now); inf.ACL != nil || !hasNote(inf.Notes, "the ACL of /e cannot be read: not authorized to read the ACL of /e") {
		t.Errorf("ACL %+v, notes %q", inf.ACL, inf.Notes)
	}

	// Readers never write, so "now" is this host's clock, always.
	local := buildInfo("/e", nil, &electionSnapshot{}, now)
	if local.Clock != "local" || !hasNote(local.Notes, "does not exist") || local.Leader != nil {
		t.Errorf("%+v", local)
	}
}

func TestWatchDiff(t *testing.T) {
	now := time.Now()
	d := func(id, state string, child *childStatus, exit *exitStatus) *proposalData {
		return &proposalData{CandidateID: id, State: state, Child: child, LastExit: exit, WrittenAt: now}
	}
	at := now.Add(-time.Second)
	a1 := proposal(t, now, 1, d("a", "following", nil, nil), 0, 0)
	a1lead := proposal(t, now, 1, d("a", "leading", &childStatus{PID: 5}, nil), 0, 0)
	a1exit := proposal(t, now, 1, d("a", "leading", nil, &exitStatus{Code: 2, At: at, DurationMs: 1500}), 0, 0)
	a1res := proposal(t, now, 1, d("a", "resigning", nil, &exitStatus{Code: 2, At: at, DurationMs: 1500}), 0, 0)
	b2 := proposal(t, now, 2, d("b", "following", nil, nil), 0, 0)
	b2lead := proposal(t, now, 2, d("b", "leading", &childStatus{PID: 6}, nil), 0, 0)
	preempting := func(to string, pid int) *snapNode {
		pd := d("a", "leading", &childStatus{PID: pid}, nil)
		pd.Preempt = &preemptStatus{Proposal: "/e/" + to, CandidateID: to, Priority: 5, At: now.Add(time.Minute)}
		return proposal(t, now, 1, pd, 0, 0)
	}
	snap := func(ns ...*snapNode) *electionSnapshot { return &electionSnapshot{exists: true, proposals: ns} }

	for _, tc := range []struct {
		name      string
		prev, cur *electionSnapshot
		want      []string
	}{
		{"first joins", &electionSnapshot{}, snap(a1), []string{
			"candidate joined: a (…-0000000001), 1st in line", "leader changed: none → a (…-0000000001)"}},
		{"second joins", snap(a1), snap(a1, b2), []string{"candidate joined: b (…-0000000002), 2nd in line"}},
		{"leading", snap(a1, b2), snap(a1lead, b2), []string{
			"leader a (…-0000000001) state: following → leading", "leader a (…-0000000001): command started, pid 5"}},
		{"exited", snap(a1lead, b2), snap(a1exit, b2), []string{"leader a (…-0000000001): command exited with status 2 after 1.5s"}},
		{"handover planned", snap(a1lead, b2), snap(preempting("b", 5), b2), []string{"leader a (…-0000000001) hands over to b (priority 5) at "}},
		{"the same handover still planned", snap(preempting("b", 5), b2), snap(preempting("b", 5), b2), nil},
		{"the handover planned to another", snap(preempting("b", 5), b2), snap(preempting("c", 5), b2), []string{"leader a (…-0000000001) hands over to c (priority 5) at "}},
		{"command restarted", snap(a1lead, b2), snap(preempting("b", 7), b2), []string{
			"leader a (…-0000000001): command started, pid 7", "leader a (…-0000000001) hands over to b"}},
		{"heartbeat only", snap(a1exit, b2), snap(a1exit, b2), nil},
		{"resigning", snap(a1exit, b2), snap(a1res, b2), []string{"leader a (…-0000000001) is resigning"}},
		{"handover", snap(a1res, b2), snap(b2lead), []string{
			"candidate left: a (…-0000000001)", "leader changed: a (…-0000000001) → b (…-0000000002)",
			"leader b (…-0000000002) state: following → leading", "leader b (…-0000000002): command started, pid 6"}},
		{"all gone", snap(b2lead), &electionSnapshot{}, []string{
			"candidate left: b (…-0000000002)", "leader changed: b (…-0000000002) → none (no candidates)",
			"no candidates yet: /e was deleted"}},
	} {
		var got []string
		for _, ev := range diffElection("/e", tc.prev, tc.cur) {
			got = append(got, ev.Message)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if !strings.HasPrefix(got[i], tc.want[i]) {
				t.Errorf("%s: event %d = %q, want %q", tc.name, i, got[i], tc.want[i])
			}
		}
	}
}

// TestInfoBaton: what info and watch say about the baton, from the nodes as
// ZooKeeper returns them.
func TestInfoBaton(t *testing.T) {
	now := time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)
	rec := func(state, id string, session int64) []byte {
		b, _ := json.Marshal(handoverRecord{State: state, CandidateID: id, Proposal: "/e/" + id, Session: zookeeper.SessionHex(session),
			SessionTimeoutMs: 2000, FencingToken: 7})
		return b
	}
	lowest := proposal(t, now, 1, &proposalData{CandidateID: "b", State: stateWaitingForBaton}, 1000, 1000) // session 0x1001
	batonOf := func(session int64) *snapNode {
		return &snapNode{name: batonName, raw: rec("taken", "a", session), stat: zk.Stat{EphemeralOwner: session, Ctime: now.UnixMilli() - 3000}}
	}
	record := func(state string) *snapNode {
		return &snapNode{name: handoverName, raw: rec(state, "a", 0x99), stat: zk.Stat{Mtime: now.UnixMilli() - 500}}
	}
	handed := func() *snapNode {
		var r handoverRecord
		_ = json.Unmarshal(rec(handoverHanded, "a", 0x99), &r)
		r.Successor = "/e/b"
		raw, _ := json.Marshal(r)
		return &snapNode{name: handoverName, raw: raw, stat: zk.Stat{Mtime: now.UnixMilli() - 500}}
	}
	for _, tc := range []struct {
		name      string
		s         *electionSnapshot
		state     string
		note      string // a note of the election that must be there ("" none about the baton)
		waitMs    int64
		candidate string
	}{
		{"held by the leader", &electionSnapshot{exists: true, proposals: []*snapNode{lowest}, baton: batonOf(0x1001), handover: record("taken")},
			"held", "", 0, "a"},
		{"held by a candidate whose proposal is gone", &electionSnapshot{exists: true, proposals: []*snapNode{lowest}, baton: batonOf(0x99), handover: record("taken")},
			"held", "the baton is held by a, which is not the lowest proposal", 0, "a"},
		{"given back", &electionSnapshot{exists: true, proposals: []*snapNode{lowest}, handover: record("released")},
			"released", "", 0, "a"},
		{"dropped", &electionSnapshot{exists: true, proposals: []*snapNode{lowest}, handover: record("taken")},
			"dropped", "the baton was dropped by a without being given back", 1500, "a"},
		{"handed over", &electionSnapshot{exists: true, proposals: []*snapNode{lowest}, handover: handed()},
			"handed-over", "", 1500, "a"},
		{"handed over, then revoked: read as dropped", &electionSnapshot{exists: true, proposals: []*snapNode{lowest}, handover: record(handoverRevoked)},
			"dropped", "the baton was dropped by a without being given back", 1500, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inf := buildInfo("/e", nil, tc.s, now)
			b := inf.Baton
			if b == nil || b.State != tc.state || b.CandidateID != tc.candidate || b.SuccessorWaitMs != tc.waitMs {
				t.Fatalf("baton %+v, want state %s, candidate %s, successor wait %dms", b, tc.state, tc.candidate, tc.waitMs)
			}
			if tc.note != "" && !hasNote(inf.Notes, tc.note) {
				t.Errorf("notes %q lack %q", inf.Notes, tc.note)
			}
			if tc.note == "" && (hasNote(inf.Notes, "the baton is held") || hasNote(inf.Notes, "the baton was dropped")) {
				t.Errorf("notes %q warn about the baton", inf.Notes)
			}
			if !hasNote(inf.Notes, "waits for the baton") {
				t.Errorf("notes %q do not say the lowest proposal waits for the baton", inf.Notes)
			}
			var out strings.Builder
			writeInfoHuman(&out, inf)
			if !strings.Contains(out.String(), "baton:\n  state: "+tc.state+"\n") {
				t.Errorf("human output lacks the baton:\n%s", out.String())
			}
		})
	}

	// watch: taken, then given back; taken, then dropped.
	held := &electionSnapshot{exists: true, baton: batonOf(0x1001)}
	retaken := &electionSnapshot{exists: true, baton: batonOf(0x1002)}
	retaken.baton.stat.Czxid = 8
	for _, tc := range []struct {
		prev, cur *electionSnapshot
		want      string
	}{
		{&electionSnapshot{exists: true}, held, "baton taken by a"},
		{held, &electionSnapshot{exists: true, handover: record("released")}, "baton given back by a"},
		{held, &electionSnapshot{exists: true, handover: record("taken")}, "baton dropped by a without being given back"},
		{held, held, ""},
		{held, retaken, "baton taken by a"}, // another take in between the reads
		{held, &electionSnapshot{exists: true, handover: handed()}, "baton given back by a and handed over to /e/b"},
		{held, &electionSnapshot{exists: true, handover: record(handoverRevoked)}, "baton dropped by a"},
		{held, &electionSnapshot{exists: true}, ""}, // no record: nothing to say
	} {
		evs := batonEvents(tc.prev, tc.cur)
		switch {
		case tc.want == "" && len(evs) != 0:
			t.Errorf("events %+v, want none", evs)
		case tc.want != "" && (len(evs) != 1 || !strings.HasPrefix(evs[0].Message, tc.want)):
			t.Errorf("events %+v, want one starting %q", evs, tc.want)
		}
	}
}
