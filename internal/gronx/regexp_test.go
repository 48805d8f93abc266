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
	for _, s := range []string{
		"", " ", "  ", "a", " a ", "\t* *\n\n*\v*\f*\r* \u00a0*", "0 0 1 1 *",
		"2024", "202", "20 24", "x2024y", "12345", "\u0663\u0663\u0663\u0663", "1\u06632024",
		"/", "1/2", "1-2/3", "/\n", "a/b\nc", "a\n/b", "a/b\nc/d", "a/\n/b\n", "\n", "a/\xffb", "a\r/b",
	} {
		checkRegexpReplacements(t, s)
	}
}

func TestRegexpReplacementsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 1))
	for i := 0; i < 200000; i++ {
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
