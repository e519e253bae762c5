package main

import (
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tap-dev/tap/streams"
)

const module = "github.com/tap-dev/tap"

// modulePackages reads every package of the module (directory relative to
// the module root → its non-test files), without the go command.
func modulePackages(t *testing.T) map[string]*build.Package {
	t.Helper()
	pkgs := map[string]*build.Package{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, build.ImportComment)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		pkgs[filepath.ToSlash(path)] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestPaginationTypesOwnTheirNames: a pagination type is one unit, its
// file streams/pagination_<type>.go (options, checks, page parameters,
// body fields, splice keys, paginator, doc line), registered by one row of
// streams/pagination.go. No other non-test file names what the unit
// declares, so adding a type touches its file and its row, and nothing
// else of the module has to know the type.
func TestPaginationTypesOwnTheirNames(t *testing.T) {
	// Files the unit's names may appear in besides its own.
	allowed := map[string]string{"streams/pagination.go": "the table of types"}
	// Packages that write stream definitions, as a user writes them: they
	// name the types they choose, and a new type needs nothing of them.
	writers := map[string]string{"initconfig": "tap init guesses the pagination of an API"}
	// Names that stand for more than their unit, and where.
	shared := map[string]map[string]string{
		"PageNone": {
			"streams/async.go":  "an async stream does not page",
			"streams/format.go": "a streamed body is one unpaged request",
			"streams/feed.go":   "a feed reads messages, not pages",
		},
	}
	fset := token.NewFileSet()
	declared := map[string]string{} // name → the unit's file
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			files = append(files, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, pt := range streams.PageTypes() {
		unit := "streams/pagination_" + pt.Name + ".go"
		f, err := parser.ParseFile(fset, unit, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("pagination type %q: its unit: %v", pt.Name, err)
			continue
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						declared[s.Name.Name] = unit
					case *ast.ValueSpec:
						for _, n := range s.Names {
							declared[n.Name] = unit
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv == nil {
					declared[d.Name.Name] = unit
				}
			}
		}
	}
	if len(declared) == 0 {
		t.Fatal("no pagination type declares anything: the units were not found")
	}
	complain := func(pos token.Pos, path, name string) {
		if unit := declared[name]; unit != "" && shared[name][path] == "" {
			t.Errorf("%s: %s names %s, which belongs to the unit %s: ask the unit (a method of streams.Pagination) instead", fset.Position(pos), path, name, unit)
		}
	}
	// Package streams names them bare: resolve each name, so that a local
	// variable called like a unit's name is not taken for it.
	var inStreams []*ast.File
	for _, path := range files {
		if filepath.Dir(path) == "streams" {
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			inStreams = append(inStreams, f)
		}
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{Importer: importer.ForCompiler(fset, "source", nil)}).Check(module+"/streams", fset, inStreams, info)
	if err != nil {
		t.Fatal(err)
	}
	for id, obj := range info.Uses {
		path := fset.Position(id.Pos()).Filename
		if obj.Parent() == pkg.Scope() && allowed[path] == "" && !strings.HasPrefix(path, "streams/pagination_") {
			complain(id.Pos(), path, obj.Name())
		}
	}
	// Other packages name them streams.X.
	for _, path := range files {
		if filepath.Dir(path) == "streams" || writers[filepath.Dir(path)] != "" {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if x, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "streams" {
					complain(x.Pos(), path, x.Sel.Name)
				}
			}
			return true
		})
	}
}

