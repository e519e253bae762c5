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
	"strings"
	"time"
)

// Definition describes one stream of a user's API, as written in the config
// or the streams file.
type Definition struct {
	Name                string            `json:"name"`
	Path                string            `json:"path"`
	Method              string            `json:"method"`
	Params              map[string]string `json:"params"`
	Body                json.RawMessage   `json:"body"`
	RecordsPath         string            `json:"records_path"`
	ErrorPath           string            `json:"error_path"`
	PrimaryKey          []string          `json:"primary_key"`
	ReplicationKey      string            `json:"replication_key"`
	IsSorted            bool              `json:"is_sorted"`
	Incremental         *Incremental      `json:"incremental"`
	Pagination          Pagination        `json:"pagination"`
	GraphQL             *GraphQL          `json:"graphql"`
	Parent              *Parent           `json:"parent"`
	IgnoreStatuses      []int             `json:"ignore_statuses"`
	OnStatus            map[string]string `json:"on_status"` // {"409": "retry"}: see ParseOnStatus
	Weight              int               `json:"weight"`    // tokens each request spends from the rate limits [1]
	FullTableVersioning bool              `json:"full_table_versioning"`
	OnUnsorted          string            `json:"on_unsorted"` // a sorted stream's key going down: "fail" (default) or "demote" to unsorted
	// OnRequestFailure is what a request that failed for good (retries
	// exhausted, or a permanent error) does: "fail" the run (default) or
	// become a "dead_letter" while the run goes on.
	OnRequestFailure string `json:"on_request_failure"`
	// Format of the page bodies: json (default), jsonl, csv or xml.
	Format string      `json:"format"`
	CSV    *CSVOptions `json:"csv"`
	// Async makes the stream a report job: create, poll, download.
	Async *Async `json:"async"`
	// SoftDelete, Deletes and Reconcile find the rows deleted upstream
	// (and, Reconcile, the rows the cursor missed): deletes.go.
	SoftDelete *SoftDelete `json:"soft_delete"`
	Deletes    *Deletes    `json:"deletes"`
	Reconcile  *Reconcile  `json:"reconcile"`
	// Feed makes the stream read a message feed (websocket, sse,
	// ndjson) instead of pages.
	Feed *Feed `json:"feed"`
	// Schema is a path to a JSON Schema file (relative to the file that
	// defines the stream) or an inline schema object. The tap resolves it
	// when it loads the config; streams only sees the decoded form.
	Schema json.RawMessage `json:"schema"`
}

// Incremental says how a stream asks the API for what changed.
type Incremental struct {
	// Param is the query parameter (or GraphQL variable) carrying the lower
	// bound: bookmark − overlap.
	Param string `json:"param"`
	// OverlapS is subtracted from a time bookmark, so that rows committed
	// late with an older replication key are read again; absent (nil) it
	// is DefaultOverlapS, and 0 turns it off (Overlap).
	OverlapS *int `json:"overlap_s,omitempty"`
	// Overlap is subtracted from a numeric bookmark (ids, versions). Zero
	// means the request starts at the bookmark itself.
	Overlap json.Number `json:"overlap"`
	// Format of the time value sent: rfc3339, date, unix, unix_ms or a Go
	// time layout.
	Format string `json:"format"`
	// EndParam carries the exclusive upper bound of a chunk window.
	EndParam string `json:"end_param"`
	// ChunkDays > 0 splits [start, now) into windows of that many days.
	ChunkDays int `json:"chunk_days"`
	// EndInclusive sends the last instant a window includes as EndParam,
	// for an API whose upper bound is inclusive: the window's end less
	// one unit of Format (a day for date, a second for rfc3339 and unix,
	// a millisecond for unix_ms).
	EndInclusive bool `json:"end_inclusive"`
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
	Options PageOptions
}

// PageCommon holds the pagination options of every type.
type PageCommon struct {
	// MaxPages > 0 stops a walk that asks for more pages than this.
	MaxPages int `json:"max_pages"`
	// Inject says where the paginator's parameters go: "query"
	// (default), "body" (each parameter a dotted path into the JSON
	// body) or "header".
	Inject string `json:"inject"`
}

// GraphQL describes a Relay connection.
type GraphQL struct {
	Query          string         `json:"query"`
	ConnectionPath string         `json:"connection_path"`
	Variables      map[string]any `json:"variables"`
}

