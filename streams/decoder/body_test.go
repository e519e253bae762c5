package decoder

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"net/http"
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

// Each reads a gzipped body record by record and stops at f's error; a
// page consumer holds the page's records, from empty each time.
func TestEachAndPageConsumer(t *testing.T) {
	dec, err := New(&streams.Definition{Name: "s"}, "jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Content-Type": {"application/x-ndjson"}}
	var ids []any
	stop := errors.New("stop")
	err = dec.Each(bytes.NewReader(gzipped(t, "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n")), h, func(rec any) error {
		ids = append(ids, rec.(map[string]any)["id"])
		if len(ids) == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || len(ids) != 2 {
		t.Fatalf("Each: %v, records %v", err, ids)
	}
	if err := dec.Each(strings.NewReader("<html>"), http.Header{"Content-Type": {"text/html"}}, func(any) error { return nil }); err == nil {
		t.Error("Each read an HTML body as jsonl")
	}
	recs := []any{"left from the last page"}
	consume := dec.PageConsumer(&recs)
	if err := consume(strings.NewReader("{\"id\":1}\n{\"id\":2}\n"), h); err != nil || len(recs) != 2 {
		t.Errorf("page: %v, records %v", err, recs)
	}
}

// First reads the first record and no more of the body.
func TestFirst(t *testing.T) {
	tests := map[string]struct {
		format, body string
		h            http.Header
		want         any
		wantErr      string
		rest         int // bytes of the body left unread, at least
	}{
		"jsonl: the first line": {
			format: "jsonl", body: `{"id":1}` + "\n" + strings.Repeat(`{"id":2}`+"\n", 20000),
			want: map[string]any{"id": json.Number("1")}, rest: 100000,
		},
		"csv: the first row": {
			format: "csv", body: "id,name\n1,a\n2,b\n",
			want: map[string]any{"id": "1", "name": "a"},
		},
		"an empty body: none": {format: "jsonl", body: ""},
		"a body of another format": {
			format: "csv", body: "<html></html>", h: http.Header{"Content-Type": {"text/html"}},
			wantErr: `stream "s": the response is an HTML page (Content-Type "text/html"), but the stream's format is csv`,
		},
		"a first record that is not JSON": {format: "jsonl", body: "{nope\n", wantErr: "jsonl"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dec, err := New(&streams.Definition{Name: "s"}, tt.format, nil)
			if err != nil {
				t.Fatal(err)
			}
			body := strings.NewReader(tt.body)
			got, err := dec.First(body, tt.h)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if body.Len() < tt.rest {
				t.Errorf("%d bytes left unread, want at least %d", body.Len(), tt.rest)
			}
		})
	}
}
