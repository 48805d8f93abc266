package main

// Waiting for ballot's log events (events.go) by their attributes, not by
// the wording of the messages beside them; and the checks that keep the
// events an API: every format carries them, docs/operating.md lists them all.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
	"time"

	"ballot/internal/slog"
)

// WaitEvent waits until ballot logs ev with every attribute of kv ("key",
// "value", ...) as given; "level" and "msg" match the line's level and
// message. It returns the line's attributes.
func (p *ballotProc) WaitEvent(ev logEvent, timeout time.Duration, kv ...string) map[string]string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if found := p.Events(ev, kv...); len(found) > 0 {
			return found[0]
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("ballot %s did not log event=%s %v within %s", p.name, ev, kv, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Events are the attributes of every line ballot logged so far with ev
// and kv, in order.
func (p *ballotProc) Events(ev logEvent, kv ...string) []map[string]string {
	var found []map[string]string
	out := p.out.String()
	out = out[:strings.LastIndexByte(out, '\n')+1] // whole lines only
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "event") {
			continue
		}
		attrs, ok := parseLogLine(line)
		if !ok || attrs["event"] != string(ev) {
			continue
		}
		match := true
		for i := 0; i+1 < len(kv); i += 2 {
			match = match && attrs[kv[i]] == kv[i+1]
		}
		if match {
			found = append(found, attrs)
		}
	}
	return found
}

// eventPid is the pid attribute of the last line of p's log with ev and
// kv.
func eventPid(t testing.TB, p *ballotProc, ev logEvent, kv ...string) int {
	t.Helper()
	found := p.Events(ev, kv...)
	if len(found) == 0 {
		t.Fatalf("ballot %s did not log event=%s %v", p.name, ev, kv)
	}
	pid, err := strconv.Atoi(found[len(found)-1]["pid"])
	if err != nil {
		t.Fatalf("ballot %s: event=%s without a pid: %v", p.name, ev, found[len(found)-1])
	}
	return pid
}

// parseLogLine reads one line of ballot's log, human or JSON, into its
// attributes, with "time", "level" and "msg". ok is false for a line that
// is not one of ballot's (a command's own output, watch's JSON).
func parseLogLine(line string) (attrs map[string]string, ok bool) {
	if strings.HasPrefix(line, "{") {
		return parseJSONLine(line)
	}
	// human: "<time> <LEVEL, padded to 5> <message>[ key=value]..."
	ts, rest, _ := strings.Cut(line, " ")
	if _, err := time.Parse("2006-01-02T15:04:05.000Z07:00", ts); err != nil || len(rest) < 6 || rest[5] != ' ' {
		return nil, false
	}
	level := strings.TrimSpace(rest[:5])
	switch level {
	case "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "PANIC":
	default:
		return nil, false
	}
	rest = rest[6:]
	// The message is free text; the attributes are the longest tail of
	// " key=value" pairs (values with a space or quote are Go-quoted).
	for i := 0; i <= len(rest); i++ {
		if i < len(rest) && rest[i] != ' ' {
			continue
		}
		if a, ok := parseAttrs(rest[i:]); ok {
			a["time"], a["level"], a["msg"] = ts, level, rest[:i]
			return a, true
		}
	}
	return nil, false
}

// parseAttrs parses s as a whole as " key=value" pairs.
func parseAttrs(s string) (map[string]string, bool) {
	a := map[string]string{}
	for s != "" {
		if s[0] != ' ' {
			return nil, false
		}
		key, rest, found := strings.Cut(s[1:], "=")
		if !found || key == "" || strings.ContainsAny(key, " \"") {
			return nil, false
		}
		var v string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return nil, false
			}
			v, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		} else {
			v = rest
			if i := strings.IndexByte(rest, ' '); i >= 0 {
				v = rest[:i]
			}
			rest = rest[len(v):]
		}
		a[key] = v
		s = rest
	}
	return a, true
}

func parseJSONLine(line string) (map[string]string, bool) {
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	var raw map[string]any
	if err := d.Decode(&raw); err != nil {
		return nil, false
	}
	if _, ok := raw["msg"].(string); !ok {
		return nil, false
	}
	if _, ok := raw["level"].(string); !ok {
		return nil, false
	}
	a := map[string]string{}
	for k, v := range raw {
		switch v := v.(type) {
		case string:
			a[k] = v
		case json.Number:
			a[k] = v.String()
		default:
			b, _ := json.Marshal(v)
			a[k] = string(b)
		}
	}
	return a, true
}