// Parent makes a stream a child: it is walked once per parent record, with
// the parent's Key filling the {Key} placeholder of Path (or {As}), and the
// key copied into each child record under As.
type Parent struct {
	Stream string `json:"stream"`
	Key    string `json:"key"`
	As     string `json:"as"`
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
// or its neighbours.
func (d *Definition) Check() error {
	bad := func(field, format string, args ...any) error {
		return &FieldError{Stream: d.Name, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if strings.TrimSpace(d.Name) == "" {
		return bad("name", "is required (a non-empty string)")
	}
	if d.Feed != nil {
		if err := d.checkFeed(); err != nil {
			return err
		}
	}
	if d.Path == "" && d.Feed == nil && (d.Async == nil || d.Async.Create.Path == "") {
		return bad("path", "is required (e.g. \"/v1/orders\")")
	}
	switch strings.ToUpper(d.Method) {
	case "", "GET", "POST":
	default:
		return bad("method", "must be GET or POST, got %q", d.Method)
	}
	if len(d.Body) > 0 && string(d.Body) != "null" && !json.Valid(d.Body) {
		return bad("body", "must be JSON")
	}
	if err := d.checkPath(); err != nil {
		return err
	}
	p := d.Pagination
	pt, ok := lookupPageType(p.Type)
	if !ok {
		return bad("pagination.type", "%s", unknownTypeMsg(p.Type))
	}
	if opts := p.Options; opts != nil && opts.pageType() != pt.name {
		return bad("pagination", "holds the options of type %q but its type is %q", opts.pageType(), pt.name)
	}
	if err := p.OptionSet().check(d); err != nil { // unset: what the type requires
		return err
	}
	if p.MaxPages < 0 {
		return bad("pagination.max_pages", "must not be negative, got %d", p.MaxPages)
	}
	if inc := d.Incremental; inc != nil {
		if d.ReplicationKey == "" {
			return bad("incremental", "needs a replication_key on the stream")
		}
		if inc.Param == "" {
			return bad("incremental.param", "is required: the query parameter (or GraphQL variable) that carries the lower bound, e.g. \"updated_since\"")
		}
		if inc.OverlapS != nil && *inc.OverlapS < 0 {
			return bad("incremental.overlap_s", "must be a duration in seconds >= 0, got %d", *inc.OverlapS)
		}
		if inc.Overlap != "" {
			if f, err := inc.Overlap.Float64(); err != nil || f < 0 {
				return bad("incremental.overlap", "must be a number >= 0, got %q", inc.Overlap)
			}
		}
		if inc.ChunkDays < 0 {
			return bad("incremental.chunk_days", "must be a number of days >= 0, got %d", inc.ChunkDays)
		}
		if inc.ChunkDays > 0 && inc.EndParam == "" {
			return bad("incremental.end_param", "is required when chunk_days > 0")
		}
		if err := CheckTimeFormat(inc.Format); err != nil {
			return bad("incremental.format", "%v", err)
		}
	}
	switch d.OnUnsorted {
	case "", UnsortedFail, UnsortedDemote:
	default:
		return bad("on_unsorted", "must be \"fail\" or \"demote\", got %q", d.OnUnsorted)
	}
	switch d.OnRequestFailure {
	case "", RequestFailureFail, RequestFailureDeadLetter:
	default:
		return bad("on_request_failure", "must be \"fail\" or \"dead_letter\", got %q", d.OnRequestFailure)
	}
	if par := d.Parent; par != nil {
		if par.Stream == "" || par.Key == "" {
			return bad("parent", "needs \"stream\" and \"key\"")
		}
		if par.Stream == d.Name {
			return bad("parent.stream", "a stream cannot be its own parent")
		}
	}
	if err := first(d.checkFormat(), d.checkInject(), d.checkDeletes()); err != nil {
		return err
	}
	for _, s := range d.IgnoreStatuses {
		if s < 100 || s > 599 {
			return bad("ignore_statuses", "must hold HTTP statuses (100-599), got %d", s)
		}
	}
	if _, err := ParseOnStatus(d.OnStatus); err != nil {
		return bad("on_status", "%v", err)
	}
	if d.Weight < 0 || d.Weight > 1_000_000 {
		return bad("weight", "must be an integer from 1 to 1000000 (0 or absent = 1), got %d", d.Weight)
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
