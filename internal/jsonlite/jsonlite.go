// Package jsonlite is the JSON ballot writes and reads: what it used of
// encoding/json (233 KB of the binary), for the types ballot gives it and
// nothing more: structs with tags and omitempty, embedded structs, strings,
// bools, signed integers, time.Time, pointers, slices, RawMessage. On those
// it does what encoding/json does, byte for byte and error for error
// (jsonlite_test.go and ballot's records_json_test.go check it against
// encoding/json): node records are read by other ballot versions.
package jsonlite

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// RawMessage is a raw encoded JSON value, as encoding/json's.
type RawMessage []byte

// UnmarshalJSON keeps data, as encoding/json's RawMessage does (and so
// encoding/json, in the tests, decodes it as jsonlite does).
func (m *RawMessage) UnmarshalJSON(data []byte) error {
	*m = append((*m)[0:0], data...)
	return nil
}

// A SyntaxError is a description of a JSON syntax error, worded as
// encoding/json's; Offset is after the byte that was read last.
type SyntaxError struct {
	msg    string
	Offset int64
}

func (e *SyntaxError) Error() string { return e.msg }

// typeError is encoding/json's UnmarshalTypeError, as its text.
type typeError struct{ value, strct, field, typ string }

func (e *typeError) Error() string {
	if e.strct != "" || e.field != "" {
		return "json: cannot unmarshal " + e.value + " into Go struct field " + e.strct + "." + e.field + " of type " + e.typ
	}
	return "json: cannot unmarshal " + e.value + " into Go value of type " + e.typ
}

var errUnsupported = errors.New("jsonlite: unsupported type")

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[RawMessage]()
)

// ---------------------------------------------------------------------------
// Fields.

type field struct {
	name      string
	index     []int
	ctx       string // the path encoding/json's errors name: embedded structs' Go names, then name
	omitEmpty bool
}

var fieldCache sync.Map // reflect.Type → []field

// fields lists t's fields as encoding/json does, those of embedded
// structs in place of the embedded field. Ballot's types have no name
// conflicts (the tests would show one), so none are resolved.
func fields(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	var fs []field
	var walk func(t reflect.Type, index []int, ctx string)
	walk = func(t reflect.Type, index []int, ctx string) {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(index[:len(index):len(index)], i)
			if sf.Anonymous && name == "" && sf.Type.Kind() == reflect.Struct {
				walk(sf.Type, idx, ctx+sf.Name+".")
				continue
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			fs = append(fs, field{name, idx, ctx + name, opts == "omitempty"})
		}
	}
	walk(t, nil, "")
	fieldCache.Store(t, fs)
	return fs
}

// ---------------------------------------------------------------------------
// Encoding.

type encoder struct {
	b      []byte
	html   bool   // <, > and & as \u003c, \u003e, \u0026
	indent string // "": compact
	depth  int
}

// Marshal is json.Marshal.
func Marshal(v any) ([]byte, error) {
	e := encoder{html: true}
	if err := e.value(reflect.ValueOf(v)); err != nil {
		return nil, err
	}
	return e.b, nil
}

// Append appends v's JSON, as json.Marshal writes it with html, or as a
// json.Encoder with SetEscapeHTML(false) without (and no newline).
func Append(b []byte, v any, html bool) ([]byte, error) {
	if v == nil {
		return append(b, "null"...), nil
	}
	e := encoder{b: b, html: html}
	err := e.value(reflect.ValueOf(v))
	return e.b, err
}

// Encode is a json.Encoder's Encode with SetIndent("", indent) and
// SetEscapeHTML(html): the value and a newline.
func Encode(w io.Writer, v any, indent string, html bool) error {
	e := encoder{html: html, indent: indent}
	if err := e.value(reflect.ValueOf(v)); err != nil {
		return err
	}
	_, err := w.Write(append(e.b, '\n'))
	return err
}

func (e *encoder) newline() {
	if e.indent != "" {
		e.b = append(e.b, '\n')
		for i := 0; i < e.depth; i++ {
			e.b = append(e.b, e.indent...)
		}
	}
}

