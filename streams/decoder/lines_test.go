package decoder

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

// LinePages hands a jsonl body's lines, and a csv body's rows, as Pages
// hands their records: the same pages, the same trees (Lines.Records),
// the same error naming the same line; a jsonl line's bytes are the line,
// trimmed, without a byte order mark; a csv row's, its record's JSON
// text in the header's order (empty: the row is given as its tree).
func TestLinePagesAsPages(t *testing.T) {
	f := false
	typed := `{"type":"object","properties":{"id":{"type":"integer"},"amount":{"type":["null","number"]},"paid":{"type":"boolean"},
		"name":{"type":"string"},"note":{"type":["null","string"]},"tags":{"type":"array","items":{"type":"integer"}}}}`
	tests := map[string]struct {
		format    string // jsonl unless set
		path      string // records_path
		schema    string
		csv       *streams.CSVOptions
		body      []byte
		size      int
		wantLines []string // the first page's lines
	}{
		"records inside lines, across pages": {path: "data.items", size: 3,
			body: []byte(`{"data":{"items":[{"id":1},{"id":2}],"n":2}}` + "\n\n" + `{"meta":1,"data":{"items":[{"id":3}, {"id":4} ,{"id":5},7,null]}}` + "\n" +
				`{"data":{"items":[]}}` + "\n" + `{"data":{"items":[{"id":8}]}}`),
			wantLines: []string{`{"id":1}`, `{"id":2}`, `{"id":3}`}},
		"records inside lines, as the tree reads them": {path: "data", size: 10,
			body: []byte(`{"data":{"id":1}}` + "\n" + `{"data":null}` + "\n" + `{"data":[{"id":2}],"data":[{"id":3}]}` + "\n" +
				`{"d\u0061ta":[{"id":4}]}` + "\n" + `{"data":[{"id":5}]}` + "\n" + `{"data":[{"a` + "\xff" + `":1,"a` + "\xfe" + `":2}]}` + "\n" + `{"data":"x"}` + "\n" + `[{"data":[1]}]`),
			wantLines: []string{``, ``, ``, `{"id":5}`, `{"a` + "\xff" + `":1,"a` + "\xfe" + `":2}`, ``}},
		"records inside lines, not in one": {path: "data", size: 2,
			body:      []byte(`{"data":[{"id":1},{"id":2},{"id":3}]}` + "\n" + `{"other":[]}` + "\n" + `{"data":[{"id":4}]}`),
			wantLines: []string{`{"id":1}`, `{"id":2}`}},
		"records inside lines, a line not JSON": {path: "data", size: 5,
			body:      []byte(`{"data":[{"id":1}]}` + "\n" + `{"data":[{"id":2},` + "\n" + `{"data":[{"id":4}]}`),
			wantLines: []string{`{"id":1}`}},
		"csv untyped, quoted, a newline in a cell, a byte order mark": {format: "csv", body: []byte("\uFEFFid,name\n1,\"a, \"\"b\"\"\"\n2,\n3,\"x\ny\"\n"), size: 2,
			wantLines: []string{`{"id":"1","name":"a, \"b\""}`, `{"id":"2","name":""}`}},
		"csv typed": {format: "csv", schema: typed, size: 10,
			body: []byte("id,amount,paid,name,note,tags\n007,1.50,true,x,,4\n-0,,FALSE,,\" \",+5\n x3 ,1e2,yes,z,n,\n+12, -3 , 1 ,\u2028<&>,\t,-007\n"),
			wantLines: []string{`{"id":7,"amount":1.50,"paid":true,"name":"x","note":"","tags":[4]}`, `{"id":0,"amount":null,"paid":false,"name":"","note":" ","tags":[5]}`,
				`{"id":" x3 ","amount":1e2,"paid":"yes","name":"z","note":"n","tags":[null]}`, `{"id":12,"amount":-3,"paid":true,"name":"\u2028<&>","note":"\t","tags":[-7]}`}},
		"csv no header, a delimiter": {format: "csv", csv: &streams.CSVOptions{Delimiter: ";", Header: &f}, body: []byte("1;a\n2;b\n3;c\n"), size: 2,
			wantLines: []string{`{"column_1":"1","column_2":"a"}`, `{"column_1":"2","column_2":"b"}`}},
		"csv a whole last page":                    {format: "csv", body: []byte("id\n1\n2\n"), size: 2, wantLines: []string{`{"id":"1"}`, `{"id":"2"}`}},
		"csv invalid UTF-8 in a cell":              {format: "csv", schema: typed, body: []byte("id,name\n1,a\xff\n2,b\n"), size: 5, wantLines: []string{``, `{"id":2,"name":"b"}`}},
		"csv header names collide once repaired":   {format: "csv", body: []byte("id,type\xff,type\xfe\n1,x,y\n"), size: 5, wantLines: []string{``}},
		"csv a name twice":                         {format: "csv", body: []byte("id,a,id\n1,x,2\n"), size: 5, wantLines: []string{``}},
		"csv ragged":                               {format: "csv", body: []byte("id,name\n1,a\n2,b\n3\n"), size: 1, wantLines: []string{`{"id":"1","name":"a"}`}},
		"csv bare quote":                           {format: "csv", body: []byte("id,name\n1,a\"b\n"), size: 1, wantLines: nil},
		"csv empty":                                {format: "csv", body: nil, size: 2, wantLines: []string{}},
		"lines, blank lines and a byte order mark": {body: []byte("\uFEFF{\"id\":1}\r\n\n  {\"id\":2} \n{\"id\":3}"), size: 2, wantLines: []string{`{"id":1}`, `{"id":2}`}},
		"gzip":          {body: gzipped(t, "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n"), size: 5, wantLines: []string{`{"id":1}`, `{"id":2}`, `{"id":3}`}},
		"empty":         {body: nil, size: 2, wantLines: []string{}},
		"not JSON":      {body: []byte("{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n{nope\n{\"id\":5}\n"), size: 2, wantLines: []string{`{"id":1}`, `{"id":2}`}},
		"two on a line": {body: []byte("{\"id\":1}\n{\"id\":2},{\"id\":3}\n"), size: 5, wantLines: []string{`{"id":1}`, `{"id":2},{"id":3}`}},
		"values":        {body: []byte("1\n\"a\"\nnull\n[1,2]\n"), size: 3, wantLines: []string{"1", `"a"`, "null"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			format := cmp.Or(tt.format, "jsonl")
			var schema map[string]any
			if tt.schema != "" {
				if err := json.Unmarshal([]byte(tt.schema), &schema); err != nil {
					t.Fatal(err)
				}
			}
			dec, err := New(&streams.Definition{Name: "s", CSV: tt.csv, RecordsPath: tt.path}, format, schema)
			if err != nil {
				t.Fatal(err)
			}
			type page struct {
				Recs []any
				Last bool
			}
			var want []page
			wantErr := dec.Pages(bytes.NewReader(tt.body), http.Header{}, tt.size, func(recs []any, last bool) error {
				want = append(want, page{recs, last})
				return nil
			})
			var got []page
			var first []string
			var gotErr error
			err = dec.LinePages(bytes.NewReader(tt.body), http.Header{}, tt.size, func(l *Lines, last bool) error {
				if first == nil {
					first = []string{}
					for i := range l.Len() {
						first = append(first, string(l.Line(i)))
					}
				}
				recs, err := l.Records()
				for i := range l.Len() {
					if v, tree := l.Tree(i); tree == (len(l.Line(i)) > 0) {
						t.Errorf("record %d: text %q and tree %v (%v): one of them, not both", i, l.Line(i), v, tree)
					}
				}
				got = append(got, page{recs, last})
				if err != nil {
					gotErr = err
					return err
				}
				return nil
			})
			if gotErr == nil {
				gotErr = err
			}
			if diff := gocmp.Diff(tt.wantLines, first); diff != "" {
				t.Errorf("the first page's lines (-want +got):\n%s", diff)
			}
			if wantErr != nil && len(want) > 0 && len(got) == len(want) {
				// A line that is not JSON ends the body in Pages, and in
				// LinePages once its page is decoded.
				got[len(got)-1].Last = want[len(want)-1].Last
			}
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Errorf("pages (-Pages +LinePages):\n%s", diff)
			}
			if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
				t.Errorf("err %v, want Pages' %v", gotErr, wantErr)
			}
		})
	}
}

