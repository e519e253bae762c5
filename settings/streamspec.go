package settings

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/tap-dev/tap/streams"
)

// StreamField is one field of a stream definition as the spec's form
// shows it: dotted for a member of a nested object ("incremental.param").
// Its type comes from streams.Definition, not from here.
type StreamField struct {
	Name, Title, Description string
}

// streamFields are the titles and descriptions of the stream definition's
// fields, in the order of docs/reference/streams.md. A test keeps every
// field of streams.Definition listed, and every entry a field of it.
var streamFields = []StreamField{
	{"name", "Name", "The stream's name, unique among the streams: the Singer stream and the Airbyte stream."},
	{"path", "Path", "Path under base_url; may hold {placeholders} filled from a parent record (parent.key or parent.as) or the config's path_params."},
	{"method", "Method", "GET or POST [GET]."},
	{"params", "Query parameters", "Static query parameters of every request."},
	{"body", "Body", "POST body (JSON); a GraphQL stream builds its own."},
	{"records_path", "Records path", `Dotted path to the record array; "" = the body is the array.`},
	{"error_path", "Error path", "A 200 whose body has this path set is an error (retried), not data."},
	{"primary_key", "Primary key", "Properties that identify a record."},
	{"replication_key", "Replication key", "Property whose value orders the changes; absent: the stream is read whole each run."},
	{"is_sorted", "Sorted", "Records come ascending by replication_key: the bookmark moves after each page."},
	{"on_unsorted", "On unsorted", "A sorted stream's key going down: fail [default], or demote to unsorted with a WARN."},
	{"on_request_failure", "On request failure", "A request that failed for good: fail the run [default], or dead_letter and go on."},
	{"incremental", "Incremental filter", "How requests ask the API for what changed since the bookmark."},
	{"incremental.param", "Filter parameter", "Query parameter (or GraphQL variable) carrying bookmark − overlap."},
	{"incremental.overlap_s", "Overlap (s)", "Seconds subtracted from a time bookmark, for rows committed late (default 300; 0: none)."},
	{"incremental.overlap", "Overlap", "Subtracted from a numeric bookmark (ids, versions)."},
	{"incremental.format", "Time format", "rfc3339, date, unix, unix_ms or a Go time layout."},
	{"incremental.end_param", "End parameter", "Query parameter of a chunk window's exclusive upper bound."},
	{"incremental.chunk_days", "Chunk (days)", "> 0: the backfill walks [start, now) in windows of this many days, checkpointing each."},
	{"incremental.end_inclusive", "End inclusive", "The API's upper bound is inclusive: end_param is the window's last instant."},
	{"pagination", "Pagination", "How the next page is found; one type, with its options."},
	{"graphql", "GraphQL", "A Relay connection: the query, the connection's path and variables."},
	{"graphql.query", "Query", "The GraphQL query; it takes the page variables."},
	{"graphql.connection_path", "Connection path", "Dotted path to the connection (edges, pageInfo) in the answer."},
	{"graphql.variables", "Variables", "Variables sent with every page."},
	{"parent", "Parent stream", "Makes the stream a child: walked once per record of the parent stream."},
	{"parent.stream", "Parent", "The parent stream's name."},
	{"parent.key", "Key", "The parent record's property filling the path's {key} placeholder."},
	{"parent.as", "As", "The name the key has in the child's records and path placeholder."},
	{"ignore_statuses", "Ignored statuses", "HTTP statuses that end a walk with no records, such as 404 for a parent deleted upstream."},
	{"on_status", "Rules per HTTP status", `{"409": "retry", "404": "ignore", "403": "fail"}; wins over the config's on_status.`},
	{"weight", "Weight", "Tokens each request spends from the rate limits [1]."},
	{"full_table_versioning", "Full-table versioning", "A full-table stream writes ACTIVATE_VERSION around each pass."},
	{"format", "Body format", "json [default], jsonl, csv or xml."},
	{"csv", "CSV", "How a csv body is laid out (format csv)."},
	{"csv.delimiter", "Delimiter", `The one character between fields [","].`},
	{"csv.header", "Header row", "The first row names the columns [true]."},
	{"async", "Report job", "The stream is a report job: create, poll until done, download its files."},
	{"soft_delete", "Soft delete", "The field and values that mark a record deleted: written with _sdc_deleted_at."},
	{"deletes", "Deletion events", "A walk of events each naming a key of this stream that is gone."},
	{"reconcile", "Reconcile", "Every few runs, the keys the API lists against those emitted: the missing are deleted."},
	{"feed", "Message feed", "The stream reads a message feed (websocket, sse or ndjson) instead of pages."},
	{"schema", "Schema", "Path of a JSON Schema file (relative to the file defining the stream) or an inline schema."},
}