func (e *encoder) value(v reflect.Value) error {
	if v.Type() == timeType {
		b, err := v.Interface().(time.Time).MarshalJSON()
		e.b = append(e.b, b...)
		return err
	}
	switch v.Kind() {
	case reflect.Bool:
		e.b = strconv.AppendBool(e.b, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.b = strconv.AppendInt(e.b, v.Int(), 10)
	case reflect.String:
		e.b = appendString(e.b, v.String(), e.html, true)
	case reflect.Pointer:
		if v.IsNil() {
			e.b = append(e.b, "null"...)
			return nil
		}
		return e.value(v.Elem())
	case reflect.Slice:
		if v.IsNil() {
			e.b = append(e.b, "null"...)
			return nil
		}
		e.b = append(e.b, '[')
		e.depth++
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.newline()
			if err := e.value(v.Index(i)); err != nil {
				return err
			}
		}
		e.depth--
		if v.Len() > 0 {
			e.newline()
		}
		e.b = append(e.b, ']')
	case reflect.Struct:
		e.b = append(e.b, '{')
		e.depth++
		n := 0
		for _, f := range fields(v.Type()) {
			fv := v.FieldByIndex(f.index)
			if f.omitEmpty && empty(fv) {
				continue
			}
			if n > 0 {
				e.b = append(e.b, ',')
			}
			n++
			e.newline()
			e.b = appendString(e.b, f.name, e.html, true)
			e.b = append(e.b, ':')
			if e.indent != "" {
				e.b = append(e.b, ' ')
			}
			if err := e.value(fv); err != nil {
				return err
			}
		}
		e.depth--
		if n > 0 {
			e.newline()
		}
		e.b = append(e.b, '}')
	default:
		return errUnsupported
	}
	return nil
}

func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

const hex = "0123456789abcdef"

// AppendLogString appends s as log/slog's JSONHandler writes a string:
// as appendString without html, but \b and \f as \u0008 and \u000c.
func AppendLogString(b []byte, s string) []byte {
	return appendString(b, s, false, false)
}

// appendString appends s as a JSON string, as encoding/json writes it:
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped, and with html, <, >
// and & too; short: \b and \f as encoding/json writes them.
func appendString(b []byte, s string, html, short bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b', '\f':
				if short {
					b = append(b, '\\', "bf"[c>>2&1]) // \b is 8, \f 12
				} else {
					b = append(b, '\\', 'u', '0', '0', '0', hex[c])
				}
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			if size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			}
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// ---------------------------------------------------------------------------
// Scanning: encoding/json's syntax, and its errors' words and offsets.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipSpace(d []byte, i int) int {
	for i < len(d) && isSpace(d[i]) {
		i++
	}
	return i
}

// eofError: d ended where context was expected. json.Unmarshal says
// why as if a space followed (a space in a number, a literal or an escape
// is an invalid character); a json.Decoder says io.ErrUnexpectedEOF.
type eofError string

func (e eofError) Error() string { return string(e) }

func synErr(d []byte, i int, context string) error {
	if i >= len(d) {
		return eofError(context)
	}
	q := "'\\''"
	switch c := d[i]; c {
	case '"':
		q = `'"'`
	case '\'':
	default:
		q = strconv.Quote(string(rune(c)))
		q = "'" + q[1:len(q)-1] + "'"
	}
	return &SyntaxError{"invalid character " + q + " " + context, int64(i + 1)}
}

const maxDepth = 10000

