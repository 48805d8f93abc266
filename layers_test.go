// The layers of package main, bottom to top, and the test that keeps
// them: a file may use what its own layer and the layers below define,
// never what a layer above defines. The table is also the map README's
// "Reading the code" follows.

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// layers, bottom to top: "Reading the code" (docs/code.md) walks the same
// table. A new non-test file must be placed in one. An entry under
// internal/ is a package: it may import only packages of its own layer
// and those below.
var layers = []struct {
	name  string
	files []string
}{
	// Cron expressions: gronx, copied without its regexps, which linked
	// regexp into the binary.
	{"cron", []string{"internal/gronx"}},
	// JSON as encoding/json writes and reads it, for ballot's types (the
	// records, the config file, the readers' output); jsondiff, which
	// only tests import, checks it against encoding/json.
	{"json", []string{"internal/jsonlite", "internal/jsonlite/jsondiff"}},
	// The part of log/slog ballot uses, without log/slog's default
	// handler, which links encoding/json.
	{"slog", []string{"internal/slog"}},
	// The boot clock and kernel alarms on it: below both the lease and
	// the keeper, which pass deadlines to each other on it.
	{"boot clock", []string{"internal/bootclock"}},
	// Sessions, access, TLS and the wire: a package that knows nothing
	// of elections.
	{"zookeeper", []string{"internal/zookeeper"}},
	// The process between ballot and the command: a package, a second
	// process whose pipe protocol is its boundary. Like every package
	// under internal/ it knows nothing of package main, so it sits below
	// all of it.
	{"keeper", []string{"internal/keeper"}},
	// Words every layer shares: clocks and the platform, errors, exit
	// codes, the log and its events, the lease's and the cron schedule's
	// arithmetic, systemd, redaction, the baton's state value.
	{"ground", []string{
		"clock.go", "proc_linux.go", "platform_other.go", "chans.go", "errors.go",
		"exitcodes.go", "version.go", "log.go", "events.go", "leaseterms.go", "cronschedule.go",
		"notify.go", "redact.go", "batonstate.go", "stdlite.go", "url_tls.go", "url_notls.go", "heapprof.go",
		"restmem.go",
	}},
	// What ballot was asked to do, and the ZooKeeper layer's settings
	// taken from it.
	{"config", []string{"config.go", "values.go", "zkparams.go"}},
	// The command as ballot sees it: a keeper started with it or ahead of
	// it, and its output.
	{"child", []string{"child.go", "childoutput.go", "keeperidle.go"}},
	// What ballot keeps in ZooKeeper: the nodes and their data.
	{"records", []string{"nodes.go", "historyrecord.go"}},
	// The recipe: a proposal, the line, the baton and what passes it on.
	{"election", []string{
		"snapshot.go", "proposal.go", "candidate.go", "election.go", "publisher.go", "baton.go", "handover.go",
		"release.go", "standby.go", "slots.go", "controls.go",
	}},
	// Read-only commands, on the election's snapshot; below the lease and
	// the runner, so nothing of a leadership is in their reach.
	{"readers", []string{
		"info.go", "info_model.go", "info_summary.go", "info_human.go", "jobs.go", "jobs_list.go", "watch.go", "watch_events.go",
		"history_read.go", "check.go",
	}},
	// How long a leader may still act, and why a leadership ended.
	{"lease", []string{"lease.go", "outcome.go", "metrics.go"}},
	// One process running a command: a candidacy's life, what a leader
	// does while it leads (run once, run cron), the command under the
	// lease, hooks, health, the leader node.
	{"runner", []string{
		"run.go", "leadership.go", "leading.go", "follow.go", "transition.go", "strategy.go", "once.go", "onceclaim.go",
		"cron.go", "cronallow.go", "cronclock.go", "history.go", "supervise.go", "command.go", "hooks.go", "health.go",
		"preempt.go", "ping.go", "pingtls_on.go", "pingtls_off.go", "leader.go", "trigger.go", "drain.go",
	}},
	// The entry points (ballot's, its keeper's), the parameters and help.
	{"main", []string{"main.go", "keepermain.go", "cmdline.go", "params.go", "configfile.go", "paramdocs.go", "help.go", "crontab.go", "crontabrun.go", "crontabspread.go"}},
}

// upRef is one use of a name defined in a higher layer.
type upRef struct{ file, name, def string }

