package decoder

import (
	"bytes"
	"compress/gzip"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/streams"
)

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGunzipJSON(t *testing.T) {
	tests := map[string]struct {
		body    []byte
		want    string
		wantErr bool
	}{
		"plain JSON as it is":  {body: []byte(`{"a":1}`), want: `{"a":1}`},
		"gzip by its magic":    {body: gzipped(t, `{"a":1}`), want: `{"a":1}`},
		"short body":           {body: []byte{0x1f}, want: "\x1f"},
		"BOM dropped":          {body: []byte("\uFEFF{\"a\":1}"), want: `{"a":1}`},
		"BOM dropped inflated": {body: gzipped(t, "\uFEFF{\"a\":1}"), want: `{"a":1}`},
		"gzip cut short":       {body: gzipped(t, `{"a":1}`)[:12], wantErr: true},
	}
	for name, tt := range tests {
		got, err := GunzipJSON(tt.body)
		if (err != nil) != tt.wantErr || !tt.wantErr && string(got) != tt.want {
			t.Errorf("%s: got %q, %v; want %q (error %v)", name, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestWithAccept(t *testing.T) {
	tests := map[string]struct {
		h      http.Header
		format string
		want   string
	}{
		"csv":                {format: "csv", want: "text/csv, */*;q=0.5"},
		"jsonl":              {h: http.Header{"X-Key": {"k"}}, format: "jsonl", want: "application/x-ndjson, application/json;q=0.9, */*;q=0.5"},
		"the stream's wins":  {h: http.Header{"Accept": {"text/tab-separated-values"}}, format: "csv", want: "text/tab-separated-values"},
		"json asks for none": {format: "json", want: ""},
		"xml":                {format: "xml", want: "application/xml, text/xml;q=0.9, */*;q=0.5"},
	}
	for name, tt := range tests {
		before := tt.h.Clone()
		got := WithAccept(tt.h, tt.format)
		if got.Get("Accept") != tt.want {
			t.Errorf("%s: Accept %q, want %q", name, got.Get("Accept"), tt.want)
		}
		if got.Get("X-Key") != tt.h.Get("X-Key") || !cmp.Equal(before, tt.h) {
			t.Errorf("%s: the other headers changed, or the stream's own: %v, %v", name, got, tt.h)
		}
	}
}

// A page consumer holds the page's records, from empty each time.
func TestPageConsumer(t *testing.T) {
	dec, err := New(&streams.Definition{Name: "s"}, "jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Content-Type": {"application/x-ndjson"}}
	recs := []any{"left from the last page"}
	consume := dec.PageConsumer(&recs)
	if err := consume(strings.NewReader("{\"id\":1}\n{\"id\":2}\n"), h); err != nil || len(recs) != 2 {
		t.Errorf("page: %v, records %v", err, recs)
	}
}

// Pages hands a body's records in pages of the size asked, the last
// marked (short, or empty), gunzipped; it stops at the handler's error
// with the rest of the body unread, and refuses a body of another format.
func TestPages(t *testing.T) {
	lines := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(`{"id":` + strconv.Itoa(i) + "}\n")
		}
		return b.String()
	}
	stop := errors.New("stop")
	tests := map[string]struct {
		format string
		body   []byte
		h      http.Header
		size   int
		stopAt int   // the page whose handler fails (1-based); 0: none
		want   []int // the pages' sizes
		last   []bool
		rest   int // bytes of the body left unread, at least
		err    string
	}{
		"a short last page":         {format: "jsonl", body: []byte(lines(7)), size: 3, want: []int{3, 3, 1}, last: []bool{false, false, true}},
		"a body of whole pages":     {format: "jsonl", body: []byte(lines(6)), size: 3, want: []int{3, 3}, last: []bool{false, true}},
		"an empty body":             {format: "jsonl", body: nil, size: 3, want: []int{0}, last: []bool{true}},
		"gzip":                      {format: "jsonl", body: gzipped(t, lines(4)), size: 2, want: []int{2, 2}, last: []bool{false, true}},
		"csv, the default size":     {format: "csv", body: []byte("id\n" + strings.Repeat("1\n", PageRecords+1)), want: []int{PageRecords, 1}, last: []bool{false, true}},
		"stopped at the first page": {format: "jsonl", body: []byte(lines(20000)), size: 2, stopAt: 1, want: []int{2}, last: []bool{false}, rest: 100000, err: "stop"},
		"a body of another format": {
			format: "csv", body: []byte("<html></html>"), h: http.Header{"Content-Type": {"text/html"}},
			err: `stream "s": the response is an HTML page (Content-Type "text/html"), but the stream's format is csv`,
		},
		"a record that is not JSON": {format: "jsonl", body: []byte("{\"id\":1}\n{nope\n"), size: 1, want: []int{1}, last: []bool{false}, err: "line 2 of the jsonl body is not JSON"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dec, err := New(&streams.Definition{Name: "s"}, tt.format, nil)
			if err != nil {
				t.Fatal(err)
			}
			body := bytes.NewReader(tt.body)
			var sizes []int
			var lasts []bool
			err = dec.Pages(body, tt.h, tt.size, func(recs []any, last bool) error {
				sizes, lasts = append(sizes, len(recs)), append(lasts, last)
				if len(sizes) == tt.stopAt {
					return stop
				}
				return nil
			})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one with %q", err, tt.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, sizes); diff != "" {
				t.Errorf("page sizes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.last, lasts); diff != "" {
				t.Errorf("last (-want +got):\n%s", diff)
			}
			if body.Len() < tt.rest {
				t.Errorf("%d bytes left unread, want at least %d", body.Len(), tt.rest)
			}
		})
	}
}
