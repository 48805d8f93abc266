package main

// The docs agree with the code: --help, the man page and the completions
// with the flags the parser accepts; the tables of the README and docs/
// with the parameter table, --help's exit codes and the metrics the code
// writes; and every link between them lands on a file and a heading.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
)

// parserFlags is the flags the parser accepts for cmd ("": before the command).
func parserFlags(cmd string) []string {
	vals := map[string]*flagValue{}
	for _, p := range params {
		vals[p.name] = &flagValue{isBool: p.kind == kindBool}
	}
	var out []string
	for name := range newFlagSet(cmd, vals).formal {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

var flagRe = regexp.MustCompile(`--([a-z][a-z-]*[a-z])`)

// flagsIn is the flag names in text, sorted, each once.
func flagsIn(text string) []string {
	var out []string
	for _, m := range flagRe.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	sort.Strings(out)
	return out
}

func generated(t *testing.T, args ...string) string {
	t.Helper()
	configTestEnv(t, nil)
	_, err := parseIn("", args, nil)
	var h *helpRequested
	if !errors.As(err, &h) {
		t.Fatalf("ballot %s: %v, want output", strings.Join(args, " "), err)
	}
	return h.text
}

// TestManPageAndCompletionsGenerate: ballot help --man and ballot
// completion bash|zsh print what make dist ships.
func TestManPageAndCompletionsGenerate(t *testing.T) {
	man := generated(t, "help", "--man")
	for _, w := range []string{".TH BALLOT 1", ".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH EXIT STATUS", ".SH ENVIRONMENT", ".SH FILES"} {
		if !strings.Contains(man, w) {
			t.Errorf("man page lacks %q", w)
		}
	}
	for i, line := range strings.Split(man, "\n") {
		for _, r := range line {
			if r > 127 {
				t.Errorf("man page line %d is not ASCII (groff warns): %q", i+1, line)
				break
			}
		}
		if strings.HasPrefix(line, "-") || strings.HasPrefix(line, "'") {
			t.Errorf("man page line %d starts with a control character: %q", i+1, line)
		}
	}
	if b := generated(t, "completion", "bash"); !strings.Contains(b, "complete -F _ballot ballot") {
		t.Errorf("bash completion lacks its complete line:\n%s", b)
	}
	if z := generated(t, "completion", "zsh"); !strings.HasPrefix(z, "#compdef ballot\n") {
		t.Errorf("zsh completion lacks #compdef:\n%s", z)
	}
}

// caseWords is the words a completion script offers in its case branch pat.
func caseWords(t *testing.T, script, pat string) []string {
	t.Helper()
	re := regexp.MustCompile(`\n\s*` + regexp.QuoteMeta(pat) + `\) (?:COMPREPLY=\(\$\(compgen -W "([^"]*)"|compadd -- ([^;\n]*))`)
	m := re.FindStringSubmatch(script)
	if m == nil {
		t.Errorf("completion has no branch %s", pat)
		return nil
	}
	w := strings.Fields(m[1] + m[2])
	sort.Strings(w)
	return w
}

func trimDashes(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = strings.TrimPrefix(w, "--")
	}
	return out
}

// TestHelpManCompletionsAgree: for every command, --help, the man page and
// both completions list exactly the flags the parser accepts, and the
// completions offer exactly each enum flag's values.
func TestHelpManCompletionsAgree(t *testing.T) {
	man := generated(t, "help", "--man")
	scripts := map[string]string{"bash": generated(t, "completion", "bash"), "zsh": generated(t, "completion", "zsh")}

	// The man page: every parameter once under OPTIONS, with its default
	// and environment variable, and each command's own flags listed.
	_, options, _ := strings.Cut(man, ".SH OPTIONS\n")
	options, _, _ = strings.Cut(options, "\n.SH ")
	var manGlobal []string
	_, global, _ := strings.Cut(options, ".SS \"Global flags")
	global, _, _ = strings.Cut(global, "\n.SS ")
	for _, p := range params {
		entry := regexp.MustCompile(regexp.QuoteMeta(`.B \-\-`+roff(p.name)) + `[ \n]`)
		at := entry.FindAllStringIndex(options, -1)
		if len(at) != 1 {
			t.Errorf("man page: --%s is not under OPTIONS exactly once", p.name)
			continue
		}
		rest, _, _ := strings.Cut(options[at[0][1]:], "\n.TP")
		if !strings.Contains(rest, "Default: "+roff(p.shownDefault())+".") || !strings.Contains(rest, roff(p.env())) {
			t.Errorf("man page: --%s lacks its default %q or %s:\n%s", p.name, p.shownDefault(), p.env(), rest)
		}
		if entry.MatchString(global) {
			manGlobal = append(manGlobal, p.name)
		}
	}
	sort.Strings(manGlobal)

	for _, cmd := range append([]string{""}, docCommands...) {
		want := parserFlags(cmd)
		var help, manFlags []string
		if cmd == "" {
			help = flagsIn(strings.Join(between(helpText(""), "Global flags (also accepted after the command):"), "\n"))
			manFlags = manGlobal
		} else {
			var lines []string
			for _, l := range strings.Split(helpText(cmd), "\n") {
				if strings.HasPrefix(l, "  --") {
					lines = append(lines, l)
				}
			}
			help = flagsIn(strings.Join(lines, "\n") + "\n" + helpGlobalShort)
			_, own, _ := strings.Cut(man, "Flags of "+roff(cmd)+": ")
			own, _, _ = strings.Cut(own, "\n")
			manFlags = flagsIn(strings.ReplaceAll(own, `\-`, "-") + " --" + strings.Join(manGlobal, " --"))
		}
		if !slices.Equal(help, want) {
			t.Errorf("%q: --help lists %v, the parser accepts %v", cmd, help, want)
		}
		if !slices.Equal(manFlags, want) {
			t.Errorf("%q: the man page lists %v, the parser accepts %v", cmd, manFlags, want)
		}
		for shell, script := range scripts {
			pat := `""`
			if cmd != "" {
				pat = `"` + cmd + `"`
			}
			var got []string
			if cmd == "" {
				_, rest, _ := strings.Cut(script, "    \"\")\n")
				got = trimDashes(strings.Fields(regexp.MustCompile(`(?:compgen -W "|compadd -- )([^"\n]*)`).FindStringSubmatch(rest)[1]))
			} else {
				got = trimDashes(caseWords(t, script, pat))
			}
			if sort.Strings(got); !slices.Equal(got, want) {
				t.Errorf("%q: the %s completion offers %v, the parser accepts %v", cmd, shell, got, want)
			}
		}
	}

	for shell, script := range scripts {
		// The walk that finds the command skips exactly the flags that take a value.
		var valued []string
		for _, p := range params {
			if p.kind != kindBool {
				valued = append(valued, "--"+p.name)
			}
		}
		if !strings.Contains(script, "\n        "+strings.Join(valued, "|")+")\n") {
			t.Errorf("the %s completion does not skip the values of %v", shell, valued)
		}
		for _, p := range params {
			if len(p.choices) == 0 {
				continue
			}
			want := slices.Clone(p.choices)
			sort.Strings(want)
			if got := caseWords(t, script, "    --"+p.name); !slices.Equal(got, want) {
				t.Errorf("the %s completion offers %v for --%s, want %v", shell, got, p.name, want)
			}
		}
	}
}

// TestEnumChoicesMatchApply: each enum parameter's choices are exactly what
// its apply accepts, and a parameter that refuses with a list of values
// has that list as its choices (so completions and docs have them).
func TestEnumChoicesMatchApply(t *testing.T) {
	for _, p := range params {
		if p.apply == nil {
			continue
		}
		for _, c := range p.choices {
			var s Settings
			if err := p.apply(&s, c); err != nil {
				t.Errorf("--%s refuses its choice %q: %v", p.name, c, err)
			}
		}
		var s Settings
		err := p.apply(&s, "no-such-value")
		if err == nil || !strings.Contains(err.Error(), "use one of") {
			if len(p.choices) > 0 {
				t.Errorf("--%s has choices %v but its error does not list them: %v", p.name, p.choices, err)
			}
			continue
		}
		if !strings.HasSuffix(err.Error(), "use one of "+strings.Join(p.choices, ", ")) {
			t.Errorf("--%s: %v; its choices are %v", p.name, err, p.choices)
		}
	}
}

// TestBashCompletionRuns runs the bash completion as bash would.
func TestBashCompletionRuns(t *testing.T) {
	script := generated(t, "completion", "bash")
	tests := []struct {
		words []string
		want  string
	}{
		{a("ballot", ""), "run info jobs watch leader history check step-down pause resume version help completion"},
		{a("ballot", "run", ""), "once cron crontab"},
		{a("ballot", "--zookeeper-servers", "zk1", "run", "once", "--on-child-s"), "--on-child-success"},
		{a("ballot", "run", "cron", "--on-connection-loss", ""), "reelect exit ignore"},
		{a("ballot", "--log-level", "=", "d"), "debug"},
		{a("ballot", "--log-level", "debug", "info", "--verb"), "--verbose"},
		{a("ballot", "check", "--"), ""},
		{a("ballot", "completion", ""), "bash zsh"},
	}
	for _, tt := range tests {
		cmd := exec.Command("bash", "-c", script+"\nCOMP_WORDS=(\"$@\"); COMP_CWORD=$(($#-1)); _ballot; echo \"${COMPREPLY[*]}\"", "bash")
		cmd.Args = append(cmd.Args, tt.words...)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", tt.words, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tt.want && !(tt.want == "" && strings.HasPrefix(got, "--")) {
			t.Errorf("completing %q: %q, want %q", tt.words, got, tt.want)
		}
	}
}

