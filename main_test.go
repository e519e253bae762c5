package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/internal/clitest"
)

// cliCase is one row of integration_test/testdata/cli.json. Adding a case is
// adding a row:
//
//	name          the subtest name
//	args          the command line after "tap"
//	config_patch  merged (RFC 7386) into testdata/base_config.json and
//	              written as config.json; null or absent writes no config
//	files         more files for the row's directory: a JSON string is
//	              written as is, any other JSON value encoded
//	env           NAME=value pairs set while the row runs
//	exit          the exit code
//	stdout        the exact stdout ("" for nothing); required
//	stderr        the exact stderr ("" for nothing); required
//	stdout_file   instead of stdout: a file under testdata/ holding it
//	stderr_file   instead of stderr: a file under testdata/ holding it
//
// {{dir}} in args, config_patch and files stands for the row's directory,
// an absolute path, and so does it in the output the row is checked
// against (rows giving absolute paths).
// In an expected output {{any}} stands for any text within one line (a
// duration, a port), {{time}} for the time a log line starts with, and a line that is just {{lines}} for any number of
// whole lines (output whose amount depends on timing); everything else is
// literal. No output may hold the secret of base_config.json.
type cliCase struct {
	Name        string                     `json:"name"`
	Args        []string                   `json:"args"`
	ConfigPatch json.RawMessage            `json:"config_patch"`
	Files       map[string]json.RawMessage `json:"files"`
	Env         []string                   `json:"env"`
	Exit        int                        `json:"exit"`
	Stdout      *string                    `json:"stdout"`
	Stderr      *string                    `json:"stderr"`
	StdoutFile  string                     `json:"stdout_file"`
	StderrFile  string                     `json:"stderr_file"`
}

const (
	testdata = "integration_test/testdata"
	// sentinel is the secret of base_config.json: it must never be printed.
	sentinel = "SENTINEL-SECRET-7f3a"
)

// TestCLI runs every row of the CLI table through run, in-process, each in
// a fresh working directory so that file names in messages are the ones the
// row gives. Rows run one after another because the working directory and
// the environment belong to the process.
func TestCLI(t *testing.T) {
	root, cases, base := cliTable(t)
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.Name] {
			t.Errorf("cli.json: two rows named %q", c.Name)
		}
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			wantOut := expected(t, root, "stdout", c.Stdout, c.StdoutFile)
			wantErr := expected(t, root, "stderr", c.Stderr, c.StderrFile)
			stdout, stderr, code := runRow(t, base, c)
			if code != c.Exit {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", code, c.Exit, stderr.String())
			}
			for _, o := range []struct {
				name, got, want string
			}{{"stdout", stdout.String(), wantOut}, {"stderr", stderr.String(), wantErr}} {
				if !matches(o.want, o.got) {
					t.Errorf("%s differs (-want +got):\n%s", o.name, cmp.Diff(o.want, o.got))
				}
				if strings.Contains(o.got, sentinel) {
					t.Errorf("the secret leaked into %s:\n%s", o.name, o.got)
				}
			}
		})
	}
}

// cliTable reads the CLI table: the absolute path of its directory, its
// rows and the base config the rows patch.
func cliTable(t *testing.T) (root string, cases []cliCase, base []byte) {
	t.Helper()
	root, err := filepath.Abs(testdata)
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(filepath.Join(root, "cli.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(table))
	dec.DisallowUnknownFields() // a misspelt key would be an assertion silently dropped
	if err := dec.Decode(&cases); err != nil {
		t.Fatalf("cli.json: %v (the row format is described at cliCase in main_test.go)", err)
	}
	if base, err = os.ReadFile(filepath.Join(root, "base_config.json")); err != nil {
		t.Fatal(err)
	}
	return root, cases, base
}

// runRow runs one row of the CLI table in a fresh working directory
// holding the row's files, with the row's environment, and returns what
// it wrote and its exit code.
func runRow(t *testing.T, base []byte, c cliCase) (stdout, stderr bytes.Buffer, code int) {
	t.Helper()
	dir := t.TempDir()
	inDir := strings.NewReplacer("{{dir}}", dir).Replace
	if len(c.ConfigPatch) > 0 && string(c.ConfigPatch) != "null" {
		writeFile(t, filepath.Join(dir, "config.json"), mergePatch(t, base, []byte(inDir(string(c.ConfigPatch)))))
	}
	for name, content := range c.Files {
		var s string
		if json.Unmarshal(content, &s) != nil {
			s = string(content)
		}
		writeFile(t, filepath.Join(dir, name), []byte(inDir(s)))
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = inDir(a)
	}
	for _, kv := range c.Env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("env %q: expected NAME=value", kv)
		}
		t.Setenv(k, v)
	}
	t.Chdir(dir)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	code = run(ctx, args, &out, &errOut)
	if ctx.Err() != nil {
		t.Fatalf("run did not finish within the limit; stderr:\n%s", errOut.String())
	}
	asDir := strings.NewReplacer(dir, "{{dir}}").Replace
	stdout.WriteString(asDir(out.String()))
	stderr.WriteString(asDir(errOut.String()))
	return stdout, stderr, code
}

