package main

// ballot help: the texts, built from the parameter table.

import (
	"fmt"
	"slices"
	"strings"
)

// helpFor answers "ballot help [cmd...]".
func helpFor(args []string) error {
	topic := strings.Join(args, " ")
	switch topic {
	case "", "help", "-h", "-help", "--help":
		return &helpRequested{text: helpText("")}
	case "--man":
		return &helpRequested{text: manPage()}
	case cmdCompletion:
		return &helpRequested{text: "ballot completion: print the completion script of a shell, bash or zsh, generated\n" +
			"from the parameter table as --help is.\n\nUsage:\n  ballot completion bash|zsh\n\n" +
			"  ballot completion bash > /usr/share/bash-completion/completions/ballot\n" +
			"  ballot completion zsh > /usr/share/zsh/vendor-completions/_ballot\n"}
	case "run", cmdRunOnce, cmdRunCron, cmdRunCrontab, cmdInfo, cmdJobs, cmdWatch, cmdLeader, cmdHistory, cmdCheck, cmdStepDown, cmdPause, cmdResume, cmdVersion,
		cmdTrigger, cmdDrain, cmdUndrain:
		return &helpRequested{text: helpText(topic)}
	}
	return usagef("help: unknown command %q; use one of run once, run cron, run crontab, info, jobs, watch, leader, history, check, step-down, pause, resume, trigger, drain, undrain, version, completion, or --man for the man page (see ballot help)", topic)
}

const helpGlobalShort = `Global flags (see ballot help): --config-file, --zookeeper-servers,
--zookeeper-base-path, --zookeeper-session-timeout, --zookeeper-tls, --zookeeper-tls-ca,
--zookeeper-tls-cert, --zookeeper-tls-key, --zookeeper-tls-server-name,
--zookeeper-auth-file, --zookeeper-acl, --log-level, --log-format, --debug
`

const helpPrecedence = `Every flag can also be set by its environment variable, BALLOT_ and the flag
name in capitals (empty means unset), or by its key in the JSON config file
(key = flag name). A flag beats the environment, which beats the config file,
which beats the default. For compatibility, ZOOKEEPER_SERVERS,
ZOOKEEPER_BASE_PATH, ZOOKEEPER_SESSION_TIMEOUT, LOG_LEVEL and LOG_FORMAT are
read too (the BALLOT_ name wins); no other unprefixed variable is.
`

const helpHooks = `Hooks:
  --on-promote, --on-demote and --health-check take a command line, split into
  words as a shell would ('...', "...", \ escapes) but run without a shell:
  nothing is expanded, so $VAR, *, ~, |, ; and > are passed as they are (use
  sh -c '...' for those). In the config file they are a string split the same
  way, or an array of strings taken as the arguments as they are.
  With --on-promote or --on-demote, the command after "--" may be left out:
  ballot then holds leadership until stopped, running only the hooks.
`

const helpPolicies = `Policies:
  on-child-success, on-child-error (after the command ends):
    rerun       run once: stay leader and run the command again
                run cron: stay leader and run it at the next scheduled time
    reelect     run once: resign, stand for election again, run the command if elected
                run cron: resign after each run (runs spread across hosts)
    exit        exit ballot with the command's exit code
    ignore      run once: stay leader and do not act on the command's result
                run cron: stay leader and run it at the next scheduled time
  on-election-failure (the election cannot be held, e.g. ZooKeeper is unreachable):
    retry       keep trying
    run-anyway  run the command without being elected
    exit        exit with code 125
  on-connection-loss (the connection to ZooKeeper is lost while leading):
    reelect     stop the command before the session can expire, then stand again
    exit        the same stop, then exit with code 125
    ignore      keep the command running until the session is known to be
                expired (risks two commands at once under a network partition)
`

