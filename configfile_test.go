package main

// The config file: ballot.json.example parses, the default paths, and
// the defaults are valid settings.

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestConfigExampleParses: ballot.json.example is a safe start, copied as
// it is: it parses, it holds every parameter that has a default, at its
// default, and nothing else (no servers, TLS files, waits or reasons of
// an example setup), so every command parses it to the settings it has
// without it.
func TestConfigExampleParses(t *testing.T) {
	example, err := filepath.Abs("ballot.json.example")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig(example, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range params {
		_, ok := cfg.values[p.name]
		switch hasDef := !p.req && !p.opt && p.name != "config-file"; {
		case hasDef && !ok:
			t.Errorf("ballot.json.example lacks key %q (default %q)", p.name, p.def)
		case !hasDef && ok:
			t.Errorf("ballot.json.example sets %q, which has no default: not a safe start", p.name)
		}
	}
	configTestEnv(t, nil)
	with := map[string]string{"BALLOT_CONFIG_FILE": example}
	without := map[string]string{"BALLOT_CONFIG_FILE": filepath.Join(t.TempDir(), "empty.json")}
	if err := os.WriteFile(without["BALLOT_CONFIG_FILE"], []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{a("run", "once", "--candidate-id", "a", "--", "x"),
		a("run", "cron", "--candidate-id", "a", "--schedule", "@daily", "--", "x"),
		a("info"), a("watch"), a("leader"), a("history"), a("check"), a("step-down"), a("pause"), a("resume")} {
		s, err := parseIn("", args, with)
		if err != nil {
			t.Fatalf("%q with BALLOT_CONFIG_FILE=%s: %v", args, example, err)
		}
		if s.ConfigFile != example {
			t.Errorf("ConfigFile = %q", s.ConfigFile)
		}
		for name, src := range s.Sources {
			_, inFile := cfg.values[name]
			if inFile && src != "config file "+example {
				t.Errorf("%q: Sources[%q] = %q", args, name, src)
			}
		}
		d, err := parseIn("", args, without)
		if err != nil {
			t.Fatalf("%q without a config file: %v", args, err)
		}
		s.Sources, s.Values, s.ConfigFile = nil, nil, ""
		d.Sources, d.Values, d.ConfigFile = nil, nil, ""
		if !reflect.DeepEqual(s, d) {
			t.Errorf("%q: ballot.json.example changes the settings:\nwith    %+v\nwithout %+v", args, s, d)
		}
	}
}

func TestConfigDefaultPaths(t *testing.T) {
	got := defaultConfigPaths("/home/u")
	want := a("/home/u/.config/ballot/ballot.json", "/etc/ballot/ballot.json", "./ballot.json")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaultConfigPaths = %q, want %q", got, want)
	}
	if got := defaultConfigPaths(""); !reflect.DeepEqual(got, want[1:]) {
		t.Errorf("defaultConfigPaths without HOME = %q", got)
	}
}

func TestConfigDefaultsAreValid(t *testing.T) {
	for _, p := range params {
		if p.apply == nil || p.req || p.opt {
			if p.opt && p.def != "" {
				t.Errorf("%s is optional but has default %q", p.name, p.def)
			}
			continue
		}
		var s Settings
		if err := p.apply(&s, p.def); err != nil {
			t.Errorf("default %q of %s: %v", p.def, p.name, err)
		}
	}
}
