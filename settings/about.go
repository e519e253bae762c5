package settings

import (
	"fmt"
	"strings"
)

// Name and Version of the tap.
const (
	Name    = "tap"
	Version = "0.1.0"
)

// Setting is one config setting, as --about and the Airbyte spec list it.
type Setting struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"` // string, integer, number, boolean, object, array
	Default     any      `json:"default,omitempty"`
	Secret      bool     `json:"secret"`
	Required    bool     `json:"required,omitempty"`
	Enum        []string `json:"enum,omitempty"` // the allowed values, when there are few
	Description string   `json:"description"`
}

// ConfigSettings lists every config setting; nested ones are dotted.
func ConfigSettings() []Setting {
	return []Setting{
		{Name: "base_url", Type: "string", Required: true, Description: `Base URL of the API; "embedded://demo" starts the bundled demo API in-process.`},
		{Name: "auth.type", Type: "string", Default: "none", Enum: []string{"none", "bearer", "basic", "api_key"}, Description: "none, bearer, basic or api_key."},
		{Name: "auth.token", Type: "string", Secret: true, Description: "Bearer token (auth.type bearer)."},
		{Name: "auth.username", Type: "string", Description: "User name (auth.type basic)."},
		{Name: "auth.password", Type: "string", Secret: true, Description: "Password (auth.type basic)."},
		{Name: "auth.name", Type: "string", Description: "Header or query parameter name of the API key (auth.type api_key)."},
		{Name: "auth.value", Type: "string", Secret: true, Description: "API key (auth.type api_key)."},
		{Name: "auth.in", Type: "string", Default: "header", Enum: []string{"header", "query"}, Description: "Where the API key goes: header or query."},
		{Name: "headers", Type: "object", Description: "Extra request headers, e.g. User-Agent."},
		{Name: "start_date", Type: "string", Description: "RFC 3339 time: the first bookmark of an incremental stream with no state."},
		{Name: "streams", Type: "array", Description: "Stream definitions (inline)."},
		{Name: "streams_file", Type: "string", Description: `A file {"streams": [...]}, relative to the config file.`},
		{Name: "rate_limit.requests_per_second", Type: "number", Default: 10, Description: "Token bucket rate shared by every stream; 0 = unlimited."},
		{Name: "rate_limit.burst", Type: "integer", Default: 1, Description: "Token bucket size."},
		{Name: "rate_limit.max_in_flight", Type: "integer", Default: 4, Description: "Requests in flight at once."},
		{Name: "rate_limit.daily_quota", Type: "integer", Default: 0, Description: "Requests allowed in one run; reached → checkpoint and exit 75. 0 = off."},
		{Name: "retry.max_attempts", Type: "integer", Default: 6, Description: "Attempts per request, the first included."},
		{Name: "retry.base_delay_ms", Type: "integer", Default: 500, Description: "Base of the full-jitter exponential backoff."},
		{Name: "retry.max_delay_ms", Type: "integer", Default: 30000, Description: "Cap of one backoff delay."},
		{Name: "retry.max_retry_after_s", Type: "integer", Default: 300, Description: "A longer Retry-After defers the run (exit 75) instead of waiting."},
		{Name: "request_timeout_s", Type: "number", Default: 30, Description: "Timeout of one request attempt, body included."},
		{Name: "max_parallel_streams", Type: "integer", Default: 2, Description: "Top-level streams synced at once."},
		{Name: "max_pages", Type: "integer", Default: 0, Description: "Pages allowed per stream walk; more is an error. 0 = unlimited."},
		{Name: "on_schema_violation", Type: "string", Default: "dead_letter", Enum: []string{ViolationFail, ViolationDeadLetter, ViolationEmit}, Description: "fail, dead_letter or emit."},
		{Name: "dead_letter_path", Type: "string", Default: "dead_letter.jsonl", Description: "JSON-lines file of records that failed their schema, relative to the config file."},
		{Name: "demo", Type: "object", Description: "Knobs of the embedded demo API (counts, faults); only for embedded://demo."},
	}
}

// About is what --about prints.
type About struct {
	Name         string    `json:"name"`
	Version      string    `json:"version"`
	Description  string    `json:"description"`
	Capabilities []string  `json:"capabilities"`
	Settings     []Setting `json:"settings"`
}

// AboutInfo describes the tap.
func AboutInfo() About {
	return About{
		Name:         Name,
		Version:      Version,
		Description:  "A declarative Singer tap and Airbyte source for any REST or GraphQL API.",
		Capabilities: []string{"catalog", "state", "discover", "about"},
		Settings:     ConfigSettings(),
	}
}

// Markdown renders the about information as a Markdown document.
func (a About) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s %s\n\n%s\n\n## Capabilities\n\n", a.Name, a.Version, a.Description)
	for _, c := range a.Capabilities {
		fmt.Fprintf(&b, "- `%s`\n", c)
	}
	b.WriteString("\n## Settings\n\n| name | type | default | secret | description |\n|---|---|---|---|---|\n")
	for _, s := range a.Settings {
		def := ""
		if s.Default != nil {
			def = fmt.Sprintf("`%v`", s.Default)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %v | %s |\n", s.Name, s.Type, def, s.Secret, s.Description)
	}
	return b.String()
}