// scan reads the value at d[i:] (no space before it) and returns where it
// ends; an eofError if d ends first. finite: numbers must fit a
// float64 (what decoding into an interface needs).
func scan(d []byte, i, depth int, finite bool) (int, error) {
	if i >= len(d) {
		return i, eofError("looking for beginning of value")
	}
	switch c := d[i]; {
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return i, synErr(d, i, "exceeded max depth")
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		i = skipSpace(d, i+1)
		if i < len(d) && d[i] == end {
			return i + 1, nil
		}
		for {
			if end == '}' {
				if i >= len(d) || d[i] != '"' {
					return i, synErr(d, i, "looking for beginning of object key string")
				}
				var err error
				if i, err = scan(d, i, depth+1, finite); err != nil {
					return i, err
				}
				if i = skipSpace(d, i); i >= len(d) || d[i] != ':' {
					return i, synErr(d, i, "after object key")
				}
				i = skipSpace(d, i+1)
			}
			var err error
			if i, err = scan(d, i, depth+1, finite); err != nil {
				return i, err
			}
			i = skipSpace(d, i)
			if i < len(d) && d[i] == end {
				return i + 1, nil
			}
			if i >= len(d) || d[i] != ',' {
				if end == '}' {
					return i, synErr(d, i, "after object key:value pair")
				}
				return i, synErr(d, i, "after array element")
			}
			i = skipSpace(d, i+1)
		}
	case c == '"':
		for i++; i < len(d); i++ {
			switch c := d[i]; {
			case c == '"':
				return i + 1, nil
			case c < ' ':
				return i, synErr(d, i, "in string literal")
			case c == '\\':
				if i++; i < len(d) && strings.IndexByte(`"\/bfnrt`, d[i]) >= 0 {
					continue
				}
				if i >= len(d) || d[i] != 'u' {
					return i, synErr(d, i, "in string escape code")
				}
				for k := 0; k < 4; k++ {
					if i++; i >= len(d) || !isHex(d[i]) {
						return i, synErr(d, i, "in \\u hexadecimal character escape")
					}
				}
			}
		}
		return i, eofError("in string literal")
	case c == 't' || c == 'f' || c == 'n':
		lit := "null"
		if c == 't' {
			lit = "true"
		} else if c == 'f' {
			lit = "false"
		}
		for k := 1; k < len(lit); k++ {
			if i+k >= len(d) || d[i+k] != lit[k] {
				return i + k, synErr(d, i+k, "in literal "+lit+" (expecting "+strconv.QuoteRune(rune(lit[k]))+")")
			}
		}
		return i + len(lit), nil
	case c == '-' || '0' <= c && c <= '9':
		start := i
		if c == '-' {
			if i++; i >= len(d) || d[i] < '0' || d[i] > '9' {
				return i, synErr(d, i, "in numeric literal")
			}
		}
		if d[i] == '0' {
			i++
		} else {
			i = digits(d, i)
		}
		if i < len(d) && d[i] == '.' {
			if i++; i >= len(d) || d[i] < '0' || d[i] > '9' {
				return i, synErr(d, i, "after decimal point in numeric literal")
			}
			i = digits(d, i)
		}
		if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
			if i++; i < len(d) && (d[i] == '+' || d[i] == '-') {
				i++
			}
			if i >= len(d) || d[i] < '0' || d[i] > '9' {
				return i, synErr(d, i, "in exponent of numeric literal")
			}
			i = digits(d, i)
		}
		if finite {
			if _, err := strconv.ParseFloat(string(d[start:i]), 64); err != nil {
				return i, err
			}
		}
		return i, nil
	}
	return i, synErr(d, i, "looking for beginning of value")
}

func digits(d []byte, i int) int {
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		i++
	}
	return i
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// check is encoding/json's checkValid: d holds one value and space.
func check(d []byte, finite bool) error {
	i, err := scan(d, skipSpace(d, 0), 0, finite)
	if err == nil {
		if i = skipSpace(d, i); i < len(d) {
			err = synErr(d, i, "after top-level value")
		}
	}
	if e, ok := err.(eofError); ok {
		err = &SyntaxError{"unexpected end of JSON input", int64(len(d))}
		if strings.HasPrefix(string(e), "in ") && e != "in string literal" || strings.HasPrefix(string(e), "after decimal") {
			err = &SyntaxError{"invalid character ' ' " + string(e), int64(len(d))}
		}
	}
	return err
}

// Valid is json.Valid.
func Valid(d []byte) bool { return check(d, false) == nil }

// IsObject says whether json.Unmarshal of d into an `any` succeeds with
// a map: d is an object, and its numbers fit a float64.
func IsObject(d []byte) bool {
	return check(d, true) == nil && d[skipSpace(d, 0)] == '{'
}

