package streams

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
)

// DeletedAt is the property a deleted row is written with, the Singer
// convention that targets with hard_delete act on.
const DeletedAt = "_sdc_deleted_at"

// SoftDelete names the field of a record that says it is deleted, and the
// values that mean so: such a record is written with DeletedAt.
type SoftDelete struct {
	Field  string `json:"field" lang:"required" eg:"\"deleted\"" doc:"The record's field (dotted) that says it is deleted."`
	Values []any  `json:"values" lang:"required" eg:"[true]" doc:"The values of field that mean deleted."`
}

// Deletes is a stream of deletion events (Stripe's customer.deleted, a
// changes feed): each event names a key of this stream that is gone. Its
// walk has its own path, pagination and incremental filter, and its own
// bookmark.
type Deletes struct {
	Path        string            `json:"path" lang:"required" eg:"\"/v1/events\"" doc:"The path of the deletion events."`
	Params      map[string]string `json:"params" doc:"Query parameters of the events walk."`
	RecordsPath string            `json:"records_path" doc:"Dotted path to the events array."`
	KeyPath     string            `json:"key_path" lang:"required" eg:"\"data.object.id\"" doc:"Where an event holds the deleted row's primary key."`
	TimePath    string            `json:"time_path" doc:"When the row was deleted: the events' replication key; required with incremental."`
	Pagination  Pagination        `json:"pagination" doc:"How the events walk pages (as a stream does)."`
	Incremental *Incremental      `json:"incremental" doc:"How the events walk asks for what is new (its bookmark is time_path)."`
}

// Reconcile compares, every EveryRuns runs (or when asked), the keys the
// source lists with the keys the tap has emitted, kept in KeysFile.
type Reconcile struct {
	EveryRuns int               `json:"every_runs" lang:"min=0" doc:"Reconcile every this many runs (0: only with --reconcile)."`
	Params    map[string]string `json:"params" doc:"Added to the listing's requests, e.g. {\"fields\": \"id\"}."` // added to the listing's requests, e.g. {"fields": "id"}
	Path      string            `json:"path" doc:"The listing's own path [the stream's]."`                        // the listing's own path; "" = the stream's
	// RecordsPath and Pagination of the listing, when they differ from
	// the stream's.
	RecordsPath *string     `json:"records_path" doc:"The listing's records path [the stream's]."`
	Pagination  *Pagination `json:"pagination" doc:"The listing's pagination [the stream's]."`
	KeysFile    string      `json:"keys_file" lang:"required" eg:"\"reconcile/orders.keys\"" doc:"The file that keeps the keys the tap has emitted."`
	ByID        *ByID       `json:"by_id" doc:"Fetch each missing key by id before it is called deleted."`
	// MaxDeleteFraction is the largest share of the known keys a
	// reconcile may delete [0.5]; a listing missing more is taken for a
	// broken listing, not for deletions.
	MaxDeleteFraction *float64 `json:"max_delete_fraction" lang:"min=0,max=1,default=0.5" doc:"The largest share of the known keys a reconcile may delete."`
}

// ByID fetches one row by its key: Path has one {placeholder} the key
// fills.
type ByID struct {
	Path        string            `json:"path" lang:"required" eg:"\"/v1/orders/{id}\"" doc:"The path of one record, with a {placeholder} the key fills."`
	Params      map[string]string `json:"params" doc:"Query parameters of the fetch by id."`
	RecordsPath string            `json:"records_path" doc:"The record inside the body [\"\" = the body]."` // the record inside the body; "" = the body
}

// DefaultMaxDeleteFraction is reconcile.max_delete_fraction unset.
const DefaultMaxDeleteFraction = 0.5

// DeleteFraction is r's max_delete_fraction, or its default.
func (r *Reconcile) DeleteFraction() float64 {
	if r.MaxDeleteFraction == nil {
		return DefaultMaxDeleteFraction
	}
	return *r.MaxDeleteFraction
}