const helpExitCodes = `Exit codes:
  0      success; also a stop (SIGTERM/SIGINT) while not running the command;
         run crontab --check: every job is good
  N      run: the command's own exit code, when a policy is exit; when ballot is
         stopped (SIGTERM/SIGINT) while the command runs, the command's code (143
         if it died of the SIGTERM)
  128+N  run: the command died of signal N (137: SIGKILL)
  1      info: there is no leader; jobs: no election under the base path; leader:
         no leader has acknowledged (within --wait); step-down: no leader,
         --candidate-id does not lead, nobody else in line, or nobody else leads
         within --wait
  2      usage or config error, including a certificate, key or auth file that
         cannot be read or parsed (check: 3 instead); run: a --slots that differs
         from that of a candidate already in line; run crontab: a bad job, a
         missing FILE, two jobs with one name, no jobs
  0-3    check: OK, WARNING, CRITICAL, UNKNOWN; UNKNOWN also for a bad flag,
         ZooKeeper unreachable, a missing election
  75     run once --no-wait: another candidate leads; --wait-timeout: not elected
         in time
  125    ballot failed: election failure under --on-election-failure exit,
         leadership lost under --on-connection-loss exit or during a --once-key
         run, a run stopped by --timeout whose command exited 0 anyway, /proc not
         mounted, or info, jobs, watch, leader or history could not read ZooKeeper
  126    the command is not executable
  127    the command was not found
`

// flagHelp lists the flags of the given scopes.
func flagHelp(b *strings.Builder, title string, scopes ...paramScope) {
	flagHelpOf(b, title, func(p *param) bool { return slices.Contains(scopes, p.scope) })
}

// flagHelpOf lists the flags that pass keep.
func flagHelpOf(b *strings.Builder, title string, keep func(*param) bool) {
	fmt.Fprintf(b, "%s:\n", title)
	for _, p := range params {
		if !keep(p) {
			continue
		}
		fmt.Fprintf(b, "  --%s", p.name)
		if p.arg != "" {
			fmt.Fprintf(b, " %s", p.arg)
		}
		def := p.def
		if p.req || p.opt {
			def = "none"
		}
		if p.shown != "" {
			def = p.shown
		}
		sep := ";"
		if strings.HasSuffix(def, ";") {
			sep = ""
		}
		help := strings.ReplaceAll(p.help, "\n", "\n      ")
		fmt.Fprintf(b, "\n      %s\n      default: %s%s env %s\n", help, def, sep, p.env())
	}
}

const helpOverview = `ballot runs a command on only one machine of a fleet, chosen by ZooKeeper leader election.

Usage:
  ballot [global flags] run once --candidate-id ID [flags] [-- command [args...]]
  ballot [global flags] run cron --candidate-id ID --schedule EXPR [flags] [-- command [args...]]
  ballot [global flags] run crontab --candidate-id ID [--check] [flags] FILE
  ballot [global flags] info [--verbose] [--output human|json]
  ballot [global flags] jobs [--output human|json]
  ballot [global flags] watch [--output human|json]
  ballot [global flags] leader [--wait DURATION] [--output human|json]
  ballot [global flags] history [--limit N] [--show-output] [--output human|json]
  ballot [global flags] check [--max-age DURATION] [--fail-critical]
  ballot [global flags] step-down [--candidate-id ID] [--wait DURATION]
  ballot [global flags] pause [--reason TEXT]
  ballot [global flags] resume
  ballot [global flags] trigger [--wait DURATION] [--output human|json]
  ballot [global flags] drain --candidate-id ID [--reason TEXT] [--until-reboot] [--wait DURATION]
  ballot [global flags] undrain --candidate-id ID (drain's undo)
  ballot version (or ballot --version, ballot -v)
  ballot help [command]
  ballot help --man
  ballot completion bash|zsh

Commands:
  run once  stand for election; run the command while leader
  run cron  stand for election; run the command on a schedule while leader
  run crontab  every job of a crontab file in one process, each its own election
  info      print the election's current leader and candidates
  jobs      print every election under the base path (a crontab's jobs), one line each
  watch     print the election's leader and candidates as they change
  leader    print the current leader's published data (--leader-data)
  history   print the runs of run cron and of --once-key jobs, newest first
  check     a monitoring plugin (Nagios, Icinga, Sensu): one line, exit 0-3
  step-down ask the leader to hand over to the next candidate
  pause     stop the election's command everywhere until resume; resume undoes it
  trigger   ask the leader of a run cron election to run its command now
  drain     keep a candidate out of the line (it never leads) until undrain
  undrain   let a drained candidate stand again
  version   print ballot's version
  help      print help; "ballot help run once" or "ballot run once --help" for a command;
            "ballot help --man": the man page (roff)
  completion print a shell's completion script (bash, zsh)

`

