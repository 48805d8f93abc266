package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	stdslog "log/slog"
	"strings"
	"testing"
	"time"

	"ballot/internal/slog"
)

func TestLevelName(t *testing.T) {
	for _, c := range []struct {
		l    slog.Level
		want string
	}{
		{LevelTrace, "TRACE"}, {slog.LevelDebug - 1, "TRACE"}, {slog.LevelDebug, "DEBUG"}, {slog.LevelInfo, "INFO"},
		{slog.LevelWarn, "WARN"}, {slog.LevelError, "ERROR"}, {LevelFatal - 1, "ERROR"}, {LevelFatal, "FATAL"},
		{LevelPanic, "PANIC"}, {LevelPanic + 4, "PANIC"},
	} {
		if got := levelName(c.l); got != c.want {
			t.Errorf("levelName(%d) = %s, want %s", c.l, got, c.want)
		}
	}
}

// TestLogLineFormats: an event line as operators and the e2e tests read
// it, in each format: the event attribute, the level names ballot adds,
// quoting only where a value needs it, groups as dotted keys.
func TestLogLineFormats(t *testing.T) {
	at := time.Date(2026, 11, 24, 10, 0, 0, 123e6, time.UTC)
	attrs := []slog.Attr{logEvElected.attr(), slog.Int64("fencing_token", 7), slog.Duration("lease_left", 1500*time.Millisecond),
		slog.String("reason", "two words"), slog.String("empty", ""), slog.Group("zk", slog.String("server", "a:2181"))}
	for _, c := range []struct {
		format string
		with   func(*slog.Logger) *slog.Logger
		want   string
	}{
		{"human", nil, `2026-11-24T10:00:00.123Z FATAL elected event=elected fencing_token=7 lease_left=1.5s reason="two words" empty="" zk.server=a:2181` + "\n"},
		{"human", func(l *slog.Logger) *slog.Logger { return l.With("candidate", "a").WithGroup("g") },
			`2026-11-24T10:00:00.123Z FATAL elected candidate=a g.event=elected g.fencing_token=7 g.lease_left=1.5s g.reason="two words" g.empty="" g.zk.server=a:2181` + "\n"},
		{"raw", nil, "elected\n"},
	} {
		var b bytes.Buffer
		l := newLogger(&b, c.format, LevelTrace)
		if c.with != nil {
			l = c.with(l)
		}
		r := slog.NewRecord(at, LevelFatal, "elected", 0)
		r.AddAttrs(attrs...)
		if err := l.Handler().Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.format, b.String(), c.want)
		}
	}

	var b bytes.Buffer
	newLogger(&b, "json", LevelTrace).Log(context.Background(), LevelTrace, "elected", logEvElected.attr(), "fencing_token", 7)
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("json line %q: %v", b.String(), err)
	}
	if got["level"] != "TRACE" || got["msg"] != "elected" || got["event"] != "elected" || got["fencing_token"] != 7.0 {
		t.Errorf("json line: %q", b.String())
	}
	if a, ok := parseLogLine(strings.TrimSpace(b.String())); !ok || a["event"] != "elected" {
		t.Errorf("the e2e tests' reader does not find the event in %q: %v", b.String(), a)
	}
	b.Reset()
	newLogger(&b, "human", slog.LevelInfo).Debug("hidden")
	if b.Len() != 0 {
		t.Errorf("a debug line at level info: %q", b.String())
	}
}

// stallingWriter blocks its first Write until released, as a full pipe
// or a stuck journal would.
type stallingWriter struct {
	stalled chan struct{} // closed once a Write is blocked
	release chan struct{}
	out     syncBuffer
	first   bool
}

func newStallingWriter() *stallingWriter {
	return &stallingWriter{stalled: make(chan struct{}), release: make(chan struct{}), first: true}
}

