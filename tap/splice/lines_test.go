package splice

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/streams"
)

// lines is a jsonl export of events, a record a line, read as it arrives.
func lines() *streams.Definition {
	return &streams.Definition{Name: "events", Format: streams.FormatJSONL, PrimaryKey: []string{"id"}, ReplicationKey: "occurred_at",
		Pagination: streams.Pagination{Type: streams.PageNone}}
}

// A jsonl body (a record a line, or records inside each line) splices,
// read as it arrives or a page of a paginated stream, and so does a csv
// body; an xml body does not.
func TestNewLines(t *testing.T) {
	tests := map[string]struct {
		def  func(*streams.Definition)
		want bool
	}{
		"an export":             {func(*streams.Definition) {}, true},
		"no pagination named":   {func(d *streams.Definition) { d.Pagination.Type = "" }, true},
		"records inside a line": {func(d *streams.Definition) { d.RecordsPath = "data" }, true},
		"paged":                 {func(d *streams.Definition) { d.Pagination.Type = streams.PageNumber }, true},
		"csv":                   {func(d *streams.Definition) { d.Format = streams.FormatCSV }, true},
		"paged csv": {func(d *streams.Definition) {
			d.Format, d.Pagination.Type = streams.FormatCSV, streams.PageNumber
		}, true},
		"xml": {func(d *streams.Definition) { d.Format, d.RecordsPath = streams.FormatXML, "items.item" }, false},
		"a report's csv files": {func(d *streams.Definition) {
			d.Format = ""
			d.Async = &streams.Async{Download: streams.AsyncDownload{Format: streams.FormatCSV}}
		}, true},
		"a report's jsonl files": {func(d *streams.Definition) {
			d.Format = ""
			d.Async = &streams.Async{Download: streams.AsyncDownload{Format: streams.FormatJSONL}}
		}, true},
		"a report's jsonl files, records inside a line": {func(d *streams.Definition) {
			d.Format, d.RecordsPath = streams.FormatCSV, "data"
			d.Async = &streams.Async{Download: streams.AsyncDownload{Format: streams.FormatJSONL}}
		}, true},
		"a report's xml files": {func(d *streams.Definition) {
			d.Format, d.RecordsPath = streams.FormatCSV, "items.item"
			d.Async = &streams.Async{Download: streams.AsyncDownload{Format: streams.FormatXML}}
		}, false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			d := lines()
			tt.def(d)
			if got := New(Stream{Def: d, Schema: eventsSchema, Written: true}) != nil; got != tt.want {
				t.Errorf("splices: %v, want %v", got, tt.want)
			}
		})
	}
}

// testLines are lines of text, trimmed; "tree" stands for a record given
// as its tree, {"id": "given"}, "null tree" for one given as null.
type testLines []string

func (l testLines) Len() int { return len(l) }

func (l testLines) Line(i int) []byte {
	if l[i] == "tree" {
		return nil
	}
	return []byte(strings.TrimSpace(l[i]))
}

func (l testLines) Tree(i int) (any, bool) {
	if l[i] == "tree" {
		return map[string]any{"id": "given"}, true
	}
	if l[i] == "null tree" {
		return nil, true
	}
	return nil, false
}

// The lines are copied: a page's records do not change when the lines
// it was scanned from are reused.
func TestScanLinesCopies(t *testing.T) {
	r := New(Stream{Def: lines(), Schema: eventsSchema, Written: true})
	p := r.Take()
	defer p.Release()
	l := testLines{`{"id":1}`, `{"id":2}`}
	if !p.ScanLines(l) {
		t.Fatal("ScanLines: false")
	}
	l[0], l[1] = `{"id":7}`, `{"id":8}`
	for i, want := range []string{`{"id":1}`, `{"id":2}`} {
		if raw, ok, err := p.Raw(i); err != nil || !ok || string(raw) != want {
			t.Errorf("record %d: %q, %v, %v; want %s spliced", i, raw, ok, err, want)
		}
	}
}

// ScanLines walks each line: a line the walker is sure of is spliced,
// with its captured keys; another is its tree; a line that is not one
// JSON text sends the whole page to the caller's decoding.
func TestScanLines(t *testing.T) {
	type rec struct {
		Spliced bool
		Raw     string
		ID      any
		Tree    any
	}
	tests := map[string]struct {
		lines []string
		ok    bool
		want  []rec
	}{
		"spliced and not": {lines: []string{`{"id":1,"type":"a"}`, `{"id":"2"}`}, ok: true, want: []rec{
			{Spliced: true, Raw: `{"id":1,"type":"a"}`, ID: json.Number("1")},
			{Raw: `{"id":"2"}`, Tree: map[string]any{"id": "2"}},
		}},
		"empty": {ok: true},
		"given as a tree": {lines: []string{`{"id":1}`, "tree", `{"id":3}`, "null tree"}, ok: true, want: []rec{
			{Spliced: true, Raw: `{"id":1}`, ID: json.Number("1")},
			{Tree: map[string]any{"id": "given"}},
			{Spliced: true, Raw: `{"id":3}`, ID: json.Number("3")},
			{},
		}},
		"two texts a line":  {lines: []string{`{"id":1}`, `{"id":2},{"id":3}`}},
		"not JSON":          {lines: []string{`{"id":1`}},
		"text after a text": {lines: []string{`{"id":1} x`}},
	}
	r := New(Stream{Def: lines(), Schema: eventsSchema, Written: true})
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p := r.Take()
			defer p.Release()
			ok := p.ScanLines(testLines(tt.lines))
			if ok != tt.ok {
				t.Fatalf("ScanLines: %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			var got []rec
			for i := range p.Records() {
				raw, spliced, err := p.Raw(i)
				if err != nil {
					t.Fatal(err)
				}
				r := rec{Spliced: spliced, Raw: string(raw)}
				if spliced {
					if r.ID, err = p.Value(i, "id"); err != nil {
						t.Fatal(err)
					}
				} else {
					r.Tree = p.Records()[i]
				}
				got = append(got, r)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
