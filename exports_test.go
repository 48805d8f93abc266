// The packages under internal/ export only what crosses their boundary:
// a name exported but used by no non-test file outside its package is
// one a reader must take for part of the boundary when it is not.

package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// exportChecked: the packages whose every exported name must cross.
var exportChecked = []string{
	"internal/bootclock", "internal/zookeeper", "internal/keeper", "internal/jsonlite", "internal/slog",
}

// exportAllowed: exported names kept although no non-test file outside
// uses them, each with why.
var exportAllowed = map[string]string{
	// slog mirrors log/slog: log_test.go checks log.go's handlers against
	// log/slog's, making records and loggers as log/slog's callers do
	// (the linker leaves out what the binary does not call).
	"slog.Int":              "log_test.go",
	"slog.Int64":            "log_test.go",
	"slog.Duration":         "log_test.go",
	"slog.Group":            "log_test.go",
	"slog.KindAny":          "log_test.go",
	"slog.NewRecord":        "log_test.go",
	"slog.Record.Add":       "log_test.go",
	"slog.Record.AddAttrs":  "log_test.go",
	"slog.Logger.Handler":   "log_test.go",
	"slog.Logger.WithGroup": "log_test.go",
	"slog.Logger.Log":       "log_test.go",
	// The unit tests of what rests on a session (the baton's records, the
	// handover's credit, the lease) need a session's id and timeout
	// without a ZooKeeper; nothing that crosses makes one.
	"zookeeper.Detached": "baton_test.go, lease_test.go",
}

