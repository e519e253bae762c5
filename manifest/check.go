package manifest

import (
	"fmt"
	"slices"
	"strings"
)

// The rules of a component beyond its fields' types, as the CDK's schema
// states them (its enums; what one of two fields must give).

func oneOf(field, got string, allowed ...string) []Problem {
	if got == "" || slices.Contains(allowed, got) {
		return nil
	}
	return []Problem{{Path: field, Msg: fmt.Sprintf("expected one of %s, got %q", strings.Join(allowed, ", "), got)}}
}

func (r *HttpRequester) check() []Problem {
	p := oneOf("http_method", r.Method, "GET", "POST")
	if !r.URL.IsSet() && !r.URLBase.IsSet() {
		p = append(p, Problem{Path: "url_base", Msg: "missing: a requester needs url, or url_base (and path)"})
	}
	if n := countSet(r.BodyJSON.IsSet(), r.BodyData.IsSet(), r.Body != nil); n > 1 {
		p = append(p, Problem{Path: "request_body", Msg: "give one of request_body, request_body_json and request_body_data"})
	}
	return p
}

func (o *RequestOption) check() []Problem {
	p := oneOf("inject_into", o.InjectInto, "request_parameter", "header", "body_data", "body_json")
	if !o.FieldName.IsSet() && len(o.FieldPath) == 0 {
		p = append(p, Problem{Path: "field_name", Msg: "missing: a request option needs field_name or field_path"})
	}
	// field_path beside field_name, outside a JSON body, is left alone:
	// Connector Builder exports write $parameters into every component,
	// a stream's field_path included, and the CDKs they were made with
	// ignored it there.
	return p
}

func (f *HttpResponseFilter) check() []Problem {
	if f.Action == "RESET_PAGINATION" || f.Action == "REFRESH_TOKEN_THEN_RETRY" {
		return []Problem{{Path: "action", Msg: "HttpResponseFilter action " + f.Action, notImplemented: true}}
	}
	return append(oneOf("action", f.Action, "SUCCESS", "FAIL", "RETRY", "IGNORE", "RATE_LIMITED"),
		oneOf("failure_type", f.FailureType, "system_error", "config_error", "transient_error")...)
}

func (a *AddedFieldDefinition) check() []Problem {
	return oneOf("value_type", a.ValueType, "string", "number", "integer", "boolean")
}

func (s *RecordSelector) check() []Problem {
	return oneOf("schema_normalization", s.SchemaNormalization, "None", "Default")
}

func countSet(set ...bool) int {
	n := 0
	for _, s := range set {
		if s {
			n++
		}
	}
	return n
}
