package main

// The command line: flags, then environment variables, then the config
// file, then defaults, for each parameter (parseCommandLine).

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"ballot/internal/slog"
)

// flagValue records the raw strings given for one flag; validation happens
// later so that every error can be worded the same way.
type flagValue struct {
	isBool bool
	vals   []string
	// afterCmd: parsing the flags after the command name; given counts
	// the values before it [0] and after it [1]: a global flag after the
	// command overrides one before it (a wrapper's default), but a flag
	// given twice in one place is a mistake (resolveAll).
	afterCmd bool
	given    [2][]string
}

func (v *flagValue) String() string { return "" }
func (v *flagValue) Set(s string) error {
	v.vals = append(v.vals, s)
	i := 0
	if v.afterCmd {
		i = 1
	}
	v.given[i] = append(v.given[i], s)
	return nil
}
func (v *flagValue) IsBoolFlag() bool { return v != nil && v.isBool }

// newFlagSet returns a FlagSet for cmd ("" for the flags before the command)
// with the global flags and cmd's own, all recording into vals.
func newFlagSet(cmd string, vals map[string]*flagValue) *flagSet {
	fs := newFlags()
	for _, p := range params {
		if p.scope == scopeGlobal || (cmd != "" && p.scope.usedBy(cmd)) {
			fs.Var(vals[p.name], p.name)
		}
	}
	return fs
}

// sawTerminator reports whether fs.Parse(args) stopped at a "--" (which the
// flag package swallows) rather than at a positional argument. consumed is
// how many of args the parse used. A "--" given as a flag's value
// (--candidate-id --) is not a terminator.
func sawTerminator(fs *flagSet, args []string, consumed int) bool {
	for i := 0; i < consumed; {
		s := args[i]
		if s == "--" {
			return true
		}
		name := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "-")
		if strings.Contains(name, "=") {
			i++
			continue
		}
		if f := fs.Lookup(name); f != nil && f.IsBoolFlag() {
			i++
			continue
		}
		i += 2
	}
	return false
}

// flagError turns an error of the flag package into a one-line usageError.
func flagError(cmd string, err error) error {
	prefix, hint := "", "(see ballot help)"
	if cmd != "" {
		prefix, hint = cmd+": ", "(see ballot help "+cmd+")"
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		if p := lookupParam(name); p != nil && p.scope != scopeGlobal {
			if cmd == "" {
				return usagef("--%s goes after the command; it applies to %s only %s", name, p.scope.commands(), hint)
			}
			return usagef("%sunknown flag --%s; it applies to %s only %s", prefix, name, p.scope.commands(), hint)
		}
		return usagef("%sunknown flag --%s %s", prefix, name, hint)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		name = strings.TrimLeft(name, "-")
		return usagef("%s--%s needs a value, e.g. --%s=VALUE %s", prefix, name, name, hint)
	}
	if arg, ok := strings.CutPrefix(msg, "bad flag syntax: "); ok {
		return usagef("%sbad flag syntax %q; use --name value or --name=value %s", prefix, arg, hint)
	}
	return usagef("%s%s %s", prefix, msg, hint)
}

// strayArgs is the error for positional arguments that are not allowed.
func strayArgs(cmd string, args []string, afterDashes bool) error {
	hint := "(see ballot help " + cmd + ")"
	if cmd == cmdRunCrontab {
		if afterDashes {
			return usagef(`%s: takes no command after "--", but got %q; each job's command is on its line of the crontab FILE %s`, cmd, strings.Join(args, " "), hint)
		}
		return usagef("%s: unexpected argument %q; it takes one crontab FILE %s", cmd, args[0], hint)
	}
	if afterDashes {
		return usagef("%s: takes no command to run, but got %q %s", cmd, strings.Join(args, " "), hint)
	}
	a := args[0]
	if a == "true" || a == "false" {
		return usagef(`%s: unexpected argument %q; boolean flags take their value with "=", e.g. --wrap-child-logs=false %s`, cmd, a, hint)
	}
	if cmd == cmdRunOnce || cmd == cmdRunCron {
		return usagef(`%s: unexpected argument %q; put the command to run after "--" %s`, cmd, a, hint)
	}

	return usagef("%s: unexpected argument %q %s", cmd, a, hint)
}