// Value is a json.Decoder's Decode into a RawMessage over d: the first
// value, after space, and where it ends (the Decoder's InputOffset).
// Errors: a *SyntaxError, or io.ErrUnexpectedEOF when d ends within it.
func Value(d []byte) (RawMessage, int, error) {
	start := skipSpace(d, 0)
	i, err := scan(d, start, 0, false)
	if _, ok := err.(eofError); ok {
		return nil, 0, io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, 0, err
	}
	return RawMessage(d[start:i]), i, nil
}

// Compact is json.Compact: d without the space between its tokens.
func Compact(dst *bytes.Buffer, d []byte) error {
	if err := check(d, false); err != nil {
		return err
	}
	for i := 0; i < len(d); i++ {
		switch c := d[i]; {
		case isSpace(c):
		case c == '"':
			j, _ := scan(d, i, 0, false)
			dst.Write(d[i:j])
			i = j - 1
		default:
			dst.WriteByte(c)
		}
	}
	return nil
}

// Object is a valid object's members in order: keys unquoted, values as
// they are (a json.Decoder's Token and Decode walk of it).
func Object(d []byte) (keys []string, vals []RawMessage) {
	i := skipSpace(d, 0)
	for i = skipSpace(d, i+1); i < len(d) && d[i] == '"'; {
		j, _ := scan(d, i, 0, false)
		keys = append(keys, unquote(d[i:j]))
		i = skipSpace(d, skipSpace(d, j)+1)
		j, _ = scan(d, i, 0, false)
		vals = append(vals, RawMessage(d[i:j]))
		if i = skipSpace(d, j); d[i] == ',' {
			i = skipSpace(d, i+1)
		}
	}
	return keys, vals
}

// unquote is a scanned string's text, as encoding/json decodes it:
// invalid UTF-8 and lone surrogates as U+FFFD.
func unquote(s []byte) string {
	s = s[1 : len(s)-1]
	b := make([]byte, 0, len(s))
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			switch c := s[r+1]; c {
			case 'b', 'f', 'n', 'r', 't':
				b = append(b, "\b\f\n\r\t"[strings.IndexByte("bfnrt", c)])
				r += 2
			case 'u':
				rr := getu4(s[r:])
				r += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(s[r:])); dec != utf8.RuneError {
						rr = dec
						r += 6
					} else {
						rr = utf8.RuneError
					}
				}
				b = utf8.AppendRune(b, rr)
			default:
				b = append(b, c)
				r += 2
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return string(b)
}

func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	r, err := strconv.ParseUint(string(s[2:6]), 16, 64)
	if err != nil {
		return -1
	}
	return rune(r)
}

// ---------------------------------------------------------------------------
// Decoding.

type decoder struct {
	d      []byte
	i      int
	strict bool // json.Decoder's DisallowUnknownFields
	saved  error
}

// Unmarshal is json.Unmarshal, for a pointer to one of ballot's types.
func Unmarshal(d []byte, v any) error {
	if err := check(d, false); err != nil {
		return err
	}
	return unmarshal(d, v, false)
}

// Decode is a json.Decoder's Decode over d, with DisallowUnknownFields
// if strict: the first value only, whatever follows it.
func Decode(d []byte, v any, strict bool) error {
	raw, _, err := Value(d)
	if err != nil {
		return err
	}
	return unmarshal(raw, v, strict)
}

func unmarshal(d []byte, v any, strict bool) error {
	dec := decoder{d: d, i: skipSpace(d, 0), strict: strict}
	if err := dec.value(reflect.ValueOf(v), "", ""); err != nil {
		return err
	}
	return dec.saved
}

func (d *decoder) typeErr(value string, v reflect.Value, strct, path string) {
	if d.saved == nil {
		d.saved = &typeError{value, strct, path, v.Type().String()}
	}
}