func (w *stallingWriter) Write(p []byte) (int, error) {
	if w.first { // only the pipe's goroutine writes
		w.first = false
		close(w.stalled)
		<-w.release
	}
	return w.out.Write(p)
}

// TestLogPipeNeverBlocks: while the reader is stalled, log writes return
// at once and queue up to logPipeMax; past it lines are dropped and
// counted; once the reader moves again the queued lines come out in order
// followed by one line saying how many were lost.
func TestLogPipeNeverBlocks(t *testing.T) {
	w := newStallingWriter()
	p := newLogPipe(w)
	fmt.Fprint(p, "first\n")
	<-w.stalled
	line := func(i int) []byte { // 1 KiB: logPipeMax holds exactly logPipeMax/1024 of them
		s := fmt.Sprintf("line %d ", i)
		return []byte(s + strings.Repeat("x", 1023-len(s)) + "\n")
	}
	const fits, dropped = logPipeMax / 1024, 5
	for i := range fits + dropped {
		if n, err := p.Write(line(i)); n != 1024 || err != nil { // a blocked Write would hang the test here
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	close(w.release)
	for !strings.Contains(w.out.String(), "dropped") { // the queue drained
		time.Sleep(time.Millisecond)
	}
	fmt.Fprint(p, "after\n") // the loss was reported once, not again
	p.Close(time.Minute)     // returns as soon as all is written
	var want strings.Builder
	want.WriteString("first\n")
	for i := range fits {
		want.Write(line(i))
	}
	want.WriteString("ballot: 5 log lines dropped: their reader did not keep up\n")
	want.WriteString("after\n")
	if got := w.out.String(); got != want.String() {
		t.Errorf("got %d bytes, want %d; the end: %q", len(got), want.Len(), got[max(0, len(got)-200):])
	}
}

// TestLogPipeCloseStalled: Close gives up on a reader that never moves.
func TestLogPipeCloseStalled(t *testing.T) {
	w := newStallingWriter()
	defer close(w.release)
	p := newLogPipe(w)
	fmt.Fprint(p, "stuck\n")
	<-w.stalled
	p.Close(time.Millisecond) // the test hangs if Close waits for the reader
}

// TestLogJSONAsSlog: --log-format json writes the lines
// slog.NewJSONHandler wrote (with ballot's level names), for every kind
// of value ballot logs and the strings that need escaping.
func TestLogJSONAsSlog(t *testing.T) {
	var std, ours bytes.Buffer
	stdH := stdslog.Handler(stdslog.NewJSONHandler(&std, &stdslog.HandlerOptions{
		Level: stdslog.Level(LevelTrace),
		ReplaceAttr: func(groups []string, a stdslog.Attr) stdslog.Attr {
			if len(groups) == 0 && a.Key == stdslog.LevelKey {
				return stdslog.String(stdslog.LevelKey, levelName(slog.Level(a.Value.Any().(stdslog.Level))))
			}
			return a
		},
	}))
	ourH := newLogger(&ours, "json", LevelTrace).Handler()
	at := time.Date(2026, 11, 26, 6, 15, 0, 123456789, time.FixedZone("", 3600))
	type acl string
	attrs := [][]any{
		nil,
		{logEvElected.attr(), "fencing_token", int64(7), "slot", 2, "pid", uint64(1 << 63)},
		{"error", errors.New(`zk: "quoted" <b>&amp; \ line` + "\n\t\x00\x08\x0c\x7f\xff\u2028é")},
		{"error", error(nil), "nothing", nil, "ok", true, "no", false},
		{"duration", 1500 * time.Millisecond, "at", at, "at_utc", at.UTC(), "zero", time.Time{}},
		{"zookeeper", []string{"zk1:2181", "zk<2>&"}, "empty", []string{}, "none", []string(nil)},
		{"zookeeper_acl", acl("creator"), "policy", childPolicy("restart")},
		{slog.Group("g", "a", 1, "b", "x"), slog.Group("empty"), slog.Group("", "inline", 1), slog.Group("outer", slog.Group("inner")), slog.Attr{}, "", "empty key"},
		{"small", int8(-3), "u16", uint16(7), "i32", int32(-9), "u", uint(3), "ptr", uintptr(4)},
		{"value", "a lone key"}, {"x", 1, 42, "after a number key"}, // log/slog's !BADKEY
		{"dup", 1, "dup", 2, "msg", "a key named msg", "time", "and time"}, // not "level": the old ReplaceAttr panicked on it
	}
	msgs := []string{"elected leader", "", "quote \" and \\ and <tag> and \x01"}
	handlers := []struct {
		name string
		std  func(stdslog.Handler) stdslog.Handler
		ours func(slog.Handler) slog.Handler
	}{
		{"plain", func(h stdslog.Handler) stdslog.Handler { return h }, func(h slog.Handler) slog.Handler { return h }},
		{"with", func(h stdslog.Handler) stdslog.Handler {
			return h.WithAttrs([]stdslog.Attr{stdslog.String("job", "backup")})
		},
			func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.String("job", "backup")}) }},
		{"group", func(h stdslog.Handler) stdslog.Handler { return h.WithGroup("grp") },
			func(h slog.Handler) slog.Handler { return h.WithGroup("grp") }},
		{"group with", func(h stdslog.Handler) stdslog.Handler {
			return h.WithGroup("g1").WithAttrs([]stdslog.Attr{stdslog.Int("n", 1)}).WithGroup("g2")
		}, func(h slog.Handler) slog.Handler {
			return h.WithGroup("g1").WithAttrs([]slog.Attr{slog.Int("n", 1)}).WithGroup("g2")
		}},
		{"with nothing", func(h stdslog.Handler) stdslog.Handler { return h.WithAttrs([]stdslog.Attr{stdslog.Group("e")}) },
			func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.Group("e")}) }},
	}
	levels := []slog.Level{LevelTrace, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, LevelFatal, LevelPanic}
	for _, hs := range handlers {
		a, b := hs.std(stdH), hs.ours(ourH)
		for i, as := range attrs {
			for _, tm := range []time.Time{at, {}} {
				r := slog.NewRecord(tm, levels[i%len(levels)], msgs[i%len(msgs)], 0)
				r.Add(as...)
				sr := stdslog.NewRecord(tm, stdslog.Level(levels[i%len(levels)]), msgs[i%len(msgs)], 0)
				sr.Add(toStdArgs(as)...)
				std.Reset()
				ours.Reset()
				if err := a.Handle(context.Background(), sr); err != nil {
					t.Fatal(err)
				}
				if err := b.Handle(context.Background(), r); err != nil {
					t.Fatal(err)
				}
				if std.String() != ours.String() {
					t.Errorf("%s, attrs %d:\n slog: %s ours: %s", hs.name, i, std.String(), ours.String())
				}
			}
		}
	}
}

// toStdArgs is args with ballot's slog.Attrs made log/slog's.
func toStdArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if at, ok := a.(slog.Attr); ok {
			a = toStdAttr(at)
		}
		out[i] = a
	}
	return out
}

func toStdAttr(a slog.Attr) stdslog.Attr {
	v := a.Value
	switch v.Kind() {
	case slog.KindGroup:
		var g []stdslog.Attr
		for _, x := range v.Group() {
			g = append(g, toStdAttr(x))
		}
		return stdslog.Attr{Key: a.Key, Value: stdslog.GroupValue(g...)}
	case slog.KindString:
		return stdslog.String(a.Key, v.String())
	case slog.KindInt64:
		return stdslog.Int64(a.Key, v.Int64())
	case slog.KindDuration:
		return stdslog.Duration(a.Key, v.Duration())
	case slog.KindAny:
		if v.Any() == nil && a.Key == "" {
			return stdslog.Attr{}
		}
	}
	return stdslog.Any(a.Key, v.Any())
}
