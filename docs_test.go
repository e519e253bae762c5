package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/tap-dev/tap/tap/inputs"
)

// The docs mark what a test checks with an HTML comment on the line before
// a fenced code block (GitHub shows neither the comment nor its words):
//
//	<!-- output: stderr of tap ARGS... -->   the block is what `tap ARGS`
//	                                         writes to stderr (or stdout),
//	                                         run in a directory holding the
//	                                         repository files ARGS name
//	<!-- output: stderr of cli "NAME" -->    the same, for the row NAME of
//	                                         the CLI table
//	<!-- output: ... files A=B ... -->       with repository file B copied as
//	                                         A into the directory first
//	<!-- config [files A=B ...] -->          a whole config file; it must load
//	                                         (repository file B copied as A
//	                                         beside it first)
//	<!-- config: stream -->                  one stream definition; it must
//	                                         load in a config of its own
//	<!-- config: patch -->                   a JSON merge patch onto the CLI
//	                                         table's base config; the result
//	                                         must load
//	<!-- example -->                         JSON that is not a config (a
//	                                         state, a message, a letter)
//
// Every ```json block carries one of config, config: stream, config: patch
// or example, so that no config snippet goes unchecked. In an output
// block, … stands for any text within a line, and the block's lines must
// appear in the output in that order (other lines may come between).
var directive = regexp.MustCompile(`^<!-- (output|config|example)(?::\s*(stream|patch|(?:stdout|stderr) of .+?))?(?:\s+files\s+(.+?))?\s*-->$`)

// docBlock is a marked code block of a Markdown file.
type docBlock struct {
	file  string // relative to the repository root
	line  int    // of the opening fence
	kind  string // output, config, example
	arg   string // output: "stderr of ..."; config: "", "stream" or "patch"
	files string // config: "NAME=REPOPATH ..."
	lang  string // the fence's info string
	text  string // the block, without the fence's indentation
}

// docFiles are the Markdown files of the repository a user reads.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "CHANGELOG.md", "bench/README.md"}
	err := filepath.WalkDir("docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, filepath.ToSlash(path))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// parseDoc returns the fenced blocks of a Markdown file, each with the
// directive on the line before it (kind "" when it has none).
func parseDoc(t *testing.T, file string) []docBlock {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var blocks []docBlock
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		blk := docBlock{file: file, line: i + 1, lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))}
		if i > 0 {
			if m := directive.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				blk.kind, blk.arg, blk.files = m[1], m[2], m[3]
			} else if strings.HasPrefix(strings.TrimSpace(lines[i-1]), "<!--") {
				t.Errorf("%s:%d: %q is not a directive the docs test knows (see docs_test.go)", file, i, strings.TrimSpace(lines[i-1]))
			}
		}
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, strings.TrimPrefix(lines[i], strings.Repeat(" ", indent)))
		}
		if i == len(lines) {
			t.Fatalf("%s:%d: the code block is never closed", file, blk.line)
		}
		blk.text = strings.Join(body, "\n") + "\n"
		blocks = append(blocks, blk)
	}
	return blocks
}

func allBlocks(t *testing.T) []docBlock {
	t.Helper()
	var all []docBlock
	for _, f := range docFiles(t) {
		all = append(all, parseDoc(t, f)...)
	}
	return all
}

// TestDocsConfigsLoad loads every config the docs give, through the loader
// a run uses, so a snippet a user copies is one the tap accepts.
func TestDocsConfigsLoad(t *testing.T) {
	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	_, _, base := cliTable(t)
	n := 0
	for _, blk := range allBlocks(t) {
		if blk.lang == "json" && blk.kind != "config" && blk.kind != "example" {
			t.Errorf("%s:%d: a json block without <!-- config --> or <!-- example --> before it", blk.file, blk.line)
		}
		if blk.kind != "config" {
			continue
		}
		n++
		t.Run(fmt.Sprintf("%s:%d", blk.file, blk.line), func(t *testing.T) {
			var doc []byte
			switch blk.arg {
			case "":
				doc = []byte(blk.text)
			case "stream":
				doc = []byte(`{"base_url": "embedded://demo", "start_date": "2024-01-01T00:00:00Z", "streams": [` + blk.text + `]}`)
			case "patch":
				doc = mergePatch(t, base, []byte(blk.text))
			default:
				t.Fatalf("config: %q: expected stream or patch", blk.arg)
			}
			var v any
			if err := json.Unmarshal(doc, &v); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, doc)
			}
			setEnvOf(t, "", v)
			dir := t.TempDir()
			copyFiles(t, repo, dir, blk.files)
			path := filepath.Join(dir, "config.json")
			writeFile(t, path, doc)
			t.Chdir(dir)
			if _, err := (inputs.Files{Config: path}).LoadConfig(); err != nil {
				t.Errorf("the config does not load: %v", err)
			}
		})
	}
	if n < 10 {
		t.Errorf("%d configs in the docs, want each guide's (at least 10): are the directives still there?", n)
	}
}

