package decoder

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/streams"
)

// LinePages hands a jsonl body's lines as Pages hands its records: the
// same pages, the same trees (Lines.Records), the same error naming the
// same line; a line's bytes are the line, trimmed, without a byte order
// mark.
func TestLinePagesAsPages(t *testing.T) {
	tests := map[string]struct {
		body      []byte
		size      int
		wantLines []string // the first page's lines
	}{
		"lines, blank lines and a byte order mark": {body: []byte("\uFEFF{\"id\":1}\r\n\n  {\"id\":2} \n{\"id\":3}"), size: 2, wantLines: []string{`{"id":1}`, `{"id":2}`}},
		"gzip":          {body: gzipped(t, "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n"), size: 5, wantLines: []string{`{"id":1}`, `{"id":2}`, `{"id":3}`}},
		"empty":         {body: nil, size: 2, wantLines: []string{}},
		"not JSON":      {body: []byte("{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n{nope\n{\"id\":5}\n"), size: 2, wantLines: []string{`{"id":1}`, `{"id":2}`}},
		"two on a line": {body: []byte("{\"id\":1}\n{\"id\":2},{\"id\":3}\n"), size: 5, wantLines: []string{`{"id":1}`, `{"id":2},{"id":3}`}},
		"values":        {body: []byte("1\n\"a\"\nnull\n[1,2]\n"), size: 3, wantLines: []string{"1", `"a"`, "null"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dec, err := New(&streams.Definition{Name: "s"}, "jsonl", nil)
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
			if diff := cmp.Diff(tt.wantLines, first); diff != "" {
				t.Errorf("the first page's lines (-want +got):\n%s", diff)
			}
			if wantErr != nil && len(want) > 0 && len(got) == len(want) {
				// A line that is not JSON ends the body in Pages, and in
				// LinePages once its page is decoded.
				got[len(got)-1].Last = want[len(want)-1].Last
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("pages (-Pages +LinePages):\n%s", diff)
			}
			if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
				t.Errorf("err %v, want Pages' %v", gotErr, wantErr)
			}
		})
	}
}

// LinePages reads only a body whose line is one record.
func TestLinePagesNeedsLines(t *testing.T) {
	for _, d := range []struct {
		format, path string
		splits       bool
	}{{"jsonl", "", true}, {"jsonl", "data", false}, {"csv", "", false}, {"json", "", false}} {
		dec, err := New(&streams.Definition{Name: "s", RecordsPath: d.path}, d.format, nil)
		if err != nil {
			t.Fatal(err)
		}
		if dec.SplitsLines() != d.splits {
			t.Errorf("%s %q: SplitsLines %v, want %v", d.format, d.path, dec.SplitsLines(), d.splits)
		}
		err = dec.LinePages(strings.NewReader("{}\n"), http.Header{}, 0, func(*Lines, bool) error { return nil })
		if (err == nil) != d.splits {
			t.Errorf("%s %q: LinePages: %v", d.format, d.path, err)
		}
	}
}