// indirect follows pointers down to a value, allocating nil ones; with
// null, it stops at a settable pointer (null sets it nil).
func indirect(v reflect.Value, null bool) reflect.Value {
	for v.Kind() == reflect.Pointer && !(null && v.CanSet()) {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	return v
}

// unmarshaler calls the UnmarshalJSON of time.Time and RawMessage: its
// error ends the decoding, as in encoding/json.
func unmarshaler(v reflect.Value, raw []byte) (bool, error) {
	switch v.Type() {
	case timeType:
		return true, v.Addr().Interface().(*time.Time).UnmarshalJSON(raw)
	case rawType:
		return true, v.Addr().Interface().(*RawMessage).UnmarshalJSON(raw)
	}
	return false, nil
}

// value decodes the value at d.i into v; strct and path name the field
// for errors as encoding/json does.
func (d *decoder) value(v reflect.Value, strct, path string) error {
	start := d.i
	end, _ := scan(d.d, start, 0, false)
	d.i = end
	if !v.IsValid() {
		return nil
	}
	c := d.d[start]
	v = indirect(v, c == 'n')
	if ok, err := unmarshaler(v, d.d[start:end]); ok {
		return err
	}
	switch c {
	case '{':
		if v.Kind() != reflect.Struct {
			d.typeErr("object", v, strct, path)
			return nil
		}
		return d.object(v, start, path)
	case '[':
		if v.Kind() != reflect.Slice {
			d.typeErr("array", v, strct, path)
			return nil
		}
		return d.array(v, start, strct, path)
	case 'n':
		switch v.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			v.SetZero()
		}
	case 't', 'f':
		if v.Kind() != reflect.Bool {
			d.typeErr("bool", v, strct, path)
			return nil
		}
		v.SetBool(c == 't')
	case '"':
		if v.Kind() != reflect.String {
			d.typeErr("string", v, strct, path)
			return nil
		}
		v.SetString(unquote(d.d[start:end]))
	default:
		s := string(d.d[start:end])
		switch v.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || v.OverflowInt(n) {
				d.typeErr("number "+s, v, strct, path)
				return nil
			}
			v.SetInt(n)
		default:
			d.typeErr("number", v, strct, path)
		}
	}
	return nil
}

func (d *decoder) object(v reflect.Value, start int, path string) error {
	fs := fields(v.Type())
	d.i = skipSpace(d.d, start+1)
	for d.d[d.i] == '"' {
		kstart := d.i
		kend, _ := scan(d.d, kstart, 0, false)
		key := unquote(d.d[kstart:kend])
		var f *field
		for k := range fs {
			if fs[k].name == key {
				f = &fs[k]
				break
			}
		}
		for k := 0; f == nil && k < len(fs); k++ {
			if strings.EqualFold(fs[k].name, key) {
				f = &fs[k]
			}
		}
		var sub reflect.Value
		subPath := path
		if f != nil {
			sub = v.FieldByIndex(f.index)
			if subPath != "" {
				subPath += "."
			}
			subPath += f.ctx
		} else if d.strict && d.saved == nil {
			d.saved = errors.New("json: unknown field " + strconv.Quote(key))
		}
		d.i = skipSpace(d.d, skipSpace(d.d, kend)+1)
		if err := d.value(sub, v.Type().Name(), subPath); err != nil {
			return err
		}
		if d.i = skipSpace(d.d, d.i); d.d[d.i] == ',' {
			d.i = skipSpace(d.d, d.i+1)
		}
	}
	d.i++ // }
	return nil
}

func (d *decoder) array(v reflect.Value, start int, strct, path string) error {
	d.i = skipSpace(d.d, start+1)
	n := 0
	for ; d.d[d.i] != ']'; n++ {
		if n >= v.Cap() {
			v.Grow(1)
		}
		if n >= v.Len() {
			v.SetLen(n + 1)
		}
		if err := d.value(v.Index(n), strct, path); err != nil {
			return err
		}
		if d.i = skipSpace(d.d, d.i); d.d[d.i] == ',' {
			d.i = skipSpace(d.d, d.i+1)
		}
	}
	d.i++ // ]
	if n < v.Len() {
		v.SetLen(n)
	}
	if n == 0 {
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	}
	return nil
}