// ---------------------------------------------------------------------------
// The README and docs/.

// docFiles is README.md, then docs/*.md in name order: the documentation,
// whose sections the tests below look up by heading, wherever they are.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md (%v)", err)
	}
	sort.Strings(pages)
	return append([]string{"README.md"}, pages...)
}

// readme is README.md and every docs/*.md, one after the other: README.md
// first, so that its introduction comes first; every page starts with its
// "# " title, so no section runs on from one file into the next.
func readme(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, name := range docFiles(t) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if name != "README.md" && !strings.HasPrefix(string(data), "# ") {
			t.Fatalf("%s does not start with its \"# \" title", name)
		}
		b.Write(data)
		if !strings.HasSuffix(string(data), "\n") {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// section is the documentation's text from the heading to the next heading
// of its level or above; the heading must be in exactly one place.
func section(t *testing.T, text, heading string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("neither README.md nor docs/*.md has %q", heading)
	}
	if strings.Contains(rest, "\n"+heading+"\n") {
		t.Fatalf("README.md and docs/*.md have %q twice", heading)
	}
	level := strings.SplitN(heading, " ", 2)[0]
	for i := 0; i < len(rest); {
		j := strings.Index(rest[i:], "\n#")
		if j < 0 {
			break
		}
		i += j + 1
		line, _, _ := strings.Cut(rest[i:], "\n")
		if hashes := strings.SplitN(line, " ", 2)[0]; strings.Trim(hashes, "#") == "" && len(hashes) <= len(level) && !inCodeBlock(rest[:i]) {
			return rest[:i]
		}
	}
	return rest
}

func inCodeBlock(text string) bool { return strings.Count(text, "\n```")%2 == 1 }

// cells splits a table row at its unescaped "|".
func cells(row string) []string {
	row = strings.Trim(strings.TrimSpace(row), "|")
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case row[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// plain is markdown text without backticks, on one line.
func plain(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "`", "")), " ")
}

