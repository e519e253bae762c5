// Package streams holds the declarative stream model: stream definitions and
// their checks (pagination options included), the stream plan and record
// extraction; the paginators, the page walk and where a walk stopped are
// in streams/pages, the body decoders in streams/decoder, the order and
// text of replication-key values and the chunk windows in streams/keys. It
// is pure logic: nothing here opens a connection or keeps global state.
package streams

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Definition describes one stream of a user's API, as written in the config
// or the streams file.
type Definition struct {
	Name   string            `json:"name" lang:"required" title:"Name" doc:"The stream's name, unique among the streams: the Singer stream and the Airbyte stream."`
	Path   string            `json:"path" eg:"\"/v1/orders\"" title:"Path" doc:"Path under base_url; may hold {placeholders} filled from a parent record (parent.key or parent.as) or the config's path_params. Required but for a feed or a report job with its own create.path."`
	Method string            `json:"method" lang:"enum=GET|POST,fold,default=GET" title:"Method" doc:"GET or POST."`
	Params map[string]string `json:"params" title:"Query parameters" doc:"Static query parameters of every request."`
	// Headers are the stream's own, sent besides the config's headers.
	Headers map[string]string `json:"headers" title:"Headers" doc:"Headers of every request of this stream, besides (and over) the config's headers; one that names a credential is masked as the config's are."`
	Body    json.RawMessage   `json:"body" title:"Body" doc:"POST body (JSON); a GraphQL stream builds its own."`
	// RecordsPath is the dotted path to the record array.
	RecordsPath string `json:"records_path" title:"Records path" doc:"Dotted path to the record array; \"\" = the body is the array; a * segment stands for each member of an object or array there (data.*, or items.*.record)."`
	// ObjectIsRecord reads an object where the records are as one record.
	ObjectIsRecord bool         `json:"object_is_record" title:"Object is a record" doc:"An object at records_path (or a body that is one object) is one record, as an endpoint such as /me answers; without it, an error."`
	ErrorPath      string       `json:"error_path" title:"Error path" doc:"A 200 whose body has this path set is an error (retried), not data."`
	PrimaryKey     []string     `json:"primary_key" title:"Primary key" doc:"Properties that identify a record."`
	ReplicationKey string       `json:"replication_key" title:"Replication key" doc:"Property whose value orders the changes; absent: the stream is read whole each run."`
	IsSorted       bool         `json:"is_sorted" title:"Sorted" doc:"Records come ascending by replication_key: the bookmark moves after each page."`
	Incremental    *Incremental `json:"incremental" title:"Incremental filter" doc:"How requests ask the API for what changed since the bookmark; needs a replication_key."`
	Pagination     Pagination   `json:"pagination" title:"Pagination" doc:"How the next page is found; one type, with its options."`
	GraphQL        *GraphQL     `json:"graphql" title:"GraphQL" doc:"A Relay connection: the query, the connection's path and variables."`
	Parent         *Parent      `json:"parent" title:"Parent stream" doc:"Makes the stream a child: walked once per record of the parent stream."`
	// IgnoreStatuses end a walk with no records.
	IgnoreStatuses []int             `json:"ignore_statuses" lang:"min=100,max=599" title:"Ignored statuses" doc:"HTTP statuses that end a walk with no records, such as 404 for a parent deleted upstream."`
	OnStatus       map[string]string `json:"on_status" title:"Rules per HTTP status" doc:"{\"409\": \"retry\", \"404\": \"ignore\", \"403\": \"fail\"}; wins over the config's on_status."` // see ParseOnStatus
	// ResponseRule, set by a front end and never by JSON, reads answers
	// by their bodies too, before OnStatus.
	ResponseRule ResponseRule `json:"-"`
	// RecordStep, set by a front end and never by JSON, filters and
	// changes records before they are written or their children walked.
	RecordStep RecordStep `json:"-"`
	// ComputedPath, set by a front end and never by JSON, is the path of
	// each walk's first request, in place of Path's placeholders (a
	// manifest's path built from the window or the partition's value).
	ComputedPath RequestValue `json:"-"`
	// Parts, set by a front end and never by JSON, are request parts it
	// computes from each walk (a manifest's parameter of the window's
	// bounds); they follow, and win over, params and headers.
	Parts []RequestPart `json:"-"`
	// Weight is the tokens each request spends from the rate limits; 0 is 1.
	Weight              int    `json:"weight" lang:"min=0,max=1000000,default=1" title:"Weight" doc:"Tokens each request spends from the rate limits (0 or absent: 1)."`
	FullTableVersioning bool   `json:"full_table_versioning" title:"Full-table versioning" doc:"A full-table stream writes ACTIVATE_VERSION around each pass."`
	OnUnsorted          string `json:"on_unsorted" lang:"enum=fail|demote,default=fail" title:"On unsorted" doc:"A sorted stream's key going down: fail, or demote to unsorted with a WARN."`
	// OnRequestFailure is what a request that failed for good (retries
	// exhausted, or a permanent error) does: "fail" the run (default) or
	// become a "dead_letter" while the run goes on.
	OnRequestFailure string `json:"on_request_failure" lang:"enum=fail|dead_letter,default=fail" title:"On request failure" doc:"A request that failed for good: fail the run, or dead_letter and go on."`
	// Format of the page bodies: json (default), jsonl, csv or xml.
	Format string      `json:"format" lang:"enum=json|jsonl|csv|xml,default=json" title:"Body format" doc:"The format of the page bodies."`
	CSV    *CSVOptions `json:"csv" title:"CSV" doc:"How a csv body is laid out (format csv)."`
	// Async makes the stream a report job: create, poll, download.
	Async *Async `json:"async" title:"Report job" doc:"The stream is a report job: create, poll until done, download its files."`
	// SoftDelete, Deletes and Reconcile find the rows deleted upstream
	// (and, Reconcile, the rows the cursor missed): deletes.go.
	SoftDelete *SoftDelete `json:"soft_delete" title:"Soft delete" doc:"The field and values that mark a record deleted: written with _sdc_deleted_at."`
	Deletes    *Deletes    `json:"deletes" title:"Deletion events" doc:"A walk of events each naming a key of this stream that is gone."`
	Reconcile  *Reconcile  `json:"reconcile" title:"Reconcile" doc:"Every few runs, the keys the API lists against those emitted: the missing are deleted."`
	// Feed makes the stream read a message feed (websocket, sse,
	// ndjson) instead of pages.
	Feed *Feed `json:"feed" title:"Message feed" doc:"The stream reads a message feed (websocket, sse or ndjson) instead of pages."`
	// Schema is a path to a JSON Schema file (relative to the file that
	// defines the stream) or an inline schema object. The tap resolves it
	// when it loads the config; streams only sees the decoded form.
	Schema json.RawMessage `json:"schema" lang:"required,loader" title:"Schema" doc:"Path of a JSON Schema file (relative to the file defining the stream) or an inline schema."`
}

