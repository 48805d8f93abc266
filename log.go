package main

// ballot's own log: slog with the human, JSON and raw formats, and the
// levels ballot names (trace, fatal, panic) beyond slog's.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// levelName spells the extra levels the way operators type them.
func levelName(l slog.Level) string {
	switch {
	case l < slog.LevelDebug:
		return "TRACE"
	case l < slog.LevelInfo:
		return "DEBUG"
	case l < slog.LevelWarn:
		return "INFO"
	case l < slog.LevelError:
		return "WARN"
	case l < LevelFatal:
		return "ERROR"
	case l < LevelPanic:
		return "FATAL"
	default:
		return "PANIC"
	}
}

// newLogger builds the process logger for a format: human, json or raw.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	mu := &sync.Mutex{}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(&lockedWriter{mu: mu, w: w}, &slog.HandlerOptions{
			Level: level,
			ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
				if len(groups) == 0 && a.Key == slog.LevelKey {
					return slog.String(slog.LevelKey, levelName(a.Value.Any().(slog.Level)))
				}
				return a
			},
		}))
	case "raw":
		return slog.New(&lineHandler{mu: mu, w: w, level: level, raw: true})
	default:
		return slog.New(&lineHandler{mu: mu, w: w, level: level})
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lineHandler writes "time LEVEL message key=value ..." (human) or just the
// message (raw), one line per record.
type lineHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Level
	raw   bool
	attrs []slog.Attr
	group string
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	if h.raw {
		b.WriteString(r.Message)
	} else {
		t := r.Time
		if t.IsZero() {
			t = time.Now()
		}
		b.WriteString(t.Format("2006-01-02T15:04:05.000Z07:00"))
		b.WriteByte(' ')
		b.WriteString(fmt.Sprintf("%-5s", levelName(r.Level)))
		b.WriteByte(' ')
		b.WriteString(r.Message)
		for _, a := range h.attrs {
			writeAttr(&b, "", a)
		}
		r.Attrs(func(a slog.Attr) bool {
			writeAttr(&b, h.group, a)
			return true
		})
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func writeAttr(b *strings.Builder, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	key := a.Key
	if prefix != "" {
		key = prefix + "." + key
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, g := range a.Value.Group() {
			writeAttr(b, key, g)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(key)
	b.WriteByte('=')
	var s string
	switch a.Value.Kind() {
	case slog.KindDuration:
		s = a.Value.Duration().String()
	case slog.KindTime:
		s = a.Value.Time().Format(time.RFC3339Nano)
	default:
		s = a.Value.String()
	}
	if s == "" || strings.ContainsAny(s, " \"=\t\n") {
		s = strconv.Quote(s)
	}
	b.WriteString(s)
}

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	return &n
}

func (h *lineHandler) WithGroup(name string) slog.Handler {
	n := *h
	if n.group != "" {
		name = n.group + "." + name
	}
	n.group = name
	return &n
}
