package settings

import (
	"fmt"
	"strings"
)

// Name and Version of the tap.
const (
	Name    = "tap"
	Version = "0.2.0"
)

// About is what --about prints: in JSON, the Meltano SDK's shape, whose
// settings are the JSON Schema of the config (the Airbyte spec's
// connectionSpecification), which Meltano Hub's tooling reads.
type About struct {
	Name         string         `json:"name"`
	Version      string         `json:"version"`
	Description  string         `json:"description"`
	Capabilities []string       `json:"capabilities"`
	Schema       map[string]any `json:"settings"`
	// Settings are the registry's, one by one, for the Markdown table
	// and the Meltano plugin definition.
	Settings []Setting `json:"-"`
}

// AboutInfo describes the tap. activate-version: a full-table stream's
// records are followed by ACTIVATE_VERSION.
func AboutInfo() About {
	return About{
		Name:         Name,
		Version:      Version,
		Description:  description,
		Capabilities: []string{"catalog", "state", "discover", "about", "test", "stream-maps", "schema-flattening", "activate-version"},
		Schema:       ConnectionSpecification(),
		Settings:     Settings(),
	}
}

const description = "A declarative Singer tap and Airbyte source for any REST or GraphQL API."

// Markdown renders the about information as a Markdown document.
func (a About) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s %s\n\n%s\n\n## Capabilities\n\n", a.Name, a.Version, a.Description)
	for _, c := range a.Capabilities {
		fmt.Fprintf(&b, "- `%s`\n", c)
	}
	b.WriteString("\n## Settings\n\n")
	b.WriteString(settingsTable(a.Settings))
	return b.String()
}

// SettingsTable is the settings table of docs/reference/config.md.
func SettingsTable() string { return settingsTable(Settings()) }

// settingsTable is the Markdown table of settings that --about and the
// config reference (docs/reference/config.md) show.
func settingsTable(settings []Setting) string {
	var b strings.Builder
	b.WriteString("| name | type | default | secret | allowed | description |\n|---|---|---|---|---|---|\n")
	for _, s := range settings {
		def := ""
		if s.Default != nil {
			def = fmt.Sprintf("`%v`", s.Default)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %v | %s | %s |\n", s.Name, s.Type, def, s.Secret, s.allowed(), s.Description)
	}
	return b.String()
}

// allowed is the range or the values a setting accepts, for the table.
func (s *Setting) allowed() string {
	if len(s.Enum) > 0 {
		return strings.Join(s.Enum, ", ")
	}
	return strings.TrimSpace(s.bounds())
}
