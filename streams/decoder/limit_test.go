package decoder

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
)

// repeat is a reader of s n times, then end, without holding them.
func repeat(head, s string, n int, tail string) io.Reader {
	return io.MultiReader(strings.NewReader(head), &repeater{s: s, n: n}, strings.NewReader(tail))
}

type repeater struct {
	s   string
	n   int
	off int
}

func (r *repeater) Read(p []byte) (int, error) {
	k := 0
	for k < len(p) && r.n > 0 {
		c := copy(p[k:], r.s[r.off:])
		k, r.off = k+c, r.off+c
		if r.off == len(r.s) {
			r.off, r.n = 0, r.n-1
		}
	}
	if k == 0 {
		return 0, io.EOF
	}
	return k, nil
}

// The caps of a streamed body (made small here): a csv row, an xml
// record or the text between records, an xml body's depth, a held page.
// What is within them reads; what passes one fails naming the stream,
// where and the cap.
func TestCaps(t *testing.T) {
	const max = 1 << 20
	pad := strings.Repeat("x", 1000)
	line := `{"id":1,"pad":"` + pad + `"}` + "\n"
	deep := func(n int) io.Reader {
		return io.MultiReader(strings.NewReader("<r>"), repeat("", "<a>", n-1, ""), repeat("", "</a>", n-1, "</r>"))
	}
	tests := map[string]struct {
		format, path string
		body         func() io.Reader
		page         bool // read as a page (PageConsumer), not by Pages
		want         int  // records, when wantErr is ""
		wantErr      string
	}{
		"csv rows within the cap": {format: "csv", body: func() io.Reader { return repeat("id\n", strings.Repeat("x", 1000)+"\n", 2000, "") }, want: 2000},
		"a csv field of the cap":  {format: "csv", body: func() io.Reader { return repeat("id\n1\n", "x", max-1, "\n2\n") }, want: 3},
		"csv field": {format: "csv", body: func() io.Reader { return repeat("id\n1\n", "x", 2*max, "\n") },
			wantErr: `stream "s": row 3 of the csv body is larger than 1 MiB`},
		"csv quoted field": {format: "csv", body: func() io.Reader { return repeat("id\n\"", "x\n", max, "\"\n") },
			wantErr: `stream "s": row 2 of the csv body is larger than 1 MiB`},
		"csv header": {format: "csv", body: func() io.Reader { return repeat("", "c,", max, "\n") },
			wantErr: `stream "s": row 1 of the csv body is larger than 1 MiB`},
		"xml records within the cap": {format: "xml", path: "r.i", body: func() io.Reader {
			return repeat("<r>", "<i><t>"+strings.Repeat("x", 1000)+"</t></i>", 2000, "</r>")
		}, want: 2000},
		"an xml record of the cap": {format: "xml", path: "r.i", body: func() io.Reader {
			return repeat("<r><i>1</i><i><t>", "x", max-len("<t></t></i>"), "</t></i><i>3</i></r>")
		}, want: 3},
		"xml text": {format: "xml", path: "r.i", body: func() io.Reader { return repeat("<r><i>1</i><i><t>", "x", 2*max, "</t></i></r>") },
			wantErr: `stream "s": record 2 of the xml body is larger than 1 MiB`},
		"xml children": {format: "xml", path: "r.i", body: func() io.Reader { return repeat("<r><i>", "<t>1</t>", max, "</i></r>") },
			wantErr: `stream "s": record 1 of the xml body is larger than 1 MiB`},
		"xml text between records": {format: "xml", path: "r.i", body: func() io.Reader { return repeat("<r><i>1</i>", "x", 2*max, "</r>") },
			wantErr: `stream "s": the xml body has more than 1 MiB of text outside a record`},
		"xml depth within the cap": {format: "xml", path: "r.a", body: func() io.Reader { return deep(codec.MaxDepth) }, want: 1},
		"xml depth in a record": {format: "xml", path: "r.a", body: func() io.Reader { return deep(codec.MaxDepth + 1) },
			wantErr: `stream "s": the xml body is nested deeper than 10000 levels`},
		"xml depth above the records": {format: "xml", path: "r.b", body: func() io.Reader { return deep(1 << 20) },
			wantErr: `stream "s": the xml body is nested deeper than 10000 levels`},
		"a page within the cap": {format: "jsonl", page: true, body: func() io.Reader { return repeat("", line, 3*max/len(line)-1, "") }, want: 3*max/len(line) - 1},
		"a jsonl page": {format: "jsonl", page: true, body: func() io.Reader { return repeat("", line, 4*max/len(line), "") },
			wantErr: `stream "s": a page of the jsonl body is larger than 3 MiB once inflated`},
		"a csv page": {format: "csv", page: true, body: func() io.Reader { return repeat("id\n", "1"+pad+"\n", 4*max/len(pad), "") },
			wantErr: `stream "s": a page of the csv body is larger than 3 MiB once inflated`},
		"an xml page": {format: "xml", path: "r.i", page: true, body: func() io.Reader { return repeat("<r>", "<i>"+pad+"</i>", 4*max/len(pad), "</r>") },
			wantErr: `stream "s": a page of the xml body is larger than 3 MiB once inflated`},
		"a body read record by record": {format: "jsonl", body: func() io.Reader { return repeat("", line, 4*max/len(line), "") }, want: 4 * max / len(line)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dec, err := New(&streams.Definition{Name: "s", RecordsPath: tt.path}, tt.format, nil)
			if err != nil {
				t.Fatal(err)
			}
			dec.maxRecord, dec.maxPage = max, 3*max
			n := 0
			if tt.page {
				var recs []any
				err = dec.PageConsumer(&recs)(tt.body(), http.Header{})
				n = len(recs)
			} else {
				err = dec.Pages(tt.body(), http.Header{}, 0, func(recs []any, _ bool) error { n += len(recs); return nil })
			}
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || n != tt.want {
				t.Fatalf("%d records, %v; want %d", n, err, tt.want)
			}
		})
	}
}