// TestImportArrows keeps the arrows one way: main → tap → {settings,
// records, streams, client, codec, demoapi, …}. Paginators plan requests
// and the run sends them, so streams and client never meet; the demo API
// is an API, not a tap.
func TestImportArrows(t *testing.T) {
	pkgs := modulePackages(t)
	// reach is every module package a package imports, directly or not,
	// in non-test code.
	memo := map[string][]string{}
	var reach func(dir string) []string
	reach = func(dir string) []string {
		if r, ok := memo[dir]; ok {
			return r
		}
		memo[dir] = nil // a cycle does not compile; this only ends the walk
		var r []string
		for _, imp := range pkgs[dir].Imports {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok || pkgs[rel] == nil {
				continue
			}
			r = append(r, rel)
			r = append(r, reach(rel)...)
		}
		slices.Sort(r)
		r = slices.Compact(r)
		memo[dir] = r
		return r
	}
	under := func(dir, root string) bool { return dir == root || strings.HasPrefix(dir, root+"/") }
	rules := []struct {
		from, to, why string
	}{
		{"streams", "tap", "streams never imports tap"},
		{"client", "tap", "client never imports tap"},
		{"settings", "tap", "tap imports settings, not the reverse"},
		{"records", "tap", "tap imports records, not the reverse"},
		{"codec", "tap", "tap imports codec, not the reverse"},
		{"streammap", "tap", "tap imports streammap, not the reverse"},
		{"demoapi", "tap", "demoapi is an API, not a tap"},
		{"demoapi", "client", "demoapi is an API, not a tap"},
		{"tap", "tap/command", "the commands sit on the engine: the engine never imports them"},
		{"tap", "tap/replay", "replay drives the engine: the engine never imports it"},
		{"tap/output", "tap", "the run imports its writers; the writers know messages, not the run"},
		{"tap/report", "tap", "a report job knows its protocol; the run keeps its id and reads its files"},
		{"tap/failure", "tap/state", "a failed request's letter is data; the run holds the bookmark"},
		{"tap/output", "client", "the writers know messages, not requests"},
		{"streams", "client", "paginators plan requests, the run sends them"},
		{"tap/state", "tap", "the run imports its state, not the reverse"},
		{"tap/catalog", "tap", "the run imports its catalog, not the reverse"},
		{"tap/catalog", "client", "a catalog describes streams; the run talks to the API"},
		{"tap/metrics", "tap", "the run counts into tap/metrics and hands it the client's stats; metrics never reaches into the run"},
		{"tap/connect", "tap", "the run asks for its connection; the connection knows the config, not the run"},
		{"tap/inputs", "tap/connect", "reading the inputs sends nothing: the run connects once they are checked"},
		{"tap/state", "client", "the state is data: the run, not its state, talks to the API"},
		{"tap/splice", "tap", "the run reads its pages through splice; splice knows pages, not the run"},
		{"tap/resume", "tap", "the run keeps its resume position in the tracker; the tracker knows pages, not the run"},
		{"tap/resume", "client", "the tracker keeps positions; the run sends the requests"},
		{"tap/splice", "client", "splice reads the bodies the run fetches"},
		{"tap/feed", "tap", "the run drives a feed through its Sink; the feed knows its protocol and its sequence, not the run"},
		{"tap/feed", "client", "a feed asks the run's client through feed.Client; it knows its protocol, not the client"},
		{"tap/deletes", "client", "a stream's deletes know what its records mean; the run sends the requests (deletes.Run)"},
		{"tap/mapped", "client", "the mapped outputs know records and maps; the run sends the requests"},
		{"tap/mapped", "tap/output", "the mapped outputs hand their records to the run, which writes them"},
		{"client", "streams", "paginators plan requests, the run sends them"},
	}
	// The engine never learns what a manifest is: its front end compiles
	// a manifest to the tap's own streams, which the commands hand over.
	for _, dep := range reach("tap") {
		if under(dep, "manifest") {
			t.Errorf("tap imports %s (directly or through another package): the engine runs compiled streams, whatever their front end", dep)
		}
	}
	checked := 0
	for dir := range pkgs {
		for _, r := range rules {
			if !under(dir, r.from) {
				continue
			}
			checked++
			for _, dep := range reach(dir) {
				if under(dep, r.to) {
					t.Errorf("%s imports %s (directly or through another package): %s", dir, dep, r.why)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no package matched a rule: the walk found no packages")
	}
}

// TestTypesStaySmall: the engine is made of owned parts (resume
// tracker, backfill windows, dead-letter hold, page writer, mapped
// outputs, metrics; a stream's node, its sink and its model), each behind
// the methods the others call, so that no type gathers every concern
// again (issue 39): in package tap no struct holds more than maxFields
// fields, counting those an embedded struct promotes, and in packages tap
// and streams no type carries more than maxMethods methods, promoted ones
// included.
func TestTypesStaySmall(t *testing.T) {
	const maxFields, maxMethods = 15, 25
	pkgs := modulePackages(t)
	for _, dir := range []string{"tap", "streams"} {
		p := pkgs[dir]
		if p == nil || len(p.GoFiles) == 0 {
			t.Fatalf("package %s not found", dir)
		}
		sizes := typeSizes(t, dir, p.GoFiles)
		if len(sizes) == 0 {
			t.Fatalf("no type found in package %s: the parse found nothing", dir)
		}
		for _, name := range slices.Sorted(maps.Keys(sizes)) {
			got, key := sizes[name], dir+"."+name
			if got.methods > 10 || (dir == "tap" && got.fields > 10) {
				t.Logf("%-22s %2d fields %2d methods", key, got.fields, got.methods) // go test -v -run TestTypesStaySmall .
			}
			if dir == "tap" && got.fields > maxFields {
				t.Errorf("%s has %d fields (promoted ones counted), more than %d: carve a part out of it", key, got.fields, maxFields)
			}
			if got.methods > maxMethods {
				t.Errorf("%s has %d methods (promoted ones counted), more than %d: carve a part out of it", key, got.methods, maxMethods)
			}
		}
	}
}

// typeSize is a type's fields and methods, promoted ones counted.
type typeSize struct{ fields, methods int }

// typeSizes counts the fields and methods of the named types declared in
// files of dir. A field embedding a struct of the same package counts
// that struct's fields and methods (recursively) in place of itself.
func typeSizes(t *testing.T, dir string, files []string) map[string]typeSize {
	t.Helper()
	fset := token.NewFileSet()
	structs := map[string]*ast.StructType{}
	methods := map[string]int{}
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok {
						if st, ok := ts.Type.(*ast.StructType); ok {
							structs[ts.Name.Name] = st
						} else if _, ok := methods[ts.Name.Name]; !ok {
							methods[ts.Name.Name] = 0
						}
					}
				}
			case *ast.FuncDecl:
				if d.Recv != nil {
					methods[receiverName(d.Recv.List[0].Type)]++
				}
			}
		}
	}
	var size func(name string, depth int) typeSize
	size = func(name string, depth int) typeSize {
		s := typeSize{methods: methods[name]}
		st := structs[name]
		if st == nil || depth > 8 {
			return s
		}
		for _, fl := range st.Fields.List {
			if len(fl.Names) > 0 {
				s.fields += len(fl.Names)
				continue
			}
			if inner := receiverName(fl.Type); structs[inner] != nil {
				in := size(inner, depth+1)
				s.fields += in.fields
				s.methods += in.methods
				continue
			}
			s.fields++ // an embedded type of another package, or an interface
		}
		return s
	}
	out := map[string]typeSize{}
	for name := range structs {
		out[name] = size(name, 0)
	}
	for name := range methods {
		if _, ok := out[name]; !ok {
			out[name] = size(name, 0)
		}
	}
	return out
}

