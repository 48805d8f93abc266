package main

import "testing"

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