// Incremental says how a stream asks the API for what changed.
type Incremental struct {
	// Param is the query parameter (or GraphQL variable) carrying the lower
	// bound: bookmark − overlap.
	// Without it (an API that takes no filter) the block says only how
	// the key reads (KeyFormat): every record is asked for, and those
	// below the bookmark are dropped by the run.
	Param string `json:"param" eg:"\"updated_since\"" title:"Filter parameter" doc:"Query parameter (or GraphQL variable) carrying bookmark − overlap; without it the API is asked for every record each run, and those below the bookmark are dropped by the tap."`
	// OverlapS is subtracted from a time bookmark, so that rows committed
	// late with an older replication key are read again; absent (nil) it
	// is DefaultOverlapS, and 0 turns it off (Overlap).
	OverlapS *int `json:"overlap_s,omitempty" lang:"min=0,default=300" title:"Overlap (s)" doc:"Seconds subtracted from a time bookmark, for rows committed late (0: none)."`
	// Overlap is subtracted from a numeric bookmark (ids, versions). Zero
	// means the request starts at the bookmark itself.
	Overlap json.Number `json:"overlap" lang:"min=0" title:"Overlap" doc:"Subtracted from a numeric bookmark (ids, versions)."`
	// Format of the time value sent: rfc3339, date, unix, unix_ms or a Go
	// time layout.
	Format string `json:"format" lang:"default=rfc3339" title:"Time format" doc:"rfc3339, date, unix, unix_ms or a Go time layout."`
	// EndParam carries the exclusive upper bound of a chunk window.
	EndParam string `json:"end_param" title:"End parameter" doc:"Query parameter of a chunk window's exclusive upper bound; required with chunk_days."`
	// ChunkDays > 0 splits [start, now) into windows of that many days.
	ChunkDays int `json:"chunk_days" lang:"min=0" title:"Chunk (days)" doc:"> 0: the backfill walks [start, now) in windows of this many days, checkpointing each."`
	// EndInclusive sends the last instant a window includes as EndParam,
	// for an API whose upper bound is inclusive: the window's end less
	// one unit of Format (a day for date, a second for rfc3339 and unix,
	// a millisecond for unix_ms).
	EndInclusive bool `json:"end_inclusive" title:"End inclusive" doc:"The API's upper bound is inclusive: end_param is the window's last instant."`
	// KeyFormat says how the records' replication key reads as a time
	// when it is not RFC 3339: epoch seconds or milliseconds (a number,
	// which would otherwise compare as one), or a Go time layout. The
	// bookmark is then the key's time in RFC 3339.
	KeyFormat string `json:"key_format" eg:"\"unix\"" title:"Key format" doc:"How the records' replication key reads as a time when it is not RFC 3339: unix, unix_ms or a Go time layout, or several separated by | tried in turn; the bookmark is then an RFC 3339 time."`
}

