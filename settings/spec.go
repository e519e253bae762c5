package settings

import (
	"strings"
)

// Airbyte constants of the spec.
const (
	airbyteProtocolVersion = "0.5.2"
	documentationURL       = "https://github.com/tap-dev/tap#readme"
)

// AirbyteSpec is the ConnectorSpecification that `tap spec` prints.
func AirbyteSpec() map[string]any {
	return map[string]any{
		"documentationUrl":                 documentationURL,
		"connectionSpecification":          ConnectionSpecification(),
		"supportsIncremental":              true,
		"supported_destination_sync_modes": []string{"overwrite", "append", "append_dedup"},
		"protocol_version":                 airbyteProtocolVersion,
	}
}

// ConnectionSpecification is the JSON Schema (draft-07) of the whole
// config, built from the registry, which --about prints too: dotted names become nested objects, secrets are marked
// airbyte_secret, and "order" keeps the settings in their listed order in
// Airbyte's form.
func ConnectionSpecification() map[string]any {
	root := specObject()
	root["$schema"] = "http://json-schema.org/draft-07/schema#"
	root["title"] = Name + " config"
	root["description"] = description
	for _, s := range registry {
		parts := strings.Split(s.Name, ".")
		parent := root
		for _, p := range parts[:len(parts)-1] {
			props := parent["properties"].(map[string]any)
			child, ok := props[p].(map[string]any)
			if !ok {
				child = specObject()
				child["title"] = title(p)
				child["order"] = len(props)
				props[p] = child
			}
			parent = child
		}
		leaf := map[string]any{
			"type":        s.Type,
			"title":       title(parts[len(parts)-1]),
			"description": s.Description,
		}
		if s.Format == "date-time" {
			leaf["format"] = s.Format
			leaf["examples"] = []string{"2024-01-01T00:00:00Z"}
		}
		if s.Default != nil {
			leaf["default"] = s.Default
		}
		if s.Secret {
			leaf["airbyte_secret"] = true
		}
		if len(s.Enum) > 0 {
			leaf["enum"] = s.Enum
		}
		switch s.Type {
		case "array":
			leaf["items"] = map[string]any{"type": "object"}
		case "object":
			leaf["additionalProperties"] = true
			if s.open {
				leaf["properties"] = map[string]any{}
			}
		}
		if s.Minimum != nil {
			leaf["minimum"] = *s.Minimum
		}
		if s.Maximum != nil {
			leaf["maximum"] = *s.Maximum
		}
		props := parent["properties"].(map[string]any)
		leaf["order"] = len(props)
		props[parts[len(parts)-1]] = leaf
		if s.Required {
			req, _ := parent["required"].([]string)
			parent["required"] = append(req, parts[len(parts)-1])
		}
	}
	return root
}

// specObject is an object node of the spec. Unknown settings are an error
// in the config (so a typo is not a silent default), hence
// additionalProperties false.
func specObject() map[string]any {
	return map[string]any{
		"type":                 "object",
		"properties":           map[string]any{},
		"additionalProperties": false,
	}
}

// title is the label Airbyte's form shows for a setting: its key in
// words, "max_delay_ms" as "Max delay (ms)", "base_url" as "Base URL".
func title(key string) string {
	words := strings.Split(key, "_")
	unit := ""
	if n := len(words); n > 1 {
		switch words[n-1] {
		case "s", "ms":
			unit, words = " ("+words[n-1]+")", words[:n-1]
		}
	}
	for i, w := range words {
		switch w {
		case "url", "id", "jwt", "api", "ssl", "http", "json", "rps":
			words[i] = strings.ToUpper(w)
		default:
			if i == 0 {
				words[i] = strings.ToUpper(w[:1]) + w[1:]
			}
		}
	}
	return strings.Join(words, " ") + unit
}
