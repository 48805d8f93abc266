// Package jsondiff checks jsonlite against encoding/json: random values of
// a type, JSON inputs made from them and broken in every way, and the
// comparison of what the two packages make of each. Only tests import it
// (encoding/json stays out of the binary).
package jsondiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"

	"ballot/internal/jsonlite"
)

var pieces = []string{"a", "Z", "é", "\u2028", "\u2029", "<", ">", "&", "\x00", "\x1f", "\x7f", "\xff", "\xed\xa0\x80",
	"\"", "\\", "/", "日本", "\t", "\n", "\r", "\b", "\f", "\U0001F600", "\u212a", "\u017f", "\ufffd", " ", "-", "'"}

// String is a random string, escapes and invalid UTF-8 among its bytes.
func String(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(6); n > 0; n-- {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

var ints = []int64{0, 1, -1, 7, 1 << 31, -1 << 31, 1<<31 - 1, 1<<63 - 1, -1 << 63, 1 << 53, 1000000}

// Time is a random time: most in ballot's years, some outside 0..9999
// (which encoding/json refuses), in UTC and other zones.
func Time(r *rand.Rand) time.Time {
	year := 1970 + r.IntN(130)
	switch r.IntN(20) {
	case 0:
		year = r.IntN(10000)
	case 1:
		year = -2 + r.IntN(4)*10002/3
	}
	t := time.Date(year, time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), 0, time.UTC)
	switch r.IntN(4) {
	case 0:
		t = t.Add(time.Duration(r.IntN(1e9)))
	case 1:
		t = t.Add(time.Duration(r.IntN(1000)) * time.Millisecond)
	}
	switch r.IntN(5) {
	case 0:
		t = t.In(time.FixedZone("", (r.IntN(48)-24)*1800))
	case 1:
		t = t.In(time.FixedZone("X", r.IntN(100000)-50000))
	}
	return t
}

// Fill sets v (settable) to a random value of its type.
func Fill(r *rand.Rand, v reflect.Value, depth int) {
	if v.Type() == reflect.TypeFor[jsonlite.RawMessage]() {
		return // ballot only reads them
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(Time(r)))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := ints[r.IntN(len(ints))]
		if r.IntN(2) == 0 {
			n = r.Int64N(100000) - 100
		}
		if !v.OverflowInt(n) {
			v.SetInt(n)
		}
	case reflect.String:
		v.SetString(String(r))
	case reflect.Pointer:
		if depth < 4 && r.IntN(3) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			Fill(r, v.Elem(), depth+1)
		} else {
			v.SetZero()
		}
	case reflect.Slice:
		switch k := r.IntN(4); {
		case k == 0 || depth >= 4:
			v.SetZero()
		case k == 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := 1 + r.IntN(3)
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := 0; i < n; i++ {
				Fill(r, v.Index(i), depth+1)
			}
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() || v.Type().Field(i).Anonymous {
				if f := v.Field(i); f.CanSet() {
					Fill(r, f, depth)
				} else if f.Kind() == reflect.Struct {
					Fill(r, reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem(), depth)
				}
			}
		}
	}
}

// New is a pointer to a random value of t.
func New(r *rand.Rand, t reflect.Type) any {
	p := reflect.New(t)
	Fill(r, p.Elem(), 0)
	return p.Interface()
}

