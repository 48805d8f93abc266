package main

// ballot's own log: slog with the human, JSON and raw formats, and the
// levels ballot names (trace, fatal, panic) beyond slog's.

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"ballot/internal/jsonlite"
	"ballot/internal/slog"
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
		return slog.New(&jsonHandler{mu: mu, w: w, level: level})
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

// jsonHandler writes the lines slog.NewJSONHandler wrote with ballot's
// level names (log_test.go compares them), without linking encoding/json:
// {"time":…,"level":…,"msg":…, then the attributes; With's first, groups
// as objects}.
type jsonHandler struct {
	mu     *sync.Mutex
	w      io.Writer
	level  slog.Level
	pre    []byte   // With's attributes, written: `,"k":v`, `,"group":{`
	open   int      // groups opened in pre
	groups []string // WithGroup's, the open ones first
}

func (h *jsonHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *jsonHandler) Handle(_ context.Context, r slog.Record) error {
	b := []byte{'{'}
	if !r.Time.IsZero() {
		b = appendJSONAttr(b, slog.Time(slog.TimeKey, r.Time.Round(0)))
	}
	b = appendJSONAttr(b, slog.String(slog.LevelKey, levelName(r.Level)))
	b = appendJSONAttr(b, slog.String(slog.MessageKey, r.Message))
	b = append(b, h.pre...)
	open := h.open
	if r.NumAttrs() > 0 {
		n := len(b)
		b = openGroups(b, h.groups[h.open:])
		m := len(b)
		r.Attrs(func(a slog.Attr) bool {
			b = appendJSONAttr(b, a)
			return true
		})
		if len(b) == m {
			b = b[:n]
		} else {
			open = len(h.groups)
		}
	}
	for i := 0; i <= open; i++ {
		b = append(b, '}')
	}
	b = append(b, '\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(b)
	return err
}

func openGroups(b []byte, groups []string) []byte {
	for _, g := range groups {
		b = append(jsonlite.AppendLogString(comma(b), g), ':', '{')
	}
	return b
}

// comma separates what comes next from what came before, if anything did.
func comma(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '{' {
		return b
	}
	return append(b, ',')
}

// appendJSONAttr appends `,"key":value`, as slog's JSON handler does:
// nothing for an empty attribute or group.
func appendJSONAttr(b []byte, a slog.Attr) []byte {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return b
	}
	start := len(b)
	v := a.Value
	if v.Kind() == slog.KindGroup {
		if a.Key != "" {
			b = openGroups(b, []string{a.Key})
		}
		n := len(b)
		for _, g := range v.Group() {
			b = appendJSONAttr(b, g)
		}
		if len(b) == n {
			b = b[:start]
		} else if a.Key != "" {
			b = append(b, '}')
		}
		return b
	}
	b = append(jsonlite.AppendLogString(comma(b), a.Key), ':')
	var err error
	switch v.Kind() {
	case slog.KindString:
		b = jsonlite.AppendLogString(b, v.String())
	case slog.KindInt64:
		b = strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		b = strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindFloat64:
		b = strconv.AppendFloat(b, v.Float64(), 'g', -1, 64) // ballot logs none; json.Marshal's form differs for some
	case slog.KindBool:
		b = strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		b = strconv.AppendInt(b, int64(v.Duration()), 10)
	case slog.KindTime:
		b = append(v.Time().AppendFormat(append(b, '"'), time.RFC3339Nano), '"')
	default:
		if e, ok := v.Any().(error); ok {
			b = jsonlite.AppendLogString(b, e.Error())
		} else {
			n := len(b)
			if b, err = jsonlite.Append(b, v.Any(), false); err != nil {
				b = jsonlite.AppendLogString(b[:n], "!ERROR:"+err.Error())
			}
		}
	}
	return b
}

func (h *jsonHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := *h
	n.pre = openGroups(append([]byte(nil), h.pre...), h.groups[h.open:])
	m := len(n.pre)
	for _, a := range as {
		n.pre = appendJSONAttr(n.pre, a)
	}
	if len(n.pre) == m {
		n.pre = h.pre
	} else {
		n.open = len(h.groups)
	}
	return &n
}

func (h *jsonHandler) WithGroup(name string) slog.Handler {
	n := *h
	n.groups = append(append([]string(nil), h.groups...), name)
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
