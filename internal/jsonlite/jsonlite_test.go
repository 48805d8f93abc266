package jsonlite_test

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"ballot/internal/jsonlite"
	"ballot/internal/jsonlite/jsondiff"
)

// The kinds ballot's records have, in one type: tags, omitempty, an
// embedded struct, pointers, slices of values and of pointers, times.
type inner struct {
	PID   int       `json:"pid"`
	Since time.Time `json:"since"`
	Note  string    `json:"note,omitempty"`
}

type base struct {
	State string `json:"state"`
	Slot  int    `json:"slot,omitempty"`
}

type record struct {
	base
	Name     string                `json:"name"`
	Count    int64                 `json:"count,omitempty"`
	Small    int32                 `json:"small"`
	OK       bool                  `json:"ok,omitempty"`
	At       time.Time             `json:"at,omitempty"`
	Ended    *time.Time            `json:"ended,omitempty"`
	Code     *int                  `json:"code,omitempty"`
	Dur      *int64                `json:"dur"`
	Child    *inner                `json:"child,omitempty"`
	Kids     []inner               `json:"kids,omitempty"`
	Ptrs     []*inner              `json:"ptrs"`
	Marks    []string              `json:"marks"`
	Raw      []jsonlite.RawMessage `json:"raw,omitempty"`
	Untagged string
	hidden   int
	Skip     string `json:"-"`
}

var types = []reflect.Type{
	reflect.TypeFor[record](), reflect.TypeFor[inner](), reflect.TypeFor[[]string](), reflect.TypeFor[string](),
	reflect.TypeFor[bool](), reflect.TypeFor[int64](), reflect.TypeFor[[]jsonlite.RawMessage](), reflect.TypeFor[time.Time](),
	reflect.TypeFor[struct {
		Proposal string `json:"proposal"`
	}](),
}

// TestJSONLiteRandom: thousands of random values encode as encoding/json
// encodes them, and random, cut and broken inputs decode to the same
// value and the same error.
func TestJSONLiteRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 6))
	for _, typ := range types {
		for i := 0; i < 3000; i++ {
			if d := jsondiff.EncodeDiff(jsondiff.New(r, typ)); d != "" {
				t.Fatal(d)
			}
		}
		for _, in := range jsondiff.Inputs(r, typ, 6000) {
			if d := jsondiff.DecodeDiff(typ, in); d != "" {
				t.Fatal(d)
			}
			if d := jsondiff.SyntaxDiff(in); d != "" {
				t.Fatal(d)
			}
		}
	}
}

var seeds = []string{
	``, ` `, `{`, `}`, `{}`, `[]`, `null`, `nul`, `true`, `tru`, `falsey`, `"`, `"\`, `"\u12"`, `"\ud800"`, `"\ud83d\ude00"`,
	`"\ud800\u0041"`, "\"\x01\"", "\"\xff\"", `-`, `-0`, `01`, `1.`, `1e`, `1e+`, `.5`, `1e400`, `9223372036854775808`,
	`{"name":"a","name":"b"}`, `{"NAME":"x","Name":"y"}`, `{"ſtate":"s","\u212aids":[]}`, `{"kids":[{"pid":1},{"pid":2}],"kids":[{"note":"n"}]}`,
	`{"ptrs":[null,{"pid":"x"}]}`, `{"child":5}`, `{"child":{"since":"bad"},"name":"after"}`, `{"at":{},"name":"x"}`,
	`{"ended":null,"code":null,"dur":7}`, `{"small":2147483648,"count":1.5,"ok":"yes"}`, `{"raw":[null,1,{"a":[]}]}`,
	`{"marks":null}`, `{"marks":[]}`, `{"marks":[1,"a",null]}`, `{"unknown":1,"proposal":"p"}`, `{"a" 1}`, `{"a":1,}`,
	`[1,]`, `[1 2]`, `{"a":1}x`, `{"a":1} {"b":2}`, `5 `, ` 5x`, `{"at":"2006-01-02T15:04:05Z","ended":"2006-01-02T15:04:05.5+01:00"}`,
	`{"at":"2006-01-02T15:04:05\u005a"}`, `{"state":"<&>\u2028"}`, `[[[[[[[[[[]]]]]]]]]]`,
}

// FuzzJSONLite: go test -fuzz=FuzzJSONLite ./internal/jsonlite; any input
// decodes into every type as encoding/json decodes it.
func FuzzJSONLite(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if d := jsondiff.SyntaxDiff(in); d != "" {
			t.Fatal(d)
		}
		for _, typ := range types {
			if d := jsondiff.DecodeDiff(typ, in); d != "" {
				t.Fatal(d)
			}
		}
	})
}

// TestJSONLiteDepth: nesting past encoding/json's limit fails alike.
func TestJSONLiteDepth(t *testing.T) {
	for _, n := range []int{9999, 10000, 10001} {
		in := make([]byte, 0, 2*n)
		for i := 0; i < n; i++ {
			in = append(in, '[')
		}
		for i := 0; i < n; i++ {
			in = append(in, ']')
		}
		if d := jsondiff.SyntaxDiff(in); d != "" {
			t.Fatal(d[:200])
		}
	}
}