// StreamSchema is the JSON Schema (draft-07) of one stream definition:
// the spec's "streams" items. Its fields and their types come from
// streams.Definition, the pagination types and their options from the
// tables the reference docs are checked against (streams.PageTypes,
// streams.CommonPageOptions), the titles and descriptions from
// streamFields; a field it does not know is refused, as the config is.
func StreamSchema() map[string]any {
	s := objectSchema(reflect.TypeFor[streams.Definition](), "")
	s["title"] = "Stream definition"
	s["required"] = []string{"name"}
	return s
}

// objectSchema is the schema of a struct whose fields are at prefix.
func objectSchema(t reflect.Type, prefix string) map[string]any {
	props := map[string]any{}
	var fields func(t reflect.Type)
	fields = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" {
				fields(f.Type)
				continue
			}
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			p := fieldSchema(f.Type, prefix+name)
			if i := slices.IndexFunc(streamFields, func(sf StreamField) bool { return sf.Name == prefix+name }); i >= 0 {
				p["title"], p["description"] = streamFields[i].Title, streamFields[i].Description
				p["order"] = i
			}
			props[name] = p
		}
	}
	fields(t)
	return map[string]any{"type": "object", "additionalProperties": false, "properties": props}
}

var (
	rawType        = reflect.TypeFor[json.RawMessage]()
	numberType     = reflect.TypeFor[json.Number]()
	paginationType = reflect.TypeFor[streams.Pagination]()
	unmarshaler    = reflect.TypeFor[json.Unmarshaler]()
)

// fieldSchema is the schema of a value of type t at the dotted path name.
func fieldSchema(t reflect.Type, name string) map[string]any {
	nullable := false
	for t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), true
	}
	var s map[string]any
	switch {
	case t == paginationType:
		s = paginationSchema()
	case t == rawType && strings.HasSuffix(name, "schema"):
		s = map[string]any{"type": []string{"string", "object"}}
	case t == rawType:
		s = map[string]any{} // any JSON value
	case t == numberType:
		s = map[string]any{"type": "number"}
	case reflect.PointerTo(t).Implements(unmarshaler):
		s = map[string]any{} // read by its own decoder, which checks it
	default:
		switch t.Kind() {
		case reflect.String:
			s = map[string]any{"type": "string"}
		case reflect.Bool:
			s = map[string]any{"type": "boolean"}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			s = map[string]any{"type": "integer"}
		case reflect.Float32, reflect.Float64:
			s = map[string]any{"type": "number"}
		case reflect.Slice:
			s = map[string]any{"type": "array", "items": fieldSchema(t.Elem(), name+"[]")}
		case reflect.Map:
			s = map[string]any{"type": "object", "additionalProperties": true}
			if v := fieldSchema(t.Elem(), name+"{}"); len(v) > 0 {
				s["additionalProperties"] = v
			}
		case reflect.Struct:
			s = objectSchema(t, name+".")
		default:
			s = map[string]any{}
		}
	}
	if nullable {
		if typ, ok := s["type"].(string); ok {
			s["type"] = []string{typ, "null"}
		}
	}
	return s
}

// paginationSchema is a oneOf of one object per pagination type, told
// apart by its "type" const, each with its own options and the common
// ones; an option marked required in the reference is required here.
func paginationSchema() map[string]any {
	var branches []any
	common := streams.CommonPageOptions()
	for _, pt := range streams.PageTypes() {
		props := map[string]any{"type": map[string]any{"type": "string", "const": pt.Name, "default": pt.Name, "title": "Type", "order": 0}}
		required := []string{"type"}
		for i, o := range append(slices.Clone(pt.Options), common...) {
			p := map[string]any{"type": o.Type, "title": o.Name, "order": i + 1}
			if o.Note != "" {
				p["description"] = o.Note
			}
			if strings.HasPrefix(o.Note, "required") {
				required = append(required, o.Name)
			}
			props[o.Name] = p
		}
		branches = append(branches, map[string]any{
			"title": pt.Name, "description": "Next page: " + pt.Next + " End: " + pt.End,
			"type": "object", "additionalProperties": false, "required": required, "properties": props,
		})
	}
	return map[string]any{"type": "object", "oneOf": branches}
}