// LinePages reads only a body read as its records' texts: jsonl, csv.
func TestLinePagesNeedsLines(t *testing.T) {
	for _, d := range []struct {
		format, path string
		splits       bool
	}{{"jsonl", "", true}, {"jsonl", "data", true}, {"csv", "", true}, {"json", "", false}, {"xml", "a.b", false}} {
		dec, err := New(&streams.Definition{Name: "s", RecordsPath: d.path}, d.format, nil)
		if err != nil {
			t.Fatal(err)
		}
		if dec.SplitsLines() != d.splits {
			t.Errorf("%s %q: SplitsLines %v, want %v", d.format, d.path, dec.SplitsLines(), d.splits)
		}
		body := "{\"data\":[]}\n"
		if d.format == "csv" {
			body = "id\n1\n"
		}
		err = dec.LinePages(strings.NewReader(body), http.Header{}, 0, func(*Lines, bool) error { return nil })
		if (err == nil) != d.splits {
			t.Errorf("%s %q: LinePages: %v", d.format, d.path, err)
		}
	}
}

// appendText writes what codec.Append writes of coerceText's value, for
// every type a schema gives a cell and text of every kind.
func TestAppendTextAsCoerceText(t *testing.T) {
	schemas := []string{`{}`, `{"type":"string"}`, `{"type":"integer"}`, `{"type":["null","integer"]}`, `{"type":["integer","string"]}`,
		`{"type":"number"}`, `{"type":["number","boolean"]}`, `{"type":"boolean"}`, `{"type":"null"}`, `{"type":"object"}`,
		`{"type":"array","items":{"type":"integer"}}`, `{"type":"array"}`, `{"type":["boolean","integer"]}`}
	texts := []string{"", " ", "\t", "0", "-0", "+0", "007", "-007", "+-5", "--5", "+", "-", " 12 ", "1_000", "123456789012345678901234567890",
		"1.50", "-1.5e3", ".5", "1.", "0x10", "NaN", "true", "FALSE", "t", "1", " T ", "yes", "x", "a\"b\\c", "\n", "\u2028\u2029", "<&>", "é", "\u00a0 7"}
	for _, sc := range schemas {
		var m map[string]any
		if err := json.Unmarshal([]byte(sc), &m); err != nil {
			t.Fatal(err)
		}
		s := shapeOf(m)
		for _, v := range texts {
			want, err := codec.Append(nil, s.coerceText(v))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.appendText(nil, v); string(got) != string(want) {
				t.Errorf("%s, %q: %s, want %s", sc, v, got, want)
			}
		}
	}
}

