package main

// ballot's records and outputs in JSON: jsonlite writes and reads them
// as encoding/json did (the nodes are read by other ballot versions and
// by operators' tools: a codec bug there is a safety bug).

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"ballot/internal/jsonlite"
	"ballot/internal/jsonlite/jsondiff"
)

// recordTypes: every type ballot writes or reads as JSON.
var recordTypes = []reflect.Type{
	reflect.TypeFor[proposalData](), reflect.TypeFor[healthStatus](), reflect.TypeFor[childStatus](),
	reflect.TypeFor[exitStatus](), reflect.TypeFor[scheduledNext](), reflect.TypeFor[handoverRecord](),
	reflect.TypeFor[batonRecord](), reflect.TypeFor[electionRecord](), reflect.TypeFor[leaderRecord](),
	reflect.TypeFor[cronRecord](), reflect.TypeFor[onceRecord](), reflect.TypeFor[stepDownRecord](),
	reflect.TypeFor[pauseRecord](), reflect.TypeFor[preemptStatus](), reflect.TypeFor[drainRecord](),
	reflect.TypeFor[triggerRecord](), reflect.TypeFor[historyEntry](), reflect.TypeFor[historyItem](),
	reflect.TypeFor[struct {
		Proposal string `json:"proposal"`
	}](), // baton.go's proposal check
	// The readers' --output json.
	reflect.TypeFor[leaderOutput](), reflect.TypeFor[[]leaderOutput](), reflect.TypeFor[infoElection](),
	reflect.TypeFor[[]jobEntry](), reflect.TypeFor[triggerReport](), reflect.TypeFor[historyReport](),
	reflect.TypeFor[watchEvent](),
	// The config file's values.
	reflect.TypeFor[bool](), reflect.TypeFor[string](), reflect.TypeFor[[]string](), reflect.TypeFor[[]jsonlite.RawMessage](),
}

// TestRecordJSONTypesListed: every type ballot's code gives jsonlite (or
// writeJSON) is in recordTypes, so that the tests below compare it with
// encoding/json: a new record type, or a field whose name an embedded
// struct's field shadows, is caught there.
func TestRecordJSONTypesListed(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	imports := map[string]bool{}
	names, _ := filepath.Glob("*.go")
	for _, f := range names {
		if ok, err := build.Default.MatchFile(".", f); err != nil || !ok || strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range af.Imports {
			imports[strings.Trim(is.Path.Value, `"`)] = true
		}
		files = append(files, af)
	}
	conf := types.Config{Importer: exportImporter(t, fset, imports)}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := conf.Check("main", fset, files, info); err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, rt := range recordTypes {
		listed[strings.ReplaceAll(rt.String(), " ", "")] = true
	}
	// The argument that is the value, by function.
	valueArg := map[string]int{"Marshal": 0, "Unmarshal": 1, "Decode": 1, "Encode": 1, "Append": 1, "writeJSON": 1}
	qual := func(p *types.Package) string { return p.Name() }
	seen := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var name string
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				if x, ok := fn.X.(*ast.Ident); ok && x.Name == "jsonlite" {
					name = fn.Sel.Name
				}
			case *ast.Ident:
				if fn.Name == "writeJSON" {
					name = fn.Name
				}
			}
			i, ok := valueArg[name]
			if !ok || i >= len(call.Args) {
				return true
			}
			typ := info.Types[call.Args[i]].Type
			if p, ok := typ.(*types.Pointer); ok {
				typ = p.Elem()
			}
			if types.IsInterface(typ) {
				return true // writeJSON's own call, and the log's values (log_test.go)
			}
			seen++
			if s := strings.ReplaceAll(types.TypeString(typ, qual), " ", ""); !listed[s] {
				t.Errorf("%s: %s is given %s, which recordTypes does not list", fset.Position(call.Pos()), name, s)
			}
			return true
		})
	}
	if seen < 40 {
		t.Errorf("found only %d calls", seen)
	}
}

// TestRecordJSONRandom: random values of every record type encode byte
// for byte as encoding/json encodes them, and inputs made from them
// (as written, cut, a byte changed, keys in other cases, duplicate keys,
// values of the wrong type) decode to the same value and error.
func TestRecordJSONRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 35))
	for _, typ := range recordTypes {
		for i := 0; i < 1500; i++ {
			if d := jsondiff.EncodeDiff(jsondiff.New(r, typ)); d != "" {
				t.Fatal(d)
			}
		}
		for _, in := range jsondiff.Inputs(r, typ, 2500) {
			if d := jsondiff.DecodeDiff(typ, in); d != "" {
				t.Fatal(d)
			}
		}
	}
}