// helpText is the help for cmd: "" for the overview, "run", or a command.
func helpText(cmd string) string {
	var b strings.Builder
	switch cmd {
	case "":
		b.WriteString(helpOverview)
		flagHelp(&b, "Global flags (also accepted after the command)", scopeGlobal)
		b.WriteString("\n" + helpPrecedence + "\n" + helpExitCodes)
	case "run", cmdRunOnce, cmdRunCron:
		writeRunHelp(&b, cmd)
		b.WriteString("\n" + helpGlobalShort + "\n" + helpHooks + "\n" + helpPolicies + "\n" + helpPrecedence)
	case cmdRunCrontab:
		b.WriteString(helpCrontab + "\n")
		onLine := func(p *param) bool { return p.job && p.scope.usedBy(cmdRunCrontab) }
		flagHelpOf(&b, "Per-job flags (every job's default here; a job's line may give its own)", onLine)
		b.WriteString("\n")
		flagHelpOf(&b, "Process flags (the command line only: one session, one log, one candidate)", func(p *param) bool {
			return p.scope != scopeGlobal && p.scope.usedBy(cmdRunCrontab) && !p.job
		})
		b.WriteString("\n" + helpGlobalShort + "\n" + helpHooks + "\n" + helpPolicies + "\n" + helpPrecedence)
	case cmdInfo, cmdWatch:
		if cmd == cmdInfo {
			b.WriteString("ballot info: print the election's current leader and candidates, then exit\n(exit code 1 when there is no leader). The human output is a summary in 80\ncolumns; --verbose adds every detail.\n\n")
			b.WriteString("Usage:\n  ballot [global flags] info [--verbose] [--output human|json]\n\n")
			flagHelp(&b, "Flags", scopeInfo, scopeOutput)
		} else {
			b.WriteString("ballot watch: print the election's leader and candidates, and again each time\nthey change, until interrupted.\n\n")
			b.WriteString("Usage:\n  ballot [global flags] watch [--output human|json]\n\n")
			flagHelp(&b, "Flags", scopeOutput)
		}
		b.WriteString("\n" + helpGlobalShort + "\n" + helpPrecedence)
	case cmdJobs:
		b.WriteString("ballot jobs: print every election one level under the base path (the jobs of a\n" +
			"crontab, each at <base path>/<job>), one line each, sorted by name: its leader,\n" +
			"its last run (how it ended, when), its next run; then how many leaderships each\n" +
			"host holds. 80 columns. Exit 1 when there is no election under the base path.\n\n" +
			"--output json: an array, one object per job (the leader with its fencing token,\n" +
			"the last history entry, the next run, the candidates in line).\n\n" +
			"Usage:\n  ballot [global flags] jobs [--output human|json]\n\n")
		flagHelp(&b, "Flags", scopeOutput)
		b.WriteString("\n" + helpGlobalShort + "\n" + helpPrecedence)
	case cmdLeader:
		b.WriteString("ballot leader: print the current leader's published data (--leader-data of its\n" +
			"run) and exit 0, or exit 1 when no leader has acknowledged; --wait blocks up to\n" +
			"DURATION for one.\n\n" +
			"Usage:\n  ballot [global flags] leader [--wait DURATION] [--output human|json]\n\n")
		flagHelp(&b, "Flags", scopeLeader, scopeOutput)
		b.WriteString("\n" + helpGlobalShort + "\n" + helpPrecedence)
	case cmdHistory:
		fmt.Fprintf(&b, "ballot history: print the election's run history, newest first: every run of\n"+
			"run cron and of a --once-key job (scheduled time or key, candidate, host, fencing\n"+
			"token, start, duration, exit code, how it ended) and the scheduled times skipped,\n"+
			"as the leaders recorded them (the newest %d are kept).\n\n"+
			"Usage:\n  ballot [global flags] history [--limit N] [--show-output] [--output human|json]\n\n", historyKeep)
		flagHelp(&b, "Flags", scopeHistory, scopeOutput)
		b.WriteString("\n" + helpGlobalShort + "\n" + helpPrecedence)
	case cmdCheck:
		b.WriteString("ballot check: a monitoring plugin (Nagios, Icinga, Sensu): one status line with\n" +
			"perfdata after \"|\", and the exit code: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.\n" +
			"CRITICAL: no leader; no run succeeded within --max-age. WARNING: the last run\n" +
			"failed (CRITICAL with --fail-critical); the election is paused; the next leader\n" +
			"waits on a dropped baton. UNKNOWN: ZooKeeper cannot be read, the election does\n" +
			"not exist, it never ran and --max-age is not given, or a flag is wrong.\n\n" +
			"Usage:\n  ballot [global flags] check [--max-age DURATION] [--fail-critical]\n\n")
		flagHelp(&b, "Flags", scopeCheck)
		b.WriteString("\n" + helpGlobalShort + "\n" + helpPrecedence)
	case cmdStepDown:
		b.WriteString("ballot step-down: ask the leader (with --candidate-id, that candidate if it leads)\n" +
			"to hand over: it stops its command as on SIGTERM and stands again at the back of\n" +
			"the line. Exit 0 once asked (with --wait, once another candidate leads); 1 if\n" +
			"there is no leader, --candidate-id does not lead, no other candidate is in line,\n" +
			"or nobody else leads within --wait.\n\n" +
			"Usage:\n  ballot [global flags] step-down [--candidate-id ID] [--wait DURATION]\n\n")
		flagHelp(&b, "Flags", scopeCandidate, scopeLeader)
		b.WriteString("\n" + helpGlobalShort + "\n" + helpPrecedence)
	case cmdPause, cmdResume:
		b.WriteString("ballot pause: while an election is paused its leader runs nothing: run once stops\n" +
			"its command, run cron skips its scheduled times; candidates keep their places. The\n" +
			"pause lives in ZooKeeper and survives restarts. ballot resume ends it.\n\n" +
			"Usage:\n  ballot [global flags] pause [--reason TEXT]\n  ballot [global flags] resume\n\n")
		if cmd == cmdPause {
			flagHelp(&b, "Flags", scopePause)
		} else {
			b.WriteString("resume takes no flags but the global ones.\n")
		}
		b.WriteString("\n" + helpGlobalShort + "\n" + helpPrecedence)
	case cmdTrigger:
		b.WriteString("ballot trigger: ask the leader of a run cron election to run its command now, as\n" +
			"at a scheduled time: fenced, recorded in history (with who asked), under\n" +
			"--overlap and pause. A trigger while one is pending is the same run. Without a\n" +
			"leader the request waits for one, an hour at most. A writer, like pause.\n" +
			"Exit 0 once asked; with --wait, the run's exit code once it ends, or 1 if it was\n" +
			"skipped, not taken (the request is then withdrawn) or not over within --wait;\n" +
			"1 too, nothing written, if the candidates in line all run once.\n\n" +
			"--output json: one JSON object (the request, whether a leader was there, with\n" +
			"--wait the outcome and the run's history entry).\n\n" +
			"Usage:\n  ballot [global flags] trigger [--wait DURATION] [--output human|json]\n\n")
		flagHelp(&b, "Flags", scopeLeader, scopeOutput)
		b.WriteString("\n" + helpGlobalShort + "\n" + helpPrecedence)
	case cmdDrain, cmdUndrain:
		b.WriteString("ballot drain: take a candidate out of the running, from any host, until ballot\n" +
			"undrain (it survives restarts of that host and of ballot). A drained candidate\n" +
			"leaves the line and never leads; a drained leader hands over first, as on\n" +
			"step-down. Every candidate drained: nobody leads (info says so).\n" +
			"With --until-reboot the drain also ends when that candidate's host reboots.\n" +
			"drain exits 0 once stored (with --wait, once the candidate is out of the line),\n" +
			"1 if it is still in line after --wait, or with --until-reboot if the candidate\n" +
			"is not in line (its host's boot id is unknown; nothing written).\n\n" +
			"Usage:\n  ballot [global flags] drain --candidate-id ID [--reason TEXT] [--until-reboot] [--wait DURATION]\n" +
			"  ballot [global flags] undrain --candidate-id ID\n\n")
		if cmd == cmdDrain {
			flagHelp(&b, "Flags", scopeCandidate, scopePause, scopeDrain, scopeLeader)
		} else {
			flagHelp(&b, "Flags", scopeCandidate)
		}
		b.WriteString("\n" + helpGlobalShort + "\n" + helpPrecedence)
	case cmdVersion:
		b.WriteString("ballot version: print ballot's version.\n\nUsage:\n  ballot version\n  ballot --version\n  ballot -v\n")
	}
	return b.String()
}

