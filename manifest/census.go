package manifest

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Outcome is what became of one manifest of a census.
type Outcome string

const (
	Loaded         Outcome = "loaded"
	NeedsPython    Outcome = "needs Python"
	NotImplemented Outcome = "not implemented"
	BadInput       Outcome = "bad input"
)

// Census is the tally of loading every manifest of a folder: how many
// load, how many need Python, how many use a component the tap does not
// implement (and none of Python), how many are bad input; and by
// component type, how many manifests use it and how many it refused.
type Census struct {
	Outcomes map[Outcome]int
	Types    map[string]*TypeTally
	Files    []CensusFile
	// Runs counts the loaded manifests whose every stream Compile compiles
	// for a sample config (each spec field its example, default, or a
	// value of its type); NotRun tallies, for the others, the first
	// form Lower refused, or the first problem of the compiled config ("CursorPagination: stop_condition …").
	Runs   int
	NotRun map[string]int
}

// TypeTally is one component type's line of a census.
type TypeTally struct {
	Type      string
	Manifests int // manifests that use it (outside their definitions)
	Loaded    int // of those, how many loaded
	Refused   int // manifests it was refused in
}

// CensusFile is one manifest's outcome; Why is its error's first line.
type CensusFile struct {
	Path    string
	Outcome Outcome
	Why     string
	Runs    bool   // loaded, and Lower compiles it
	NotRun  string // loaded, and the first line of why Lower did not
}

// Total is the number of manifests counted.
func (c *Census) Total() int { return len(c.Files) }

// Sorted lists the types, most refused first, then most used.
func (c *Census) Sorted() []*TypeTally {
	out := make([]*TypeTally, 0, len(c.Types))
	for _, t := range c.Types {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *TypeTally) int {
		return cmp.Or(b.Refused-a.Refused, b.Manifests-a.Manifests, strings.Compare(a.Type, b.Type))
	})
	return out
}

// TakeCensus loads every manifest under dir: the files named
// manifest.yaml at any depth (a checkout of Airbyte's connectors), and the
// .yaml, .yml and .json files directly in dir.
func TakeCensus(dir string) (*Census, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		top := filepath.Dir(path) == filepath.Clean(dir)
		if d.Name() == "manifest.yaml" || top && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c := &Census{Outcomes: map[Outcome]int{}, Types: map[string]*TypeTally{}, NotRun: map[string]int{}}
	for _, p := range paths {
		c.add(p)
	}
	return c, nil
}

func (c *Census) add(path string) {
	f := CensusFile{Path: path}
	tree, err := censusLoad(path)
	var e *Error
	switch {
	case err == nil:
		f.Outcome = Loaded
	case errors.As(err, &e) && len(e.Problems) == 0:
		f.Outcome = NotImplemented
		for _, r := range e.Refusals {
			if r.Python {
				f.Outcome = NeedsPython
				break
			}
		}
	default:
		f.Outcome = BadInput
	}
	if err != nil {
		f.Why, _, _ = strings.Cut(err.Error(), "\n")
	}
	if f.Outcome == Loaded {
		c.lower(&f)
	}
	c.Outcomes[f.Outcome]++
	c.Files = append(c.Files, f)
	refused := map[string]bool{}
	if e != nil {
		for _, r := range e.Refusals {
			refused[r.Type] = true
		}
	}
	used := map[string]bool{}
	for k, v := range tree {
		if k != "definitions" && k != "schemas" && k != "metadata" {
			typesUsed(v, used)
		}
	}
	for t := range refused {
		used[t] = true
	}
	for t := range used {
		tt := c.Types[t]
		if tt == nil {
			tt = &TypeTally{Type: t}
			c.Types[t] = tt
		}
		tt.Manifests++
		if f.Outcome == Loaded {
			tt.Loaded++
		}
		if refused[t] {
			tt.Refused++
		}
	}
}

// lower compiles a loaded manifest for a sample config.
func (c *Census) lower(f *CensusFile) {
	m, err := Load(f.Path)
	if err == nil {
		var cfg *Config
		if cfg, err = m.CheckConfig(f.Path, sampleConfig(m.Spec)); err == nil {
			_, err = m.Compile(f.Path, cfg)
		}
	}
	if err == nil {
		f.Runs = true
		c.Runs++
		return
	}
	f.NotRun, _, _ = strings.Cut(err.Error(), "\n")
	var e *Error
	why := "bad sample config"
	if errors.As(err, &e) && len(e.Refusals) > 0 {
		r := e.Refusals[0]
		why = r.Type + ": " + r.Why
		if i := strings.IndexAny(why, "\"("); i > 0 && r.Why != "" {
			why = strings.TrimSpace(why[:i]) // the manifest's own text left out
		}
	} else if errors.As(err, &e) && len(e.Problems) > 0 {
		why = "problem: " + e.Problems[0].Msg
		if i := strings.IndexAny(why, "\"("); i > 0 {
			why = strings.TrimSpace(why[:i])
		}
	}
	c.NotRun[why]++
}