// ReadLines, then Lines.Records, read a page as PageConsumer reads it:
// the same records, the same error; a page too large once inflated, and
// a line that is not JSON before it, are the same error too.
func TestReadLinesAsPageConsumer(t *testing.T) {
	big := strings.Repeat(`{"id":1,"pad":"`+strings.Repeat("x", 100)+`"}`+"\n", 60)
	tests := map[string]struct {
		format string
		path   string // records_path
		body   []byte
		h      http.Header
		err    string // in PageConsumer's error
	}{
		"jsonl":                       {format: "jsonl", body: []byte("{\"id\":1}\n\n{\"id\":2}\r\n")},
		"jsonl gzip":                  {format: "jsonl", body: gzipped(t, "{\"id\":1}\n{\"id\":2}\n")},
		"jsonl not JSON":              {format: "jsonl", body: []byte("{\"id\":1}\n{nope\n{\"id\":3}\n"), err: "line 2 of the jsonl body is not JSON"},
		"jsonl too large":             {format: "jsonl", body: []byte(big), err: "larger than 0 MiB once inflated"},
		"jsonl not JSON, then large":  {format: "jsonl", body: []byte("{nope\n" + big), err: "line 1 of the jsonl body is not JSON"},
		"jsonl empty":                 {format: "jsonl"},
		"jsonl another format":        {format: "jsonl", body: []byte("<html>"), h: http.Header{"Content-Type": {"text/html"}}, err: "an HTML page"},
		"jsonl records inside lines":  {format: "jsonl", path: "data", body: []byte(`{"data":[{"id":1},{"id":2}]}` + "\n" + `{"data":{"id":3}}` + "\n" + `{"data":null}`)},
		"jsonl records_path missing":  {format: "jsonl", path: "data", body: []byte(`{"data":[{"id":1}]}` + "\n" + `{"x":1}`), err: `records_path "data" is not in line 2`},
		"csv":                         {format: "csv", body: []byte("id,name\n1,\"a\nb\"\n2,\n")},
		"csv invalid UTF-8":           {format: "csv", body: []byte("id,name\n1,\xff\n")},
		"csv ragged":                  {format: "csv", body: []byte("id,name\n1,a\n2\n"), err: "wrong number of fields"},
		"csv too large":               {format: "csv", body: []byte("id,pad\n" + strings.Repeat("1,"+strings.Repeat("y", 100)+"\n", 60)), err: "larger than 0 MiB once inflated"},
		"csv header alone":            {format: "csv", body: []byte("id\n")},
		"csv a bare quote, then more": {format: "csv", body: []byte("id\n1\"\n" + strings.Repeat("2\n", 1000)), err: "bare \""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dec, err := New(&streams.Definition{Name: "s", RecordsPath: tt.path}, tt.format, nil)
			if err != nil {
				t.Fatal(err)
			}
			dec.maxPage = 1 << 10
			h := tt.h
			if h == nil {
				h = http.Header{}
			}
			var want []any
			wantErr := dec.PageConsumer(&want)(bytes.NewReader(tt.body), h)
			if tt.err == "" && wantErr != nil || tt.err != "" && (wantErr == nil || !strings.Contains(wantErr.Error(), tt.err)) {
				t.Fatalf("PageConsumer: %v, want an error with %q", wantErr, tt.err)
			}
			lines := dec.NewLines()
			lines.add([]byte(`{"left":"from the last page"}`), 1)
			gotErr := dec.ReadLines(bytes.NewReader(tt.body), h, lines)
			var got []any
			if gotErr == nil {
				got, gotErr = lines.Records()
			}
			if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
				t.Fatalf("err %v, want PageConsumer's %v", gotErr, wantErr)
			}
			if wantErr != nil {
				return
			}
			if d := gocmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("records (-PageConsumer +ReadLines):\n%s", d)
			}
		})
	}
}

