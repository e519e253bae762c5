package integration_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cliCase is one row of testdata/cli.json: a command line, the files it
// reads, and what it must print and return. Adding a case is adding a row.
type cliCase struct {
	Name string   `json:"name"`
	Args []string `json:"args"`
	// Files are written into the case's directory. A value that is a JSON
	// string is written as is; any other JSON value is written encoded.
	Files map[string]json.RawMessage `json:"files"`
	// ConfigPatch is merged (RFC 7386) into testdata/base_config.json and
	// written as config.json.
	ConfigPatch json.RawMessage `json:"config_patch"`
	Env         []string        `json:"env"`
	Exit        int             `json:"exit"`
	// Stdout, when set, is the exact expected stdout; StdoutEmpty asks for
	// nothing at all on stdout.
	Stdout      *string  `json:"stdout"`
	StdoutEmpty bool     `json:"stdout_empty"`
	StdoutHas   []string `json:"stdout_has"`
	StderrHas   []string `json:"stderr_has"`
	// StderrLines is the exact number of lines on stderr (0 = not checked).
	StderrLines int `json:"stderr_lines"`
}

// sentinel is the secret of base_config.json: it must never be printed.
const sentinel = "SENTINEL-SECRET-7f3a"

func TestCLI(t *testing.T) {
	var cases []cliCase
	readJSON(t, "testdata/cli.json", &cases)
	base, err := os.ReadFile("testdata/base_config.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if c.ConfigPatch != nil {
				writeFile(t, filepath.Join(dir, "config.json"), mergePatch(t, base, c.ConfigPatch))
			}
			for name, content := range c.Files {
				var s string
				if json.Unmarshal(content, &s) != nil {
					s = string(content)
				}
				writeFile(t, filepath.Join(dir, name), []byte(s))
			}
			r := runTap(t, dir, 2*time.Minute, c.Env, c.Args...)
			if r.code != c.Exit {
				t.Errorf("exit code %d, want %d\nstderr: %s", r.code, c.Exit, r.stderr)
			}
			if c.Stdout != nil && string(r.stdout) != *c.Stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, *c.Stdout)
			}
			if c.StdoutEmpty && len(r.stdout) > 0 {
				t.Errorf("stdout should be empty, got:\n%s", r.stdout)
			}
			for _, want := range c.StdoutHas {
				if !bytes.Contains(r.stdout, []byte(want)) {
					t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
				}
			}
			for _, want := range c.StderrHas {
				if !bytes.Contains(r.stderr, []byte(want)) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
			if c.StderrLines > 0 {
				if n := strings.Count(string(r.stderr), "\n"); n != c.StderrLines {
					t.Errorf("stderr has %d lines, want %d:\n%s", n, c.StderrLines, r.stderr)
				}
			}
			for _, out := range [][]byte{r.stdout, r.stderr} {
				if bytes.Contains(out, []byte(sentinel)) {
					t.Errorf("the secret leaked into the output:\n%s", out)
				}
			}
		})
	}
}

// mergePatch applies an RFC 7386 JSON merge patch.
func mergePatch(t *testing.T, doc, patch []byte) []byte {
	t.Helper()
	var d, p any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(merge(d, p), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func merge(doc, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	dm, ok := doc.(map[string]any)
	if !ok {
		dm = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(dm, k)
		} else {
			dm[k] = merge(dm[k], v)
		}
	}
	return dm
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