func TestLayers(t *testing.T) {
	t.Parallel()
	layerOf := map[string]int{}
	for i, l := range layers {
		for _, f := range l.files {
			if _, dup := layerOf[f]; dup {
				t.Errorf("%s is in two layers", f)
			}
			layerOf[f] = i
		}
	}
	all, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, f := range all {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		sources = append(sources, f)
		if _, ok := layerOf[f]; !ok {
			t.Errorf("%s is in no layer: add it to the table in layers_test.go", f)
		}
	}
	for f, i := range layerOf {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the layer table names %s, which does not exist", f)
		}
		if strings.HasPrefix(f, "internal/") {
			for _, imp := range packageImports(t, f) {
				dep := strings.TrimPrefix(imp, "ballot/")
				if j, ok := layerOf[dep]; ok && j > i {
					t.Errorf("%s (%s) imports %s (%s)", f, layers[i].name, dep, layers[j].name)
				} else if !ok && dep != imp {
					t.Errorf("%s imports %s, which is in no layer", f, dep)
				}
			}
		}
	}

	// Each build a file may be part of: Linux, Linux without TLS, elsewhere.
	builds := []struct {
		goos string
		tags []string
	}{{"linux", nil}, {"linux", []string{"ballot_notls"}}, {"darwin", nil}}
	fset := token.NewFileSet()
	parsed := map[string]*ast.File{}
	imports := map[string]bool{}
	for _, f := range sources {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		parsed[f] = af
		for _, is := range af.Imports {
			path := strings.Trim(is.Path.Value, `"`)
			imports[path] = true
			// A file of package main may import a package of its own
			// layer or below, never one above.
			if dep, ok := strings.CutPrefix(path, "ballot/"); ok {
				if j, ok := layerOf[dep]; !ok {
					t.Errorf("%s imports %s, which is in no layer", f, dep)
				} else if j > layerOf[f] {
					t.Errorf("%s (%s) imports %s (%s)", f, layers[layerOf[f]].name, dep, layers[j].name)
				}
			}
		}
	}
	imp := exportImporter(t, fset, imports)

	found := map[upRef]bool{}
	for _, b := range builds {
		ctx := build.Default
		ctx.GOOS, ctx.BuildTags = b.goos, b.tags
		var files []*ast.File
		for _, f := range sources {
			if ok, err := ctx.MatchFile(".", f); err != nil {
				t.Fatal(err)
			} else if ok {
				files = append(files, parsed[f])
			}
		}
		// The standard library's export data is Linux's: another GOOS's
		// files meet type errors, no concern here (only the uses are). On
		// Linux an error would mean uses unresolved, so missed.
		var typeErrs []error
		conf := types.Config{Importer: imp, Error: func(err error) { typeErrs = append(typeErrs, err) }}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
		pkg, _ := conf.Check("main", fset, files, info)
		if b.goos == "linux" && len(typeErrs) > 0 {
			t.Errorf("GOOS=%s tags %v: %d type errors, the first: %v", b.goos, b.tags, len(typeErrs), typeErrs[0])
		}
		for id, obj := range info.Uses {
			if !crossFile(pkg, obj) {
				continue
			}
			if o, ok := obj.(interface{ Origin() types.Object }); ok {
				obj = o.Origin()
			}
			use := filepath.Base(fset.Position(id.Pos()).Filename)
			def := filepath.Base(fset.Position(obj.Pos()).Filename)
			if use != def && layerOf[use] < layerOf[def] {
				found[upRef{use, qualName(obj), def}] = true
			}
		}
	}

	var refs []upRef
	pairs := map[[2]string]bool{}
	for r := range found {
		refs = append(refs, r)
		pairs[[2]string{r.file, r.def}] = true
	}
	sort.Slice(refs, func(i, j int) bool {
		a, b := refs[i], refs[j]
		if a.file != b.file {
			return a.file < b.file
		}
		if a.def != b.def {
			return a.def < b.def
		}
		return a.name < b.name
	})
	t.Logf("%d upward references (%d file pairs)", len(refs), len(pairs))
	for _, r := range refs {
		t.Errorf("%s (%s) uses %s from %s (%s)", r.file, layers[layerOf[r.file]].name, r.name, r.def, layers[layerOf[r.def]].name)
	}
}

// TestLayersMap: "Reading the code" (docs/code.md) lists the same layers and
// files, in the same order, one line a file.
func TestLayersMap(t *testing.T) {
	section := section(t, readme(t), "## Reading the code")
	var want, got []string
	for _, l := range layers {
		for _, f := range l.files {
			want = append(want, l.name+" "+f)
		}
	}
	layer := ""
	for _, line := range strings.Split(section, "\n") {
		if name, ok := strings.CutPrefix(line, "**"); ok {
			name, _, _ = strings.Cut(name, "**")
			layer = strings.ToLower(name)
		} else if file, ok := strings.CutPrefix(line, "- ["); ok {
			file, _, _ = strings.Cut(file, "]")
			got = append(got, layer+" "+file)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/code.md's Reading the code lists (layer file):\n%s\nlayers_test.go's table:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// packageImports: what the non-test files of the package in dir import.
func packageImports(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var imports []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range af.Imports {
			imports = append(imports, strings.Trim(is.Path.Value, `"`))
		}
	}
	return imports
}

// crossFile: obj is package main's and declared where a use in another
// file depends on it: at package level, a method, or a field.
func crossFile(pkg *types.Package, obj types.Object) bool {
	if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
		return false
	}
	switch o := obj.(type) {
	case *types.PkgName, *types.Label:
		return false
	case *types.Func:
		return o.Parent() == pkg.Scope() || o.Type().(*types.Signature).Recv() != nil
	case *types.Var:
		return o.IsField() || o.Parent() == pkg.Scope()
	}
	return obj.Parent() == pkg.Scope()
}

// qualName: a name as a reader finds it, methods and fields with their type.
func qualName(obj types.Object) string {
	switch o := obj.(type) {
	case *types.Func:
		if r := o.Type().(*types.Signature).Recv(); r != nil {
			return recvName(r.Type()) + "." + o.Name()
		}
	case *types.Var:
		if o.IsField() {
			return "field " + o.Name()
		}
	}
	return obj.Name()
}

func recvName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name()
	}
	return t.String()
}

// exportImporter reads the compiled export data of the imported packages,
// which `go list -export` finds in the build cache (go vet and the test's
// own build put it there) or adds to it.
func exportImporter(t *testing.T, fset *token.FileSet, imports map[string]bool) types.Importer {
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}"}
	if raceEnabled {
		args = append(args, "-race") // the export data this test binary was built with, cached
	}
	for p := range imports {
		args = append(args, p)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("go", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	export := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if p, f, ok := strings.Cut(sc.Text(), " "); ok && f != "" {
			export[p] = f
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := export[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
}
