package main

// The config file: ballot.json.example parses, the default paths, and
// the defaults are valid settings.

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

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
		if _, ok := cfg.values[p.name]; !ok && p.name != "config-file" && p.name != "once-key" {
			t.Errorf("ballot.json.example lacks key %q", p.name)
		}
	}
	configTestEnv(t, nil)
	env := map[string]string{"BALLOT_CONFIG_FILE": example}
	for _, args := range [][]string{a("run", "once", "--", "x"), a("run", "cron", "--", "x"), a("run", "once"), a("info"), a("watch"), a("leader"), a("history"), a("check")} {
		s, err := parseIn("", args, env)
		if err != nil {
			t.Fatalf("%q with CONFIG_FILE=%s: %v", args, example, err)
		}
		if s.ConfigFile != example {
			t.Errorf("ConfigFile = %q", s.ConfigFile)
		}
		for name, src := range s.Sources {
			if name != "config-file" && name != "once-key" && src != "config file "+example {
				t.Errorf("%q: Sources[%q] = %q", args, name, src)
			}
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
