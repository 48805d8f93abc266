package main

// Unit tests of --once-key's pure parts: a key's node name, and which
// record a claim lost with its session may clear (onceclaim.go).

import (
	"strings"
	"testing"
	"time"
)

// TestOnceNodeName: a key is one node under the once directory, whatever
// it holds: letters, digits, '-', '_' and (but first) '.' stay, anything
// else is escaped, so no key names a path or "." or "..".
func TestOnceNodeName(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"2026-11-23", "2026-11-23"},
		{"nightly_backup.v2", "nightly_backup.v2"},
		{".", "%2E"},
		{"..", "%2E."},
		{".hidden", "%2Ehidden"},
		{"a/b", "a%2Fb"},
		{"../x", "%2E.%2Fx"},
		{"50%", "50%25"},
		{"a b", "a%20b"},
		{"é", "%C3%A9"},
		{"", ""},
	} {
		if got := onceNodeName(tc.key); got != tc.want {
			t.Errorf("onceNodeName(%q) = %q; want %q", tc.key, got, tc.want)
		}
	}
	seen := map[string]string{}
	for _, key := range []string{"a/b", "a%2Fb", "a.b", "a%2Eb", ".a", "%2Ea", "a b", "a%20b", "..", "%2E.", "-", "_"} {
		name := onceNodeName(key)
		if strings.Contains(name, "/") || name == "." || name == ".." {
			t.Errorf("onceNodeName(%q) = %q: not one node", key, name)
		}
		if other, ok := seen[name]; ok {
			t.Errorf("keys %q and %q share the node %q", other, key, name)
		}
		seen[name] = key
	}
	if got := oncePath("/ballot/e", "../x"); got != "/ballot/e/"+onceDirName+"/%2E.%2Fx" {
		t.Errorf("oncePath = %q: outside the once directory", got)
	}
}

// TestClaimLandedUnrun: a ballot that lost its session during a claim
// clears the key's record only when it is that proposal's claim and
// nothing ran under it.
func TestClaimLandedUnrun(t *testing.T) {
	const lost = "/ballot/e/_c_x-proposal-0000000001"
	done := time.Now()
	for _, tc := range []struct {
		name    string
		rec     *onceRecord
		running bool
		want    bool
	}{
		{"our claim, unrun", &onceRecord{Proposal: lost}, false, true},
		{"the claim did not land", nil, false, false},
		{"another proposal's claim (retried since)", &onceRecord{Proposal: lost + "2"}, false, false},
		{"our claim, finished", &onceRecord{Proposal: lost, FinishedAt: &done}, false, false},
		{"our claim, running", &onceRecord{Proposal: lost}, true, false},
	} {
		if got := claimLandedUnrun(tc.rec, lost, tc.running); got != tc.want {
			t.Errorf("%s: claimLandedUnrun = %v; want %v", tc.name, got, tc.want)
		}
	}
}