// TestPackagesExportOnlyWhatCrosses: every exported name of the packages
// above (top-level names, methods, struct fields, interface methods) is
// used by a non-test file of another of ballot's packages, in at least
// one build. An exported method also crosses when it satisfies an
// interface defined elsewhere (error's Error, fmt.Stringer's String,
// errors' Unwrap, one of package main's), an interface's method when a
// type outside implements it, and a type when its values cross (a
// crossing function's result, a crossing field's type).
func TestPackagesExportOnlyWhatCrosses(t *testing.T) {
	t.Parallel()
	dirs := []string{"."}
	for _, l := range layers {
		for _, f := range l.files {
			if strings.HasPrefix(f, "internal/") {
				dirs = append(dirs, f)
			}
		}
	}
	fset := token.NewFileSet()
	parsed := map[string][]*ast.File{} // by directory, every non-test file
	imports := map[string]bool{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			parsed[dir] = append(parsed[dir], af)
			for _, is := range af.Imports {
				if p := strings.Trim(is.Path.Value, `"`); !strings.HasPrefix(p, "ballot/") {
					imports[p] = true
				}
			}
		}
	}
	ext := exportImporter(t, fset, imports)

	defined := map[string]string{} // "dir Type.Name" → where
	used := map[string]bool{}
	for _, b := range []struct {
		goos string
		tags []string
	}{{"linux", nil}, {"linux", []string{"ballot_notls"}}, {"darwin", nil}} {
		ctx := build.Default
		ctx.GOOS, ctx.BuildTags = b.goos, b.tags
		u := &srcUniverse{t: t, fset: fset, ctx: ctx, parsed: parsed, ext: ext, pkgs: map[string]*srcPkg{}}
		for _, dir := range dirs {
			u.load(dir)
		}
		// On Linux a type error would mean uses unresolved, so missed; the
		// standard library's export data is Linux's, so darwin's files may
		// meet some (as in TestLayers).
		if b.goos == "linux" && len(u.errs) > 0 {
			t.Fatalf("GOOS=%s tags %v: %d type errors, the first: %v", b.goos, b.tags, len(u.errs), u.errs[0])
		}
		for _, dir := range exportChecked {
			for k, where := range u.exported(dir) {
				defined[dir+" "+k] = where
			}
			for k := range u.crossing(dir) {
				used[dir+" "+k] = true
			}
		}
	}

	count := map[string]int{}
	for k := range defined {
		dir, _, _ := strings.Cut(k, " ")
		count[dir]++
	}
	for _, dir := range exportChecked {
		t.Logf("%s: %d exported names", dir, count[dir])
	}
	var bad []string
	for k, where := range defined {
		if used[k] {
			continue
		}
		dir, name, _ := strings.Cut(k, " ")
		if why, ok := exportAllowed[filepath.Base(dir)+"."+name]; ok && why != "" {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s: %s.%s is exported, and no non-test file outside %s uses it", where, filepath.Base(dir), name, dir))
	}
	for name := range exportAllowed {
		pkg, n, _ := strings.Cut(name, ".")
		k := "internal/" + pkg + " " + n
		if _, ok := defined[k]; !ok {
			t.Errorf("exportAllowed names %s, which is not exported", name)
		} else if used[k] {
			t.Errorf("exportAllowed names %s, which crosses anyway: drop it from the list", name)
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

type srcPkg struct {
	pkg  *types.Package
	info *types.Info
}

// srcUniverse type-checks ballot's packages from source, one build, so
// an object used in one package is the very object defined in another;
// other packages come from export data.
type srcUniverse struct {
	t      *testing.T
	fset   *token.FileSet
	ctx    build.Context
	parsed map[string][]*ast.File
	ext    types.Importer
	pkgs   map[string]*srcPkg
	errs   []error
}

func (u *srcUniverse) Import(path string) (*types.Package, error) {
	if dir, ok := strings.CutPrefix(path, "ballot/"); ok {
		return u.load(dir).pkg, nil
	}
	return u.ext.Import(path)
}

func (u *srcUniverse) load(dir string) *srcPkg {
	if p, ok := u.pkgs[dir]; ok {
		return p
	}
	var files []*ast.File
	for _, af := range u.parsed[dir] {
		f := u.fset.Position(af.Pos()).Filename
		if ok, err := u.ctx.MatchFile(filepath.Dir(f), filepath.Base(f)); err != nil {
			u.t.Fatal(err)
		} else if ok {
			files = append(files, af)
		}
	}
	conf := types.Config{Importer: u, Error: func(err error) { u.errs = append(u.errs, err) }}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}}
	path := "ballot/" + dir
	if dir == "." {
		path = "main"
	}
	pkg, _ := conf.Check(path, u.fset, files, info)
	p := &srcPkg{pkg, info}
	u.pkgs[dir] = p
	return p
}

// members: every exported name of the package in dir, by its key (Name,
// or Type.Name for a method, field or interface method), including the
// exported methods and fields of unexported types, which a value handed
// out carries across too.
func (u *srcUniverse) members(dir string) map[types.Object]string {
	pkg := u.pkgs[dir].pkg
	m := map[types.Object]string{}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if obj.Exported() {
			m[obj] = name
		}
		tn, ok := obj.(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		named, ok := tn.Type().(*types.Named)
		if !ok {
			continue
		}
		for i := 0; i < named.NumMethods(); i++ {
			if f := named.Method(i); f.Exported() {
				m[f] = name + "." + f.Name()
			}
		}
		switch under := named.Underlying().(type) {
		case *types.Struct:
			for i := 0; i < under.NumFields(); i++ {
				f := under.Field(i)
				if f.Embedded() && embeddedFrom(f.Type()) != pkg {
					continue // named after another package's type, not this one's
				}
				if f.Exported() {
					m[f] = name + "." + f.Name()
				}
			}
		case *types.Interface:
			for i := 0; i < under.NumExplicitMethods(); i++ {
				if f := under.ExplicitMethod(i); f.Exported() {
					m[f] = name + "." + f.Name()
				}
			}
		}
	}
	return m
}

// exported: the keys of members, each with where it is defined.
func (u *srcUniverse) exported(dir string) map[string]string {
	out := map[string]string{}
	for obj, k := range u.members(dir) {
		p := u.fset.Position(obj.Pos())
		out[k] = fmt.Sprintf("%s:%d", filepath.ToSlash(p.Filename), p.Line)
	}
	return out
}

// crossing: the keys of the members of dir's package that cross.
func (u *srcUniverse) crossing(dir string) map[string]bool {
	own := u.pkgs[dir].pkg
	members := u.members(dir)
	out := map[string]bool{}
	// Named once outside.
	var ifaces []*types.Interface
	var outsideTypes []types.Type
	seen := map[types.Type]bool{}
	for odir, p := range u.pkgs {
		if odir == dir || p.pkg == nil {
			continue
		}
		for _, obj := range p.info.Uses {
			if obj == nil || obj.Pkg() != own {
				continue
			}
			if o, ok := obj.(interface{ Origin() types.Object }); ok {
				obj = o.Origin()
			}
			if k, ok := members[obj]; ok {
				out[k] = true
			}
		}
		for _, tv := range p.info.Types {
			if tv.Type == nil || seen[tv.Type] {
				continue
			}
			seen[tv.Type] = true
			if n, ok := tv.Type.(*types.Named); ok && n.Obj().Pkg() == own {
				continue // its own: below, where its methods cross
			}
			if i, ok := tv.Type.Underlying().(*types.Interface); ok {
				ifaces = append(ifaces, i)
			}
		}
		for _, name := range p.pkg.Scope().Names() {
			if tn, ok := p.pkg.Scope().Lookup(name).(*types.TypeName); ok {
				outsideTypes = append(outsideTypes, tn.Type())
			}
		}
	}
	// The interfaces of every package imported from export data (error's,
	// fmt.Stringer, io's, …).
	ifaces = append(ifaces, types.Universe.Lookup("error").Type().Underlying().(*types.Interface))
	// errors calls these through interfaces of its own, unexported.
	errType := types.Universe.Lookup("error").Type()
	anyType := types.Universe.Lookup("any").Type()
	for _, m := range []struct {
		name   string
		param  types.Type
		result types.Type
	}{{"Unwrap", nil, errType}, {"Unwrap", nil, types.NewSlice(errType)}, {"Is", errType, types.Typ[types.Bool]}, {"As", anyType, types.Typ[types.Bool]}} {
		var params *types.Tuple
		if m.param != nil {
			params = types.NewTuple(types.NewParam(token.NoPos, nil, "", m.param))
		}
		sig := types.NewSignatureType(nil, nil, nil, params, types.NewTuple(types.NewParam(token.NoPos, nil, "", m.result)), false)
		i := types.NewInterfaceType([]*types.Func{types.NewFunc(token.NoPos, nil, m.name, sig)}, nil)
		i.Complete()
		ifaces = append(ifaces, i)
	}
	for _, p := range u.pkgs {
		if p.pkg == nil {
			continue
		}
		for _, imp := range p.pkg.Imports() {
			if strings.HasPrefix(imp.Path(), "ballot/") {
				continue
			}
			for _, name := range imp.Scope().Names() {
				if tn, ok := imp.Scope().Lookup(name).(*types.TypeName); ok && tn.Exported() {
					if i, ok := tn.Type().Underlying().(*types.Interface); ok {
						ifaces = append(ifaces, i)
					}
				}
			}
		}
	}
	implements := func(t types.Type, i *types.Interface) bool {
		if i.Empty() {
			return false
		}
		if types.Implements(t, i) {
			return true
		}
		_, isIface := t.Underlying().(*types.Interface)
		return !isIface && types.Implements(types.NewPointer(t), i)
	}
	scope := own.Scope()
	var ownIfaces []*types.Interface
	// An interface's methods cross when a type outside implements it.
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok {
			continue
		}
		i, ok := tn.Type().Underlying().(*types.Interface)
		if !ok {
			continue
		}
		for _, ot := range outsideTypes {
			if implements(ot, i) {
				for j := 0; j < i.NumMethods(); j++ {
					if k, ok := members[i.Method(j)]; ok {
						out[k] = true
					}
				}
				break
			}
		}
		ownIfaces = append(ownIfaces, i)
	}
	// A method crosses when it satisfies an interface of another package,
	// or of its own whose method crosses.
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		named, ok := tn.Type().(*types.Named)
		if !ok {
			continue
		}
		if _, ok := named.Underlying().(*types.Interface); ok {
			continue
		}
		for m := 0; m < named.NumMethods(); m++ {
			f := named.Method(m)
			k, ok := members[f]
			if !ok || out[k] {
				continue
			}
			for _, i := range ifaces {
				if _, ok := hasMethod(i, f.Name()); ok && implements(named, i) {
					out[k] = true
					break
				}
			}
			for _, i := range ownIfaces {
				if im, ok := hasMethod(i, f.Name()); ok && out[members[im]] && implements(named, i) {
					out[k] = true
					break
				}
			}
		}
	}
	// A type crosses when its values do: the type of a field, variable or
	// constant that crosses, or in the signature of a function that does.
	byKey := map[string]types.Object{}
	for obj, k := range members {
		byKey[k] = obj
	}
	var mark func(types.Type)
	marked := map[types.Type]bool{}
	mark = func(t types.Type) {
		if marked[t] {
			return
		}
		marked[t] = true
		switch t := t.(type) {
		case *types.Named:
			if k, ok := members[t.Obj()]; ok {
				out[k] = true
			}
			for i := 0; i < t.TypeArgs().Len(); i++ {
				mark(t.TypeArgs().At(i))
			}
		case *types.Pointer:
			mark(t.Elem())
		case *types.Slice:
			mark(t.Elem())
		case *types.Array:
			mark(t.Elem())
		case *types.Map:
			mark(t.Key())
			mark(t.Elem())
		case *types.Chan:
			mark(t.Elem())
		case *types.Signature:
			for i := 0; i < t.Params().Len(); i++ {
				mark(t.Params().At(i).Type())
			}
			for i := 0; i < t.Results().Len(); i++ {
				mark(t.Results().At(i).Type())
			}
		}
	}
	for k := range out {
		if _, ok := byKey[k].(*types.TypeName); !ok {
			mark(byKey[k].Type())
		}
	}
	return out
}

func hasMethod(i *types.Interface, name string) (*types.Func, bool) {
	for j := 0; j < i.NumMethods(); j++ {
		if m := i.Method(j); m.Name() == name {
			return m, true
		}
	}
	return nil, false
}

// embeddedFrom: the package of an embedded field's type.
func embeddedFrom(t types.Type) *types.Package {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Pkg()
	}
	return nil
}
