package settings

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// row is what a Markdown settings table says of one setting.
type row struct{ typ, def, secret string }

// parseTable reads the settings table of a Markdown document: the rows
// whose first cell is a `name`.
func parseTable(t *testing.T, doc string) map[string]row {
	t.Helper()
	rows := map[string]row{}
	for _, line := range strings.Split(doc, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 6 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		rows[name] = row{strings.TrimSpace(cells[2]), strings.Trim(strings.TrimSpace(cells[3]), "`"), strings.TrimSpace(cells[4])}
	}
	return rows
}

// specRows reads the same facts from the Airbyte connectionSpecification.
func specRows(t *testing.T) map[string]row {
	t.Helper()
	rows := map[string]row{}
	var walk func(prefix string, node map[string]any)
	walk = func(prefix string, node map[string]any) {
		props, _ := node["properties"].(map[string]any)
		for name, p := range props {
			p := p.(map[string]any)
			full := prefix + name
			if p["additionalProperties"] != false { // a setting, not a group
				def := ""
				if d, ok := p["default"]; ok {
					def = fmt.Sprint(d)
				}
				rows[full] = row{p["type"].(string), def, fmt.Sprint(p["airbyte_secret"] == true)}
			}
			if _, ok := p["properties"]; ok {
				walk(full+".", p)
			}
		}
	}
	walk("", ConnectionSpecification())
	return rows
}

// `--about --format markdown`, `tap spec` and the config reference
// (docs/reference/config.md) list the same settings with the same type,
// default and secret flag: the registry's.
func TestAboutSpecAndConfigReferenceAgree(t *testing.T) {
	want := map[string]row{}
	for _, s := range Settings() {
		def := ""
		if s.Default != nil {
			def = fmt.Sprint(s.Default)
		}
		want[s.Name] = row{s.Type, def, fmt.Sprint(s.Secret)}
	}
	const ref = "docs/reference/config.md"
	doc, err := os.ReadFile("../" + ref)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "<!-- settings table: begin -->")
	section, _, ok2 := strings.Cut(section, "<!-- settings table: end -->")
	if !ok || !ok2 {
		t.Fatal(ref + " has no settings table between its markers")
	}
	for name, got := range map[string]map[string]row{
		"--about --format markdown": parseTable(t, AboutInfo().Markdown()),
		"tap spec":                  specRows(t),
		ref:                         parseTable(t, section),
	} {
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(row{})); diff != "" {
			t.Errorf("%s disagrees with the registry (-registry +%s):\n%s", name, name, diff)
		}
	}
	// The reference shows the table exactly as --about prints it.
	if strings.TrimSpace(section) != strings.TrimSpace(settingsTable(Settings())) {
		t.Errorf("%s: the settings table is stale; run go generate ./...", ref)
	}
}
