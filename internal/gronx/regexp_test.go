package gronx

// The regexps upstream used, kept here only, against the functions that
// replace them: on tables of the tricky cases and on random strings drawn
// from an alphabet of them (Unicode spaces \s does not match, \v, invalid
// UTF-8, non-ASCII digits).

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

var (
	upstreamSpaceRe = regexp.MustCompile(`\s+`)
	upstreamYearRe  = regexp.MustCompile(`\d{4}`)
	upstreamDashRe  = regexp.MustCompile(`/.*$`)
)

// regexpAlphabet holds every character one of the three regexps treats
// specially, and some each must not.
var regexpAlphabet = []string{
	" ", "\t", "\n", "\v", "\f", "\r", "\u0085", "\u00a0", "\u2003", "\u3000",
	"0", "1", "9", "\u0663", "\uff11", "/", "*", "-", ",", "a", "Z", "\xff", "\xc2", "é",
}

func randomRegexpInput(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(12); n > 0; n-- {
		b.WriteString(regexpAlphabet[r.IntN(len(regexpAlphabet))])
	}
	return b.String()
}

func TestRegexpReplacementsTable(t *testing.T) {
	tests := []struct {
		in, collapsed string
		year          bool
		cut           string
	}{
		{"", "", false, ""},
		{" ", " ", false, " "},
		{"a", "a", false, "a"},
		{"\t* *\n\n*\v*\f*\r* \u00a0*", " * * *\v* * * \u00a0*", false, "\t* *\n\n*\v*\f*\r* \u00a0*"},
		{"0  0 1 1 *", "0 0 1 1 *", false, "0  0 1 1 *"},
		{"2024", "2024", true, "2024"},
		{"202", "202", false, "202"},
		{"20 24", "20 24", false, "20 24"},
		{"x2024y", "x2024y", true, "x2024y"},
		{"12345", "12345", true, "12345"},
		{"\u0663\u0663\u0663\u0663", "\u0663\u0663\u0663\u0663", false, "\u0663\u0663\u0663\u0663"},
		{"1\u06632024", "1\u06632024", true, "1\u06632024"},
		{"/", "/", false, ""},
		{"1/2", "1/2", false, "1"},
		{"2020-2030/2", "2020-2030/2", true, "2020-2030"},
		{"1/2/3", "1/2/3", false, "1"},
		{"/\n", "/ ", false, "/\n"},
		{"a/b\nc", "a/b c", false, "a/b\nc"},
		{"a\n/b", "a /b", false, "a\n"},
		{"a/b\nc/d", "a/b c/d", false, "a/b\nc"},
		{"a/\n/b\n", "a/ /b ", false, "a/\n/b\n"},
		{"a/\xffb", "a/\xffb", false, "a"},
		{"a\r/b", "a /b", false, "a\r"},
	}
	for _, tt := range tests {
		if got := collapseSpace(tt.in); got != tt.collapsed {
			t.Errorf("collapseSpace(%q) = %q, want %q", tt.in, got, tt.collapsed)
		}
		if got := hasYear(tt.in); got != tt.year {
			t.Errorf("hasYear(%q) = %v, want %v", tt.in, got, tt.year)
		}
		if got := cutStep(tt.in); got != tt.cut {
			t.Errorf("cutStep(%q) = %q, want %q", tt.in, got, tt.cut)
		}
		checkRegexpReplacements(t, tt.in)
	}
}

// TestRegexpReplacementsRandom: 200,000 random strings; 40,000 under the
// race detector, where the regexps run ten times slower (17 s of CPU
// beside the main package's tests) and the functions share no state for
// it to find.
func TestRegexpReplacementsRandom(t *testing.T) {
	n := 200000
	if raceEnabled {
		n = 40000
	}
	r := rand.New(rand.NewPCG(35, 1))
	for i := 0; i < n; i++ {
		checkRegexpReplacements(t, randomRegexpInput(r))
	}
}

func checkRegexpReplacements(t *testing.T, s string) {
	t.Helper()
	if got, want := collapseSpace(s), upstreamSpaceRe.ReplaceAllString(s, " "); got != want {
		t.Errorf("collapseSpace(%q) = %q, regexp %q", s, got, want)
	}
	if got, want := hasYear(s), upstreamYearRe.MatchString(s); got != want {
		t.Errorf("hasYear(%q) = %v, regexp %v", s, got, want)
	}
	if got, want := cutStep(s), upstreamDashRe.ReplaceAllString(s, ""); got != want {
		t.Errorf("cutStep(%q) = %q, regexp %q", s, got, want)
	}
}