// EncodeDiff says how jsonlite's encodings of v differ from
// encoding/json's ("" if they do not): Marshal, and the Encoder with and
// without indent and HTML escaping.
func EncodeDiff(v any) string {
	a, errA := json.Marshal(v)
	b, errB := jsonlite.Marshal(v)
	if !bytes.Equal(a, b) || (errA == nil) != (errB == nil) {
		return fmt.Sprintf("Marshal:\n json:     %s %v\n jsonlite: %s %v", a, errA, b, errB)
	}
	for _, indent := range []string{"", "  "} {
		for _, html := range []bool{false, true} {
			var wa, wb bytes.Buffer
			enc := json.NewEncoder(&wa)
			enc.SetIndent("", indent)
			enc.SetEscapeHTML(html)
			errA, errB := enc.Encode(v), jsonlite.Encode(&wb, v, indent, html)
			if !bytes.Equal(wa.Bytes(), wb.Bytes()) || (errA == nil) != (errB == nil) {
				return fmt.Sprintf("Encode indent %q html %v:\n json:     %s %v\n jsonlite: %s %v", indent, html, wa.Bytes(), errA, wb.Bytes(), errB)
			}
		}
	}
	return ""
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// DecodeDiff says how jsonlite's decoding of in into a new t differs
// from encoding/json's: the value, and the error's text (the Decoder's,
// which ballot shows too, apart). Each decodes in twice into the same
// value, as a duplicate record would.
func DecodeDiff(t reflect.Type, in []byte) string {
	pa, pb := reflect.New(t), reflect.New(t)
	for i := 0; i < 2; i++ {
		errA, errB := json.Unmarshal(in, pa.Interface()), jsonlite.Unmarshal(in, pb.Interface())
		if errText(errA) != errText(errB) || !reflect.DeepEqual(pa.Interface(), pb.Interface()) {
			return fmt.Sprintf("Unmarshal %q into %v (time %d):\n json:     %+v %v\n jsonlite: %+v %v", in, t, i, pa.Elem(), errA, pb.Elem(), errB)
		}
	}
	for _, strict := range []bool{false, true} {
		pa, pb := reflect.New(t), reflect.New(t)
		dec := json.NewDecoder(bytes.NewReader(in))
		if strict {
			dec.DisallowUnknownFields()
		}
		errA, errB := dec.Decode(pa.Interface()), jsonlite.Decode(in, pb.Interface(), strict)
		// An empty input is io.EOF to the Decoder, unexpected EOF here:
		// ballot tells neither apart.
		if errText(errA) != errText(errB) && !(len(bytes.TrimSpace(in)) == 0 && errA != nil && errB != nil) ||
			!reflect.DeepEqual(pa.Interface(), pb.Interface()) {
			return fmt.Sprintf("Decode %q into %v strict %v:\n json:     %+v %v\n jsonlite: %+v %v", in, t, strict, pa.Elem(), errA, pb.Elem(), errB)
		}
	}
	return ""
}

// SyntaxDiff compares what ballot asks of any bytes: Valid, Compact,
// IsObject (Unmarshal into an `any` gives a map) and a Decoder's first
// value and its end.
func SyntaxDiff(in []byte) string {
	if json.Valid(in) != jsonlite.Valid(in) {
		return fmt.Sprintf("Valid %q: json %v", in, json.Valid(in))
	}
	var ca, cb bytes.Buffer
	errA, errB := json.Compact(&ca, in), jsonlite.Compact(&cb, in)
	if errText(errA) != errText(errB) || ca.String() != cb.String() {
		return fmt.Sprintf("Compact %q:\n json:     %q %v\n jsonlite: %q %v", in, ca.String(), errA, cb.String(), errB)
	}
	var se *json.SyntaxError
	if err := json.Unmarshal(in, new(any)); err != nil && errorsAs(err, &se) {
		if errB, ok := jsonlite.Unmarshal(in, new(string)).(*jsonlite.SyntaxError); !ok || errB.Offset != se.Offset {
			return fmt.Sprintf("Unmarshal %q: offsets %d %v", in, se.Offset, errB)
		}
	}
	var v any
	_, isMap := v.(map[string]any)
	if err := json.Unmarshal(in, &v); err == nil {
		_, isMap = v.(map[string]any)
	}
	if isMap != jsonlite.IsObject(in) {
		return fmt.Sprintf("IsObject %q: json %v", in, isMap)
	}
	dec := json.NewDecoder(bytes.NewReader(in))
	var raw json.RawMessage
	errA = dec.Decode(&raw)
	rawB, end, errB := jsonlite.Value(in)
	if len(bytes.TrimSpace(in)) == 0 {
		return ""
	}
	if errText(errA) != errText(errB) || errA == nil && (string(raw) != string(rawB) || int(dec.InputOffset()) != end) {
		return fmt.Sprintf("Value %q:\n json:     %q %d %v\n jsonlite: %q %d %v", in, raw, dec.InputOffset(), errA, rawB, end, errB)
	}
	if errA != nil && errorsAs(errA, &se) && se.Offset != errB.(*jsonlite.SyntaxError).Offset {
		return fmt.Sprintf("Value %q: offsets %d %d", in, se.Offset, errB.(*jsonlite.SyntaxError).Offset)
	}
	if errA == nil && raw[0] == '{' {
		keys, vals := jsonlite.Object(raw)
		kd := json.NewDecoder(bytes.NewReader(raw))
		kd.Token()
		for i := 0; kd.More(); i++ {
			tok, _ := kd.Token()
			var v json.RawMessage
			kd.Decode(&v)
			if i >= len(keys) || tok != keys[i] || string(v) != string(vals[i]) {
				return fmt.Sprintf("Object %q: member %d %q %s, jsonlite %q", raw, i, tok, v, keys)
			}
		}
	}
	return ""
}

func errorsAs(err error, se **json.SyntaxError) bool {
	s, ok := err.(*json.SyntaxError)
	*se = s
	return ok
}

var numbers = []string{"0", "-0", "1", "-1", "1.5", "1e3", "1E+3", "2e-1", "0.0", "1.0", "3e0", "9223372036854775807",
	"9223372036854775808", "-9223372036854775808", "-9223372036854775809", "2147483648", "1e400", "-1e400", "1e-400",
	"12345678901234567890123", "4.9e-324", "01", "1.", ".5", "-", "+1", "1e", "0x10", "1_0", "NaN"}

var escapes = []string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u0041`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\udc00`,
	`\ud800\u0041`, `\ud800\udbff`, `\u2028`, `\u0000`, `\uZZZZ`, `\x`, `\'`, `\u12`, "\x01", "\xff"}

