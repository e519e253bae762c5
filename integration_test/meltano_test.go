package integration_test

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	meltanoFile    = "../meltano/tap-declarative.yml"
	meltanoCommand = "go generate ./..."
)

// The committed Meltano plugin definition is what the binary prints, and
// says what `--about --format json` says: the same capabilities, the same
// settings in the same order, each secret sensitive, each kind, default
// and option matching the setting's type, default and values.
func TestMeltanoPluginDefinition(t *testing.T) {
	committed, err := os.ReadFile(meltanoFile)
	if err != nil {
		t.Fatalf("%v; generate it from the repository root: %s", err, meltanoCommand)
	}
	dir := t.TempDir()
	r := runTap(t, dir, time.Minute, nil, "--about", "--format", "meltano")
	if r.code != 0 {
		t.Fatalf("--about --format meltano: exit %d: %s", r.code, r.stderr)
	}
	if diff := cmp.Diff(strings.Split(string(committed), "\n"), strings.Split(string(r.stdout), "\n")); diff != "" {
		t.Fatalf("meltano/tap-declarative.yml is stale (-committed +printed):\n%s\nregenerate it from the repository root: %s", diff, meltanoCommand)
	}

	r = runTap(t, dir, time.Minute, nil, "--about", "--format", "json")
	var about struct {
		Name         string
		Description  string
		Capabilities []string
		Settings     map[string]any // a JSON Schema, as the Meltano SDK's --about gives it
	}
	if err := json.Unmarshal(r.stdout, &about); err != nil {
		t.Fatalf("--about --format json: %v", err)
	}
	// The bundled demo's settings (demo.*) are the tap's own, not a
	// connection's: the plugin definition leaves them out.
	settingsIn := slices.DeleteFunc(aboutSettings(t, about.Settings), func(s aboutSetting) bool {
		return s.Name == "demo" || strings.HasPrefix(s.Name, "demo.")
	})

	plugin, ok := parseYAML(t, string(committed)).(map[string]any)
	if !ok {
		t.Fatal("the plugin definition is not a mapping")
	}
	if plugin["executable"] != about.Name || plugin["description"] != about.Description {
		t.Errorf("executable %v, description %v; --about says %q, %q", plugin["executable"], plugin["description"], about.Name, about.Description)
	}
	if name, _ := plugin["name"].(string); !strings.HasPrefix(name, "tap-") || plugin["namespace"] != strings.ReplaceAll(name, "-", "_") {
		t.Errorf("name %v, namespace %v: want tap-… and its underscored namespace", plugin["name"], plugin["namespace"])
	}
	var caps []string
	for _, c := range plugin["capabilities"].([]any) {
		caps = append(caps, c.(string))
	}
	if diff := cmp.Diff(about.Capabilities, caps); diff != "" {
		t.Errorf("capabilities differ from --about (-about +plugin):\n%s", diff)
	}

	settings, _ := plugin["settings"].([]any)
	if len(settings) != len(settingsIn) {
		t.Fatalf("%d settings in the plugin definition, %d in --about", len(settings), len(settingsIn))
	}
	var required []any
	for i, want := range settingsIn {
		got := settings[i].(map[string]any)
		if got["name"] != want.Name {
			t.Errorf("setting %d is %v, --about has %s", i, got["name"], want.Name)
			continue
		}
		kind := want.Type
		switch {
		case len(want.Enum) > 0:
			kind = "options"
		case want.Format == "date-time":
			kind = "date_iso8601"
		case want.Type == "number":
			kind = "decimal"
		}
		if got["kind"] != kind {
			t.Errorf("%s: kind %v, want %s for a %s", want.Name, got["kind"], kind, want.Type)
		}
		if sensitive := got["sensitive"] == true; sensitive != want.Secret {
			t.Errorf("%s: sensitive %v, but --about says secret %v", want.Name, sensitive, want.Secret)
		}
		if !cmp.Equal(got["value"], want.Default) {
			t.Errorf("%s: value %#v, --about's default %#v", want.Name, got["value"], want.Default)
		}
		if got["description"] != want.Description {
			t.Errorf("%s: description %q, --about's %q", want.Name, got["description"], want.Description)
		}
		if got["label"] != want.Title || want.Title == "" {
			t.Errorf("%s: label %q, --about's title %q", want.Name, got["label"], want.Title)
		}
		var options []string
		for _, o := range asSlice(got["options"]) {
			o := o.(map[string]any)
			options = append(options, o["value"].(string))
		}
		if !cmp.Equal(options, want.Enum) {
			t.Errorf("%s: options %v, --about's values %v", want.Name, options, want.Enum)
		}
		if want.Required {
			required = append(required, want.Name)
		}
	}
	if groups := asSlice(plugin["settings_group_validation"]); !cmp.Equal(groups, []any{required}) {
		t.Errorf("settings_group_validation %v, want the required settings %v", groups, required)
	}
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// aboutSetting is one setting as --about's JSON Schema describes it.
type aboutSetting struct {
	Name, Type, Format, Description, Title string
	Default                                any
	Enum                                   []string
	Secret, Required                       bool
}

// aboutSettings reads the settings out of --about's JSON Schema in their
// order: a closed object is a group of settings (auth, retry, …) whose
// members are named group.member, anything else one setting, an open
// object's listed members settings too (demo.token); "order" ranks the
// members of an object.
func aboutSettings(t *testing.T, schema map[string]any) []aboutSetting {
	t.Helper()
	var out []aboutSetting
	var walk func(prefix string, node map[string]any)
	walk = func(prefix string, node map[string]any) {
		props, _ := node["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		order := func(n string) float64 { o, _ := props[n].(map[string]any)["order"].(float64); return o }
		sort.Slice(names, func(i, j int) bool { return order(names[i]) < order(names[j]) })
		required := map[string]bool{}
		for _, r := range asSlice(node["required"]) {
			required[r.(string)] = true
		}
		for _, name := range names {
			p := props[name].(map[string]any)
			if p["type"] == "object" && p["additionalProperties"] == false {
				walk(prefix+name+".", p)
				continue
			}
			s := aboutSetting{Name: prefix + name, Default: p["default"], Secret: p["airbyte_secret"] == true, Required: required[name]}
			s.Type, _ = p["type"].(string)
			s.Format, _ = p["format"].(string)
			s.Description, _ = p["description"].(string)
			s.Title, _ = p["title"].(string)
			for _, e := range asSlice(p["enum"]) {
				s.Enum = append(s.Enum, e.(string))
			}
			out = append(out, s)
			if p["type"] == "object" {
				walk(prefix+name+".", p) // an open object's own settings (demo.token)
			}
		}
	}
	walk("", schema)
	if len(out) == 0 {
		t.Fatalf("--about's settings hold no setting: %v", schema)
	}
	return out
}

// parseYAML reads the block YAML the plugin definition is written in:
// mappings, sequences (also at their key's indent), "- - x" nesting, and
// scalars that are JSON strings, numbers, booleans or plain words. It
// fails the test on anything else rather than guess.
func parseYAML(t *testing.T, doc string) any {
	t.Helper()
	type line struct {
		indent int
		text   string
	}
	var lines []line
	for _, l := range strings.Split(doc, "\n") {
		text := strings.TrimLeft(l, " ")
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		lines = append(lines, line{len(l) - len(text), text})
	}
	scalar := func(s string) any {
		if strings.HasPrefix(s, `"`) {
			var v string
			if err := json.Unmarshal([]byte(s), &v); err != nil {
				t.Fatalf("bad quoted scalar %s: %v", s, err)
			}
			return v
		}
		if s == "true" || s == "false" {
			return s == "true"
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
		if strings.ContainsAny(s, `:"'{}[]#&*!|>%@`+"`") {
			t.Fatalf("plain scalar %q needs quoting", s)
		}
		return s
	}
	var block func(i, indent int) (any, int)
	block = func(i, indent int) (any, int) {
		if strings.HasPrefix(lines[i].text, "- ") {
			var seq []any
			for i < len(lines) && lines[i].indent == indent && strings.HasPrefix(lines[i].text, "- ") {
				rest := lines[i].text[2:]
				if strings.HasPrefix(rest, "- ") || strings.Contains(rest, ": ") || strings.HasSuffix(rest, ":") {
					// The item is a block that starts on this line.
					lines[i] = line{indent + 2, rest}
					var v any
					v, i = block(i, indent+2)
					seq = append(seq, v)
					continue
				}
				seq = append(seq, scalar(rest))
				i++
			}
			return seq, i
		}
		m := map[string]any{}
		for i < len(lines) && lines[i].indent == indent && !strings.HasPrefix(lines[i].text, "- ") {
			key, value, ok := strings.Cut(lines[i].text, ":")
			if !ok {
				t.Fatalf("line %q: expected key: value", lines[i].text)
			}
			if _, dup := m[key]; dup {
				t.Fatalf("key %q twice", key)
			}
			i++
			if value != "" {
				m[key] = scalar(strings.TrimPrefix(value, " "))
				continue
			}
			if i >= len(lines) || lines[i].indent < indent || lines[i].indent == indent && !strings.HasPrefix(lines[i].text, "- ") {
				t.Fatalf("key %q has no value", key)
			}
			m[key], i = block(i, lines[i].indent)
		}
		return m, i
	}
	v, i := block(0, 0)
	if i != len(lines) {
		t.Fatalf("line %q: unexpected indentation", lines[i].text)
	}
	return v
}
