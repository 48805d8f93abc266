package main

import (
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/url"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
)

// testFlag is a flag value for both parsers; it refuses "bad".
type testFlag struct {
	isBool bool
	got    *[]string
	name   string
}

func (v *testFlag) String() string   { return "" }
func (v *testFlag) IsBoolFlag() bool { return v.isBool }
func (v *testFlag) Set(s string) error {
	if s == "bad" {
		return errors.New("refused")
	}
	*v.got = append(*v.got, v.name+"="+s)
	return nil
}

// parseBoth parses args with flag.FlagSet (as cmdline.go used it) and with
// flagSet; it returns what each did: the error, the rest, the values set.
func parseBoth(args []string) (std, ours string) {
	flags := []testFlag{{true, nil, "b"}, {false, nil, "s"}, {false, nil, "long-name"}, {true, nil, "x"}}
	run := func(parse func([]string) error, rest func() []string) string {
		err := parse(args)
		msg := "<nil>"
		if errors.Is(err, flag.ErrHelp) || errors.Is(err, errFlagHelp) {
			msg = "help"
		} else if err != nil {
			msg = err.Error()
		}
		return msg + " | rest " + strings.Join(rest(), ",")
	}
	var gotStd, gotOurs []string
	fs := flag.NewFlagSet("ballot", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	ofs := newFlags()
	for _, f := range flags {
		a, b := f, f
		a.got, b.got = &gotStd, &gotOurs
		fs.Var(&a, f.name, "")
		ofs.Var(&b, f.name)
	}
	std = run(fs.Parse, fs.Args) + " | set " + strings.Join(gotStd, ",")
	ours = run(ofs.Parse, ofs.Args) + " | set " + strings.Join(gotOurs, ",")
	return std, ours
}

// TestFlagSetAsFlag: flagSet parses every argument list as the flag package
// did: the same error text (help as flag.ErrHelp), the same arguments left
// and the same values set, in order.
func TestFlagSetAsFlag(t *testing.T) {
	cases := [][]string{
		nil, {}, {"-"}, {"--"}, {"---"}, {"-="}, {"--=x"}, {"-s"}, {"--s"}, {"-s", "v"}, {"--s=v"}, {"-s="},
		{"-s=a=b"}, {"-s", "--"}, {"-s", "-b"}, {"-b"}, {"--b"}, {"-b=false"}, {"-b=bad"}, {"-b", "false"},
		{"-s", "bad"}, {"--s=bad"}, {"-h"}, {"--help"}, {"-help=1"}, {"-hh"}, {"-nope"}, {"--nope=1"},
		{"--long-name", "x", "cmd", "-b"}, {"cmd", "--s", "v"}, {"-b", "--", "-s", "v"}, {"-b", "-", "x"},
		{"--long-name"}, {"-b=true", "-x", "-s", "1", "-s", "2", "rest", "--"}, {"-=s"}, {"- "}, {"-é=1"},
		{"--s", ""}, {"", "-b"}, {"-b", ""}, {"--b=", "x"}, {"-x=T"}, {"--x", "--b", "--long-name=--"},
	}
	for _, args := range cases {
		if std, ours := parseBoth(args); std != ours {
			t.Errorf("%q:\n flag:    %s\n flagSet: %s", args, std, ours)
		}
	}
	// And lists drawn from the pieces above, 5000 of them.
	pieces := []string{"-b", "--b", "-b=false", "-s", "--s", "-s=v", "v", "--", "-", "-h", "-nope", "--long-name=1",
		"--long-name", "bad", "-b=bad", "-x", "x", "", "-=", "---", "-s=", "=", "--x=true"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		args := make([]string, r.IntN(6))
		for i := range args {
			args[i] = pieces[r.IntN(len(pieces))]
		}
		if std, ours := parseBoth(args); std != ours {
			t.Errorf("%q:\n flag:    %s\n flagSet: %s", args, std, ours)
		}
	}
}

// TestFlagSetVarPanicsAsFlag: a name flag refuses, flagSet refuses.
func TestFlagSetVarPanicsAsFlag(t *testing.T) {
	panics := func(f func()) (p bool) {
		defer func() { p = recover() != nil }()
		f()
		return false
	}
	v := &testFlag{got: new([]string)}
	for _, name := range []string{"-a", "a=b", "ok"} {
		fs := flag.NewFlagSet("ballot", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		ofs := newFlags()
		std := panics(func() { fs.Var(v, name, ""); fs.Var(v, name, "") })
		ours := panics(func() { ofs.Var(v, name); ofs.Var(v, name) })
		if !std || !ours {
			t.Errorf("%q defined twice: flag panics %v, flagSet %v; want both", name, std, ours)
		}
		if std, ours := panics(func() { fs.Var(v, name+"2", "") }), panics(func() { newFlags().Var(v, name+"2") }); std != ours {
			t.Errorf("%q defined: flag panics %v, flagSet %v", name+"2", std, ours)
		}
	}
}

// tabwrite is text through text/tabwriter as history_read.go used it,
// written in the given pieces.
func tabwrite(pieces ...string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, p := range pieces {
		_, _ = io.WriteString(tw, p)
	}
	_ = tw.Flush()
	return b.String()
}

// TestAlignColumnsAsTabwriter: alignColumns writes what text/tabwriter
// wrote, for history's table and for any text: blocks of columns, lines of
// one cell, '\v' and '\f', runes of several bytes, 0xff escapes.
func TestAlignColumnsAsTabwriter(t *testing.T) {
	cases := []string{
		"", "\n", "a", "a\n", "a\tb\n", "a\tb", "\t\n", "\t\t\n\t\n",
		"STARTED\tRUN\tCANDIDATE\tTOKEN\tENDED\tEXIT\tTOOK\tNOTE\n" +
			"2026-11-26 03:00:00\tcron 03:00:00\ta@host\t12\tcompleted\t0\t1.2s\tslot 2; attempt 1 of 3\n" +
			"-\tx-0000000001\t-\t-\tunknown\t-\t-\tcannot be read: invalid character 'ÿ'\n",
		"aaa\tb\tc\nd\te\nffff\tgggggg\th\ti\n", "a\tb\nno tab\nccc\td\n", "a\tb\fccc\td\n", "a\vbb\tc\n",
		"αβγ\tδ\nx\ty\n", "日本\t語\nab\tc\n", "a\xffb\tc\xff\td\nee\tf\n", "x\xff\t\n\xffy\tz\n", "a\tb\xffopen",
		"a\tb\n\n\nc\td\n", "a\tb\r\nc\td\r\n", "\xff\xff\t\n", "bad \x80\xfe utf8\tx\nmore\ty\n", "a\t\tb\n\t\tc\n",
	}
	for _, text := range cases {
		if want, got := tabwrite(text), alignColumns(text); got != want {
			t.Errorf("%q:\n tabwriter:    %q\n alignColumns: %q", text, want, got)
		}
	}
	pieces := []string{"a", "bb", "ccc ", "é", "日本", "\t", "\t", "\t", "\n", "\n", "\v", "\f", "\xff", "\x80", " ", "-"}
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		var parts []string
		for range r.IntN(30) {
			parts = append(parts, pieces[r.IntN(len(pieces))])
		}
		// tabwriter's state carries across writes: split the text anywhere.
		text := strings.Join(parts, "")
		cut := 0
		if len(text) > 0 {
			cut = r.IntN(len(text) + 1)
		}
		if want, got := tabwrite(text[:cut], text[cut:]), alignColumns(text); got != want {
			t.Errorf("%q:\n tabwriter:    %q\n alignColumns: %q", text, want, got)
		}
	}
}

// TestUserNameAsOsUser: the name step-down, pause, drain and trigger
// record is os/user's for this process.
func TestUserNameAsOsUser(t *testing.T) {
	u, err := user.Current()
	name, ok := userName()
	if (err == nil) != ok || err == nil && u.Username != name {
		t.Fatalf("userName() = %q, %v; os/user: %+v, %v", name, ok, u, err)
	}
}

// TestPasswdName: the rows os/user's parser (lookup_unix.go, without cgo)
// takes and skips when it looks a uid up.
func TestPasswdName(t *testing.T) {
	cases := []struct {
		passwd, uid, want string
	}{
		{"root:x:0:0:root:/root:/bin/bash\n", "0", "root"},
		{"root:x:0:0:root:/root:/bin/bash", "0", "root"},                         // no final newline
		{"  kevin:x:1005:1006::/home/kevin:/usr/bin/zsh  \r\n", "1005", "kevin"}, // trimmed
		{"# kevin:x:1005:1006::/home/kevin:/usr/bin/zsh\n", "1005", ""},          // a comment
		{"kevin:x:1005:1006::/home/kevin\n", "1005", ""},                         // six fields
		{"kevin:x:1005:1006::/home/kevin:\n", "1005", "kevin"},                   // seven, the last empty
		{"kevin:x:1005:1006::/home/kevin:/bin/sh:extra\n", "1005", "kevin"},      // more
		{"+kevin:x:1005:1006::/home/kevin:/bin/sh\n", "1005", ""},                // NIS
		{"-kevin:x:1005:1006::/home/kevin:/bin/sh\n", "1005", ""},                // NIS
		{":x:1005:1006::/home/kevin:/bin/sh\n", "1005", ""},                      // no name
		{"kevin:x:1005:staff::/home/kevin:/bin/sh\n", "1005", ""},                // gid not a number
		{"kevin:x:1006:1005::/home/kevin:/bin/sh\n", "1005", ""},                 // the uid as gid
		{"kevin:1005:1006:1006::/home/kevin:/bin/sh\n", "1005", ""},              // as password
		{"a:x:1005:1:::\nb:x:1005:1:::\n", "1005", "a"},                          // the first
		{"a:x:10050:1:::\nb:x:1005:1:::\n", "1005", "b"},                         // not a prefix
		{"\n\n# c\nx:y\nroot:x:0:0:root:/root:/bin/bash\n", "0", "root"},         // blank, short rows
		{"root:x:0:0:Root,,,:/root:/bin/bash\nme:x:1000:1000:Me:/home/me:\n", "1000", "me"},
	}
	for _, c := range cases {
		got, ok := passwdName(c.passwd, c.uid)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("uid %s in %q: got %q, %v; want %q", c.uid, c.passwd, got, ok, c.want)
		}
	}
}

