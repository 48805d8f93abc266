package main

// The history as a reader shows it (history_read.go), from entries built in
// memory; reading them from ZooKeeper: e2e_history_test.go.

import (
	"strings"
	"testing"
	"time"
)

// TestSettleHistory: an entry's state is what its leader's end says, or,
// while it has none, whether that leader still holds a baton; ages are on
// ZooKeeper's clock (the node's mtime).
func TestSettleHistory(t *testing.T) {
	now := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	mtime := now.Add(-90 * time.Second).UnixMilli()
	for _, tc := range []struct {
		name  string
		it    historyItem
		state string
		ago   int64 // EndedAgoMs; -1: none
	}{
		{"ended", historyItem{historyEntry: historyEntry{Ended: endExited, FencingToken: 7}, mtime: mtime}, "ended", 90000},
		{"ended, though its leader still holds the baton", historyItem{historyEntry: historyEntry{Ended: endTimedOut, FencingToken: 9}, mtime: mtime}, "ended", 90000},
		{"ended after now by this host's clock", historyItem{historyEntry: historyEntry{Ended: endExited}, mtime: now.Add(time.Second).UnixMilli()}, "ended", 0},
		{"going on under a baton", historyItem{historyEntry: historyEntry{FencingToken: 9}, mtime: mtime}, "running", -1},
		{"its leader gone", historyItem{historyEntry: historyEntry{FencingToken: 7}, mtime: mtime}, "unfinished", -1},
		{"unreadable", historyItem{ParseError: "unexpected end of JSON input", mtime: mtime}, "unknown", -1},
	} {
		it := tc.it
		settleHistory([]*historyItem{&it}, map[int64]bool{9: true}, now)
		ago := int64(-1)
		if it.EndedAgoMs != nil {
			ago = *it.EndedAgoMs
		}
		if it.State != tc.state || ago != tc.ago {
			t.Errorf("%s: state %q, ended %d ms ago; want %q, %d", tc.name, it.State, ago, tc.state, tc.ago)
		}
	}
}

// TestLastRun: info's last run is the newest entry that is a run: skips
// and unreadable entries are passed over.
func TestLastRun(t *testing.T) {
	skip := &historyItem{historyEntry: historyEntry{Kind: historySkip}}
	bad := &historyItem{ParseError: "bad"}
	cron := &historyItem{historyEntry: historyEntry{Kind: historyCron}}
	once := &historyItem{historyEntry: historyEntry{Kind: historyOnce}}
	for _, tc := range []struct {
		name  string
		items []*historyItem
		want  *historyItem
	}{
		{"none", nil, nil},
		{"only skips and unreadable entries", []*historyItem{skip, bad}, nil},
		{"the newest run", []*historyItem{cron, once}, cron},
		{"behind skips and an unreadable entry", []*historyItem{skip, bad, once, cron}, once},
	} {
		if got := lastRun(tc.items); got != tc.want {
			t.Errorf("%s: lastRun = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestHistoryHuman: ballot history's lines, one per entry, each kind of
// entry with what it says about itself.
func TestHistoryHuman(t *testing.T) {
	at := func(s string) *time.Time { tm, _ := time.Parse(time.RFC3339, s); return &tm }
	code := func(n int) *int { return &n }
	ms := func(n int64) *int64 { return &n }
	entries := []*historyItem{
		{Node: "run-0000000007", State: "running", historyEntry: historyEntry{Kind: historyCron, ScheduledTime: at("2026-11-24T04:47:00Z"),
			StartedAt: at("2026-11-24T04:47:00Z"), CandidateID: "bob", Host: "vm", FencingToken: 240}},
		{Node: "run-0000000006", State: "ended", historyEntry: historyEntry{Kind: historyCron, ScheduledTime: at("2026-11-24T04:46:00Z"),
			StartedAt: at("2026-11-24T04:46:00Z"), CandidateID: "alice", Host: "alice", FencingToken: 235, Ended: endLeadershipLost,
			Reason: "its leader died mid-run", ClosedBy: "bob", Slot: 1}},
		{Node: "run-0000000005", State: "ended", historyEntry: historyEntry{Kind: historySkip, ScheduledTime: at("2026-11-24T04:40:00Z"),
			LastSkipped: at("2026-11-24T04:45:00Z"), Skipped: 6, CandidateID: "alice", FencingToken: 235, Ended: endSkipped, Reason: "paused"}},
		{Node: "run-0000000004", State: "ended", historyEntry: historyEntry{Kind: historyOnce, Key: "2026-11-24",
			StartedAt: at("2026-11-24T03:00:00Z"), CandidateID: "bob", Host: "vm", FencingToken: 230, Ended: endTimedOut,
			ExitCode: code(143), DurationMs: ms(60000), Reason: "--timeout 1m0s"}},
		{Node: "run-0000000003", State: "unknown", ParseError: "unexpected end of JSON input"},
	}
	var out strings.Builder
	writeHistoryHuman(&out, &historyReport{Election: "/ballot/nightly", Keep: historyKeep, Entries: entries, Notes: []string{"ages use this host's clock"}})
	want := `# /ballot/nightly: newest first, 100 kept at most; times UTC
# ages use this host's clock
STARTED              RUN              CANDIDATE  TOKEN  ENDED            EXIT  TOOK  NOTE
2026-11-24 04:47:00  cron 04:47:00    bob@vm     240    running          -     -
2026-11-24 04:46:00  cron 04:46:00    alice      235    leadership lost  -     -     recorded by bob: slot 1; its leader died mid-run
2026-11-24 04:40:00  skip ×6          alice      235    skipped          -     -     paused; until 2026-11-24 04:45:00
2026-11-24 03:00:00  once 2026-11-24  bob@vm     230    timed out        143   1m0s  --timeout 1m0s
-                    run-0000000003   -          -      unknown          -     -     cannot be read: unexpected end of JSON input
`
	if out.String() != want {
		t.Errorf("ballot history prints:\n%s\nwant:\n%s", out.String(), want)
	}

	out.Reset()
	writeHistoryHuman(&out, &historyReport{Election: "/e", Keep: historyKeep, Notes: []string{"no runs recorded"}})
	if want := "# /e: newest first, 100 kept at most; times UTC\n# no runs recorded\n"; out.String() != want {
		t.Errorf("with no entries, ballot history prints:\n%s\nwant only its header:\n%s", out.String(), want)
	}
}