// receiverName is the type name of a receiver or embedded field: T, *T,
// T[P] or *T[P].
func receiverName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// TestTapFilesNotNamedForItsParts keeps each concern of the engine in its
// owner: a file of tap/ (test or not) named for one of tap's packages —
// tap/<part>.go, <part>s.go, <part>er.go, <part>_….go, their tests —
// restates that part's concern, and a file named for a file of
// tap/command (a run mode: check, infer, testrun, …) restates the
// command's. What the engine does for a part is named for what it does
// (listen.go for a feed, tombstone.go for deletes); the part's own code
// lives in the part.
func TestTapFilesNotNamedForItsParts(t *testing.T) {
	entries, err := os.ReadDir("tap")
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]string{} // a name a file must not have → the part it restates
	var files []string
	for _, e := range entries {
		if !e.IsDir() {
			if strings.HasSuffix(e.Name(), ".go") {
				files = append(files, e.Name())
			}
			continue
		}
		if p, err := build.ImportDir(filepath.Join("tap", e.Name()), 0); err != nil || len(p.GoFiles) == 0 {
			continue // not a package
		}
		parts[e.Name()] = "tap/" + e.Name()
	}
	cmds, err := filepath.Glob("tap/command/*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		if name := filepath.Base(c); !strings.HasSuffix(name, "_test.go") {
			parts[strings.TrimSuffix(name, ".go")] = c
		}
	}
	if len(parts) < 10 || len(files) < 10 {
		t.Fatalf("found %d parts and %d files in tap/: the walk found nothing", len(parts), len(files))
	}
	for _, f := range files {
		stem := strings.TrimSuffix(strings.TrimSuffix(f, ".go"), "_test")
		for part, where := range parts {
			rest, ok := strings.CutPrefix(stem, part)
			if ok && (rest == "" || rest == "s" || rest == "er" || rest == "r" || strings.HasPrefix(rest, "_")) {
				t.Errorf("tap/%s is named for %s: fold it into its owner, or name it for what the engine does", f, where)
			}
		}
	}
}