// expected is a row's expected output, given inline or in a file; a row
// that gives neither is an error, so that no output goes unchecked.
func expected(t *testing.T, root, name string, inline *string, file string) string {
	t.Helper()
	switch {
	case inline != nil && file != "":
		t.Fatalf("give %s or %s_file, not both", name, name)
	case inline != nil:
		return *inline
	case file != "":
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatalf("%s_file: %v", name, err)
		}
		return string(b)
	}
	t.Fatalf("the row gives no %s: give the exact output (\"\" for none) or %s_file", name, name)
	return ""
}

// matches reports whether got is want, where each {{any}} in want stands
// for any text within one line and each line {{lines}} for any number of
// whole lines.
func matches(want, got string) bool {
	if !strings.Contains(want, "{{") {
		return want == got
	}
	pattern := regexp.QuoteMeta(want)
	pattern = strings.ReplaceAll(pattern, `\{\{lines\}\}`+"\n", `(?:[^\n]*\n)*?`)
	pattern = strings.ReplaceAll(pattern, `\{\{any\}\}`, `[^\n]*`)
	pattern = strings.ReplaceAll(pattern, `\{\{time\}\}`, `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`)
	return regexp.MustCompile(`\A` + pattern + `\z`).MatchString(got)
}

// The config of a row is the base config with a merge patch applied.
var (
	mergePatch = clitest.MergePatch
	writeFile  = clitest.WriteFile
)

// TestServeDemoLogsTheBoundAddress asks for port 0 and checks that the
// logged address is the one that answers.
func TestServeDemoLogsTheBoundAddress(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	var stdout bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := run(ctx, []string{"serve-demo", "--addr", "127.0.0.1:0"}, &stdout, pw)
		pw.Close()
		done <- code
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no log line: %v", err)
	}
	go io.Copy(io.Discard, pr) //nolint:errcheck // drain until run returns
	var base string
	if _, err := fmt.Sscanf(line, "INFO demo API listening on %s (Ctrl-C stops it)\n", &base); err != nil {
		t.Fatalf("log line %q: %v", line, err)
	}
	if strings.HasSuffix(base, ":0") {
		t.Fatalf("logged the requested port, not the bound one: %q", line)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/customers", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the logged address does not answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s/v1/customers: %s, want 200 OK from the demo without a token", base, resp.Status)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit code %d after the context ended, want 0", code)
	}
	if stdout.Len() > 0 {
		t.Errorf("serve-demo wrote to stdout: %q", stdout.String())
	}
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		want, got string
		ok        bool
	}{
		{"a\n", "a\n", true},
		{"a\n", "a\nb\n", false},
		{"a.b\n", "axb\n", false}, // literal, not a pattern
		{"port {{any}}\n", "port 41234\n", true},
		{"port {{any}}\n", "port 1\nport 2\n", false},
		{"x={{any}} y={{any}}\n", "x=1 y=2\n", true},
		{"a\n{{lines}}\nz\n", "a\nz\n", true},
		{"a\n{{lines}}\nz\n", "a\nb\nc\nz\n", true},
		{"a\n{{lines}}\nz\n", "a\nb\nc\nzz\n", false},
		{"{{lines}}\n", "", true},
	} {
		if got := matches(c.want, c.got); got != c.ok {
			t.Errorf("matches(%q, %q) = %v, want %v", c.want, c.got, got, c.ok)
		}
	}
}