var firstCode = regexp.MustCompile("`([^`]*)`")

// checkDefault: a README default cell agrees with p's default.
func checkDefault(t *testing.T, where string, p *param, cell string) {
	t.Helper()
	switch {
	case p.req:
		if !strings.Contains(cell, "required") {
			t.Errorf("%s: --%s is required, README's default says %q", where, p.name, cell)
		}
	case p.def != "" && p.shown == "" && p.name != "config-file":
		if m := firstCode.FindStringSubmatch(cell); m == nil || m[1] != p.def || !strings.HasPrefix(cell, "`") {
			t.Errorf("%s: --%s's default is %q, README says %q", where, p.name, p.def, cell)
		}
	default:
		if want := plain(p.shownDefault()); !strings.HasPrefix(plain(cell), want) {
			t.Errorf("%s: --%s's default is %q, README says %q", where, p.name, want, cell)
		}
	}
}

// TestReadmeParameters: every flag of the parameter table is in README's
// parameter table and vice versa, with its argument, environment variable,
// default and allowed values; so is every flag in the README's other
// tables that have a default column.
func TestReadmeParameters(t *testing.T) {
	text := readme(t)
	params := section(t, text, "## Parameters")
	seen := map[string]bool{}
	for _, row := range strings.Split(params, "\n") {
		if !strings.HasPrefix(row, "| `--") {
			continue
		}
		c := cells(row)
		if len(c) != 4 {
			t.Errorf("README parameter row has %d cells: %q", len(c), row)
			continue
		}
		flagCell := strings.Trim(c[0], "`")
		name := strings.TrimPrefix(strings.Fields(flagCell)[0], "--")
		p := lookupParam(name)
		if p == nil {
			t.Errorf("README's parameter table has --%s, which ballot does not know", name)
			continue
		}
		seen[name] = true
		if want := strings.TrimSpace("--" + p.name + " " + p.arg); flagCell != want {
			t.Errorf("README's parameter table says %q, the parameter table %q", flagCell, want)
		}
		if !strings.HasPrefix(c[1], "`"+p.env()+"`") {
			t.Errorf("README: --%s's environment variable is %q, want %s", name, c[1], p.env())
		}
		checkDefault(t, "README's parameter table", p, c[2])
		for _, v := range p.allowed() {
			if !strings.Contains(c[3], "`"+v+"`") {
				t.Errorf("README: --%s's allowed values %q lack `%s`", name, c[3], v)
			}
		}
		if len(p.choices) > 0 {
			for _, m := range firstCode.FindAllStringSubmatch(c[3], -1) {
				if regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(m[1]) && !slices.Contains(p.choices, m[1]) {
					t.Errorf("README: --%s's allowed values name %q, which it refuses", name, m[1])
				}
			}
		}
	}
	for _, p := range lookupAll() {
		if !seen[p.name] {
			t.Errorf("README's parameter table lacks --%s", p.name)
		}
	}

	// Other tables with a default column (run cron's, the hooks').
	tables := 0
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		h := cells(line)
		if !strings.HasPrefix(line, "| ") || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "|---") || !slices.Contains(h, "default") || strings.Contains(line, "| env |") {
			continue
		}
		tables++
		col := slices.Index(h, "default")
		for _, row := range lines[i+2:] {
			if !strings.HasPrefix(row, "|") {
				break
			}
			c := cells(row)
			name := strings.TrimPrefix(strings.Fields(strings.Trim(c[0], "`"))[0], "--")
			if p := lookupParam(strings.Trim(name, "`")); p != nil && strings.HasPrefix(c[0], "`--") && col < len(c) {
				checkDefault(t, "README line "+strings.TrimSpace(strings.Split(row, "|")[1]), p, c[col])
			}
		}
	}
	if tables < 2 {
		t.Errorf("found %d README tables with a default column, want run cron's and the hooks'", tables)
	}
}