// checkDeletes checks soft_delete, deletes and reconcile: what they need
// of the stream (one primary key property, no parent) and their own
// fields. The keys file's folder is checked where the file is resolved.
func (d *Definition) checkDeletes() error {
	bad := func(field, format string, args ...any) error {
		return &FieldError{Stream: d.Name, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if del := d.Deletes; del != nil {
		sub := d.DeletesDefinition()
		if err := sub.Check(); err != nil {
			return prefixed(d.Name, "deletes.", err)
		}
	}
	if r := d.Reconcile; r != nil {
		if r.ByID != nil {
			parts, err := splitPath(r.ByID.Path)
			switch {
			case err != nil:
				return bad("reconcile.by_id.path", "%v", err)
			case len(parts) != 3:
				return bad("reconcile.by_id.path", "needs exactly one {placeholder} for the key (e.g. \"/v1/%s/{%s}\"), got %q", d.Name, d.PrimaryKey[0], r.ByID.Path)
			}
		}
		sub := d.ReconcileDefinition()
		if err := sub.Check(); err != nil {
			return prefixed(d.Name, "reconcile.", err)
		}
	}
	return nil
}

// prefixed names a sub-definition's field error after the stream's field
// it comes from.
func prefixed(stream, prefix string, err error) error {
	if fe, ok := err.(*FieldError); ok {
		return &FieldError{Stream: stream, Field: prefix + fe.Field, Msg: fe.Msg}
	}
	return err
}

// DeletesDefinition is the stream of d's deletion events, walked as a
// stream of its own: its name says whose events they are.
func (d *Definition) DeletesDefinition() *Definition {
	del := d.Deletes
	sub := &Definition{
		Name: d.Name + ".deletes", Path: del.Path, Method: "GET", Params: del.Params,
		RecordsPath: del.RecordsPath, ErrorPath: d.ErrorPath, Pagination: del.Pagination,
		Incremental: del.Incremental, ReplicationKey: del.TimePath,
		IgnoreStatuses: d.IgnoreStatuses, OnStatus: d.OnStatus, Weight: d.Weight,
	}
	return sub
}

// ReconcileDefinition is d's keys-only listing: d's path (or
// reconcile.path) and pagination with reconcile.params added, no
// incremental filter, no parent, no schema.
func (d *Definition) ReconcileDefinition() *Definition {
	r := d.Reconcile
	sub := &Definition{
		Name: d.Name + ".reconcile", Path: d.Path, Method: d.Method, Body: d.Body,
		RecordsPath: d.RecordsPath, ErrorPath: d.ErrorPath, PrimaryKey: d.PrimaryKey,
		Pagination: d.Pagination, GraphQL: d.GraphQL, Format: d.Format, CSV: d.CSV,
		IgnoreStatuses: d.IgnoreStatuses, OnStatus: d.OnStatus, Weight: d.Weight,
	}
	sub.Params = maps.Clone(d.Params)
	if len(r.Params) > 0 && sub.Params == nil {
		sub.Params = map[string]string{}
	}
	maps.Copy(sub.Params, r.Params)
	if r.Path != "" {
		sub.Path = r.Path
	}
	if r.RecordsPath != nil {
		sub.RecordsPath = *r.RecordsPath
	}
	if r.Pagination != nil {
		sub.Pagination = *r.Pagination
	}
	return sub
}

// ByIDRequest is the request of the row whose key is key.
func (d *Definition) ByIDRequest(key string) (Request, error) {
	b := d.Reconcile.ByID
	parts, err := splitPath(b.Path)
	if err != nil || len(parts) != 3 {
		return Request{}, streamErr(d.Name, "reconcile.by_id.path %q: needs one {placeholder}", b.Path)
	}
	sub := &Definition{Name: d.Name, Path: b.Path, Params: b.Params}
	return sub.FirstRequest(map[string]string{parts[1]: key})
}

// SoftDeleted reports whether m is a row the source marks as deleted.
func (sd *SoftDelete) SoftDeleted(m map[string]any) bool {
	v, ok := Lookup(m, sd.Field)
	if !ok {
		return false
	}
	t := valueText(v)
	for _, want := range sd.Values {
		if valueText(want) == t {
			return true
		}
	}
	return false
}

// valueText is a JSON value as text that equal values share: 1, 1.0 and
// json.Number("1") are the same number; "1" is a string.
func valueText(v any) string {
	var f float64
	switch v := v.(type) {
	case json.Number:
		var err error
		if f, err = strconv.ParseFloat(string(v), 64); err != nil {
			return "n:" + string(v)
		}
	case float64:
		f = v
	case int:
		f = float64(v)
	case int64:
		f = float64(v)
	case string:
		return "s:" + v
	case bool:
		return "b:" + strconv.FormatBool(v)
	case nil:
		return "null"
	default:
		b, _ := json.Marshal(v)
		return "j:" + string(b)
	}
	return "n:" + strconv.FormatFloat(f, 'g', -1, 64)
}
