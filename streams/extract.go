package streams

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tap-dev/tap/codec"
)

// Lookup follows a dotted path ("data.items", "meta.pages.0.next") into a
// decoded JSON value: each segment is a key of an object or, when it is a
// non-negative integer, an index into an array. The empty path returns v.
// found is false when a segment is missing or crosses a value that is
// neither an object nor an array (null included).
func Lookup(v any, path string) (value any, found bool) {
	if path == "" {
		return v, true
	}
	for seg := range strings.SplitSeq(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			v, found = c[seg]
			if !found {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) || seg != strconv.Itoa(i) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// KeysNear describes, for an error, the keys of the deepest object on
// path that the body has: "; its keys: data, has_more" (names only, never
// values, which may be secrets; at most 20), or "" when that object has
// none. A user who wrote the wrong path sees the right one.
func KeysNear(body any, path string) string {
	at, where := body, ""
	for seg := range strings.SplitSeq(path, ".") {
		m, ok := at.(map[string]any)
		if !ok {
			break
		}
		next, ok := m[seg]
		if !ok {
			break
		}
		if _, obj := next.(map[string]any); !obj {
			break
		}
		at, where = next, where+"."+seg
	}
	m, ok := at.(map[string]any)
	if !ok || len(m) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(m))
	more := ""
	if len(keys) > 20 {
		keys, more = keys[:20], ", …"
	}
	if where == "" {
		return "; its keys: " + strings.Join(keys, ", ") + more
	}
	return "; the keys of " + where[1:] + ": " + strings.Join(keys, ", ") + more
}

// LookupNullable is Lookup where a null met on the way counts as found
// and null: {"data": null} holds "data.items" as null, not as missing.
func LookupNullable(v any, path string) (any, bool) {
	if path == "" {
		return v, true
	}
	for seg := range strings.SplitSeq(path, ".") {
		if v == nil {
			return nil, true
		}
		var ok bool
		if v, ok = Lookup(v, seg); !ok {
			return nil, false
		}
	}
	return v, true
}

// APIError is an error the API reported inside a successful response: a
// 200 whose error_path is set. The tap treats it as transient and retries.
type APIError struct {
	Stream  string
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("stream %q: the API answered with an error: %s", e.Stream, e.Message)
}

// Temporary reports true: an error inside a 200 is worth retrying.
func (e *APIError) Temporary() bool { return true }

// maxMessage bounds the text of an API error kept in an error message.
const maxMessage = 500

// Extract returns the records of one decoded response body.
//
// When error_path is set and the body has a value there that is not
// "empty" (null, false, "", 0, [] or {}), Extract returns an *APIError
// with that value's text: the value itself if it is a string, else its
// "message" field (or the first element's, for an array), else its
// compact JSON.
//
// For a GraphQL stream a non-empty top-level "errors" array is an error
// carrying the first message, and the records are the edges[].node (or
// nodes[]) of the connection at connection_path.
//
// Otherwise the records are the array at records_path ("" = the body
// itself), or with object_is_record an object there as one record; a
// path with a * segment gathers them from every member there (gather).
// A null there, or a null on the way to it, is zero records; a
// path the body does not have, or a value that is not an array, is an
// error naming the path: an API that changed shape must fail loudly, not
// look empty.
func (d *Definition) Extract(body any) ([]any, error) {
	if d.ErrorPath != "" {
		if v, found := Lookup(body, d.ErrorPath); found && !isEmptyValue(v) {
			return nil, &APIError{Stream: d.Name, Message: errorMessage(v)}
		}
	}
	if d.GraphQL != nil && d.GraphQL.ConnectionPath != "" {
		return d.extractGraphQL(body)
	}
	if d.RecordsWildcard() {
		return gather(body, strings.Split(d.RecordsPath, "."), nil), nil
	}
	v, found := LookupNullable(body, d.RecordsPath)
	if !found {
		return nil, streamErr(d.Name, "records_path %q is not in the response (the body is a JSON %s%s)", d.RecordsPath, jsonType(body), KeysNear(body, d.RecordsPath))
	}
	switch recs := v.(type) {
	case nil:
		return nil, nil
	case []any:
		return recs, nil
	case map[string]any:
		if d.ObjectIsRecord && len(recs) > 0 {
			return []any{recs}, nil
		}
		if d.ObjectIsRecord {
			return nil, nil // {}: no record, as the CDK reads it
		}
	}
	if d.RecordsPath == "" {
		return nil, streamErr(d.Name, "the response body is a JSON %s, expected an array of records (set records_path to the array inside it)", jsonType(v))
	}
	return nil, streamErr(d.Name, "records_path %q holds a JSON %s, expected an array of records", d.RecordsPath, jsonType(v))
}

func (d *Definition) extractGraphQL(body any) ([]any, error) {
	if errs, ok := Lookup(body, "errors"); ok {
		if list, ok := errs.([]any); ok && len(list) > 0 {
			return nil, streamErr(d.Name, "GraphQL error: %s", errorMessage(list[0]))
		}
	}
	path := d.GraphQL.ConnectionPath
	conn, found := LookupNullable(body, path)
	if !found {
		return nil, streamErr(d.Name, "connection_path %q is not in the response", path)
	}
	if conn == nil {
		return nil, nil
	}
	c, ok := conn.(map[string]any)
	if !ok {
		return nil, streamErr(d.Name, "connection_path %q holds a JSON %s, expected a connection object", path, jsonType(conn))
	}
	if edges, ok := c["edges"]; ok && edges != nil {
		list, ok := edges.([]any)
		if !ok {
			return nil, streamErr(d.Name, "%s.edges is a JSON %s, expected an array", path, jsonType(edges))
		}
		recs := make([]any, 0, len(list))
		for i, e := range list {
			node, found := Lookup(e, "node")
			if !found {
				return nil, streamErr(d.Name, "%s.edges.%d has no node; select edges { node { … } } in the query", path, i)
			}
			if node != nil {
				recs = append(recs, node)
			}
		}
		return recs, nil
	}
	if nodes, ok := c["nodes"]; ok && nodes != nil {
		list, ok := nodes.([]any)
		if !ok {
			return nil, streamErr(d.Name, "%s.nodes is a JSON %s, expected an array", path, jsonType(nodes))
		}
		recs := make([]any, 0, len(list))
		for _, n := range list {
			if n != nil {
				recs = append(recs, n)
			}
		}
		return recs, nil
	}
	return nil, streamErr(d.Name, "connection_path %q has neither edges nor nodes; select one of them in the query", path)
}

// isEmptyValue reports whether an error_path value means "no error".
func isEmptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case float64:
		return x == 0
	}
	return false
}