// sampleConfig is a config a spec accepts, for a census: each property
// its first example, its default, or a value of its type (a date-time for
// a field whose name or format says date).
func sampleConfig(spec *Spec) map[string]any {
	if spec == nil {
		return map[string]any{}
	}
	v, _ := sampleValue("", spec.ConnectionSpecification).(map[string]any)
	if v == nil {
		v = map[string]any{}
	}
	return v
}

func sampleValue(name string, schema map[string]any) any {
	pattern, _ := schema["pattern"].(string)
	typ, _ := schema["type"].(string)
	if list, ok := schema["type"].([]any); ok && len(list) > 0 {
		typ, _ = list[0].(string)
	}
	// fits: an example or default of the property's own type (not one
	// of its items') that matches its pattern.
	fits := func(v any) bool {
		switch v.(type) {
		case string:
			if typ != "" && typ != "string" {
				return false
			}
		case float64, int:
			if typ != "" && typ != "number" && typ != "integer" {
				return false
			}
		case []any:
			if typ != "" && typ != "array" {
				return false
			}
		}
		s, ok := v.(string)
		if !ok || pattern == "" {
			return true
		}
		re, err := regexp.Compile(pattern)
		return err != nil || re.MatchString(s)
	}
	if ex, ok := schema["examples"].([]any); ok && len(ex) > 0 && fits(ex[0]) {
		return ex[0]
	}
	if d, ok := schema["default"]; ok && fits(d) {
		return d
	}
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if one, ok := schema["oneOf"].([]any); ok && len(one) > 0 {
		if m, ok := one[0].(map[string]any); ok {
			return sampleValue(name, m)
		}
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for k, p := range props {
			if pm, ok := p.(map[string]any); ok {
				if c, ok := pm["const"]; ok {
					out[k] = c
					continue
				}
				out[k] = sampleValue(k, pm)
			}
		}
		return out
	case "integer", "number":
		return 1
	case "boolean":
		return false
	case "array":
		if items, ok := schema["items"].(map[string]any); ok {
			return []any{sampleValue(name, items)}
		}
		return []any{}
	}
	if pattern != "" {
		for _, c := range samplesForPatterns {
			if fits(c) {
				return c
			}
		}
	}
	format, _ := schema["format"].(string)
	lower := strings.ToLower(name)
	switch {
	case format == "date":
		return "2024-01-01"
	case format == "date-time" || strings.Contains(lower, "date") || strings.Contains(lower, "start"):
		return "2024-01-01T00:00:00Z"
	case format == "uri" || strings.Contains(lower, "url") || strings.Contains(lower, "domain") || strings.Contains(lower, "host"):
		return "https://api.example.com"
	}
	return "sample-value" // long enough to be masked, as a secret must be
}

// samplesForPatterns are the census's candidates for a string whose spec
// gives a pattern and no example that matches it: the first that matches
// is the sample.
var samplesForPatterns = []string{
	"2024-01-01", "2024-01-01T00:00:00Z", "2024-01-01T00:00:00.000Z", "2024-01-01 00:00:00",
	"01-01-2024", "01/01/2024", "01/01/2024 00:00", "2024-01",
	"https://api.example.com", "api.example.com", "sample-value", "SAMPLEVALUE1", "samplevalue1",
	"live_samplevalue", "12345678", "sample_value", "sample value",
}

// censusLoad loads a manifest and returns its tree whenever its
// references resolved, refused or not.
func censusLoad(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	root, err := parseYAML(path, data)
	if err != nil {
		return nil, err
	}
	_, tree, err := fromTree(path, root, filepath.Dir(path))
	return tree, err
}

// typesUsed gathers the component types of a tree (JSON Schemas are not
// components: their types are lower case).
func typesUsed(v any, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if t, ok := x["type"].(string); ok && isComponentName(t) {
			into[t] = true
		}
		for _, e := range x {
			typesUsed(e, into)
		}
	case []any:
		for _, e := range x {
			typesUsed(e, into)
		}
	}
}