// urlParts is what ballot reads of a parsed URL, or the refusal.
func urlParts(scheme, opaque, host, path, rawPath, query, frag string, user bool, hostname, port, escPath string, err error) string {
	if err != nil {
		return "refused"
	}
	return strings.Join([]string{scheme, opaque, host, path, rawPath, query, frag, fmt.Sprint(user), hostname, port, escPath}, " | ")
}

// checkURLLite compares parseURLLite with url.Parse on s.
func checkURLLite(t *testing.T, s string) {
	t.Helper()
	var std, ours string
	if u, err := url.Parse(s); err != nil {
		std = urlParts("", "", "", "", "", "", "", false, "", "", "", err)
	} else {
		std = urlParts(u.Scheme, u.Opaque, u.Host, u.Path, u.RawPath, u.RawQuery, u.Fragment, u.User != nil, u.Hostname(), u.Port(), u.EscapedPath(), nil)
	}
	if u, err := parseURLLite(s); err != nil {
		ours = urlParts("", "", "", "", "", "", "", false, "", "", "", err)
	} else {
		ours = urlParts(u.Scheme, u.Opaque, u.Host, u.Path, u.RawPath, u.RawQuery, u.Fragment, u.User != nil, u.Hostname(), u.Port(), u.EscapedPath(), nil)
	}
	if std != ours {
		t.Errorf("%q:\n net/url:      %s\n parseURLLite: %s", s, std, ours)
	}
}

