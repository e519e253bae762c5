package streams

import (
	"fmt"
	"maps"
	"net/url"
	"strings"

	"github.com/tap-dev/tap/codec"
)

// FirstRequest builds the first request of a walk of d, before pagination
// (a Paginator's First adds its parameters) and before the incremental
// bounds (added by the caller with WithParam or WithVariable).
//
//   - Method is d.Method upper-cased, GET by default, POST for GraphQL.
//   - URL is d.Path with every {name} placeholder replaced by vars[name],
//     escaped with url.PathEscape ("a/b c" → "a%2Fb%20c"), dots too in a
//     value of only dots (".." → "%2E%2E"), so a value can never add or
//     remove path segments. A placeholder vars has no value for is
//     an error naming it.
//   - Query is a copy of d.Params (nil when there are none).
//   - Body is d.Body for a POST; for GraphQL it is
//     {"query": graphql.query, "variables": graphql.variables}.
func (d *Definition) FirstRequest(vars map[string]string) (Request, error) {
	t, err := compileRequest(d, false)
	if err != nil {
		return Request{}, err
	}
	return t.Build(WalkValues{Vars: vars})
}

// fillPath replaces the {name} placeholders of path.
func fillPath(stream, path string, vars map[string]string) (string, error) {
	parts, err := splitPath(path)
	if err != nil {
		return "", streamErr(stream, "path: %v", err)
	}
	return fillParts(stream, parts, vars)
}

// fillParts joins a path split by splitPath, each placeholder replaced
// by its value in vars, escaped (EscapePathValue); a placeholder vars
// has no value for is an error naming it.
func fillParts(stream string, parts []string, vars map[string]string) (string, error) {
	var b strings.Builder
	for i, part := range parts {
		if i%2 == 0 {
			b.WriteString(part)
			continue
		}
		value, ok := vars[part]
		if !ok {
			return "", streamErr(stream, "path placeholder {%s} has no value", part)
		}
		b.WriteString(EscapePathValue(value))
	}
	return b.String(), nil
}

// EscapePathValue is url.PathEscape of a path placeholder's value, and
// a value of nothing but dots ("..", ".") with its dots escaped too:
// PathEscape leaves '.' as it is, and a dot segment from a parent key, a
// path_params value or a reconcile key would make a normalising server
// answer for a path outside the template (/raw/../x is /x).
func EscapePathValue(value string) string {
	e := url.PathEscape(value)
	if value != "" && strings.Trim(value, ".") == "" {
		e = strings.ReplaceAll(e, ".", "%2E")
	}
	return e
}

// splitPath splits path at its {placeholders}: literal text at even
// indexes, placeholder names at odd ones ("/a/{id}/b" → "/a/", "id", "/b").
func splitPath(path string) ([]string, error) {
	var parts []string
	for {
		open := strings.IndexByte(path, '{')
		if open < 0 {
			if strings.IndexByte(path, '}') >= 0 {
				return nil, fmt.Errorf("has a '}' without a '{'")
			}
			return append(parts, path), nil
		}
		if strings.IndexByte(path[:open], '}') >= 0 {
			return nil, fmt.Errorf("has a '}' without a '{'")
		}
		end := strings.IndexByte(path[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("has an unclosed placeholder %q", path[open:])
		}
		parts = append(parts, path[:open], path[open+1:open+end])
		path = path[open+end+1:]
	}
}

// WithParam returns a copy of r whose query parameter name is value
// (replacing any earlier values). r and its Query map are not modified.
func (r Request) WithParam(name, value string) Request {
	q := cloneValues(r.Query)
	if q == nil {
		q = url.Values{}
	}
	q.Set(name, value)
	r.Query = q
	return r
}

// WithVariable returns a copy of r whose JSON body {"query", "variables"}
// has variables[name] = value; an empty body becomes {"variables": {…}}
// (the GraphQL paginator's First adds the query). Other members of the
// body are kept. A body that is not a JSON object, or whose "variables" is
// not an object, is an error. r is not modified.
func (r Request) WithVariable(name string, value any) (Request, error) {
	body, err := GraphQLBody(r.Body)
	if err != nil {
		return Request{}, err
	}
	vars, _ := body["variables"].(map[string]any)
	if vars == nil {
		vars = map[string]any{}
	}
	vars[name] = value
	body["variables"] = vars
	b, err := codec.Marshal(body)
	if err != nil {
		return Request{}, fmt.Errorf("variable %q: %w", name, err)
	}
	r.Body = b
	return r, nil
}

// WithParams returns a copy of req whose Query also holds the given
// name/value pairs (replacing earlier values). The caller's Query map is
// never written to. Pairs with an empty name are skipped. The copy shares
// the value lists it does not replace: a request's lists are never
// changed in place, and this runs for every page.
func (req Request) WithParams(kv ...string) Request {
	q := maps.Clone(req.Query)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] == "" {
			continue
		}
		if q == nil {
			q = url.Values{}
		}
		q.Set(kv[i], kv[i+1])
	}
	req.Query = q
	return req
}
