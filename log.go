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

// logPipeMax is how much log output may wait for a stalled reader: a few
// minutes of a busy ballot's lines. Past it, lines are dropped and counted.
const logPipeMax = 4 << 20

// logPipe hands log lines to a goroutine that writes them, so that a log
// call never blocks: a reader that stalls (a full pipe, a stuck journal)
// must not stall the supervision of the command, which logs as it acts.
// What cannot wait is dropped, and the count is written once writes go
// through again.
type logPipe struct {
	w    io.Writer
	mu   sync.Mutex
	buf  [][]byte
	size int
	lost int
	wake chan struct{}
	quit chan struct{}
	done chan struct{}
}

func newLogPipe(w io.Writer) *logPipe {
	p := &logPipe{w: w, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go p.loop()
	return p
}

func (p *logPipe) Write(b []byte) (int, error) {
	p.mu.Lock()
	if p.size+len(b) > logPipeMax {
		p.lost++
	} else {
		p.buf = append(p.buf, append([]byte(nil), b...))
		p.size += len(b)
	}
	p.mu.Unlock()
	ping(p.wake)
	return len(b), nil
}

func (p *logPipe) loop() {
	defer close(p.done)
	for {
		p.mu.Lock()
		lines, lost := p.buf, p.lost
		p.buf, p.size, p.lost = nil, 0, 0
		p.mu.Unlock()
		for _, l := range lines {
			_, _ = p.w.Write(l)
		}
		if lost > 0 {
			fmt.Fprintf(p.w, "ballot: %d log lines dropped: their reader did not keep up\n", lost)
		}
		if len(lines) > 0 || lost > 0 {
			continue
		}
		select {
		case <-p.wake:
		case <-p.quit:
			p.mu.Lock()
			empty := len(p.buf) == 0 && p.lost == 0
			p.mu.Unlock()
			if empty {
				return
			}
		}
	}
}

// Close writes what is left, waiting at most timeout for a stalled reader.
func (p *logPipe) Close(timeout time.Duration) {
	close(p.quit)
	select {
	case <-p.done:
	case <-time.After(timeout):
	}
}

// Log levels beyond slog's four.
const (
	LevelTrace = slog.Level(-8)
	LevelFatal = slog.Level(12)
	LevelPanic = slog.Level(16)
)

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
