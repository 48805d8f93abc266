package main

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// parseSources parses package main's non-test files of this build.
func parseSources(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	all, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
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
		files[f] = af
	}
	return fset, files
}

// TestSlotsChosenOnce: one baton or --slots N is told apart in one place,
// candidate.hold, which picks the holding (oneBaton or slotHolding) whose
// methods do what differs; elsewhere only the checks of the parameters
// compare a --slots with 1. A comparison of anything named slots with the
// constant 1 or 2 anywhere else fails.
func TestSlotsChosenOnce(t *testing.T) {
	allowed := map[string]bool{
		"hold":            true, // the choice
		"checkRun":        true, // main.go: parameters that make no sense with --slots
		"checkRerunLimit": true, // command.go: likewise
	}
	fset, files := parseSources(t)
	isSlots := func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.Ident:
			return strings.EqualFold(e.Name, "slots")
		case *ast.SelectorExpr:
			return strings.EqualFold(e.Sel.Name, "slots")
		}
		return false
	}
	isOneOrTwo := func(e ast.Expr) bool {
		l, ok := e.(*ast.BasicLit)
		return ok && l.Kind == token.INT && (l.Value == "1" || l.Value == "2")
	}
	var found []string
	sites := 0
	for name, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fd, func(n ast.Node) bool {
				b, ok := n.(*ast.BinaryExpr)
				if !ok {
					return true
				}
				switch b.Op {
				case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
				default:
					return true
				}
				if !(isSlots(b.X) && isOneOrTwo(b.Y) || isSlots(b.Y) && isOneOrTwo(b.X)) {
					return true
				}
				if allowed[fd.Name.Name] {
					sites++
					return true
				}
				found = append(found, fset.Position(b.Pos()).String()+" in "+name+" "+fd.Name.Name)
				return true
			})
		}
	}
	if sites == 0 {
		t.Fatal("no comparison of --slots found in candidate.hold: the test no longer finds the choice")
	}
	sort.Strings(found)
	for _, f := range found {
		t.Errorf("one baton or slots decided outside candidate.hold: %s", f)
	}
}

// TestElectionMethodsInTheElection: the election value's methods are
// declared in the election layer's files only (none in the runner's: the
// run history, --once-key's records and the runs beside are values and
// functions of their own there), and in at most 3 files (candidate.go,
// baton.go, slots.go): the handover's steps are one baton's (oneBaton),
// the release's functions taking the candidate.
func TestElectionMethodsInTheElection(t *testing.T) {
	const maxFiles = 3
	election := map[string]bool{}
	for _, l := range layers {
		if l.name == "election" {
			for _, f := range l.files {
				election[f] = true
			}
		}
	}
	if len(election) == 0 {
		t.Fatal("no election layer in the layer table")
	}
	_, files := parseSources(t)
	in := map[string]int{}
	for name, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			recv := fd.Recv.List[0].Type
			if s, ok := recv.(*ast.StarExpr); ok {
				recv = s.X
			}
			if id, ok := recv.(*ast.Ident); ok && id.Name == "candidate" {
				in[name]++
				if !election[name] {
					t.Errorf("%s: (*candidate).%s is declared outside the election layer", name, fd.Name.Name)
				}
			}
		}
	}
	if len(in) == 0 {
		t.Fatal("no method of candidate found: the test no longer finds them")
	}
	if len(in) > maxFiles {
		t.Errorf("the candidate's methods are spread over %d files (%v); at most %d", len(in), in, maxFiles)
	}
}

// TestRunnerStateByConcern: the runner's state is grouped by concern (the
// session, the signals, run crontab's hooks, the running child, the
// backoff, reporting, the current leadership, the mode), and so is the
// election value's (candidate: its session and writer, the proposal's
// facts, the line, the baton, the history, what it publishes): at most 15
// fields at the top of each, so that either can be read at once.
func TestRunnerStateByConcern(t *testing.T) {
	const maxFields = 15
	_, files := parseSources(t)
	fields := map[string]int{}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, sp := range gd.Specs {
				ts := sp.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok || (ts.Name.Name != "runner" && ts.Name.Name != "candidate") {
					continue
				}
				n := 0
				for _, fl := range st.Fields.List {
					n += max(len(fl.Names), 1) // an embedded group counts once
				}
				fields[ts.Name.Name] = n
			}
		}
	}
	for _, name := range []string{"runner", "candidate"} {
		n, found := fields[name]
		switch {
		case !found:
			t.Errorf("type %s not found", name)
		case n > maxFields:
			t.Errorf("%s has %d fields at its top; at most %d: group them by concern", name, n, maxFields)
		}
	}
}