// writeRunHelp is the part of run's help that differs between its modes.
func writeRunHelp(b *strings.Builder, cmd string) {
	switch cmd {
	case "run":
		b.WriteString("ballot run: stand for election and run a command while this machine is leader.\n\nUsage:\n" +
			"  ballot [global flags] run once --candidate-id ID [flags] [-- command [args...]]\n" +
			"  ballot [global flags] run cron --candidate-id ID --schedule EXPR [flags] [-- command [args...]]\n" +
			"  ballot [global flags] run crontab --candidate-id ID [--check] [flags] FILE\n\n")
	case cmdRunOnce:
		b.WriteString("ballot run once: stand for election and run the command while this machine is leader.\n\nUsage:\n" +
			"  ballot [global flags] run once --candidate-id ID [flags] [-- command [args...]]\n\n")
	case cmdRunCron:
		b.WriteString("ballot run cron: stand for election and, while this machine is leader,\nrun the command at the times of a cron schedule.\n\nUsage:\n" +
			"  ballot [global flags] run cron --candidate-id ID --schedule EXPR [flags] [-- command [args...]]\n\n")
	}
	b.WriteString("Everything after \"--\" is the command and its arguments. It may be left out\n" +
		"when --on-promote or --on-demote is set: ballot then holds leadership until stopped.\n\n")
	flagHelp(b, "Flags", scopeCandidate, scopeRun)
	if cmd != cmdRunCron {
		b.WriteString("\n")
		flagHelp(b, "Once flags (run once only)", scopeOnce)
	}
	if cmd != cmdRunOnce {
		b.WriteString("\n")
		flagHelp(b, "Cron flags (run cron only)", scopeSchedule, scopeCron)
	}
}

