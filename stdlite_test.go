package main

import (
	"errors"
	"flag"
	"io"
	"math/rand/v2"
	"os/user"
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