// ---------------------------------------------------------------------------
// parseCommandLine.

// parseCommandLine parses os.Args[1:]-style args, with getenv standing in
// for os.Getenv (HOME is read through it too, for the config file search).
// It returns *usageError for usage and configuration errors and
// *helpRequested when help was asked for.
func parseCommandLine(args []string, getenv func(string) string) (*Settings, error) {
	var cmd string
	s, err := parseArgs(args, getenv, &cmd)
	var u *usageError
	if cmd == cmdCheck && errors.As(err, &u) {
		u.code = exitUnknown // a monitoring plugin's convention: 3 for anything but a verdict
	}
	return s, err
}

// parseArgs is parseCommandLine; it sets *cmdSeen once it knows the command.
func parseArgs(args []string, getenv func(string) string, cmdSeen *string) (*Settings, error) {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version" || args[0] == "-v") {
		return &Settings{Command: cmdVersion}, nil // what other tools answer to
	}
	vals := make(map[string]*flagValue, len(params))
	for _, p := range params {
		vals[p.name] = &flagValue{isBool: p.kind == kindBool}
	}

	// Global flags before the command.
	gfs := newFlagSet("", vals)
	if err := gfs.Parse(args); err != nil {
		if errors.Is(err, errFlagHelp) {
			return nil, &helpRequested{text: helpText("")}
		}
		return nil, flagError("", err)
	}
	rest := gfs.Args()
	if sawTerminator(gfs, args, len(args)-len(rest)) || len(rest) == 0 {
		return nil, usagef("no command given; use one of %s (see ballot help)", commandList)
	}

	cmd, rest, err := parseCommandName(rest)
	if err != nil {
		return nil, err
	}
	*cmdSeen = cmd

	// The command's flags, with the global flags again.
	for _, v := range vals {
		v.afterCmd = true
	}
	fs := newFlagSet(cmd, vals)
	if cmd == cmdVersion {
		fs = newFlagSet("", vals)
	}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, errFlagHelp) {
			return nil, &helpRequested{text: helpText(cmd)}
		}
		return nil, flagError(cmd, err)
	}
	pos := fs.Args()
	dashes := sawTerminator(fs, rest, len(rest)-len(pos))
	var crontabFile string
	if cmd == cmdRunCrontab && len(pos) > 0 && !dashes {
		// The FILE, and flags after it too: "run crontab FILE --check".
		crontabFile, rest = pos[0], pos[1:]
		if err := fs.Parse(rest); err != nil {
			return nil, flagError(cmd, err)
		}
		pos = fs.Args()
		dashes = sawTerminator(fs, rest, len(rest)-len(pos))
		if crontabFile == "" {
			return nil, usagef("%s: the crontab FILE is an empty string; name a file (see ballot help %s)", cmd, cmd)
		}
	}
	isRun := cmd == cmdRunOnce || cmd == cmdRunCron
	if len(pos) > 0 && (!dashes || !isRun) {
		return nil, strayArgs(cmd, pos, dashes)
	}
	if cmd == cmdVersion {
		return &Settings{Command: cmdVersion}, nil
	}
	if isRun && len(pos) > 0 && pos[0] == "" {
		return nil, usagef(`%s: the command after "--" is an empty string`, cmd)
	}

	s := &Settings{Command: cmd, Sources: map[string]string{}, Values: map[string]string{}}
	if isRun && len(pos) > 0 {
		s.Args = append([]string(nil), pos...)
	}
	s.CrontabFile = crontabFile

	if err := resolveAll(s, vals, getenv); err != nil {
		return nil, err
	}
	if err := settleCrontab(s); err != nil {
		return nil, err
	}
	if err := settleZooKeeperAccess(s); err != nil {
		return nil, err
	}
	if err := checkHasCommand(s); err != nil {
		return nil, err
	}
	settleQuiet(s)
	return s, nil
}