// TestURLLiteAsNetURL: the build without TLS parses --ping-url as
// net/url does: the same URLs refused, the same parts, host name, port
// and escaped path; with GODEBUG's urlstrictcolons off (go.mod's default)
// and on.
func TestURLLiteAsNetURL(t *testing.T) {
	cases := []string{
		"https://hc-ping.com/0f2c-11aa", "http://127.0.0.1:8080/ping/abc?create=1", "HTTPS://Host.Example/P",
		"https://hc-ping.com/uuid#frag", "https://hc-ping.com/uuid#", "https://hc-ping.com/uuid#%zz", "https://h/#%41",
		"https://user:pw@host/x", "https://user@host/x", "https://@host/x", "https://u%zz@host/", "https://u:p%2@host/",
		"https://us er@host/", "https://a@b@host/", "https://[::1]:9/x", "https://[::1]/x", "https://[::1]:x/",
		"https://[fe80::1%25en0]:80/", "https://[fe80::1%25%65n0]/", "https://[fe80::1%en0]/", "https://[1.2.3.4]/",
		"https://[::1", "https://x[::1]/", "https://[::1]]/", "https://host:/", "https://host:65536/", "https://host:-1/",
		"https://host:80:90/", "http://a:1,b:2/", "ftp://a:1,b:2/", "https://ho%41st/", "https://ho%2fst/", "https://ho%25st/",
		"https://h st/", "https://h<st/", "https://h\"st/", "https://hé/", "https://h%C3%A9/", "https://h/%zz", "https://h/a%2Fb",
		"https://h/a b", "https://h/ü", "https://h/a%20b", "https://h/a+b?c=d+e", "https://h/p?", "https://h/p??", "https://h?q",
		"https:", "https:/", "https://", "https:///p", "https:opaque", "https:opaque/x?y", "//host/p", "///p", "/p", "p",
		"a:b", "1http://h/", ":foo", "*", "", " ", "https://h/\x7f", "https://h/\x01", "h ttp://h/", "http//h", "https://h/*",
		"https://h/%2a", "https://h/[x]", "https://h/a;b,c$d", "https://h/'q'", "https://h:8080", "https://h:8080?x#y",
		"https://xn--bcher-kva.example/", "https://HOST:443/", "https://h/%", "https://h/%4", "https://[::1]%41/",
	}
	for _, s := range cases {
		checkURLLite(t, s)
	}
	pieces := []string{"https://", "http://", "ftp:", "h", "host", ":", ":80", "@", "/", "/p", "?", "?q=1", "#", "#f",
		"%", "%2", "%41", "%2f", "%25", "[", "]", "::1", "1.2.3.4", " ", "é", "\x7f", "+", ";", "*", "u:p@", "a", "-", "."}
	r := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		checkURLLite(t, b.String())
	}
	for _, godebug := range []string{"urlstrictcolons=1", "urlstrictcolons=0", "urlstrictcolons=1,urlstrictcolons=0", "x=1,urlstrictcolons=", "urlstrictcolons=0,urlstrictcolons=2"} {
		t.Setenv("GODEBUG", godebug)
		for _, s := range []string{"http://a:1:2/", "https://a:1,b:2/", "ftp://a:1:2/", "https://a:1/", "https://a::/"} {
			checkURLLite(t, s)
		}
	}
}

