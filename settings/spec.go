package settings

import (
	"cmp"
	"maps"
	"strings"
)

// Airbyte constants of the spec.
const (
	airbyteProtocolVersion = "0.5.2"
	documentationURL       = "https://github.com/tap-dev/tap#readme"
)

// AirbyteSpec is the ConnectorSpecification that `tap spec` prints.
func AirbyteSpec() map[string]any {
	spec := ConnectionSpecification()
	authOneOf(spec)
	// The form fills streams in by their definition's schema, not as
	// untyped objects; streams_file stays the alternative.
	streams := spec["properties"].(map[string]any)["streams"].(map[string]any)
	streams["items"] = StreamSchema()
	return map[string]any{
		"documentationUrl":                 documentationURL,
		"connectionSpecification":          spec,
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
		for i, p := range parts[:len(parts)-1] {
			props := parent["properties"].(map[string]any)
			child, ok := props[p].(map[string]any)
			if !ok {
				g := groups[strings.Join(parts[:i+1], ".")]
				child = specObject()
				child["title"], child["description"] = g.Title, g.Description
				child["order"] = len(props)
				props[p] = child
			}
			parent = child
		}
		leaf := map[string]any{
			"type":        s.Type,
			"title":       s.Title,
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
		if s.demoOnly() {
			// A config may carry it (the samples do), but a connection's
			// form does not show it.
			leaf["airbyte_hidden"] = true
		}
		if len(s.Enum) > 0 {
			leaf["enum"] = s.Enum
		}
		switch s.Type {
		case "array":
			items := cmp.Or(s.items, "object")
			leaf["items"] = map[string]any{"type": items}
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

// authTypes are the members each auth.type uses, in the form's order, and
// those its check (checkAuth, checkOAuth) requires whatever the grant:
// Airbyte's form shows one branch of a oneOf per type, chosen by its
// "type" const, instead of every member of every type at once.
var authTypes = []struct {
	name, title       string
	members, required []string
}{
	{"none", "No authentication", nil, nil},
	{"bearer", "Bearer token", []string{"token"}, []string{"token"}},
	{"basic", "HTTP Basic", []string{"username", "password"}, []string{"username"}},
	{"api_key", "API key", []string{"name", "value", "in"}, []string{"name", "value"}},
	{"oauth2", "OAuth2", []string{"token_url", "grant_type", "client_id", "client_secret", "refresh_token", "auth_style", "scopes", "token_params"}, []string{"token_url"}},
	{"jwt", "JWT bearer (service account)", []string{"token_url", "issuer", "private_key", "subject", "audience", "key_id", "scopes", "token_params"}, []string{"token_url", "issuer", "private_key"}},
	{"session", "Session token from a login", []string{"login_url", "login_method", "login_body", "login_form", "login_params", "login_headers", "username", "password", "token_path", "expires_s", "name", "in"}, []string{"login_url", "token_path"}},
}

// authOneOf turns the spec's auth object, every member of every type
// side by side, into a oneOf of one object per auth type, each holding its
// members and a "type" whose const tells them apart.
func authOneOf(spec map[string]any) {
	props := spec["properties"].(map[string]any)
	auth := props["auth"].(map[string]any)
	members := auth["properties"].(map[string]any)
	typ := members["type"].(map[string]any)
	var branches []any
	for _, at := range authTypes {
		bp := map[string]any{"type": map[string]any{"type": "string", "const": at.name, "default": at.name, "title": "Type", "order": 0}}
		for i, m := range at.members {
			leaf := maps.Clone(members[m].(map[string]any))
			leaf["order"] = i + 1
			bp[m] = leaf
		}
		branches = append(branches, map[string]any{
			"title": at.title, "type": "object", "additionalProperties": false,
			"required": append([]string{"type"}, at.required...), "properties": bp,
		})
	}
	props["auth"] = map[string]any{
		"type": "object", "title": "Authentication", "description": typ["description"],
		"order": auth["order"], "oneOf": branches,
	}
}
