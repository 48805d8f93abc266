// Package slog is the part of log/slog that ballot uses, with the same
// names and behaviour: loggers, levels, records and attributes, and the
// Handler interface that log.go's handlers implement. It exists for the
// binary's size: log/slog's default handler, set up by its init and so
// always linked, links encoding/json (155 KB) through the JSON branch
// it shares with slog.JSONHandler.
package slog

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// A Level is the importance of a record, as log/slog's.
type Level int

const (
	LevelDebug Level = -4
	LevelInfo  Level = 0
	LevelWarn  Level = 4
	LevelError Level = 8
)

// Keys of the built-in attributes, as log/slog names them.
const (
	TimeKey    = "time"
	LevelKey   = "level"
	MessageKey = "msg"
)

// Kind is a Value's kind, as log/slog's.
type Kind int

const (
	KindAny Kind = iota
	KindBool
	KindDuration
	KindFloat64
	KindInt64
	KindString
	KindTime
	KindUint64
	KindGroup
)

// A Value is a string, number, duration, time, group or any other value.
type Value struct {
	kind Kind
	num  uint64
	str  string
	any  any // KindAny: the value; KindTime: the time.Time; KindGroup: []Attr
}

// anyValue is v as a Value of its kind, as log/slog's AnyValue.
func anyValue(v any) Value {
	switch v := v.(type) {
	case string:
		return Value{kind: KindString, str: v}
	case int:
		return Value{kind: KindInt64, num: uint64(v)}
	case int64:
		return Value{kind: KindInt64, num: uint64(v)}
	case int8:
		return Value{kind: KindInt64, num: uint64(v)}
	case int16:
		return Value{kind: KindInt64, num: uint64(v)}
	case int32:
		return Value{kind: KindInt64, num: uint64(v)}
	case uint8:
		return Value{kind: KindUint64, num: uint64(v)}
	case uint16:
		return Value{kind: KindUint64, num: uint64(v)}
	case uintptr:
		return Value{kind: KindUint64, num: uint64(v)}
	case float32:
		return Value{kind: KindFloat64, any: float64(v)}
	case uint:
		return Value{kind: KindUint64, num: uint64(v)}
	case uint64:
		return Value{kind: KindUint64, num: v}
	case uint32:
		return Value{kind: KindUint64, num: uint64(v)}
	case bool:
		n := uint64(0)
		if v {
			n = 1
		}
		return Value{kind: KindBool, num: n}
	case time.Duration:
		return Value{kind: KindDuration, num: uint64(v)}
	case time.Time:
		return Value{kind: KindTime, any: v.Round(0)}
	case float64:
		return Value{kind: KindFloat64, any: v}
	case []Attr:
		var g []Attr // empty groups removed, as log/slog's GroupValue does
		for _, a := range v {
			if a.Value.kind != KindGroup || len(a.Value.Group()) > 0 {
				g = append(g, a)
			}
		}
		return Value{kind: KindGroup, any: g}
	case Value:
		return v
	}
	return Value{kind: KindAny, any: v}
}

func (v Value) Kind() Kind              { return v.kind }
func (v Value) Int64() int64            { return int64(v.num) }
func (v Value) Uint64() uint64          { return v.num }
func (v Value) Bool() bool              { return v.num == 1 }
func (v Value) Duration() time.Duration { return time.Duration(v.num) }
func (v Value) Float64() float64        { return v.any.(float64) }
func (v Value) Time() time.Time         { return v.any.(time.Time) }
func (v Value) Group() []Attr           { g, _ := v.any.([]Attr); return g }
func (v Value) Resolve() Value          { return v } // ballot logs no LogValuer
func (v Value) equal(w Value) bool {
	return v.kind == w.kind && v.num == w.num && v.str == w.str && v.anyEqual(w)
}
func (v Value) anyEqual(w Value) bool { _, g := v.any.([]Attr); return !g && v.any == w.any }
func (v Value) Any() any              { return v.any }

// String is the value as text, as log/slog's Value.String.
func (v Value) String() string {
	switch v.kind {
	case KindString:
		return v.str
	case KindInt64:
		return strconv.FormatInt(v.Int64(), 10)
	case KindUint64:
		return strconv.FormatUint(v.num, 10)
	case KindFloat64:
		return strconv.FormatFloat(v.Float64(), 'g', -1, 64)
	case KindBool:
		return strconv.FormatBool(v.Bool())
	case KindDuration:
		return v.Duration().String()
	case KindTime:
		return v.Time().String()
	}
	return fmt.Sprint(v.any)
}