// TestSpreadHashIsFNV1a: spreadHash's loop is hash/fnv's New64a.
func TestSpreadHashIsFNV1a(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 2000 {
		b := make([]byte, i%70)
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		h := fnv.New64a()
		h.Write(b)
		x := h.Sum64()
		x ^= x >> 30
		x *= 0xbf58476d1ce4e5b9
		x ^= x >> 27
		x *= 0x94d049bb133111eb
		x ^= x >> 31
		if got := spreadHash(string(b)); got != x {
			t.Fatalf("%q: spreadHash %x, FNV-1a then the finaliser %x", b, got, x)
		}
	}
}

// regexpLinked: sym is regexp's or regexp/syntax's and more than their
// initialisation, which go-zookeeper's import of regexp links (a few
// hundred bytes; it compiles no regexp). Issue 35: regexp, regexp/syntax
// and their Unicode tables were 250 KB; internal/gronx and redact.go
// replace gronx's regexps and ballot's own.
func regexpLinked(sym string) bool {
	for _, pkg := range []string{"regexp.", "regexp/syntax."} {
		if rest, ok := strings.CutPrefix(sym, pkg); ok {
			n, _, _ := strings.Cut(rest, ".")
			return rest != ".inittask" && n != "init" && rest != "specialBytes"
		}
	}
	// types and itabs: type:.eq.regexp.job, go:itab.*regexp.inputString,…
	return strings.Contains(sym, "regexp.") || strings.Contains(sym, "regexp/syntax.")
}

// TestStdliteKeepsPackagesOut: the packages stdlite.go replaced stay out
// of both builds (a new use would bring their bytes back; use stdlite.go's
// instead), net/url out of the build without TLS only; regexp's code out
// of both.
func TestStdliteKeepsPackagesOut(t *testing.T) {
	t.Parallel()
	for _, tags := range []string{"", "ballot_notls"} {
		out, err := exec.Command("go", "list", "-deps", "-tags", tags, ".").Output()
		if err != nil {
			t.Fatalf("go list -deps -tags %q: %v", tags, err)
		}
		deps := strings.Fields(string(out))
		banned := []string{"flag", "text/tabwriter", "os/user", "hash/fnv"}
		if tags == "ballot_notls" {
			banned = append(banned, "net/url")
		}
		for _, pkg := range banned {
			if slices.Contains(deps, pkg) {
				t.Errorf("the build with tags %q links %s again (issue 35: stdlite.go replaces it)", tags, pkg)
			}
		}
		// encoding/json stays a dependency (log/slog imports it) but must
		// not be linked: internal/jsonlite and log.go's jsonHandler
		// replace it (233 KB). Its symbols tell.
		bin := filepath.Join(t.TempDir(), "ballot")
		if out, err := exec.Command("go", "build", "-tags", tags, "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build -tags %q: %v\n%s", tags, err, out)
		}
		out, err = exec.Command("go", "tool", "nm", bin).Output()
		if err != nil {
			t.Fatalf("go tool nm: %v", err)
		}
		json, re := false, false
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) < 3 {
				continue
			}
			if sym := f[len(f)-1]; !json && strings.HasPrefix(sym, "encoding/json.") {
				t.Errorf("the build with tags %q links encoding/json again (%s): use internal/jsonlite", tags, sym)
				json = true
			} else if !re && regexpLinked(sym) {
				t.Errorf("the build with tags %q links regexp again (%s): internal/gronx and redact.go replace it", tags, sym)
				re = true
			}
		}
	}
}