// AsksChanges reports whether d's requests ask the API for what changed
// since the bookmark (an incremental block with a param, or a computed
// part or path that reads the bounds); a stream with a replication key
// that does not is filtered by the run (tap/clientside).
func (d *Definition) AsksChanges() bool {
	if d.Incremental == nil {
		return false
	}
	if d.Incremental.Param != "" {
		return true
	}
	values := []RequestValue{d.ComputedPath} // a front end's path or parameter of the window's bounds
	for _, p := range d.Parts {
		values = append(values, p.Value)
	}
	for _, v := range values {
		if b, ok := v.(interface{ ReadsBounds() bool }); ok && b.ReadsBounds() {
			return true
		}
	}
	return false
}

// Pagination is a tagged variant: Type selects the one option set that
// applies, and an option of another type is an error when the definition is
// decoded, never silently ignored.
type Pagination struct {
	Type string `json:"type"`
	// PageCommon holds the options every type takes. An option added
	// there is accepted by, and reaches, every paginator.
	PageCommon
	// Options is the option set of Type (*OffsetOptions, *CursorOptions,
	// …: the types of pageTypes). It is nil for types without options of
	// their own (none, link_header); OptionSet never is.
	Options PageOptions `json:"-"`
}

// PageCommon holds the pagination options of every type.
type PageCommon struct {
	// MaxPages > 0 stops a walk that asks for more pages than this.
	MaxPages int `json:"max_pages" lang:"min=0" doc:"> 0: a walk stops after this many pages"`
	// Inject says where the paginator's parameters go: "query"
	// (default), "body" (each parameter a dotted path into the JSON
	// body) or "header".
	Inject string `json:"inject" lang:"enum=query|body|header,default=query" doc:"where the paginator's parameters go"`
}

// GraphQL describes a Relay connection.
type GraphQL struct {
	Query          string         `json:"query" lang:"required" title:"Query" doc:"The GraphQL query; it takes the page variables."`
	ConnectionPath string         `json:"connection_path" lang:"required" title:"Connection path" doc:"Dotted path to the connection (edges, pageInfo) in the answer."`
	Variables      map[string]any `json:"variables" title:"Variables" doc:"Variables sent with every page."`
}

// Parent makes a stream a child: it is walked once per parent record, with
// the parent's Key filling the {Key} placeholder of Path (or {As}), and the
// key copied into each child record under As. With Values, it is walked
// once per value instead, each value the key of a record of no stream.
type Parent struct {
	Stream string `json:"stream" title:"Parent" doc:"The parent stream's name; or values."`
	// Values stand for the parent stream's records: the stream is walked
	// once for each, a fixed list of partitions (regions, accounts, report
	// kinds), each value its record's key.
	Values []string `json:"values" eg:"[\"eu\", \"us\"]" title:"Values" doc:"Instead of a parent stream: the values the stream is walked once for each (its partitions), each filling the {key} placeholder or param as a parent record's key would."`
	Key    string   `json:"key" lang:"required" title:"Key" doc:"The parent record's property filling the path's {key} placeholder (with values: the values' name)."`
	// Param sends the key as a query parameter too, for an API that
	// takes the parent in the query (?campaign_id=…) rather than the path.
	Param string `json:"param" eg:"\"campaign_id\"" title:"Parameter" doc:"A query parameter the parent's key is sent in (besides, or instead of, a {placeholder} of the path)."`
	As    string `json:"as" title:"As" doc:"The name the key has in the child's records and path placeholder."`
}

