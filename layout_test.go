package main

import (
	"bytes"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/tap-dev/tap"

// maxLines is how many lines of non-test Go a package may hold: past it a
// package has more than one job and a newcomer cannot hold it in mind.
const maxLines = 2500

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

// nonTestLines counts lines as wc -l does, over every non-test Go file of
// the directory whatever its build constraints.
func nonTestLines(t *testing.T, dir string, p *build.Package) int {
	t.Helper()
	n := 0
	for _, f := range slices.Concat(p.GoFiles, p.CgoFiles, p.IgnoredGoFiles) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		n += bytes.Count(b, []byte("\n"))
	}
	return n
}

func TestPackageSize(t *testing.T) {
	pkgs := modulePackages(t)
	for dir, p := range pkgs {
		if n := nonTestLines(t, dir, p); n > maxLines {
			t.Errorf("%s: %d lines of non-test code, more than %d: split it by concern", dir, n, maxLines)
		}
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
		{"tap/splice", "client", "splice reads the bodies the run fetches"},
		{"client", "streams", "paginators plan requests, the run sends them"},
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
