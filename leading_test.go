package main

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"ballot/internal/slog"
)

// TestModeChosenOnce: the mode and its rules, from the settings, as
// newLeaderWork chooses them once at start (README: run once, run cron,
// --once-key, --preempt-after, --on-run-end).
func TestModeChosenOnce(t *testing.T) {
	every := everySchedule{every: time.Minute}
	cases := []struct {
		name  string
		set   Settings
		sched schedule
		cron  bool
		want  runRules
	}{
		{"run once", Settings{Args: []string{"true"}}, nil, false,
			runRules{prestart: true, preempts: true}},
		{"run once, hooks only", Settings{OnPromote: []string{"true"}}, nil, false,
			runRules{preempts: true}},
		// A once key's run is recorded, and never cut short to hand over.
		{"run once --once-key", Settings{Args: []string{"true"}, OnceKey: "k"}, nil, false,
			runRules{records: true, prestart: true}},
		{"run cron", Settings{Args: []string{"true"}}, every, true,
			runRules{scheduled: true, records: true, preempts: true, triggered: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := tc.set
			r := &runner{set: &set, log: newLogger(io.Discard, "human", slog.LevelInfo)}
			w, rules := newLeaderWork(r, tc.sched)
			if _, cron := w.(*cronWork); cron != tc.cron {
				t.Errorf("work %T, want run cron's: %v", w, tc.cron)
			}
			if rules != tc.want {
				t.Errorf("rules %+v, want %+v", rules, tc.want)
			}
		})
	}
}

// TestLeaderWorkSeesOnlyTheView: the leader's work (run once's, run
// cron's) reaches its leadership through leaderView only: no expression in
// its methods is the candidate or the lease. Only the follower's hooks
// (before it leads) are handed the candidate.
func TestLeaderWorkSeesOnlyTheView(t *testing.T) {
	t.Parallel()
	works := map[string]bool{"onceWork": true, "cronWork": true, "cronLeader": true}
	followerHooks := map[string]bool{"proposed": true, "beforeFollowing": true, "whileFollowing": true}
	all, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	imports := map[string]bool{}
	for _, f := range all {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(".", f); err != nil || !ok {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, af)
		for _, is := range af.Imports {
			imports[strings.Trim(is.Path.Value, `"`)] = true
		}
	}
	conf := types.Config{Importer: exportImporter(t, fset, imports)}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := conf.Check("main", fset, files, info); err != nil {
		t.Fatal(err)
	}
	isElection := func(tv types.Type) bool {
		if p, ok := tv.(*types.Pointer); ok {
			tv = p.Elem()
		}
		n, ok := tv.(*types.Named)
		return ok && (n.Obj().Name() == "candidate" || n.Obj().Name() == "lease") && n.Obj().Pkg().Name() == "main"
	}
	var found []string
	checked := 0
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || followerHooks[fd.Name.Name] {
				continue
			}
			recv := fd.Recv.List[0].Type
			if s, ok := recv.(*ast.StarExpr); ok {
				recv = s.X
			}
			if id, ok := recv.(*ast.Ident); !ok || !works[id.Name] {
				continue
			}
			checked++
			ast.Inspect(fd, func(n ast.Node) bool {
				if e, ok := n.(ast.Expr); ok {
					if tv, ok := info.Types[e]; ok && tv.Type != nil && isElection(tv.Type) {
						found = append(found, fset.Position(e.Pos()).String()+" in "+fd.Name.Name)
					}
				}
				return true
			})
		}
	}
	if checked < 20 {
		t.Fatalf("%d methods of the works checked: the test no longer finds them", checked)
	}
	sort.Strings(found)
	for _, f := range found {
		t.Errorf("the leader's work reaches the candidate or the lease: %s", f)
	}
}
