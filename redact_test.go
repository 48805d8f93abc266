package main

// redact.go's scanners against the regexps they replace, which live here
// only: on a table of the tricky cases, on random strings from an alphabet
// of them, and in a fuzz target (go test -fuzz=FuzzRedactValue -run '^$' .).

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

var (
	regexpURLPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*):[^/@\s]*@`)
	regexpNamedSecret = regexp.MustCompile(`(?i)([\w-]*(?:password|passwd|secret|token|credential)[\w-]*(?:"?\s*[=:]\s*"?|\s+|"\s*,\s*"))([^\s",\]]+)`)
)

// redactRegexp is redactValue as it was, with the regexps.
func redactRegexp(v string) string {
	v = regexpURLPassword.ReplaceAllString(v, "${1}:xxxxx@")
	return regexpNamedSecret.ReplaceAllString(v, "${1}xxxxx")
}

// redactAlphabet: keyword fragments in mixed case, the letters that fold
// to ASCII ones (ſ, K) and one that does not (ı), the separators and
// classes' edges (quotes, =, :, ",", ], \s and \v, which \s is not), a
// URL's pieces, and invalid UTF-8.
var redactAlphabet = []string{
	"pass", "PASS", "Pass", "word", "WoRd", "wd", "secr", "SeCr", "et", "ET", "to", "TO", "ken", "KEN",
	"credent", "CREDENT", "ial", "password", "TOKEN", "ſ", "K", "ı", "s", "k",
	`"`, "=", ":", ",", "]", "[", " ", "\t", "\v", "\n", "\r", "\f", "\u00a0",
	"/", "@", "://", "http", "a", "Z", "0", "9", "-", "_", "+", ".", "\xff", "é",
}

func randomRedactInput(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(16); n > 0; n-- {
		b.WriteString(redactAlphabet[r.IntN(len(redactAlphabet))])
	}
	return b.String()
}

func checkRedact(t *testing.T, s string) {
	t.Helper()
	if got, want := redactURLPasswords(s), regexpURLPassword.ReplaceAllString(s, "${1}:xxxxx@"); got != want {
		t.Errorf("redactURLPasswords(%q) = %q, regexp %q", s, got, want)
	}
	if got, want := redactNamedSecrets(s), regexpNamedSecret.ReplaceAllString(s, "${1}xxxxx"); got != want {
		t.Errorf("redactNamedSecrets(%q) = %q, regexp %q", s, got, want)
	}
	if got, want := redactValue(s), redactRegexp(s); got != want {
		t.Errorf("redactValue(%q) = %q, regexp %q", s, got, want)
	}
}

func TestRedactScannersTable(t *testing.T) {
	tests := []struct{ in, want string }{
		// URLs: the scheme's run taken whole, the user part stops at ':'.
		{"xhttp://a:b@h", "xhttp://a:xxxxx@h"},
		{"1http://a:b@h", "1http://a:xxxxx@h"},
		{"http://a:b:c@h", "http://a:xxxxx@h"},
		{"http://a:b/c@h", "http://a:b/c@h"},
		{"http://a:b c@h", "http://a:b c@h"},
		{"http://:@h", "http://:xxxxx@h"},
		{"http://a:b@c:d@h", "http://a:xxxxx@c:d@h"},
		{"a://b:c@ d://e:f@", "a://b:xxxxx@ d://e:xxxxx@"},
		{"h\vttp://a:b@h", "h\vttp://a:xxxxx@h"},
		{"http://a\xff:b@h", "http://a\xff:xxxxx@h"},
		// Named secrets: the separators in order, a value needs a character.
		{`password = ""`, `password xxxxx ""`},
		{`password=""`, `password=""`},
		{`password=" x"`, `password=" x"`},
		{`password: "v"`, `password: "xxxxx"`},
		{`"secret" , "v"`, `"secret" , "xxxxx"`},
		{`"secret" ,"" v`, `"secret" ,"" v`},
		{"--token\tv", "--token\txxxxx"},
		{"--token\vv", "--token\vv"},
		{"token\n=\nv", "token\n=\nxxxxx"},
		{"my-api_TOKEN2=v,w", "my-api_TOKEN2=xxxxx,w"},
		{"ſecret=v", "ſecret=xxxxx"},
		{"to\u212Aen=v", "to\u212Aen=xxxxx"},
		{"ſſecret=v", "ſſecret=xxxxx"},
		{"ısecret=v", "ısecret=xxxxx"},
		{"secretı=v", "secretı=v"},
		{"secretſ=v", "secretſ=xxxxx"},         // [\w-] under (?i) holds ſ and K,
		{"token\u212A v", "token\u212A xxxxx"}, // not ASCII alone
		{"passwd=a=b token=c", "passwd=xxxxx token=xxxxx"},
		{"password=password=v", "password=xxxxx"},
		{"token]=v", "token]=v"},
		{"token=]v", "token=]v"},
		{"token= \xffv", "token= xxxxx"},
		{"tok en=v", "tok en=v"},
		{"credentials v w", "credentials xxxxx w"},
		{"token", "token"},
		{"token=", "token="},
	}
	for _, tt := range tests {
		if got := redactValue(tt.in); got != tt.want {
			t.Errorf("redactValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
		checkRedact(t, tt.in)
	}
}

// TestRedactScannersRandom: the scanners redact as the regexps did, on
// random strings of the characters they treat specially. 200,000 strings;
// 40,000 under the race detector, where the regexps run ten times slower
// (27 s of the suite's serial part; the scanners share no state, so the
// race detector finds nothing more in the other 160,000).
func TestRedactScannersRandom(t *testing.T) {
	n := 200000
	if raceEnabled {
		n = 40000
	}
	r := rand.New(rand.NewPCG(35, 2))
	for i := 0; i < n; i++ {
		checkRedact(t, randomRedactInput(r))
	}
}

// FuzzRedactValue: any input redacts as the regexps did.
func FuzzRedactValue(f *testing.F) {
	r := rand.New(rand.NewPCG(35, 3))
	for i := 0; i < 50; i++ {
		f.Add(randomRedactInput(r))
	}
	f.Fuzz(func(t *testing.T, s string) { checkRedact(t, s) })
}