// A page of Lines read again and again (a paginated stream's pages, each
// into the page the last one freed) reads each body as a fresh page
// would, whatever the body before it was (plain or gzip, cut short by an
// error), and through the buffers it kept: a page of a few lines
// allocates a few KiB, not the 128 KiB of two new body buffers.
func TestReadLinesPageAfterPage(t *testing.T) {
	tests := map[string]struct {
		format string
		path   string
		bodies [][]byte
	}{
		"jsonl": {format: "jsonl", bodies: [][]byte{[]byte("{\"id\":1}\n{\"id\":2}\n"), gzipped(t, "{\"id\":3}\n{\"id\":4}\n"),
			[]byte("{\"id\":5}\n{nope\n"), gzipped(t, "{\"id\":6}\n"), gzipped(t, "{\"id\":7}\n{\"id\""), []byte("{\"id\":8}\n")}},
		"jsonl records_path": {format: "jsonl", path: "data", bodies: [][]byte{[]byte(`{"data":[{"id":1},{"id":2}]}`),
			gzipped(t, `{"data":[{"id":3}]}`+"\n"+`{"data":{"id":4}}`), []byte(`{"x":1}`), []byte(`{"data":[{"id":5}]}`)}},
		"csv": {format: "csv", bodies: [][]byte{[]byte("id,name\n1,a\n"), gzipped(t, "id,name\n2,b\n3,c\n"), []byte("id,name\n4\n"),
			[]byte("name,id\nd,5\n")}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dec, err := New(&streams.Definition{Name: "s", RecordsPath: tt.path}, tt.format, nil)
			if err != nil {
				t.Fatal(err)
			}
			lines := dec.NewLines()
			for i, body := range tt.bodies {
				var want []any
				wantErr := dec.PageConsumer(&want)(bytes.NewReader(body), http.Header{})
				gotErr := dec.ReadLines(bytes.NewReader(body), http.Header{}, lines)
				var got []any
				if gotErr == nil {
					got, gotErr = lines.Records()
				}
				if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
					t.Fatalf("body %d: err %v, want PageConsumer's %v", i, gotErr, wantErr)
				}
				if d := gocmp.Diff(want, got, cmpopts.EquateEmpty()); wantErr == nil && d != "" {
					t.Errorf("body %d: records (-PageConsumer +ReadLines):\n%s", i, d)
				}
			}
			const pages = 50
			body := tt.bodies[0]
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range pages {
				if err := dec.ReadLines(bytes.NewReader(body), http.Header{}, lines); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			if perPage := (after.TotalAlloc - before.TotalAlloc) / pages; perPage > 16<<10 {
				t.Errorf("a page of %d bytes read into a kept page allocates %d bytes, want at most 16 KiB", len(body), perPage)
			}
		})
	}
}

// A page read by one decoder and then by another (another records_path)
// reads the second body with the second decoder's path, not the first's.
func TestReadLinesAnotherDecoder(t *testing.T) {
	data, err := New(&streams.Definition{Name: "a", RecordsPath: "data"}, "jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	items, err := New(&streams.Definition{Name: "b", RecordsPath: "items"}, "jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := data.NewLines()
	if err := data.ReadLines(strings.NewReader(`{"data":[{"id":1}]}`), http.Header{}, lines); err != nil {
		t.Fatal(err)
	}
	body := `{"data":[{"id":2}],"items":[{"id":3}]}`
	var want []any
	if err := items.PageConsumer(&want)(strings.NewReader(body), http.Header{}); err != nil {
		t.Fatal(err)
	}
	if err := items.ReadLines(strings.NewReader(body), http.Header{}, lines); err != nil {
		t.Fatal(err)
	}
	got, err := lines.Records()
	if err != nil {
		t.Fatal(err)
	}
	if d := gocmp.Diff(want, got); d != "" {
		t.Errorf("records (-PageConsumer +ReadLines):\n%s", d)
	}
}