const helpCrontab = `ballot run crontab: run every job of a crontab FILE in one process. Each job is
an election of its own, <base path>/<name>, run as run cron would run it; all of
them share one ZooKeeper session.

Usage:
  ballot [global flags] run crontab --candidate-id ID [flags] FILE
  ballot [global flags] run crontab --check [flags] FILE

` + helpCrontabFile

// helpCrontabFile is the crontab file's format (also the man page's).
const helpCrontabFile = `The FILE: one job a line, NAME SCHEDULE [OPTIONS] COMMAND. Blank lines and
lines whose first non-blank character is # are ignored; a line ending in \
goes on on the next one.
  NAME      the job's election under the base path: letters, digits, ".", "_"
            and "-", starting with a letter or digit, at most 64 characters,
            unique in the file, none of ballot's own node names (baton, cron,
            history, ...) and not starting with drain-
  SCHEDULE  five fields (minute hour day-of-month month day-of-week, H allowed),
            an @word (@daily, @every 30s), or in quotes any form --schedule
            takes ("0 */30 * * * *": seconds first)
  OPTIONS   the job's own per-job flags: --flag value or --flag=value ('...'
            and "..." quote a value), up to "--" or the first word without "-"
  COMMAND   the rest of the line, run by /bin/sh -c as cron runs it; unlike
            cron, % is not special
  # NAME   SCHEDULE    OPTIONS                    COMMAND
  backup   0 3 * * *   --timeout 1h --retries 2   /usr/local/bin/backup --all
  report   @daily                                 /usr/local/bin/report > /tmp/r 2>&1
Without FILE, the jobs are the config file's "jobs" (docs/cron.md). The
command line's per-job flags are every job's defaults; a job's own option wins.
A bad line is one error naming FILE:LINE, and nothing starts. --check prints
one line a job (name, schedule, next run, command) without connecting. SIGHUP
reloads FILE.
`