// settleQuiet: --quiet is for crontab, which mails whatever is printed.
// ballot's own lines below WARN go (--debug still shows them: it is for
// seeing more), and the command's output passes through unchanged, as it
// would without ballot: wrapped, it would be INFO lines, and dropped.
func settleQuiet(s *Settings) {
	if !s.Quiet {
		return
	}
	if s.LogLevel < slog.LevelWarn && !s.Debug {
		s.LogLevel = slog.LevelWarn
		s.Sources["log-level"] = "raised to warn by " + paramSource(s, "quiet")
	}
	if s.WrapChildLogs {
		s.WrapChildLogs = false
		s.Sources["wrap-child-logs"] = "set to false by " + paramSource(s, "quiet")
	}
}

// parseCommandName takes the command (run takes a mode too) off args.
func parseCommandName(args []string) (cmd string, rest []string, err error) {
	cmd, rest = args[0], args[1:]
	switch cmd {
	case cmdHelp:
		return "", nil, helpFor(rest)
	case cmdCompletion:
		return "", nil, completionFor(rest)
	case "run":
		if len(rest) == 0 {
			return "", nil, usagef(`run: missing "once", "cron" or "crontab", e.g. ballot run once --candidate-id a -- /usr/bin/myservice (see ballot help run)`)
		}
		switch rest[0] {
		case "once", "cron", "crontab":
			return "run " + rest[0], rest[1:], nil
		case "-h", "-help", "--help":
			return "", nil, &helpRequested{text: helpText("run")}
		}
		return "", nil, usagef(`run: unknown mode %q; use "run once", "run cron" or "run crontab" (see ballot help run)`, rest[0])
	case cmdInfo, cmdWatch, cmdLeader, cmdHistory, cmdCheck, cmdStepDown, cmdPause, cmdResume, cmdVersion,
		cmdTrigger, cmdDrain, cmdUndrain, cmdJobs:
		return cmd, rest, nil
	}
	return "", nil, usagef("unknown command %q; use one of %s (see ballot help)", cmd, commandList)
}

// resolveAll sets every parameter the command uses from its flags, the
// environment, the config file or its default.
func resolveAll(s *Settings, vals map[string]*flagValue, getenv func(string) string) error {
	for _, p := range params {
		for _, v := range vals[p.name].given {
			if len(v) > 1 && p.kind != kindList {
				// The last one winning silently hides a mistake (two
				// --candidate-id in a unit file and a drop-in).
				return usagef("--%s given %d times (%s): it takes one value; give it once", p.name, len(v), quoteAll(v))
			}
		}
	}
	cfg, err := loadConfig(s, vals["config-file"].vals, getenv)
	if err != nil {
		return err
	}
	if raw, ok := cfg.get(configJobsKey); ok && s.Command == cmdRunCrontab {
		s.ConfigJobs = raw
	}
	for _, p := range params {
		if p.name == "config-file" || !p.scope.usedBy(s.Command) {
			continue
		}
		if err := resolve(s, p, vals[p.name].vals, getenv, cfg); err != nil {
			if p.name == "candidate-id" && s.Sources[p.name] == "default" && crontabChecking(s, vals) {
				continue // --check stands for nothing: no candidate needed
			}
			return err
		}
	}
	// A crontab's jobs are spread over the hosts by their leaderships
	// (crontabspread.go): giving each job up after every run, as run cron's
	// reelect does to spread runs, would only undo that spread and cost a
	// handover's writes a run.
	if s.Command == cmdRunCrontab && s.Sources["on-child-success"] == "default" {
		s.OnChildSuccess, s.Values["on-child-success"] = policyRerun, string(policyRerun)
	}
	return nil
}

