package main

// The man page (ballot help --man) and the shell completions (ballot
// completion bash|zsh), generated from the parameter table and help.go's
// texts, so that they cannot drift from --help (help_test.go checks all
// three against the flags the parser accepts).

import (
	"fmt"
	"slices"
	"strings"
)

// docCommands are the commands that take flags, in help order.
var docCommands = []string{cmdRunOnce, cmdRunCron, cmdRunCrontab, cmdInfo, cmdJobs, cmdWatch, cmdLeader, cmdHistory, cmdCheck,
	cmdStepDown, cmdPause, cmdResume, cmdTrigger, cmdDrain, cmdUndrain}

// completionShells are the shells ballot completion writes for.
var completionShells = []string{"bash", "zsh"}

func names[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// allowed is the values p takes, when they are a short list.
func (p *param) allowed() []string {
	if p.kind == kindBool {
		return []string{"true", "false"}
	}
	return p.choices
}

// takesFile: p's value is a file name (not a ZooKeeper path), for completion.
func (p *param) takesFile() bool {
	return p.arg == "FILE" || p.arg == "DATA|@PATH" || p.name == "config-file" || p.name == "metrics-file"
}

// shownDefault is p's default as help words it, on one line.
func (p *param) shownDefault() string {
	def := p.def
	switch {
	case p.shown != "":
		def = p.shown
	case p.req:
		def = "none (required)"
	case p.opt:
		def = "none"
	}
	return strings.TrimSuffix(strings.Join(strings.Fields(def), " "), ";")
}

// commandFlags is the flags cmd takes ("" : before the command), the
// global ones first, in table order.
func commandFlags(cmd string) []*param {
	var out []*param
	for _, p := range params {
		if p.scope == scopeGlobal {
			out = append(out, p)
		}
	}
	for _, p := range params {
		if cmd != "" && p.scope != scopeGlobal && p.scope.usedBy(cmd) {
			out = append(out, p)
		}
	}
	return out
}

// completionFor answers "ballot completion SHELL": the script on stdout.
func completionFor(args []string) error {
	if len(args) == 1 {
		switch args[0] {
		case "bash":
			return &helpRequested{text: bashCompletion()}
		case "zsh":
			return &helpRequested{text: zshCompletion()}
		case "-h", "-help", "--help":
			return helpFor([]string{cmdCompletion})
		}
	}
	what := fmt.Sprintf("unknown shell %q", strings.Join(args, " "))
	if len(args) == 0 {
		what = "no shell given"
	}
	return usagef("completion: %s; use bash or zsh, e.g. ballot completion bash > /usr/share/bash-completion/completions/ballot (see ballot help completion)", what)
}

// ---------------------------------------------------------------------------
// Completions. bash and zsh share the walk that finds the command among the
// words (skipping flags and their values) and the lists; only the calls that
// offer words differ.

func flagWords(ps []*param) string {
	var w []string
	for _, p := range ps {
		w = append(w, "--"+p.name)
	}
	return strings.Join(w, " ")
}

// valueFlags is a case pattern of the flags that take a separate value.
func valueFlags() string {
	var w []string
	for _, p := range params {
		if p.kind != kindBool {
			w = append(w, "--"+p.name)
		}
	}
	return strings.Join(w, "|")
}

// completionScript is the shell function; offer(kind, words) is how the
// shell offers words (kind: "words" or "files").
func completionScript(shell string) string {
	var b strings.Builder
	offer := func(indent, words string) {
		if shell == "bash" {
			fmt.Fprintf(&b, "%sCOMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", indent, words)
		} else {
			fmt.Fprintf(&b, "%scompadd -- %s; return ;;\n", indent, words)
		}
	}
	files := "COMPREPLY=($(compgen -f -- \"$cur\")); return ;;"
	commands := "COMPREPLY=($(compgen -c -- \"$cur\")); return"
	if shell == "zsh" {
		files = "_files; return ;;"
		commands = "_command_names; return"
	}
	first, last := "1", "COMP_CWORD"
	if shell == "zsh" {
		first, last = "2", "CURRENT"
	}
	w := "COMP_WORDS"
	if shell == "zsh" {
		w = "words"
	}
	fmt.Fprintf(&b, "    local cur=${%s[%s]} prev=${%s[%s-1]} flag=\"\" cmd=\"\" w i\n", w, last, w, last)
	fmt.Fprintf(&b, "    for ((i=%s; i<%s; i++)); do\n        w=${%s[i]}\n        case $w in\n", first, last, w)
	b.WriteString("        --)\n")
	b.WriteString("            # what follows is the command ballot runs\n")
	fmt.Fprintf(&b, "            if ((i == %s-1)); then %s; fi\n", last, commands)
	if shell == "bash" {
		b.WriteString("            COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n")
	} else {
		b.WriteString("            _files; return ;;\n")
	}
	fmt.Fprintf(&b, "        %s)\n", valueFlags())
	fmt.Fprintf(&b, "            ((i++)); [[ ${%s[i]} == = ]] && ((i++)) ;;\n", w)
	b.WriteString("        -*) ;;\n")
	b.WriteString("        once|cron|crontab) [[ $cmd == run ]] && cmd=\"run $w\" ;;\n")
	b.WriteString("        *) [[ -z $cmd ]] && cmd=$w ;;\n")
	b.WriteString("        esac\n    done\n")

	// A flag's value: --flag VALUE, --flag=VALUE (bash splits at "=").
	b.WriteString("    case $cur in\n    --*=*) flag=${cur%%=*}; cur=${cur#*=}")
	if shell == "zsh" {
		b.WriteString("; compset -P '*='")
	}
	b.WriteString(" ;;\n    =) flag=$prev; cur=\"\" ;;\n    *)\n")
	fmt.Fprintf(&b, "        if [[ $prev == = ]]; then flag=${%s[%s-2]}; else flag=$prev; fi ;;\n    esac\n", w, last)
	b.WriteString("    case $flag in\n")
	var noValue []string
	for _, p := range params {
		switch {
		case p.kind == kindBool:
		case len(p.allowed()) > 0:
			offer(fmt.Sprintf("    --%s) ", p.name), strings.Join(p.allowed(), " "))
		case p.takesFile():
			fmt.Fprintf(&b, "    --%s) %s\n", p.name, files)
		default:
			noValue = append(noValue, "--"+p.name)
		}
	}
	fmt.Fprintf(&b, "    %s) return ;;\n    esac\n", strings.Join(noValue, "|"))

	// The command, then its flags.
	b.WriteString("    case $cmd in\n")
	b.WriteString("    \"\")\n        if [[ $cur == -* ]]; then\n")
	if shell == "bash" {
		fmt.Fprintf(&b, "            COMPREPLY=($(compgen -W %q -- \"$cur\"))\n", flagWords(commandFlags("")))
		fmt.Fprintf(&b, "        else\n            COMPREPLY=($(compgen -W %q -- \"$cur\"))\n        fi ;;\n", commandWordList())
	} else {
		fmt.Fprintf(&b, "            compadd -- %s\n", flagWords(commandFlags("")))
		fmt.Fprintf(&b, "        else\n            compadd -- %s\n        fi ;;\n", commandWordList())
	}
	offer("    run) ", "once cron crontab")
	offer("    help) ", strings.ReplaceAll(commandWordList(), " help", "")+" --man")
	offer("    completion) ", strings.Join(completionShells, " "))
	for _, cmd := range docCommands {
		offer(fmt.Sprintf("    %q) ", cmd), flagWords(commandFlags(cmd)))
	}
	b.WriteString("    esac\n")
	return b.String()
}

// commandWordList is the first words of the commands.
func commandWordList() string {
	return "run info jobs watch leader history check step-down pause resume version help completion"
}

func bashCompletion() string {
	return "# bash completion for ballot; generated by: ballot completion bash\n" +
		"# install: ballot completion bash > /usr/share/bash-completion/completions/ballot\n" +
		"_ballot() {\n" + completionScript("bash") + "}\ncomplete -F _ballot ballot\n"
}

func zshCompletion() string {
	return "#compdef ballot\n# zsh completion for ballot; generated by: ballot completion zsh\n" +
		"# install: ballot completion zsh > /usr/share/zsh/vendor-completions/_ballot\n" +
		"_ballot() {\n" + completionScript("zsh") + "}\n_ballot \"$@\"\n"
}

// ---------------------------------------------------------------------------
// The man page.

// roff escapes text for the body of a man page.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	var ascii strings.Builder
	for _, r := range s {
		if r > 127 {
			fmt.Fprintf(&ascii, `\[u%04X]`, r) // groff reads ASCII
		} else {
			ascii.WriteRune(r)
		}
	}
	s = ascii.String()
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			line = `\&` + line
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// textBlock is a help text's body (its title line dropped) as preformatted roff.
func textBlock(text string) string {
	_, body, _ := strings.Cut(strings.TrimRight(text, "\n"), "\n")
	return ".nf\n" + roff(body) + "\n.fi\n"
}

// between is the lines of text after the line start up to the first empty line.
func between(text, start string) []string {
	_, rest, _ := strings.Cut(text, start+"\n")
	block, _, _ := strings.Cut(rest, "\n\n")
	return strings.Split(block, "\n")
}

// manPage is ballot.1.
func manPage() string {
	var b strings.Builder
	b.WriteString(".\\\" ballot.1: generated by ballot help --man from the parameter table; do not edit.\n")
	fmt.Fprintf(&b, ".TH BALLOT 1 \"\" \"ballot %s\" \"User Commands\"\n", roff(version))
	intro, _, _ := strings.Cut(helpOverview, "\n")
	fmt.Fprintf(&b, ".SH NAME\nballot \\- %s\n", roff(strings.Replace(strings.TrimPrefix(strings.TrimSuffix(intro, "."), "ballot "), "runs ", "run ", 1)))
	b.WriteString(".SH SYNOPSIS\n")
	for _, l := range between(helpOverview, "Usage:") {
		fmt.Fprintf(&b, ".B %s\n.br\n", roff(strings.TrimSpace(l)))
	}
	b.WriteString(".SH DESCRIPTION\n" + roff(intro) + "\nEvery machine runs the same ballot line; the candidates hold a leader\n" +
		"election on ZooKeeper, and only the leader runs the command. When the leader\nstops, dies or loses ZooKeeper, another candidate takes over.\n")

	b.WriteString(".SH COMMANDS\n")
	known := append(slices.Clone(docCommands), cmdVersion, cmdHelp, cmdCompletion)
	type command struct{ name, desc string }
	var cmds []command
	for _, l := range between(helpOverview, "Commands:") {
		if strings.HasPrefix(l, "   ") && len(cmds) > 0 { // a continuation
			cmds[len(cmds)-1].desc += " " + strings.TrimSpace(l)
			continue
		}
		l = strings.TrimSpace(l)
		c := command{desc: l}
		for _, k := range known {
			if strings.HasPrefix(l, k+" ") && len(k) > len(c.name) {
				c = command{k, strings.TrimSpace(strings.TrimPrefix(l, k))}
			}
		}
		cmds = append(cmds, c)
	}
	for _, c := range cmds {
		fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roff(c.name), roff(c.desc))
		var fl []string
		for _, p := range commandFlags(c.name) {
			if p.scope != scopeGlobal {
				fl = append(fl, `\fB\-\-`+roff(p.name)+`\fR`)
			}
		}
		if len(fl) > 0 && slices.Contains(docCommands, c.name) {
			fmt.Fprintf(&b, ".br\nFlags of %s: %s.\n", roff(c.name), strings.Join(fl, ", "))
		}
	}

	b.WriteString(".SH OPTIONS\nFlags are written \\fB\\-\\-name value\\fR or \\fB\\-\\-name=value\\fR; boolean flags\n" +
		"take their value with \\fB=\\fR only (\\fB\\-\\-wrap\\-child\\-logs=false\\fR).\n" +
		"Global flags may also come after the command.\n")
	var scopes []paramScope
	for _, p := range params {
		if !slices.Contains(scopes, p.scope) {
			scopes = append(scopes, p.scope)
		}
	}
	for _, sc := range scopes {
		title := "Global flags (every command but version and help)"
		if sc != scopeGlobal {
			title = "Flags of " + sc.commands()
		}
		fmt.Fprintf(&b, ".SS %q\n", roff(title))
		for _, p := range params {
			if p.scope != sc {
				continue
			}
			fmt.Fprintf(&b, ".TP\n.B \\-\\-%s", roff(p.name))
			if p.arg != "" {
				fmt.Fprintf(&b, " \\fI%s\\fR", roff(p.arg))
			}
			fmt.Fprintf(&b, "\n%s\n.br\nDefault: %s.\nEnvironment: \\fB%s\\fR.\n", roff(strings.ReplaceAll(p.help, "\n", " ")),
				roff(p.shownDefault()), roff(p.env()))
			if vs := p.allowed(); len(vs) > 0 && p.kind != kindBool {
				fmt.Fprintf(&b, "Values: %s.\n", roff(strings.Join(vs, ", ")))
			}
			if p.job {
				b.WriteString("Per job in run crontab: a job's line may give its own.\n")
			}
		}
	}

	b.WriteString(".SH CRONTAB FILE\n" + textBlock("\n"+helpCrontabFile))
	b.WriteString(".SH HOOKS\n" + textBlock(helpHooks))
	b.WriteString(".SH POLICIES\n" + textBlock(helpPolicies))
	b.WriteString(".SH ENVIRONMENT\n" + roff(strings.Join(strings.Fields(helpPrecedence), " ")) + "\n")
	b.WriteString(".SH FILES\n.TP\n.I $HOME/.config/ballot/ballot.json, /etc/ballot/ballot.json, ./ballot.json\n" +
		"The config file, when neither \\fB\\-\\-config\\-file\\fR nor \\fBBALLOT_CONFIG_FILE\\fR names one:\n" +
		"the first that exists is read. A JSON object whose keys are the flags' names.\n")
	b.WriteString(".SH EXIT STATUS\n" + textBlock(helpExitCodes))
	b.WriteString(".SH SEE ALSO\n.BR flock (1),\n.BR crontab (5),\n.BR systemd.service (5).\n" +
		"The README of ballot and its docs/, which explain the election, its guarantees and recipes.\n")
	return b.String()
}