// TestRecordJSONTable: records as ballot writes them, and as older and
// broken writers may have left them.
func TestRecordJSONTable(t *testing.T) {
	at := time.Date(2026, 11, 26, 6, 15, 0, 123000000, time.UTC)
	code := 3
	dur := int64(1500)
	values := []any{
		&proposalData{CandidateID: "a<b>&c", Host: "h\u2028", PID: 42, ProposalTime: at, SessionTimeout: "10s", SessionTimeoutMs: 10000,
			State: stateLeading, WrittenAt: at, FencingToken: 7, Child: &childStatus{PID: 43, Since: at}, LastExit: &exitStatus{Code: 1, At: at},
			NextRun: &scheduledNext{Time: "2026-11-26T07:00:00Z"}, Health: &healthStatus{Healthy: true}, SitsOutUntil: &at},
		&proposalData{},
		&batonRecord{handoverRecord: handoverRecord{State: handoverTaken, CandidateID: "x", At: at, Slot: 2}, LeaseMs: 5000},
		&historyEntry{Format: historyFormat, Kind: historyCron, ScheduledTime: &at, ExitCode: &code, DurationMs: &dur,
			Output: "line 1\nline 2\x00\xff\t\"quoted\" \\ <tag>", Trigger: &triggerRecord{ID: "t", By: "u@h", At: at}},
		&historyItem{Node: "run-0000000001", historyEntry: historyEntry{Kind: historyOnce}, State: "ended", mtime: 5},
		&onceRecord{Key: "2026-11-26", StartedAt: at, FinishedAt: &at, ExitCode: &code, TimedOut: true},
		&cronRecord{ScheduledTime: at, EndedAt: &at, Ended: "failed"},
		&jobEntry{Job: "j", Marks: []string{}, Candidates: []infoCandidate{}},
		&leaderOutput{leaderRecord: leaderRecord{Data: "d"}, Note: "n"},
		&proposalData{ProposalTime: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, // encoding/json refuses the year
	}
	for _, v := range values {
		if d := jsondiff.EncodeDiff(v); d != "" {
			t.Error(d)
		}
	}
	inputs := []string{
		`{"candidateId":"a","host":"h","pid":1,"proposalTime":"2026-01-02T03:04:05.123456789+01:00","sessionTimeout":"10s","sessionTimeoutMs":10000}`,
		`{"candidateId":"a","CANDIDATEID":"b","\u0063andidateId":"c"}`, `{"candidateId":"a","candidateId":null}`,
		`{"pid":"42"}`, `{"pid":4.2}`, `{"pid":1e2}`, `{"pid":9223372036854775808}`, `{"fencingToken":-9223372036854775808}`,
		`{"child":{"pid":1},"child":{"since":"2026-01-02T03:04:05Z"}}`, `{"child":null}`, `{"child":[]}`, `{"child":"x"}`,
		`{"proposalTime":"2026-01-02 03:04:05"}`, `{"proposalTime":"2026-13-02T03:04:05Z","host":"after"}`, `{"proposalTime":1}`,
		`{"sitsOutUntil":"2026-01-02T03:04:05Z"}`, `{"sitsOutUntil":"x"}`, `{"sitsOutUntil":null}`, `{"standby":"true"}`,
		`{"exitCode":0,"durationMs":null,"trigger":{"id":5,"by":"u"}}`, `{"format":2,"kind":"cron","future":{"a":[1,2]}}`,
		`{"state":"taken","lastRenewalMs":3,"slot":1}`, `{"batonWaitMs":5}`, `{"batonWaitMs":5,"other":1}`, `{"batonWaitMs":5} trailing`,
		`null`, `[]`, `"string"`, `5`, ``, `{`, `{"key":"\ud800\udc00\ud800"}`, "{\"key\":\"\xff\xfe\"}", `{"ſtate":"x","\u212a":1}`,
		`{"drained":[{"candidateId":"a"},{"by":"b"}],"drained":[{"reason":"r"}]}`, `{"marks":["a",1,null,"b"]}`,
	}
	for _, typ := range recordTypes {
		for _, in := range inputs {
			if d := jsondiff.DecodeDiff(typ, []byte(in)); d != "" {
				t.Error(d)
			}
		}
	}
}

// FuzzRecordJSON: go test -fuzz=FuzzRecordJSON -run '^$' .: any input
// decodes into every record type as encoding/json decodes it.
func FuzzRecordJSON(f *testing.F) {
	r := rand.New(rand.NewPCG(35, 1))
	for _, typ := range recordTypes[:19] {
		for _, in := range jsondiff.Inputs(r, typ, 3) {
			f.Add(in)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, typ := range recordTypes {
			if d := jsondiff.DecodeDiff(typ, in); d != "" {
				t.Fatal(d)
			}
		}
	})
}