// errorMessage is the human text of an error value reported by an API.
func errorMessage(v any) string {
	msg := ""
	switch x := v.(type) {
	case string:
		msg = x
	case map[string]any:
		if m, ok := x["message"].(string); ok && m != "" {
			msg = m
		}
	case []any:
		if len(x) > 0 {
			switch first := x[0].(type) {
			case string:
				msg = first
			case map[string]any:
				if m, ok := first["message"].(string); ok && m != "" {
					msg = m
				}
			}
		}
	}
	if msg == "" {
		b, err := codec.Marshal(v)
		if err != nil {
			msg = fmt.Sprint(v)
		} else {
			msg = string(b)
		}
	}
	if len(msg) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// A RecordStep is a front end's own step of each record, before it is
// written or its children walked: an Airbyte manifest's record filter of
// a parent stream (the CDK walks no child of a record it drops), or its
// transformations where the stream maps cannot state them (a macro, a
// nested field, a key or the cursor added). It returns the record to go
// on with, or keep false to drop it; partition is the walk's partition
// (Partition.Context), nil for a stream with no parent.
type RecordStep interface {
	Step(rec map[string]any, partition map[string]any) (out map[string]any, keep bool, err error)
}

// RecordsWildcard reports whether d's records_path has a * segment: its
// records are gathered from each member of an object or array.
func (d *Definition) RecordsWildcard() bool {
	return slices.Contains(strings.Split(d.RecordsPath, "."), "*")
}

// gather appends to out the records at path in v, where a * segment
// stands for each member of an object (in the order of its keys) or of
// an array, as the CDK's DpathExtractor reads it: what the path reaches
// is a record, or, when an array, its items are. A path that is not
// there, or crosses a value that is neither an object nor an array,
// reaches nothing: one member without the field is no error.
func gather(v any, path []string, out []any) []any {
	if len(path) == 0 {
		switch x := v.(type) {
		case nil:
		case []any:
			out = append(out, x...)
		default:
			out = append(out, x)
		}
		return out
	}
	seg, rest := path[0], path[1:]
	switch x := v.(type) {
	case map[string]any:
		if seg != "*" {
			return gather(x[seg], rest, out)
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = gather(x[k], rest, out)
		}
	case []any:
		if seg != "*" {
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return out
			}
			return gather(x[i], rest, out)
		}
		for _, e := range x {
			out = gather(e, rest, out)
		}
	}
	return out
}
