package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

// TestDrainNodeName: any candidate id is one node beside the proposals,
// never read as a proposal.
func TestDrainNodeName(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"db1", "drain-db1"},
		{"a/b", "drain-a%2Fb"},
		{"50%", "drain-50%25"},
		{".", "drain-."},
		{"x-proposal-0000000001", "drain-x-%70roposal-0000000001"},
	} {
		got := drainNodeName(tc.id)
		if got != tc.want || isProposal(got) {
			t.Errorf("drainNodeName(%q) = %q (a proposal: %v), want %q", tc.id, got, isProposal(got), tc.want)
		}
	}
}

// TestDrainEvents: watch says which candidates were drained or undrained
// between two snapshots.
func TestDrainEvents(t *testing.T) {
	snap := func(ids ...string) *electionSnapshot {
		s := &electionSnapshot{exists: true}
		for _, id := range ids {
			s.file(newSnapNode(drainNodeName(id), []byte(`{"candidateId":"`+id+`","by":"ops@h","reason":"r"}`), &zk.Stat{}))
		}
		return s
	}
	untilReboot := func(s *electionSnapshot, id string) *electionSnapshot {
		s.file(newSnapNode(drainNodeName(id), []byte(`{"candidateId":"`+id+`","by":"ops@h","reason":"r","untilReboot":true,"bootId":"b1"}`), &zk.Stat{}))
		return s
	}
	for _, tc := range []struct {
		name      string
		prev, cur *electionSnapshot
		want      []string
	}{
		{"none", snap(), snap(), nil},
		{"drained", snap(), snap("a"), []string{evDrained + " a drained by ops@h: r"}},
		{"undrained", snap("a", "b"), snap("b"), []string{evUndrained + " a undrained"}},
		{"unchanged", snap("a"), snap("a"), nil},
		{"until reboot", snap(), untilReboot(snap(), "c"), []string{evDrained + " c until reboot drained by ops@h: r"}},
	} {
		var got []string
		for _, ev := range drainEvents(tc.prev, tc.cur) {
			got = append(got, ev.Event+" "+ev.Message)
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: events %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestDrainHolds: a drain holds until undrain; one until reboot holds on
// the boot it names, or when this host cannot say its boot, and is over
// (expired) on another boot.
func TestDrainHolds(t *testing.T) {
	plain := &drainRecord{CandidateID: "a"}
	reboot := &drainRecord{CandidateID: "a", UntilReboot: true, BootID: "b1"}
	for _, tc := range []struct {
		name           string
		d              *drainRecord
		boot           string
		holds, expired bool
	}{
		{"none", nil, "b1", false, false},
		{"plain", plain, "b1", true, false},
		{"plain, no boot id here", plain, "", true, false},
		{"until reboot, same boot", reboot, "b1", true, false},
		{"until reboot, rebooted", reboot, "b2", false, true},
		{"until reboot, no boot id here", reboot, "", true, false},
		{"until reboot without a boot id", &drainRecord{UntilReboot: true}, "b2", true, false},
	} {
		if h, x := drainHolds(tc.d, tc.boot); h != tc.holds || x != tc.expired {
			t.Errorf("%s: holds %v, expired %v; want %v, %v", tc.name, h, x, tc.holds, tc.expired)
		}
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "boot_id")
	if err := os.WriteFile(f, []byte("6c1f0e2a-1b2c-4d5e-8f90-123456789abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readBootID(f); got != "6c1f0e2a-1b2c-4d5e-8f90-123456789abc" {
		t.Errorf("readBootID: %q, want the line without its newline", got)
	}
	if got := readBootID(filepath.Join(dir, "none")); got != "" {
		t.Errorf("readBootID of a missing file: %q, want \"\"", got)
	}
	// This host's boot id, as candidates publish it: the kernel's.
	if raw, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err != nil || hostBootID() != strings.TrimSpace(string(raw)) || hostBootID() == "" {
		t.Errorf("hostBootID() = %q, want the kernel's %q (%v)", hostBootID(), raw, err)
	}
}
