package main

// The output tail (childoutput.go) and what a run's end tells
// (hooks.go): table tests.

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestOutputTail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"short output kept whole", 10, []string{"ab", "c\n"}, "abc\n"},
		{"the last bytes", 4, []string{"hello ", "world\n"}, "rld\n"},
		{"exactly max", 3, []string{"abc"}, "abc"},
		{"a whole character at the start stays", 4, []string{"xé\n!"}, "é\n!"},
		{"a character cut at the start is dropped", 3, []string{"xé\n!"}, "\n!"},
		{"invalid bytes replaced, never longer than max", 4, []string{"ab\xffc"}, "\uFFFDc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tail := newOutputTail(childSpec{Tail: tc.max, Wrap: true})
			for _, w := range tc.writes {
				tail.Write([]byte(w))
			}
			if got := tail.String(); got != tc.want {
				t.Errorf("tail of %q (max %d) = %q, want %q", tc.writes, tc.max, got, tc.want)
			}
		})
	}
	if newOutputTail(childSpec{Tail: 100, Wrap: false}) != nil || newOutputTail(childSpec{Tail: 0, Wrap: true}) != nil {
		t.Errorf("a tail without pipes or without bytes to keep")
	}
	var none *outputTail
	if none.String() != "" {
		t.Errorf("a nil tail is not empty")
	}
}

// TestHistoryEntryWithOutputFitsAMulti: the worst output, control
// characters JSON writes in 6 bytes each, keeps the entry, written in the
// multi-op that ends the run, well under ZooKeeper's 1 MiB jute.maxbuffer.
func TestHistoryEntryWithOutputFitsAMulti(t *testing.T) {
	tail := newOutputTail(childSpec{Tail: historyOutputMax, Wrap: true})
	tail.Write([]byte(strings.Repeat("\x01", 2*historyOutputMax)))
	out := tail.String()
	code, ms := 1, int64(1000)
	e := historyEntry{Format: historyFormat, Kind: historyOnce, Key: strings.Repeat("k", 200), CandidateID: strings.Repeat("c", 200),
		Host: strings.Repeat("h", 255), ExitCode: &code, DurationMs: &ms, Ended: endExited, Reason: strings.Repeat("r", 500), Output: out}
	data, _ := json.Marshal(e)
	if len(out) != historyOutputMax || len(data) > 400<<10 {
		t.Errorf("output %d bytes, entry %d bytes: want %d and at most 400 KiB", len(out), len(data), historyOutputMax)
	}
}

func TestRunResult(t *testing.T) {
	zero, one := 0, 1
	for _, tc := range []struct {
		e    historyEntry
		want string
	}{
		{historyEntry{Ended: endExited, ExitCode: &zero}, "success"},
		{historyEntry{Ended: endExited, ExitCode: &one}, "failure"},
		{historyEntry{Ended: endTimedOut, ExitCode: &zero}, "timed-out"},
		{historyEntry{Ended: endKilled}, "killed"},
		{historyEntry{Ended: endLeadershipLost}, "leadership-lost"},
		{historyEntry{Ended: endStopped, ExitCode: &zero}, "stopped"},
	} {
		if got := runResult(tc.e); got != tc.want {
			t.Errorf("runResult(%s, %v) = %q, want %q", tc.e.Ended, tc.e.ExitCode, got, tc.want)
		}
	}
}
