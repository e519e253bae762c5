package decoder

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

func readAll(t *testing.T, rr RecordReader) ([]any, error) {
	t.Helper()
	var out []any
	for i := 0; i < 10000; i++ {
		rec, err := rr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
	t.Fatal("reader did not end")
	return nil, nil
}

func mustSchema(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDecoders(t *testing.T) {
	f := false
	typed := `{"type":"object","properties":{"id":{"type":"integer"},"amount":{"type":["null","number"]},"paid":{"type":"boolean"},"name":{"type":"string"},
		"tags":{"type":"array","items":{"type":"string"}},"lines":{"type":"array","items":{"type":"object","properties":{"qty":{"type":"integer"}}}}}}`
	tests := map[string]struct {
		def     streams.Definition
		schema  string
		body    string
		want    []any
		wantErr string
	}{
		"jsonl": {def: streams.Definition{Format: "jsonl"}, body: "{\"id\":1}\n\n{\"id\":9007199254740993}\r\n{\"id\":3}",
			want: []any{map[string]any{"id": json.Number("1")}, map[string]any{"id": json.Number("9007199254740993")}, map[string]any{"id": json.Number("3")}}},
		"jsonl records_path": {def: streams.Definition{Format: "jsonl", RecordsPath: "data"}, body: `{"data":[{"id":1},{"id":2}]}` + "\n" + `{"data":null}` + "\n" + `{"data":{"id":3}}`,
			want: []any{map[string]any{"id": json.Number("1")}, map[string]any{"id": json.Number("2")}, map[string]any{"id": json.Number("3")}}},
		// A byte order mark failed the first line (issue 29); CSV drops it.
		"jsonl BOM": {def: streams.Definition{Format: "jsonl"}, body: "\uFEFF{\"id\":1}\n{\"id\":2}",
			want: []any{map[string]any{"id": json.Number("1")}, map[string]any{"id": json.Number("2")}}},
		"jsonl not json": {def: streams.Definition{Format: "jsonl"}, body: "{\"id\":1}\n<html>", wantErr: "line 2 of the jsonl body is not JSON"},
		"csv untyped": {def: streams.Definition{Format: "csv"}, body: "\uFEFFid,name\n1,\"a, b\"\n2,\n",
			want: []any{map[string]any{"id": "1", "name": "a, b"}, map[string]any{"id": "2", "name": ""}}},
		"csv typed": {def: streams.Definition{Format: "csv"}, schema: typed, body: "id,amount,paid,name\n007,1.50,true,x\n2,,FALSE,\nx3,1e2,yes,z\n",
			want: []any{
				map[string]any{"id": json.Number("7"), "amount": json.Number("1.50"), "paid": true, "name": "x"},
				map[string]any{"id": json.Number("2"), "amount": nil, "paid": false, "name": ""},
				// What does not convert stays text, for the validator to report.
				map[string]any{"id": "x3", "amount": json.Number("1e2"), "paid": "yes", "name": "z"},
			}},
		"csv delimiter no header": {def: streams.Definition{Format: "csv", CSV: &streams.CSVOptions{Delimiter: ";", Header: &f}}, body: "1;a\n2;b\n",
			want: []any{map[string]any{"column_1": "1", "column_2": "a"}, map[string]any{"column_1": "2", "column_2": "b"}}},
		// Header names are repaired as JSON writes them; two made one so
		// mark every row for the validator to refuse (issue 29: the
		// RECORD had the key twice), and so does a name twice (id,id,v:
		// a column was dropped in silence, the key taken from the
		// second); one repaired alone does not.
		"csv header names collide once repaired": {def: streams.Definition{Format: "csv"}, body: "id,type\xff,type\xfe\n1,x,y\n",
			want: []any{map[string]any{"id": "1", "type\uFFFD": "y", codec.CollisionKey: "/type\uFFFD"}}},
		"csv header name repaired": {def: streams.Definition{Format: "csv"}, body: "id,a/b\xff\n1,x\n",
			want: []any{map[string]any{"id": "1", "a/b\uFFFD": "x"}}},
		"csv header name twice": {def: streams.Definition{Format: "csv"}, body: "id,id,v\n1,2,x\n",
			want: []any{map[string]any{"id": "2", "v": "x", codec.CollisionKey: "/id"}}},
		"csv with CR-only line ends": {def: streams.Definition{Format: "csv"}, body: "id,v\r1,a\r2,b\r",
			wantErr: "the csv header holds a carriage return: the body's lines end with CR alone"},
		"csv ragged": {def: streams.Definition{Format: "csv"}, body: "id,name\n1\n", wantErr: "the csv body is not CSV"},
		"xml": {def: streams.Definition{Format: "xml", RecordsPath: "feed.items.item"}, schema: typed,
			body: `<?xml version="1.0" encoding="UTF-8"?><feed><meta><n>2</n></meta><items>
				<item id="a1"><id>1</id><name> Ann </name><tags>x</tags><lines><qty>2</qty></lines><lines><qty>3</qty></lines></item>
				<item><id>2</id><name/><tags>x</tags><tags>y</tags><paid>true</paid></item></items><item><id>99</id></item></feed>`,
			want: []any{
				map[string]any{"@id": "a1", "id": json.Number("1"), "name": " Ann ", "tags": []any{"x"}, "lines": []any{map[string]any{"qty": json.Number("2")}, map[string]any{"qty": json.Number("3")}}},
				map[string]any{"id": json.Number("2"), "name": "", "tags": []any{"x", "y"}, "paid": true},
			}},
		"xml untyped repeated": {def: streams.Definition{Format: "xml", RecordsPath: "r.x"}, body: `<r><x><a>1</a><a>2</a><b>t</b></x></r>`,
			want: []any{map[string]any{"a": []any{"1", "2"}, "b": "t"}}},
		"xml wrong root": {def: streams.Definition{Format: "xml", RecordsPath: "items.item"}, body: `<html><body/></html>`, wantErr: `the root element is <html>, but records_path "items.item" starts with "items"`},
		"xml cut":        {def: streams.Definition{Format: "xml", RecordsPath: "items.item"}, body: `<items><item><id>1</id></item><item>`, wantErr: "not XML"},
		"json":           {def: streams.Definition{RecordsPath: "data"}, body: `{"data":[{"id":1}]}`, want: []any{map[string]any{"id": json.Number("1")}}},
		"json BOM":       {def: streams.Definition{RecordsPath: "data"}, body: "\uFEFF" + `{"data":[{"id":1}]}`, want: []any{map[string]any{"id": json.Number("1")}}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			tt.def.Name = "s"
			var schema map[string]any
			if tt.schema != "" {
				schema = mustSchema(t, tt.schema)
			}
			dec, err := New(&tt.def, tt.def.BodyFormat(), schema)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, dec.Records(strings.NewReader(tt.body)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckContentType(t *testing.T) {
	tests := []struct {
		format, ct string
		ok         bool
	}{
		{"csv", "text/csv; charset=utf-8", true},
		{"csv", "text/plain", true},
		{"csv", "", true},
		{"csv", "text/html; charset=utf-8", false},
		{"csv", "application/json", false},
		{"jsonl", "application/json", true},
		{"jsonl", "application/x-ndjson", true},
		{"jsonl", "text/csv", false},
		{"xml", "application/atom+xml", true},
		{"xml", "application/json", false},
	}
	for _, tt := range tests {
		dec, _ := New(&streams.Definition{Name: "s", RecordsPath: "a.b"}, tt.format, nil)
		err := dec.CheckContentType(tt.ct)
		if (err == nil) != tt.ok {
			t.Errorf("%s with %q: err = %v, want ok=%v", tt.format, tt.ct, err, tt.ok)
		}
	}
}

func TestDecompress(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("id\n1\n"))
	zw.Close()
	tests := map[string]struct {
		body    []byte
		header  http.Header
		want    string
		wantErr bool
	}{
		"plain":                  {body: []byte("id\n1\n"), header: http.Header{}, want: "id\n1\n"},
		"content-encoding":       {body: gz.Bytes(), header: http.Header{"Content-Encoding": {"gzip"}}, want: "id\n1\n"},
		"content-type":           {body: gz.Bytes(), header: http.Header{"Content-Type": {"application/gzip"}}, want: "id\n1\n"},
		"sniffed":                {body: gz.Bytes(), header: http.Header{"Content-Type": {"application/octet-stream"}}, want: "id\n1\n"},
		"announced but not gzip": {body: []byte("id\n1\n"), header: http.Header{"Content-Type": {"application/gzip"}}, wantErr: true},
		"empty":                  {body: nil, header: http.Header{}, want: ""},
	}
	for name, tt := range tests {
		r, err := Decompress(bytes.NewReader(tt.body), tt.header)
		if tt.wantErr {
			if err == nil {
				t.Errorf("%s: no error", name)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := io.ReadAll(r)
		if err != nil || string(b) != tt.want {
			t.Errorf("%s: got %q, %v; want %q", name, b, err, tt.want)
		}
	}
}

// TestCSVStreams: a CSV body is read row by row; the reader never
// holds more than a row, whatever the body's size.
func TestCSVStreams(t *testing.T) {
	pr, pw := io.Pipe()
	dec, _ := New(&streams.Definition{Name: "s", Format: "csv"}, "csv", nil)
	rr := dec.Records(pr)
	go func() {
		pw.Write([]byte("id\n1\n2\n"))
		// The writer blocks here until the reader has taken rows 1 and 2:
		// records come out before the body ends.
		pw.Write([]byte("3\n"))
		pw.Close()
	}()
	for i := 1; i <= 3; i++ {
		rec, err := rr.Read()
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.(map[string]any)["id"]; got != strconv.Itoa(i) {
			t.Fatalf("row %d = %v", i, got)
		}
	}
	if _, err := rr.Read(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}