// An Attr is a key and a value.
type Attr struct {
	Key   string
	Value Value
}

func (a Attr) Equal(b Attr) bool { return a.Key == b.Key && a.Value.equal(b.Value) }

func String(key, value string) Attr                 { return Attr{key, Value{kind: KindString, str: value}} }
func Int(key string, value int) Attr                { return Attr{key, anyValue(value)} }
func Int64(key string, value int64) Attr            { return Attr{key, anyValue(value)} }
func Duration(key string, value time.Duration) Attr { return Attr{key, anyValue(value)} }
func Time(key string, value time.Time) Attr         { return Attr{key, anyValue(value)} }
func anyAttr(key string, value any) Attr            { return Attr{key, anyValue(value)} }

// Group is a group of attributes, as log/slog's.
func Group(key string, args ...any) Attr { return Attr{key, anyValue(attrs(args))} }

const badKey = "!BADKEY"

// attrs turns alternating keys and values, and Attrs, into Attrs, as
// log/slog does.
func attrs(args []any) []Attr {
	var as []Attr
	for len(args) > 0 {
		var a Attr
		switch x := args[0].(type) {
		case string:
			if len(args) == 1 {
				a, args = String(badKey, x), nil
			} else {
				a, args = anyAttr(x, args[1]), args[2:]
			}
		case Attr:
			a, args = x, args[1:]
		default:
			a, args = anyAttr(badKey, x), args[1:]
		}
		as = append(as, a)
	}
	return as
}

// A Record is one log line's time, level, message and attributes.
type Record struct {
	Time    time.Time
	Message string
	Level   Level
	attrs   []Attr
}

func NewRecord(t time.Time, level Level, msg string, pc uintptr) Record {
	return Record{Time: t, Message: msg, Level: level}
}

func (r *Record) Add(args ...any) {
	for _, a := range attrs(args) {
		if a.Value.kind == KindGroup && len(a.Value.Group()) == 0 {
			continue // an empty group, as log/slog drops it
		}
		r.attrs = append(r.attrs, a)
	}
}

func (r *Record) AddAttrs(as ...Attr) {
	for _, a := range as {
		r.Add(a)
	}
}

func (r Record) NumAttrs() int { return len(r.attrs) }

func (r Record) Attrs(f func(Attr) bool) {
	for _, a := range r.attrs {
		if !f(a) {
			return
		}
	}
}

// A Handler writes records, as log/slog's.
type Handler interface {
	Enabled(context.Context, Level) bool
	Handle(context.Context, Record) error
	WithAttrs(attrs []Attr) Handler
	WithGroup(name string) Handler
}

// A Logger hands records to its handler.
type Logger struct{ h Handler }

func New(h Handler) *Logger        { return &Logger{h} }
func (l *Logger) Handler() Handler { return l.h }
func (l *Logger) With(args ...any) *Logger {
	if len(args) == 0 {
		return l
	}
	return &Logger{l.h.WithAttrs(attrs(args))}
}

// WithGroup and Log are for the tests (log_test.go): the binary uses
// neither, and the linker leaves them out.
func (l *Logger) WithGroup(name string) *Logger { return &Logger{l.h.WithGroup(name)} }

func (l *Logger) Log(ctx context.Context, level Level, msg string, args ...any) {
	l.log(level, msg, args)
}

func (l *Logger) Enabled(ctx context.Context, level Level) bool { return l.h.Enabled(ctx, level) }

func (l *Logger) log(level Level, msg string, args []any) {
	ctx := context.Background()
	if !l.h.Enabled(ctx, level) {
		return
	}
	r := NewRecord(time.Now(), level, msg, 0)
	r.Add(args...)
	_ = l.h.Handle(ctx, r)
}

func (l *Logger) Debug(msg string, args ...any) { l.log(LevelDebug, msg, args) }
func (l *Logger) Info(msg string, args ...any)  { l.log(LevelInfo, msg, args) }
func (l *Logger) Warn(msg string, args ...any)  { l.log(LevelWarn, msg, args) }
func (l *Logger) Error(msg string, args ...any) { l.log(LevelError, msg, args) }
