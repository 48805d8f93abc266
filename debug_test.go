package main

// --debug: each parameter's value and where it came from, secrets redacted.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDebugLogsValues(t *testing.T) {
	configTestEnv(t, nil)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ballot.json")
	if err := os.WriteFile(cfg, []byte(`{"health-check": ["curl", "-fsS", "https://mon:s3cret@localhost/health"], "slots": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := parseIn(dir, a("--debug", "--zookeeper-servers", "zk1,zk2", "run", "once", "--candidate-id", "c1",
		"--leader-data", "http://app:hunter2@db1:8080/x", "--on-promote", "/bin/promote --password hunter3 --role=primary",
		"--on-demote", "env API_TOKEN=hunter4 /bin/demote", "--", "x"),
		map[string]string{"BALLOT_CONFIG_FILE": cfg, "BALLOT_TIMEOUT": "1m"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	logSources(newLogger(&b, "human", LevelTrace), s)
	out := b.String()
	for _, w := range []string{
		"parameter name=candidate-id from=flag value=c1",
		"parameter name=zookeeper-servers from=flag value=zk1,zk2",
		`parameter name=timeout from="environment BALLOT_TIMEOUT" value=1m`,
		`parameter name=slots from="config file ` + cfg + `" value=2`,
		"parameter name=stop-grace-period from=default value=10s",
		`parameter name=wait-timeout from=default value="none`,
		"parameter name=zookeeper-acl from=default value=open",
		`value=http://app:xxxxx@db1:8080/x`,
		`value="/bin/promote --password xxxxx --role=primary"`,
		`https://mon:xxxxx@localhost/health`,
		`API_TOKEN=xxxxx /bin/demote`,
		"configuration file read path=" + cfg,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("--debug log lacks %q:\n%s", w, out)
		}
	}
	for _, secret := range []string{"hunter2", "hunter3", "hunter4", "s3cret"} {
		if strings.Contains(out, secret) {
			t.Errorf("--debug log shows the secret %q:\n%s", secret, out)
		}
	}
}

func TestRedactValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"localhost:2181,zk2:2181/app", "localhost:2181,zk2:2181/app"},
		{"http://user:pw@host/p", "http://user:xxxxx@host/p"},
		{"http://user@host/p", "http://user@host/p"},
		{"@/etc/ballot/leader-data", "@/etc/ballot/leader-data"},
		{"--password=pw -x", "--password=xxxxx -x"},
		{`["cmd","--secret","pw"]`, `["cmd","--secret","xxxxx"]`},
		{"DB_PASSWORD=pw cmd", "DB_PASSWORD=xxxxx cmd"},
	}
	for _, tt := range tests {
		if got := redactValue(tt.in); got != tt.want {
			t.Errorf("redactValue(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