// TestLogEventsParse: an event logged in the human and JSON formats reads
// back with its attributes, whatever the message says; raw carries none.
func TestLogEventsParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  func(*slog.Logger)
		want map[string]string
	}{
		{"plain", func(l *slog.Logger) {
			l.Info("elected leader", logEvElected.attr(), "proposal", "/b/_c_x-proposal-0000000007", "fencing_token", 7, "lease_left", 1746*time.Millisecond)
		}, map[string]string{"level": "INFO", "msg": "elected leader", "event": "elected", "proposal": "/b/_c_x-proposal-0000000007", "fencing_token": "7"}},
		{"quoted values and a message with = and quotes", func(l *slog.Logger) {
			l.Warn(`cannot join: "a=b" failed`, logEvJoinRetry.attr(), "error", `dial "zk1:2181": refused`, "empty", "")
		}, map[string]string{"level": "WARN", "msg": `cannot join: "a=b" failed`, "event": "join-retry", "error": `dial "zk1:2181": refused`, "empty": ""}},
		{"an attribute from With comes first", func(l *slog.Logger) {
			l.With("keeper_pid", 42).Info("on-demote hook started", logEvHookStarted.attr(), "hook", "on-demote", "pid", 43)
		}, map[string]string{"msg": "on-demote hook started", "event": "hook-started", "hook": "on-demote", "keeper_pid": "42", "pid": "43"}},
		{"debug", func(l *slog.Logger) {
			l.Debug("a keeper stands by for the next command", logEvKeeperReady.attr())
		}, map[string]string{"level": "DEBUG", "event": "keeper-ready"}},
	} {
		for _, format := range []string{"human", "json"} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				var b bytes.Buffer
				tc.log(newLogger(&b, format, slog.LevelDebug))
				got, ok := parseLogLine(strings.TrimSuffix(b.String(), "\n"))
				if !ok {
					t.Fatalf("not read as a log line: %q", b.String())
				}
				for k, v := range tc.want {
					if got[k] != v {
						t.Errorf("%s = %q, want %q (line %q)", k, got[k], v, b.String())
					}
				}
			})
		}
	}
	t.Run("not a log line", func(t *testing.T) {
		for _, line := range []string{"", "tick 5 123", `{"event":"noCandidates"}`, "event=elected",
			"2026-11-24T07:05:21.000Z INFO  "} {
			if a, ok := parseLogLine(line); ok && a["event"] != "" {
				t.Errorf("%q read as event %q", line, a["event"])
			}
		}
	})
	t.Run("raw has no attributes", func(t *testing.T) {
		var b bytes.Buffer
		newLogger(&b, "raw", slog.LevelInfo).Info("elected leader", logEvElected.attr())
		if b.String() != "elected leader\n" {
			t.Errorf("raw line %q", b.String())
		}
	})
}

// TestLogEventsDocumented: the events are an API; the table of "Log
// events" (docs/operating.md) lists every one, and no two share a name.
func TestLogEventsDocumented(t *testing.T) {
	section := section(t, readme(t), "### Log events")
	names := logEventNames(t)
	if len(names) < 20 {
		t.Fatalf("found %d events in events.go", len(names))
	}
	seen := map[string]string{}
	for c, name := range names {
		if other := seen[name]; other != "" {
			t.Errorf("%s and %s are both %q", c, other, name)
		}
		seen[name] = c
		if !strings.Contains(section, "| `"+name+"` |") {
			t.Errorf("\"Log events\" does not list %q (%s)", name, c)
		}
	}
}

// logEventNames are the logEvent constants of events.go, by name.
func logEventNames(t *testing.T) map[string]string {
	f, err := parser.ParseFile(token.NewFileSet(), "events.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || fmt.Sprint(vs.Type) != "logEvent" {
			return true
		}
		for i, id := range vs.Names {
			v, err := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
			if err != nil {
				t.Fatal(err)
			}
			names[id.Name] = v
		}
		return true
	})
	return names
}

// TestPhaseEvent: each change of phase is one debug line, event=phase, with
// the phase and the one before as values; entering the same phase again
// logs nothing.
func TestPhaseEvent(t *testing.T) {
	var b bytes.Buffer
	r := &runner{log: newLogger(&b, "json", slog.LevelDebug)}
	for _, p := range []phase{phaseJoining, phaseFollowing, phaseFollowing, phaseLeading} {
		r.enter(p)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		a, ok := parseLogLine(line)
		if !ok || a["event"] != string(logEvPhase) || a["level"] != "DEBUG" {
			t.Fatalf("not a phase event: %q", line)
		}
		got = append(got, a["was"]+">"+a["phase"])
	}
	if want := []string{">joining", "joining>following", "following>leading"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("phase events %v, want %v", got, want)
	}
}