// JSON is a random JSON text, mostly valid, keys drawn from names (in
// random case, or folded through the Kelvin and long-s signs).
func JSON(r *rand.Rand, names []string, depth int) string {
	switch k := r.IntN(10); {
	case k < 2 && depth < 4:
		var b strings.Builder
		b.WriteString("{")
		for i, n := 0, r.IntN(4); i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(Key(r, names) + ":" + JSON(r, names, depth+1))
		}
		return b.String() + "}"
	case k < 3 && depth < 4:
		var b strings.Builder
		b.WriteString("[")
		for i, n := 0, r.IntN(4); i < n; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(JSON(r, names, depth+1))
		}
		return b.String() + "]"
	case k < 5:
		return numbers[r.IntN(len(numbers))]
	case k < 6:
		return []string{"true", "false", "null", "nul", "True"}[r.IntN(5)]
	case k < 7:
		return `"` + Time(r).Format([]string{time.RFC3339Nano, time.RFC3339, "2006-01-02 15:04:05", time.Kitchen}[r.IntN(4)]) + `"`
	}
	var b strings.Builder
	b.WriteString(`"`)
	for n := r.IntN(5); n > 0; n-- {
		if r.IntN(3) == 0 {
			b.WriteString(escapes[r.IntN(len(escapes))])
		} else {
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(pieces[r.IntN(len(pieces))], `\`, `\\`), `"`, `\"`))
		}
	}
	return b.String() + `"`
}

// Key is a JSON object key: one of names, changed in case or spelling,
// or another.
func Key(r *rand.Rand, names []string) string {
	if len(names) == 0 || r.IntN(8) == 0 {
		return JSON(r, nil, 9)
	}
	n := names[r.IntN(len(names))]
	switch r.IntN(6) {
	case 0:
		n = strings.ToUpper(n)
	case 1:
		n = strings.NewReplacer("k", "\u212a", "K", "\u212a", "s", "\u017f", "S", "\u017f").Replace(n)
	case 2:
		n = strings.NewReplacer("k", `\u212a`, "s", `\u017f`, "a", `\u0041`).Replace(n)
	}
	return `"` + n + `"`
}

// Names is every JSON field name under t, embedded and nested structs'
// too.
func Names(t reflect.Type) []string {
	seen := map[reflect.Type]bool{}
	var names []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || t == reflect.TypeFor[time.Time]() {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				names = append(names, name)
			} else if f.IsExported() {
				names = append(names, f.Name)
			}
			walk(f.Type)
		}
	}
	walk(t)
	return names
}

var breaks = []string{"{", "}", "[", "]", `"`, ",", ":", " ", "0", "-", ".", "e", "t", "n", "\\", "\x00", "\xff", "x", "1e400", "null"}

// Inputs is n JSON inputs for t: random values' encodings, as they are
// and broken (cut, a byte changed, something inserted), and random
// objects with t's keys and any values.
func Inputs(r *rand.Rand, t reflect.Type, n int) [][]byte {
	names := Names(t)
	var out [][]byte
	for len(out) < n {
		var in []byte
		switch r.IntN(5) {
		case 0, 1:
			in, _ = json.Marshal(New(r, t))
			if in == nil {
				continue
			}
		case 2:
			in = []byte("{" + Key(r, names) + ":" + JSON(r, names, 1) + "," + Key(r, names) + ":" + JSON(r, names, 1) + "}")
		default:
			in = []byte(JSON(r, names, 0))
		}
		switch r.IntN(6) {
		case 0:
			in = in[:r.IntN(len(in)+1)]
		case 1:
			if len(in) > 0 {
				in[r.IntN(len(in))] = breaks[r.IntN(len(breaks))][0]
			}
		case 2:
			i := r.IntN(len(in) + 1)
			in = []byte(string(in[:i]) + breaks[r.IntN(len(breaks))] + string(in[i:]))
		case 3:
			in = []byte(" \n" + string(in) + "\t ")
		}
		out = append(out, in)
	}
	return out
}
