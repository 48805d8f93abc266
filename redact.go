package main

// --debug shows each parameter's value; these are the secrets it hides.
// Credentials themselves are never parameters (--zookeeper-auth-file names
// a file, --leader-data @PATH a file: the name is shown, never the
// content), but a hook's command line or --leader-data may carry a URL
// with a password, or a password flag.
//
// Two scanners, each exactly a regexp's ReplaceAllString (leftmost-first,
// resuming after each match), written out because regexp and its Unicode
// tables were 250 KB of the binary; redact_test.go holds the regexps and
// compares them on random strings:
//
//	urlPassword  ([A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*):[^/@\s]*@  →  ${1}:xxxxx@
//	namedSecret  (?i)([\w-]*(?:password|passwd|secret|token|credential)[\w-]*(?:"?\s*[=:]\s*"?|\s+|"\s*,\s*"))([^\s",\]]+)  →  ${1}xxxxx

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// redactValue is v with the secrets it may hold replaced by xxxxx.
func redactValue(v string) string {
	return redactNamedSecrets(redactURLPasswords(v))
}

// reSpace is RE2's \s: ASCII only, and not \v.
func reSpace(c byte) bool {
	return c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '
}

func asciiLetter(c byte) bool { return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' }

// skipWhile is the end of the run of bytes from i that in accepts. Every
// class scanned by bytes here is ASCII or the complement of an ASCII set:
// UTF-8 never hides an ASCII byte inside another character, so a multibyte
// character, valid or not, is wholly in or out.
func skipWhile(s string, i int, in func(byte) bool) int {
	for i < len(s) && in(s[i]) {
		i++
	}
	return i
}

// redactURLPasswords: scheme://user:password@ → scheme://user:xxxxx@ (as
// net/url's Redacted). Each class in the regexp excludes the character
// that must follow it, so a match, if one starts at i, is each run taken
// whole: no backtracking can find another.
func redactURLPasswords(s string) string {
	var b strings.Builder
	done := 0 // s[:done] is in b
	for i := 0; i < len(s); i++ {
		if !asciiLetter(s[i]) {
			continue
		}
		j := skipWhile(s, i+1, func(c byte) bool {
			return asciiLetter(c) || '0' <= c && c <= '9' || c == '+' || c == '.' || c == '-'
		})
		// A start later in the scheme's run fails as this one does: the
		// same runs follow it. So the scan goes on at j (linear, as
		// regexp is).
		if !strings.HasPrefix(s[j:], "://") {
			i = j - 1
			continue
		}
		user := skipWhile(s, j+3, func(c byte) bool { return c != '/' && c != '@' && c != ':' && !reSpace(c) })
		if user == len(s) || s[user] != ':' {
			i = j - 1
			continue
		}
		at := skipWhile(s, user+1, func(c byte) bool { return c != '/' && c != '@' && !reSpace(c) })
		if at == len(s) || s[at] != '@' {
			i = j - 1
			continue
		}
		b.WriteString(s[done:user])
		b.WriteString(":xxxxx@")
		done = at + 1
		i = at
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// secretWords are namedSecret's keywords, lower case.
var secretWords = []string{"password", "passwd", "secret", "token", "credential"}

// foldWord is [\w-] under (?i): ASCII letters, digits, _ and -, and the two
// other letters that fold to ASCII ones, ſ (s) and K (the Kelvin sign, k).
func foldWord(r rune) bool {
	if r < utf8.RuneSelf {
		c := byte(r)
		return asciiLetter(c) || '0' <= c && c <= '9' || c == '_' || c == '-'
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf && asciiLetter(byte(f)) {
			return true
		}
	}
	return false
}

// foldEqual: under (?i), the rune r matches the lower-case ASCII letter c
// (Unicode simple folding, the orbit regexp walks too).
func foldEqual(r rune, c byte) bool {
	for f := rune(c); ; {
		if r == f {
			return true
		}
		if f = unicode.SimpleFold(f); f == rune(c) {
			return false
		}
	}
}

// hasSecretWord: one of secretWords is in s, case folded.
func hasSecretWord(s string) bool {
	for i := 0; i < len(s); {
		for _, w := range secretWords {
			j, k := i, 0
			for ; k < len(w) && j < len(s); k++ {
				r, n := utf8.DecodeRuneInString(s[j:])
				if !foldEqual(r, w[k]) {
					break
				}
				j += n
			}
			if k == len(w) {
				return true
			}
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
	}
	return false
}

// secretValue is the end of the value [^\s",\]]+ that starts at i, or -1
// if none does (it needs one character).
func secretValue(s string, i int) int {
	j := skipWhile(s, i, func(c byte) bool { return c != '"' && c != ',' && c != ']' && !reSpace(c) })
	if j == i {
		return -1
	}
	return j
}

// secretSeparator: where namedSecret's value starts and ends when its
// separator starts at i: the alternatives in the regexp's order, the
// first that a value follows. Within each, only one way can be followed
// by the next piece (a shorter run of \s leaves a \s where [=:], ",",
// '"' or a value must be), except the optional quotes, tried with first.
func secretSeparator(s string, i int) (start, end int) {
	// "?\s*[=:]\s*"?
	j := i
	if j < len(s) && s[j] == '"' {
		j++
	}
	if j = skipWhile(s, j, reSpace); j < len(s) && (s[j] == '=' || s[j] == ':') {
		j = skipWhile(s, j+1, reSpace)
		if j < len(s) && s[j] == '"' {
			if e := secretValue(s, j+1); e >= 0 {
				return j + 1, e
			}
		}
		if e := secretValue(s, j); e >= 0 {
			return j, e
		}
	}
	// \s+
	if j = skipWhile(s, i, reSpace); j > i {
		if e := secretValue(s, j); e >= 0 {
			return j, e
		}
	}
	// "\s*,\s*"
	if i < len(s) && s[i] == '"' {
		if j = skipWhile(s, i+1, reSpace); j < len(s) && s[j] == ',' {
			if j = skipWhile(s, j+1, reSpace); j < len(s) && s[j] == '"' {
				if e := secretValue(s, j+1); e >= 0 {
					return j + 1, e
				}
			}
		}
	}
	return -1, -1
}

// redactNamedSecrets: --password VALUE, --api-token=VALUE, PASSWORD=VALUE,
// "secret": "VALUE" ... → the value xxxxx. A match is a whole run of
// [\w-] holding a keyword: [\w-]* gives back only what it must, and the
// separator cannot start inside the run, so it starts at the run's end,
// and the match at the run's start.
func redactNamedSecrets(s string) string {
	var b strings.Builder
	done := 0 // s[:done] is in b
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !foldWord(r) {
			i += n
			continue
		}
		end := i + n
		for end < len(s) {
			r, n := utf8.DecodeRuneInString(s[end:])
			if !foldWord(r) {
				break
			}
			end += n
		}
		if hasSecretWord(s[i:end]) {
			if v, e := secretSeparator(s, end); v >= 0 {
				b.WriteString(s[done:v])
				b.WriteString("xxxxx")
				done, end = e, e
			}
		}
		i = end
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// redactURL is a ping URL as ballot shows it: scheme and host only, the
// path (the secret: a check's uuid or a project's ping key) cut.
func redactURL(v string) string {
	u, err := parseWebURL(strings.TrimSpace(v))
	if err != nil || u.Host == "" || strings.ContainsAny(u.Host, "@") {
		return "…"
	}
	return u.Scheme + "://" + u.Host + "/…"
}