func quoteAll(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

// checkHasCommand: without a command, a run holds leadership until
// stopped, which only makes sense with a hook to act on it.
func checkHasCommand(s *Settings) error {
	isRun := s.Command == cmdRunOnce || s.Command == cmdRunCron
	if !isRun || len(s.Args) > 0 || len(s.OnPromote) > 0 || len(s.OnDemote) > 0 {
		return nil
	}
	example := "ballot run once --candidate-id a -- /usr/bin/myservice"
	if s.Command == cmdRunCron {
		example = `ballot run cron --candidate-id a --schedule "@hourly" -- /usr/bin/myjob`
	}
	return usagef(`%s: no command given; put it after "--", e.g. %s, or set --on-promote or --on-demote to hold leadership with hooks only`, s.Command, example)
}

// settleZooKeeperAccess checks the secure-ZooKeeper parameters against each
// other, settles the defaults that depend on others (TLS, the ACL) and
// prepends the chroot to the base path. The files are read later, by
// loadZKAccess.
func settleZooKeeperAccess(s *Settings) error {
	given := func(name string) bool { return s.Sources[name] != "" && s.Sources[name] != "default" }
	switch {
	case s.ZooKeeperTLSCert != "" && s.ZooKeeperTLSKey == "":
		return usagef("%s %q: a client certificate needs its private key; set --zookeeper-tls-key too",
			paramSource(s, "zookeeper-tls-cert"), s.ZooKeeperTLSCert)
	case s.ZooKeeperTLSKey != "" && s.ZooKeeperTLSCert == "":
		return usagef("%s %q: a private key needs its client certificate; set --zookeeper-tls-cert too",
			paramSource(s, "zookeeper-tls-key"), s.ZooKeeperTLSKey)
	}
	for _, name := range []string{"zookeeper-tls-ca", "zookeeper-tls-cert", "zookeeper-tls-key", "zookeeper-tls-server-name"} {
		if !given(name) {
			continue
		}
		if given("zookeeper-tls") && !s.ZooKeeperTLS {
			return usagef("%s \"false\" contradicts %s, which needs TLS; drop one of them",
				paramSource(s, "zookeeper-tls"), paramSource(s, name))
		}
		if !s.ZooKeeperTLS {
			s.ZooKeeperTLS = true
			s.Sources["zookeeper-tls"] = "implied by " + paramSource(s, name)
			s.Values["zookeeper-tls"] = "true"
		}
	}

	// Credentials: something ZooKeeper knows ballot by, which "creator"
	// ACLs grant their rights to.
	credentials := s.ZooKeeperAuthFile != "" || s.ZooKeeperTLSCert != ""
	switch {
	case s.ZooKeeperACL == "" && credentials:
		s.ZooKeeperACL = aclCreator
	case s.ZooKeeperACL == "":
		s.ZooKeeperACL = aclOpen
	case s.ZooKeeperACL != aclOpen && !credentials:
		return usagef("%s %q: needs credentials for ZooKeeper to know ballot by: --zookeeper-auth-file, or a client certificate (--zookeeper-tls-cert and --zookeeper-tls-key)",
			paramSource(s, "zookeeper-acl"), s.ZooKeeperACL)
	}
	if s.Sources["zookeeper-acl"] == "default" {
		s.Values["zookeeper-acl"] = s.ZooKeeperACL // as settled, for --debug
	}

	// The client library has no chroot: ballot applies it itself, so logs
	// and info show the full path.
	s.BasePath = s.ZooKeeperChroot + s.BasePath
	return nil
}

// setChroot records the chroot of one --zookeeper-servers flag; repeated
// flags may each give it, but not two different ones.
func setChroot(s *Settings, chroot string) error {
	switch {
	case chroot == "":
	case s.ZooKeeperChroot != "" && s.ZooKeeperChroot != chroot:
		return fmt.Errorf("chroot %q differs from the chroot %q of an earlier --zookeeper-servers; give one", chroot, s.ZooKeeperChroot)
	default:
		s.ZooKeeperChroot = chroot
	}
	return nil
}

// resolve sets parameter p from the first of flag, environment, config file
// and default that has it, recording the source in s.Sources.
func resolve(s *Settings, p *param, flagVals []string, getenv func(string) string, cfg *configFile) error {
	env := p.env()
	if len(flagVals) > 0 {
		s.Sources[p.name] = "flag"
		s.Values[p.name] = flagVals[len(flagVals)-1]
		if p.kind == kindList {
			s.Values[p.name] = strings.Join(flagVals, ",")
		}
		if p.kind == kindList {
			s.ZooKeeperServers = nil
			for _, v := range flagVals {
				hs, chroot, err := parseServerList(v)
				if err == nil {
					err = setChroot(s, chroot)
				}
				if err != nil {
					return usagef("--%s %q: %v", p.name, v, err)
				}
				s.ZooKeeperServers = append(s.ZooKeeperServers, hs...)
			}
			return nil
		}
		v := flagVals[len(flagVals)-1]
		if err := p.apply(s, v); err != nil {
			return usagef("--%s %s: %v", p.name, p.quote(v), err)
		}
		return nil
	}

	if v, env := p.lookupEnv(getenv); v != "" {
		s.Sources[p.name] = "environment " + env
		s.Values[p.name] = v
		var err error
		if p.kind == kindList {
			s.ZooKeeperServers, s.ZooKeeperChroot, err = parseServerList(v)
		} else {
			err = p.apply(s, v)
		}
		if err != nil {
			return usagef("environment %s %s: %v", env, p.quote(v), err)
		}
		return nil
	}

	if raw, ok := cfg.get(p.name); ok {
		s.Sources[p.name] = "config file " + cfg.path
		s.Values[p.name] = compactJSON(raw)
		return cfg.apply(s, p, raw)
	}

	s.Sources[p.name] = "default"
	s.Values[p.name] = p.def
	if p.opt {
		return nil
	}
	if p.scope == scopeCandidate && s.Command == cmdStepDown {
		return nil // step-down: any leader
	}
	if p.req {
		return usagef("%s: --%s is required (or set %s, or %q in the config file)", s.Command, p.name, env, p.name)
	}
	if p.kind == kindList {
		s.ZooKeeperServers, _ = parseServers(p.def)
		return nil
	}
	if err := p.apply(s, p.def); err != nil {
		panic("ballot: bad default for " + p.name + ": " + err.Error())
	}
	return nil
}

// settleCrontab checks run crontab's own parameters: where the jobs come
// from, and --check true only from the command line (from the environment
// or a config file it would quietly turn every start into a dry run).
func settleCrontab(s *Settings) error {
	if s.Command != cmdRunCrontab {
		return nil
	}
	if src := s.Sources["check"]; s.CrontabCheck && src != "flag" && src != "default" {
		return usagef("%s %q: --check is for the command line only (it would turn every start into a dry run); remove it", paramSource(s, "check"), s.Values["check"])
	}
	switch {
	case s.CrontabFile != "" && s.ConfigJobs != nil:
		return usagef("run crontab %s: config file %s has \"jobs\" too; give the jobs one way, the FILE or the config file's \"jobs\"", s.CrontabFile, s.ConfigFile)
	case s.CrontabFile == "" && s.ConfigJobs == nil:
		return usagef(`run crontab: no crontab FILE given, and no "jobs" in a config file; e.g. ballot run crontab --candidate-id a /etc/ballot/crontab (see ballot help run crontab)`)
	}
	return nil
}

// crontabChecking: run crontab --check, as the flags give it.
func crontabChecking(s *Settings, vals map[string]*flagValue) bool {
	v := vals["check"].vals
	if s.Command != cmdRunCrontab || len(v) == 0 {
		return false
	}
	b, err := parseBool(v[len(v)-1])
	return err == nil && b
}
