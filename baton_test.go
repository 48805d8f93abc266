package main

// Unit tests of the baton's decisions (baton.go): how long a successor
// waits for a dropped baton, and whether a take was dropped at all, from
// the handover record as read. No ZooKeeper: milliseconds.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"ballot/internal/zookeeper"
)

func TestBatonWaitIsThreeQuartersOfT(t *testing.T) {
	for _, T := range leaseTimeouts {
		if got := batonWait(T); got != T*3/4 {
			t.Errorf("batonWait(%s) = %s, want 3T/4", T, got)
		}
	}
}

// testCandidate is a candidate whose session has id and timeout T, as far
// as the baton's records go.
func testCandidate(id int64, T time.Duration) *candidate {
	return &candidate{s: zookeeper.Detached(id, T), standby: &standby{},
		proposalFacts: proposalFacts{basePath: "/ballot/test", id: "alice", node: "/ballot/test/_c_x-proposal-0000000001"}}
}

// TestSuccessorWaitsTheHoldersWholeW: the W a holder records, in whole
// milliseconds, is never shorter than the W its lease counts with, nor
// longer by a millisecond or more; negotiated timeouts are whole
// milliseconds, 3T/4 need not be.
func TestSuccessorWaitsTheHoldersWholeW(t *testing.T) {
	for _, T := range leaseTimeouts {
		holder := testCandidate(0x11, T)
		b, _ := json.Marshal(holder.handoverRecord(handoverTaken))
		var rec handoverRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		w := batonWait(T)
		if got := rec.holderWait(400 * time.Millisecond); got < w || got >= w+time.Millisecond {
			t.Errorf("T=%s: a successor reads W=%s from the record; the holder's lease ends W=%s after its last renewal", T, got, w)
		}
		if got := time.Duration(recordedWaitMs(T)) * time.Millisecond; got < w || got >= w+time.Millisecond {
			t.Errorf("T=%s: the election records W=%s; the holder's lease ends W=%s after its last renewal", T, got, w)
		}
	}
}

