package main

// Help: every flag of the parameter table is in the help text.

import (
	"errors"
	"strings"
	"testing"
)

func TestParseCommandLineHelp(t *testing.T) {
	tests := []struct {
		args []string
		want []string // substrings of the help text
	}{
		{a("help"), a("leader election", "run once", "info", "Exit codes", "125", "127", "ZOOKEEPER_SERVERS", "localhost:2181")},
		{a("--help"), a("Global flags", "A flag beats the")},
		{a("-h"), a("Commands:")},
		{a("--debug", "help", "help"), a("Commands:")},
		{a("help", "run"), a("run once", "run cron", "--schedule", "--candidate-id", "Policies")},
		{a("run", "--help"), a("run once", "run cron")},
		{a("help", "run", "once"), a("--candidate-id", "BALLOT_CANDIDATE_ID", "--on-child-success", "reelect", "--stop-grace-period", "10s", "BALLOT_STOP_GRACE_PERIOD", "--wrap-child-logs", "Policies")},
		{a("run", "once", "--help"), a("ballot run once")},
		{a("run", "once", "-h", "--", "x"), a("ballot run once")},
		{a("run", "once", "--log-level", "loud", "--help"), a("ballot run once")},
		{a("help", "run", "cron"), a("--schedule", "BALLOT_SCHEDULE", "--timezone", "UTC", "BALLOT_TIMEZONE", "--starting-deadline", "--timeout", "BALLOT_TIMEOUT")},
		{a("run", "cron", "-help"), a("ballot run cron")},
		{a("info", "--help"), a("ballot info", "--output", "human", "BALLOT_OUTPUT", "exit code 1")},
		{a("help", "watch"), a("ballot watch", "--output")},
		{a("watch", "-h"), a("ballot watch")},
		{a("help", "version"), a("ballot version")},
		{a("help"), a("leader", "published data", "no leader has acknowledged")},
		{a("help", "leader"), a("ballot leader", "--wait DURATION", "BALLOT_WAIT", "default: 0", "--output", "BALLOT_OUTPUT", "exit 1", "--zookeeper-servers")},
		{a("leader", "--help"), a("ballot leader")},
		{a("leader", "--wait", "-1s", "-h"), a("ballot leader")},
		{a("help", "run", "once"), a("--on-promote COMMAND", "BALLOT_ON_PROMOTE", "default: none", "--on-demote", "--hook-timeout", "30s",
			"--leader-data", "@@", "512 KiB", "--health-check", "--health-interval", "--health-timeout", "--health-failures N", "default: 3",
			"Hooks:", "without a shell", "may be left out", "before the session can expire", "network partition")},
		{a("help", "run", "cron"), a("less than this late", "missed times are skipped and logged", "resign after each run", "next scheduled time")},
		{a("version", "--help"), a("ballot version")},
		{a("completion", "--help"), a("ballot completion bash|zsh")},
		{a("help", "completion"), a("ballot completion bash|zsh")},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			configTestEnv(t, nil)
			_, err := parseIn("", tt.args, nil)
			var h *helpRequested
			if !errors.As(err, &h) {
				t.Fatalf("error = %v, want *helpRequested", err)
			}
			for i, line := range strings.Split(h.text, "\n") {
				if len(line) > 100 {
					t.Errorf("help line %d is %d characters: %q", i+1, len(line), line)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(h.text, w) {
					t.Errorf("help text does not contain %q:\n%s", w, h.text)
				}
			}
			if cmd := strings.Join(tt.args, " "); !strings.Contains(cmd, "run") && strings.Contains(h.text, "--candidate-id ID\n") {
				t.Errorf("help for %q lists run flags", cmd)
			}
		})
	}
}

// TestParseHelpListsEveryFlag checks the help texts against the parameter table.
func TestParseHelpListsEveryFlag(t *testing.T) {
	texts := map[string]string{"": helpText(""), "run once": helpText(cmdRunOnce), "run cron": helpText(cmdRunCron), "run crontab": helpText(cmdRunCrontab),
		"info": helpText(cmdInfo), "watch": helpText(cmdWatch), "leader": helpText(cmdLeader),
		"history": helpText(cmdHistory), "check": helpText(cmdCheck)}
	for _, p := range params {
		for cmd, text := range texts {
			if cmd == "" && p.scope != scopeGlobal || cmd != "" && (p.scope == scopeGlobal || !p.scope.usedBy(cmd)) {
				continue
			}
			if !strings.Contains(text, "--"+p.name) || !strings.Contains(text, "env "+p.env()) {
				t.Errorf("help for %q lacks --%s or env %s", cmd, p.name, p.env())
			}
			def := strings.SplitN(p.def, "\n", 2)[0]
			if p.opt {
				def = "none"
			}
			if p.shown != "" {
				def = strings.SplitN(p.shown, "\n", 2)[0]
			}
			if !p.req && !strings.Contains(text, "default: "+def) {
				t.Errorf("help for %q lacks the default of --%s", cmd, p.name)
			}
			if line := strings.TrimSpace("--" + p.name + " " + p.arg); !strings.Contains(text, "  "+line+"\n") {
				t.Errorf("help for %q lacks the line %q", cmd, line)
			}
		}
	}
}