// copyFiles copies into dir the repository files a directive names, each
// NAME=REPOPATH.
func copyFiles(t *testing.T, repo, dir, spec string) {
	t.Helper()
	for _, f := range strings.Fields(spec) {
		name, src, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("files %q: expected NAME=REPOPATH", f)
		}
		b, err := os.ReadFile(filepath.Join(repo, src))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, name), b)
	}
}

// setEnvOf sets each environment variable a config reads ({"env": NAME})
// for the test, as a user would before a run: a PEM key for a
// private_key, a word for anything else.
func setEnvOf(t *testing.T, key string, v any) {
	switch v := v.(type) {
	case map[string]any:
		if name, ok := v["env"].(string); ok && len(v) == 1 {
			value := "docs-test-value"
			if key == "private_key" {
				value = testPEMKey(t)
			}
			t.Setenv(name, value)
			return
		}
		for k, e := range v {
			setEnvOf(t, k, e)
		}
	case []any:
		for _, e := range v {
			setEnvOf(t, key, e)
		}
	}
}

// testPEMKey is a fresh RSA key in PKCS #8 PEM, as a service account's.
func testPEMKey(t *testing.T) string {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// TestDocsOutputs runs each command whose output the docs show and checks
// the output holds the block's lines in order.
func TestDocsOutputs(t *testing.T) {
	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	_, cases, base := cliTable(t)
	rows := map[string]cliCase{}
	for _, c := range cases {
		rows[c.Name] = c
	}
	seen := map[string]int{}
	// Blocks that show the same command share one run of it (the sample
	// run takes its time).
	type output struct{ stdout, stderr string }
	ran := map[string]output{}
	for _, blk := range allBlocks(t) {
		if blk.kind != "output" {
			continue
		}
		seen[blk.file]++
		t.Run(fmt.Sprintf("%s:%d", blk.file, blk.line), func(t *testing.T) {
			stream, command, ok := strings.Cut(blk.arg, " of ")
			if !ok {
				t.Fatalf("output: %q: expected stdout|stderr of COMMAND", blk.arg)
			}
			key := command + " files " + blk.files
			if o, ok := ran[key]; ok {
				checkOutput(t, command, stream, blk.text, map[string]string{"stdout": o.stdout, "stderr": o.stderr}[stream])
				return
			}
			var stdout, stderr bytes.Buffer
			switch {
			case strings.HasPrefix(command, "cli "):
				name := strings.Trim(strings.TrimPrefix(command, "cli "), `"`)
				c, ok := rows[name]
				if !ok {
					t.Fatalf("no row %q in the CLI table", name)
				}
				stdout, stderr, _ = runRow(t, base, c)
			case strings.HasPrefix(command, "tap "):
				args := strings.Fields(strings.TrimPrefix(command, "tap "))
				dir := t.TempDir()
				for _, a := range args {
					if b, err := os.ReadFile(filepath.Join(repo, a)); err == nil {
						writeFile(t, filepath.Join(dir, a), b)
					}
				}
				// The directive's files come last: a file the README's
				// sample run left in the clone (dead_letter.jsonl) must
				// not replace the one the docs show.
				copyFiles(t, repo, dir, blk.files)
				t.Chdir(dir)
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
				defer cancel()
				run(ctx, args, &stdout, &stderr)
				if ctx.Err() != nil {
					t.Fatalf("%s did not finish within the limit", command)
				}
			default:
				t.Fatalf("output: %q: expected tap ARGS or cli \"ROW\"", command)
			}
			ran[key] = output{stdout.String(), stderr.String()}
			checkOutput(t, command, stream, blk.text, map[string]string{"stdout": stdout.String(), "stderr": stderr.String()}[stream])
		})
	}
	for _, f := range []string{"README.md", "docs/troubleshooting.md"} {
		if seen[f] == 0 {
			t.Errorf("%s shows no checked output: its <!-- output: … --> blocks are gone", f)
		}
	}
}

// checkOutput checks that got, the stream of command's output, holds the
// docs' block want.
func checkOutput(t *testing.T, command, stream, want, got string) {
	t.Helper()
	if stream != "stdout" && stream != "stderr" {
		t.Fatalf("output: %q: expected stdout or stderr", stream)
	}
	if line, ok := holdsInOrder(want, got); !ok {
		t.Errorf("the %s of %s does not hold the docs' line %q (in this order):\n%s", stream, command, line, got)
	}
}

// logTime is the time a log line of stderr starts with.
var logTime = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z `)

// holdsInOrder reports whether each line of want, … standing for any text
// within a line, matches a line of got, in order; else the first line that
// does not.
func holdsInOrder(want, got string) (string, bool) {
	// The docs show log lines without the time each starts with.
	got = logTime.ReplaceAllString(got, "")
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	for _, w := range strings.Split(strings.TrimRight(want, "\n"), "\n") {
		parts := strings.Split(w, "…")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		re := regexp.MustCompile(`\A` + strings.Join(parts, `.*`) + `\z`)
		i := slices.IndexFunc(lines, re.MatchString)
		if i < 0 {
			return w, false
		}
		lines = lines[i+1:]
	}
	return "", true
}

func TestHoldsInOrder(t *testing.T) {
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{"a\n", "a\n", true},
		{"a\nc\n", "a\nb\nc\n", true},
		{"c\na\n", "a\nb\nc\n", false},
		{"x … z\n", "x 1 2 z\n", true},
		{"x … z\n", "x 1 2 zz\n", false},
		{"a.b\n", "axb\n", false}, // literal, not a pattern
		{"ab\n", "abc\n", false},  // whole lines
		{"a\n", "", false},
	} {
		if _, ok := holdsInOrder(c.want, c.got); ok != c.ok {
			t.Errorf("holdsInOrder(%q, %q) = %v, want %v", c.want, c.got, ok, c.ok)
		}
	}
}

// TestDocsLinks checks every relative link of the docs: the file exists,
// and the #anchor, when there is one, is a heading of it.
func TestDocsLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			if path == "" {
				path = file
			} else {
				path = filepath.Join(filepath.Dir(file), path)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %s: %v", file, target, err)
				continue
			}
			if anchor != "" && !slices.Contains(headingSlugs(t, path), anchor) {
				t.Errorf("%s: link %s: %s has no heading #%s", file, target, path, anchor)
			}
		}
	}
}

// headingSlugs are the anchors GitHub gives the headings of a Markdown
// file: lower case, punctuation dropped, spaces as hyphens.
func headingSlugs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var slugs []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		var s strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#"))) {
			switch {
			case r == ' ':
				s.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				s.WriteRune(r)
			}
		}
		slugs = append(slugs, s.String())
	}
	return slugs
}

// TestCodeMapPaths checks that each path the code map names (a `token`
// holding a slash) is in the repository, so the map follows the code.
func TestCodeMapPaths(t *testing.T) {
	b, err := os.ReadFile("docs/design/code-map.md")
	if err != nil {
		t.Fatal(err)
	}
	paths := regexp.MustCompile("`([A-Za-z0-9_.-]+/[A-Za-z0-9_./-]*)`").FindAllStringSubmatch(string(b), -1)
	if len(paths) < 20 {
		t.Fatalf("the code map names %d paths, want its table of them", len(paths))
	}
	for _, m := range paths {
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("docs/design/code-map.md names %s: %v", m[1], err)
		}
	}
}