func TestHolderWait(t *testing.T) {
	own := 2 * time.Second
	for _, tc := range []struct {
		name string
		rec  handoverRecord
		want time.Duration
	}{
		{"as recorded", handoverRecord{BatonWaitMs: 4501, SessionTimeoutMs: 2000}, 4501 * time.Millisecond},
		{"an older ballot's: 3/4 of its session timeout", handoverRecord{SessionTimeoutMs: 6002}, 4501500 * time.Microsecond},
		{"nothing known: 3/4 of ours", handoverRecord{}, 1500 * time.Millisecond},
	} {
		if got := tc.rec.holderWait(own); got != tc.want {
			t.Errorf("%s: holderWait = %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestDroppedTake: a take by another session that was never released is
// dropped, and its holder's W is waited out; a released take, or our own
// (a take whose answer was lost: our session's, naming our proposal), is
// not. (A missing or unreadable record
// needs the election's record from ZooKeeper: the e2e tests cover it.)
func TestDroppedTake(t *testing.T) {
	c := testCandidate(0x22, 2*time.Second)
	record := func(state string, session int64, waitMs int64) *handoverSeen {
		proposal := "/ballot/test/_c_y-proposal-0000000002"
		if session == 0x22 {
			proposal = c.node // our own take names our proposal
		}
		rec := handoverRecord{State: state, CandidateID: "bob", Session: fmt.Sprintf("0x%x", session),
			SessionTimeoutMs: 4000, BatonWaitMs: waitMs, Proposal: proposal}
		raw, _ := json.Marshal(rec)
		return &handoverSeen{raw: raw, exists: true, parsed: true, rec: rec}
	}
	for _, tc := range []struct {
		name     string
		h        *handoverSeen
		dropped  bool
		wantWait time.Duration
	}{
		{"taken by another session", record(handoverTaken, 0x33, 3000), true, 3 * time.Second},
		{"taken by an older ballot", record(handoverTaken, 0x33, 0), true, 3 * time.Second},
		{"taken, longer W than ours", record(handoverTaken, 0x33, 9000), true, 9 * time.Second},
		{"released", record(handoverReleased, 0x33, 3000), false, 0},
		{"taken by our own session", record(handoverTaken, 0x22, 3000), false, 0},
		{"released by our own session", record(handoverReleased, 0x22, 3000), false, 0},
		// Another candidacy of the election on our session (a crontab's
		// job added again): its take, not ours.
		{"taken by our own session for another proposal", func() *handoverSeen {
			h := record(handoverTaken, 0x22, 3000)
			h.rec.Proposal = "/ballot/test/_c_z-proposal-0000000003"
			h.raw, _ = json.Marshal(h.rec)
			return h
		}(), true, 3 * time.Second},
	} {
		dropped, wait, err := c.droppedTake(tc.h)
		if err != nil || (dropped != "") != tc.dropped || wait != tc.wantWait {
			t.Errorf("%s: dropped %q, wait %s, %v; want dropped %v, wait %s", tc.name, dropped, wait, err, tc.dropped, tc.wantWait)
		}
		if tc.dropped && dropped != string(tc.h.raw) {
			t.Errorf("%s: dropped take named %q, want the record as read", tc.name, dropped)
		}
	}
}

// TestRetirePruning: what a leader's last multi-op (leader node,
// proposal, then the baton's release) tries again after one of its
// operations failed.
func TestRetirePruning(t *testing.T) {
	c := testCandidate(0x22, 2*time.Second)
	c.baton.took(0, 0)
	leaderNode := &zk.DeleteRequest{Path: c.basePath + "/leader", Version: 3}
	proposal := &zk.DeleteRequest{Path: c.node, Version: -1}
	ops := append([]any{leaderNode, proposal}, releaseOps(c, handTo{})...)
	record, baton := ops[2], ops[3]
	name := func(ops []any) []string {
		var out []string
		for _, o := range ops {
			switch o {
			case leaderNode:
				out = append(out, "leader node")
			case proposal:
				out = append(out, "proposal")
			case record:
				out = append(out, "record released")
			case baton:
				out = append(out, "baton deleted")
			}
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		failed      int
		err         error
		rest        []string
		keepRelease bool
		retry       bool
	}{
		{"the leader node is gone already", 0, zk.ErrNoNode, []string{"proposal", "record released", "baton deleted"}, true, true},
		{"the leader node was rewritten", 0, zk.ErrBadVersion, []string{"proposal", "record released", "baton deleted"}, true, true},
		{"the proposal is gone: the baton may not be ours", 1, zk.ErrNoNode, []string{"leader node"}, false, true},
		{"the record changed: someone else's take", 2, zk.ErrBadVersion, []string{"leader node", "proposal"}, false, true},
		{"the record was deleted", 2, zk.ErrNoNode, []string{"leader node", "proposal"}, false, true},
		{"the baton was deleted: the record is still marked", 3, zk.ErrNoNode, []string{"leader node", "proposal", "record released"}, true, true},
		{"refused: given up", 1, zk.ErrNoAuth, nil, true, false},
	} {
		in := append([]any(nil), ops...)
		rest, keep, retry := pruneRetire(c, in, tc.failed, tc.err)
		if retry != tc.retry || (retry && (keep != tc.keepRelease || !reflect.DeepEqual(name(rest), tc.rest))) {
			t.Errorf("%s: tries again %v %v (release kept %v), want %v %v (%v)", tc.name, retry, name(rest), keep, tc.retry, tc.rest, tc.keepRelease)
		}
		if !reflect.DeepEqual(in, ops) {
			t.Errorf("%s: the caller's operations were changed", tc.name)
		}
	}
}

// TestRetirePruningHandedOver: a release that names a successor (baton.go,
// "handed over") names nobody once the successor has left the line, and
// drops the successor's check with the release.
func TestRetirePruningHandedOver(t *testing.T) {
	c := testCandidate(0x22, 2*time.Second)
	c.baton.took(0, 0)
	successor := c.basePath + "/_c_y-proposal-0000000002"
	proposal := &zk.DeleteRequest{Path: c.node, Version: -1}
	ops := append([]any{proposal}, releaseOps(c, handTo{proposal: successor})...)
	check, ok := ops[1].(*zk.CheckVersionRequest)
	if !ok || check.Path != successor {
		t.Fatalf("the release does not check its successor: %#v", ops)
	}
	var rec handoverRecord
	if json.Unmarshal(ops[2].(*zk.SetDataRequest).Data, &rec) != nil || rec.State != handoverHanded || rec.Successor != successor {
		t.Fatalf("the release does not name its successor: %s", ops[2].(*zk.SetDataRequest).Data)
	}

	in := append([]any(nil), ops...)
	rest, keep, retry := pruneRetire(c, in, 1, zk.ErrNoNode)
	if !retry || !keep || len(rest) != 3 {
		t.Fatalf("successor gone: tries again %v %#v (release kept %v), want the release to nobody", retry, rest, keep)
	}
	rec = handoverRecord{}
	if json.Unmarshal(rest[1].(*zk.SetDataRequest).Data, &rec) != nil || rec.State != handoverReleased || rec.Successor != "" {
		t.Errorf("successor gone: the record says %s, want released to nobody", rest[1].(*zk.SetDataRequest).Data)
	}
	if json.Unmarshal(ops[2].(*zk.SetDataRequest).Data, &rec) != nil || rec.State != handoverHanded {
		t.Errorf("the caller's operations were changed")
	}

	rest, keep, retry = pruneRetire(c, append([]any(nil), ops...), 0, zk.ErrNoNode)
	if !retry || keep || len(rest) != 0 {
		t.Errorf("proposal gone: tries again %v %#v (release kept %v), want nothing left: no release, no successor's check", retry, rest, keep)
	}
}

// TestSuccessorIsFirstInLineCreditOnlyIfOldest: a release names the first
// other proposal in line (priority first); it may start on credit only if
// no older proposal is in line, since ballots older than priorities wait
// as the oldest only and never for a named successor.
func TestSuccessorIsFirstInLineCreditOnlyIfOldest(t *testing.T) {
	for _, tc := range []struct {
		name string
		line []string
		want handTo
	}{
		{"nobody else", []string{"_c_x-proposal-0000000001"}, handTo{}},
		{"next by sequence", []string{"_c_x-proposal-0000000001", "_c_b-proposal-0000000003", "_c_a-proposal-0000000002"},
			handTo{proposal: "/ballot/test/_c_a-proposal-0000000002"}},
		{"a higher priority ahead of an older one", []string{"_c_x-proposal-0000000001", "_c_a-proposal-0000000002", "_c_p-priority+5-proposal-0000000009"},
			handTo{proposal: "/ballot/test/_c_p-priority+5-proposal-0000000009", noCredit: true}},
		{"a higher priority that is also the oldest", []string{"_c_x-proposal-0000000001", "_c_p-priority+5-proposal-0000000002", "_c_a-proposal-0000000003"},
			handTo{proposal: "/ballot/test/_c_p-priority+5-proposal-0000000002"}},
		{"a leader of higher priority than the rest", []string{"_c_x-priority+9-proposal-0000000005", "_c_a-proposal-0000000002"},
			handTo{proposal: "/ballot/test/_c_a-proposal-0000000002"}},
	} {
		c := testCandidate(0x22, 2*time.Second)
		c.node = "/ballot/test/" + tc.line[0]
		line := tc.line
		c.line.seen.Store(&line)
		if got := c.successor(); got != tc.want {
			t.Errorf("%s: successor %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestNoteSubject: whose note a successor may trust, for each kind of
// handover record.
func TestNoteSubject(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
		want string
	}{
		{"a take", `{"state":"taken","proposal":"/e/x"}`, "/e/x"},
		{"a handover", `{"state":"handed-over","proposal":"/e/l","successor":"/e/x"}`, "/e/x"},
		{"a revoked handover", `{"state":"revoked","proposal":"/e/l","successor":"/e/x"}`, "/e/x"},
		{"a release", `{"state":"released","proposal":"/e/x"}`, ""},
		{"an older ballot's take", `{"state":"taken","candidateId":"x"}`, ""},
		{"not a record", `nonsense`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := parseHandover([]byte(tc.raw))
			if got := noteSubject(h); got != tc.want {
				t.Errorf("noteSubject(%s) = %q, want %q", tc.raw, got, tc.want)
			}
		})
	}
}