func lookupAll() []*param { return params }

var numberRe = regexp.MustCompile(`\b\d+\b`)

// TestReadmeExitCodes: --help's exit codes and README's table name the same
// codes, and the same numbers in their explanations (143, 137, check's 3).
func TestReadmeExitCodes(t *testing.T) {
	_, help, _ := strings.Cut(helpText(""), "Exit codes:\n")
	var helpCodes []string
	for _, l := range strings.Split(help, "\n") {
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(l, "    ") {
			helpCodes = append(helpCodes, f[0])
		}
	}
	table := section(t, readme(t), "## Exit codes")
	var readmeCodes []string
	var rows []string
	for _, row := range strings.Split(table, "\n") {
		if c := cells(row); strings.HasPrefix(row, "| ") && len(c) == 2 && c[0] != "code" {
			readmeCodes = append(readmeCodes, strings.ReplaceAll(c[0], "–", "-"))
			rows = append(rows, c[1])
		}
	}
	sort.Strings(helpCodes)
	sort.Strings(readmeCodes)
	if !slices.Equal(helpCodes, readmeCodes) {
		t.Errorf("--help's exit codes %v, README's %v", helpCodes, readmeCodes)
	}
	numbers := func(s string) []string {
		var out []string
		for _, n := range numberRe.FindAllString(s, -1) {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		sort.Strings(out)
		return out
	}
	h, r := numbers(help), numbers(strings.Join(readmeCodes, " ")+" "+strings.Join(rows, " "))
	if !slices.Equal(h, r) {
		t.Errorf("--help's exit codes mention the numbers %v, README's %v", h, r)
	}
}

// TestReadmeMetrics: every metric the metrics file holds is in README's
// Monitoring table, and every metric there is written.
func TestReadmeMetrics(t *testing.T) {
	m := newMetrics("/nonexistent/ballot.prom", "/e", "c", func() bool { return true }, nil)
	m.slots, m.leader = 2, true
	m.exits[1] = 1
	m.cronSkipped["missed"] = 1
	var written []string
	for _, l := range strings.Split(m.render(), "\n") {
		if f := strings.Fields(l); len(f) == 4 && f[1] == "TYPE" {
			written = append(written, f[2])
		}
	}
	var documented []string
	for _, row := range strings.Split(section(t, readme(t), "## Monitoring"), "\n") {
		if c := cells(row); strings.HasPrefix(row, "| `ballot_") {
			name, _, _ := strings.Cut(strings.Trim(c[0], "`"), "{")
			documented = append(documented, name)
		}
	}
	sort.Strings(written)
	sort.Strings(documented)
	if !slices.Equal(written, documented) {
		t.Errorf("the metrics file has %v, README's Monitoring table %v", written, documented)
	}
}

// TestReadmeUsage: README's Usage block is --help's, and its introduction
// names every command.
func TestReadmeUsage(t *testing.T) {
	text := readme(t)
	usage := section(t, text, "## Usage")
	_, block, _ := strings.Cut(usage, "```\n")
	block, _, _ = strings.Cut(block, "```")
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		l, _, _ = strings.Cut(l, "#")
		got = append(got, strings.TrimSpace(l))
	}
	var want []string
	for _, l := range between(helpOverview, "Usage:") {
		want = append(want, strings.TrimSpace(l))
	}
	if !slices.Equal(got, want) {
		t.Errorf("README's Usage:\n%s\n--help's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	intro, _, _ := strings.Cut(text, "\n## ")
	for _, cmd := range strings.Fields(commandWordList()) {
		if cmd == "run" {
			continue
		}
		if !strings.Contains(intro, "`"+cmd) {
			t.Errorf("README's introduction does not name the command %s", cmd)
		}
	}
}

// TestReadmePolicies: each policy table of README's "Policies" lists
// exactly the values its flags take, the default marked "(default)".
func TestReadmePolicies(t *testing.T) {
	lines := strings.Split(section(t, readme(t), "## Policies"), "\n")
	tables := 0
	for i, line := range lines {
		if line != "| policy | |" {
			continue
		}
		tables++
		var flags []string
		for j := i - 1; j >= 0 && j >= i-3 && len(flags) == 0; j-- {
			flags = flagsIn(lines[j])
		}
		var values []string
		def := ""
		for _, row := range lines[i+2:] {
			if !strings.HasPrefix(row, "| `") {
				break
			}
			c := cells(row)
			v := firstCode.FindStringSubmatch(c[0])[1]
			values = append(values, v)
			if strings.Contains(c[0], "(default)") {
				def = v
			}
		}
		if len(flags) == 0 {
			t.Errorf("the policy table at line %d names no flag above it", i)
		}
		for _, name := range flags {
			p := lookupParam(name)
			if p == nil || len(p.choices) == 0 {
				t.Errorf("policy table names --%s, which takes no policy", name)
				continue
			}
			want, got := slices.Clone(p.choices), slices.Clone(values)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) || def != p.def {
				t.Errorf("--%s: README's table has %v (default %q), the parameter table %v (default %q)", name, values, def, p.choices, p.def)
			}
		}
	}
	if tables != 3 {
		t.Errorf("found %d policy tables, want 3 (on-child-*, on-election-failure, on-connection-loss)", tables)
	}
}

// prose is markdown text with its fenced blocks and code spans blanked:
// what GitHub reads headings and links in.
func prose(text string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.SplitAfter(text, "\n") {
		if t := strings.TrimLeft(line, " "); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			b.WriteString("\n")
			continue
		}
		if fenced {
			b.WriteString("\n")
			continue
		}
		b.WriteString(line)
	}
	// code spans: a run of n backticks up to the next run of exactly n
	s, out := b.String(), strings.Builder{}
	for i := 0; i < len(s); {
		if s[i] != '`' {
			out.WriteByte(s[i])
			i++
			continue
		}
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		end := -1
		for j := i + n; j < len(s); {
			if s[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(s) && s[j+m] == '`' {
				m++
			}
			if m == n {
				end = j + m
				break
			}
			j += m
		}
		if end < 0 {
			out.WriteString(s[i : i+n])
			i += n
			continue
		}
		out.WriteString(strings.Repeat(" ", end-i))
		i = end
	}
	return out.String()
}

var (
	headingRe  = regexp.MustCompile(`(?m)^(#{1,6})[ \t]+(.*?)[ \t#]*$`)
	mdLinkRe   = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	linkTextRe = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	schemeRe   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// anchors is the anchors GitHub gives the headings of a markdown text:
// lower case, letters, digits, "-" and "_" kept, spaces to "-", the rest
// dropped; a repeated one gets "-1", "-2", ….
func anchors(text string) map[string]bool {
	out, seen := map[string]bool{}, map[string]int{}
	for _, m := range headingRe.FindAllStringSubmatch(prose(text), -1) {
		h := linkTextRe.ReplaceAllString(m[2], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n, ok := seen[a]; ok {
			seen[a] = n + 1
			a = fmt.Sprintf("%s-%d", a, n+1)
		} else {
			seen[a] = 0
		}
		out[a] = true
	}
	return out
}

// TestDocsLinks: every relative link of README.md and docs/*.md names a
// file of the repository, and every "#anchor" a heading of its page; the
// README links every page of docs/, and every page links back.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	files := docFiles(t)
	text := map[string]string{}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		text[name] = string(data)
	}
	for _, name := range files {
		links := 0
		linksReadme := false
		for _, m := range mdLinkRe.FindAllStringSubmatch(prose(text[name]), -1) {
			url := m[1]
			if schemeRe.MatchString(url) {
				continue
			}
			links++
			path, frag, _ := strings.Cut(url, "#")
			target := name
			if path != "" {
				if strings.HasPrefix(path, "/") {
					t.Errorf("%s: %q: links in the repository are relative", name, url)
					continue
				}
				target = filepath.Clean(filepath.Join(filepath.Dir(name), path))
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s: link to %q: %v", name, url, err)
					continue
				}
			}
			if target == "README.md" {
				linksReadme = true
			}
			if frag == "" {
				continue
			}
			if _, ok := text[target]; !ok && strings.HasSuffix(target, ".md") {
				data, err := os.ReadFile(target)
				if err != nil {
					t.Fatal(err)
				}
				text[target] = string(data)
			}
			if !anchors(text[target])[frag] {
				t.Errorf("%s: link to %q: %s has no heading whose anchor is %q", name, url, target, frag)
			}
		}
		if links == 0 {
			t.Errorf("%s has no relative link", name)
		}
		if name != "README.md" && !linksReadme {
			t.Errorf("%s does not link back to README.md", name)
		}
		if name != "README.md" && !strings.Contains(prose(text["README.md"]), "]("+name+")") {
			t.Errorf("README.md does not link to %s", name)
		}
	}
}