// FieldError is a problem with one field of one stream definition.
type FieldError struct {
	Stream string // may be empty when the name itself is missing
	Field  string // dotted, e.g. "pagination.type"
	Msg    string // what was expected
}

func (e *FieldError) Error() string {
	if e.Stream == "" {
		return fmt.Sprintf("%s: %s", e.Field, e.Msg)
	}
	return fmt.Sprintf("stream %q: %s: %s", e.Stream, e.Field, e.Msg)
}

// Check reports the first problem of d that can be seen without its schema
// or its neighbours: an option against its tags (lang.go), then the rules
// between options (rules.go), then what only code can check.
func (d *Definition) Check() error {
	bad := func(field, format string, args ...any) error {
		return &FieldError{Stream: d.Name, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	v := reflect.ValueOf(d)
	if err := checkOwn(d.Name, "", "", v); err != nil {
		return err
	}
	if err := d.checkPath(); err != nil { // names the placeholder a rule would not
		return err
	}
	if err := checkRules(d); err != nil {
		return err
	}
	if err := checkBlocks(d.Name, "", v); err != nil {
		return err
	}
	if d.Feed != nil {
		if err := d.checkFeed(); err != nil {
			return err
		}
	}
	if len(d.Body) > 0 && string(d.Body) != "null" && !json.Valid(d.Body) {
		return bad("body", "must be JSON")
	}
	for name, v := range d.Headers {
		if !headerToken(name) {
			return bad("headers", "%q is not a valid header name", name)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return bad("headers."+name, "must not contain line breaks or NUL")
		}
	}
	if inc := d.Incremental; inc != nil {
		if err := CheckTimeFormat(inc.Format); err != nil {
			return bad("incremental.format", "%v", err)
		}
		for _, f := range strings.Split(inc.KeyFormat, "|") { // alternatives, tried in turn
			if err := CheckTimeFormat(f); err != nil {
				return bad("incremental.key_format", "%v", err)
			}
		}
	}
	if par := d.Parent; par != nil && par.Stream == d.Name {
		return bad("parent.stream", "a stream cannot be its own parent")
	}
	if err := first(d.checkFormat(), d.checkInject(), d.checkDeletes()); err != nil {
		return err
	}
	if _, err := ParseOnStatus(d.OnStatus); err != nil {
		return bad("on_status", "%v", err)
	}
	return nil
}

// checkPath checks the {placeholders} of d.Path: each must be filled by
// the parent stream (parent.key or parent.as), so a missing value is an
// error when the config is loaded rather than in the middle of a run.
func (d *Definition) checkPath() error {
	parts, err := splitPath(d.Path)
	if err != nil {
		return &FieldError{Stream: d.Name, Field: "path", Msg: err.Error()}
	}
	for i := 1; i < len(parts); i += 2 {
		name := parts[i]
		switch par := d.Parent; {
		case par == nil:
			return &FieldError{Stream: d.Name, Field: "path", Msg: fmt.Sprintf("placeholder {%s} needs a parent stream to fill it (\"parent\": {\"stream\": ..., \"key\": %q})", name, name)}
		case name != par.Key && name != par.As:
			return &FieldError{Stream: d.Name, Field: "path", Msg: fmt.Sprintf("placeholder {%s} is not filled by the parent (parent.key is %q, parent.as is %q)", name, par.Key, par.As)}
		}
	}
	return nil
}

// CheckTimeFormat reports whether format is a known incremental format or a
// Go layout that can print and read back a time.
func CheckTimeFormat(format string) error {
	switch format {
	case "", "rfc3339", "date", "unix", "unix_ms":
		return nil
	}
	ref := time.Date(2006, 1, 2, 15, 4, 5, 0, time.UTC)
	if _, err := time.Parse(format, ref.Format(format)); err != nil || !strings.ContainsAny(format, "0123456789") {
		return fmt.Errorf("expected rfc3339, date, unix, unix_ms or a Go time layout, got %q", format)
	}
	return nil
}

func first(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// headerToken reports whether s is an HTTP header name (a token, RFC 9110
// 5.1).
func headerToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