// TestDocsThirdPartyLicenses: THIRD_PARTY_LICENSES holds the licence of
// every module whose code the binary holds, of internal/gronx (a copy of
// gronx) and of Go, word for word; make dist puts it in every archive and
// make deb into the copyright file.
func TestDocsThirdPartyLicenses(t *testing.T) {
	t.Parallel()
	notice, err := os.ReadFile("THIRD_PARTY_LICENSES")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}} {{.Dir}}{{end}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	licences := map[string]string{ // who: licence file
		"internal/gronx":          "internal/gronx/LICENSE",
		"the Go standard library": filepath.Join(strings.TrimSpace(string(goroot)), "LICENSE"),
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, dir, ok := strings.Cut(line, " "); ok {
			licences[path] = filepath.Join(dir, "LICENSE")
			if !strings.Contains(string(notice), path) {
				t.Errorf("THIRD_PARTY_LICENSES does not name %s, whose code the binary holds", path)
			}
		}
	}
	if len(licences) != 3 {
		t.Errorf("licences to ship: %v; go.mod's modules are go-zookeeper alone", licences)
	}
	for who, file := range licences {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s's licence: %v", who, err)
		} else if !strings.Contains(string(notice), string(text)) {
			t.Errorf("THIRD_PARTY_LICENSES lacks %s's licence, %s, word for word", who, file)
		}
	}
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"cp LICENSE THIRD_PARTY_LICENSES ", "cat $$src/THIRD_PARTY_LICENSES; } > $$root/usr/share/doc/ballot/copyright"} {
		if !strings.Contains(string(mk), w) {
			t.Errorf("the Makefile lacks %q: make dist and make deb must ship THIRD_PARTY_LICENSES", w)
		}
	}
}
