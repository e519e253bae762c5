package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/decoder"
)

// syncExport syncs an events stream read as it arrives (format jsonl or
// csv, body as the API sends it), on the tree path or not, as a sorted
// stream when sorted, against the events schema.
func syncExport(t *testing.T, format, body string, tree, sorted bool) pageRun {
	t.Helper()
	schema, err := os.ReadFile("../schemas/events.json")
	if err != nil {
		t.Fatal(err)
	}
	return syncExportOf(t, format, body, schema, tree, sorted)
}

// syncExportOf is syncExport against schema.
func syncExportOf(t *testing.T, format, body string, schema json.RawMessage, tree, sorted bool) pageRun {
	t.Helper()
	return syncExportAt(t, format, "", body, schema, tree, sorted)
}

// syncExportAt is syncExportOf with the records at records_path path.
func syncExportAt(t *testing.T, format, path, body string, schema json.RawMessage, tree, sorted bool) pageRun {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, body)
	}))
	defer srv.Close()
	dir := t.TempDir()
	def := map[string]any{"name": "events", "path": "/events", "format": format, "primary_key": []any{"id"},
		"schema": schema, "pagination": map[string]any{"type": "none"}}
	if sorted {
		def["replication_key"], def["is_sorted"] = "id", true
	}
	if path != "" {
		def["records_path"] = path
	}
	config := map[string]any{"base_url": srv.URL, "rate_limit": map[string]any{"requests_per_second": 0},
		"retry": map[string]any{"max_attempts": 1}, "dead_letter_path": filepath.Join(dir, "dead.jsonl"), "streams": []any{def}}
	cfg, err := settings.Load(writeConfig(t, dir, "config.json", config))
	if err != nil {
		t.Fatal(err)
	}
	w := &rawRecorder{raw: map[string][][]byte{}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var res pageRun
	if err := syncTree(context.Background(), Options{Config: cfg, Writer: w, Log: log}, tree); err != nil {
		res.err = err.Error()
	}
	res.dead = readDeadLetters(t, filepath.Join(dir, "dead.jsonl"), "")
	res.msgs, res.raw = w.msgs, w.raw["events"]
	return res
}

// exportWant is what the runs of an export show.
type exportWant struct {
	sorted  bool
	records int // written
	dead    int
	spliced int // at least
	err     string
}

// checkAgainstTree holds a spliced run of an export to its tree run: the
// error wanted of both, at least want.spliced records written from their
// bytes (their keys in another order than the tree's), and otherwise the
// same messages, dead letters and states; the tree run writes
// want.records and want.dead, and a sorted stream a state a page.
func checkAgainstTree(t *testing.T, tree, spliced pageRun, want exportWant) {
	t.Helper()
	if want.err == "" && (tree.err != "" || spliced.err != "") || want.err != "" && (!strings.Contains(tree.err, want.err) || !strings.Contains(spliced.err, want.err)) {
		t.Fatalf("sync: tree %q, spliced %q; want %q", tree.err, spliced.err, want.err)
	}
	n := 0
	for i, b := range spliced.raw {
		if !bytes.Equal(b, tree.raw[i]) {
			n++ // the API's key order: spliced
		}
	}
	if n < want.spliced {
		t.Errorf("%d records spliced, want at least %d", n, want.spliced)
	}
	tree.raw, spliced.raw = nil, nil
	if d := cmp.Diff(tree, spliced, cmp.AllowUnexported(message{}, pageRun{})); d != "" {
		t.Errorf("(-tree +spliced):\n%s", d)
	}
	records, states := 0, 0
	for _, m := range tree.msgs {
		switch m.Type {
		case "RECORD":
			records++
		case "STATE":
			states++
		}
	}
	if records != want.records || len(tree.dead) != want.dead {
		t.Errorf("%d records, %d dead letters; want %d, %d", records, len(tree.dead), want.records, want.dead)
	}
	if want.sorted && states < 3 {
		t.Errorf("%d STATE messages, want one a page at least", states)
	}
}

// A jsonl body's lines the walker is sure of are spliced, the others go
// to the tree path: spliced and tree runs write the same records in the
// same order, the same dead letters, the same states, and fail alike at
// a line that is not JSON, after the same records; over several pages.
func TestSpliceLinesAgainstTree(t *testing.T) {
	mixed := []string{
		`{"id":1,"type":"login","occurred_at":"2026-01-01T00:00:00Z"}`,
		`{"id":2,"type":"x","type":"last wins"}`,        // duplicate key
		`{"id":3,"type":"caf` + "\xff" + `"}`,           // invalid UTF-8
		`{"id":4,"type":"a","surprise":{"b":[1,2]}}`,    // drift
		`{"id":"6","type":"wrong type"}`,                // a dead letter
		`{"id":7,"occurred_at":"2026-02-30T00:00:00Z"}`, // not a date: a dead letter
		`{"id":8,"actor_id":1e2}`,                       // an exponent
		`{"\u0069d":9}`,                                 // an escaped key
		`  {"id":10,"payload":{"ok":true,"path":"\ud83d\ude00/\u00e9"}}  `,
		``, // a blank line
		`{"id": 11, "type" : "spaced"}`,
	}
	many := func(n int) []string {
		lines := make([]string, n)
		for i := range lines {
			lines[i] = fmt.Sprintf(`{"id":%d,"type":"t%d","occurred_at":"2026-01-01T00:00:00Z","payload":{"bytes":%d}}`, 100+i, i%7, i)
		}
		return lines
	}
	tests := map[string]struct {
		lines   []string
		sorted  bool
		records int // written
		dead    int
		spliced int // at least
		err     string
	}{
		"mixed":                 {lines: append([]string{"\uFEFF" + mixed[0]}, mixed[1:]...), records: 8, dead: 2, spliced: 2},
		"several pages, sorted": {lines: many(2500), sorted: true, records: 2500, spliced: 2500},
		"mixed pages":           {lines: append(many(1500), mixed...), records: 1508, dead: 2, spliced: 1500},
		"not JSON on the second page": {lines: append(many(1200), `{"id":1},{"id":2}`, `{"id":3}`),
			records: 1200, spliced: 1000, err: "line 1201 of the jsonl body is not JSON"},
		"not an object": {lines: append(many(3), "5"), records: 3, spliced: 3, err: "a record is not a JSON object"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			body := strings.Join(tt.lines, "\n") + "\n"
			tree, spliced := syncExport(t, "jsonl", body, true, tt.sorted), syncExport(t, "jsonl", body, false, tt.sorted)
			checkAgainstTree(t, tree, spliced, exportWant{sorted: tt.sorted, records: tt.records, dead: tt.dead, spliced: tt.spliced, err: tt.err})
		})
	}
}

// csvSchema types an events export's columns as a CSV body has them.
const csvSchema = `{"type":"object","required":["id"],"properties":{
	"id":{"type":"integer"},"type":{"type":["null","string"],"maxLength":20},"actor_id":{"type":["null","integer"],"minimum":0},
	"occurred_at":{"type":["null","string"],"format":"date-time"},"amount":{"type":["null","number"]},"ok":{"type":["null","boolean"]},
	"tags":{"type":["null","array"],"items":{"type":"string"}},"note":{"type":"string"}}}`

// A csv body's rows the walker is sure of (as their records' JSON texts)
// are spliced, the others go to the tree path: spliced and tree runs
// write the same records in the same order, the same dead letters, the
// same states, and fail alike at a row that is not CSV, after the same
// records; over several pages.
func TestSpliceCSVAgainstTree(t *testing.T) {
	const header = "id,type,actor_id,occurred_at,amount,ok,tags,note\n"
	const at = "2026-01-01T00:00:00Z"
	mixed := []string{
		`1,login,7,` + at + `,1.50,true,a,plain`,
		`2,"quoted, with a comma",,` + at + `,,,,""`,                         // empty cells: null, or "" for a string
		`3,"a ""quote""",+8,` + at + `,-0.5,FALSE,b,"line` + "\n" + `break"`, // an escaped quote, a newline in a cell
		`4,caf` + "\xff" + `,1,` + at + `,,,,x`,                              // invalid UTF-8: the tree
		`x5,wrong type,1,` + at + `,,,,x`,                                    // a dead letter
		`6,t,-1,` + at + `,,,,x`,                                             // below the minimum: a dead letter
		`7,t,1,2026-02-30T00:00:00Z,,,,x`,                                    // not a date: a dead letter
		`8,t,1,` + at + `,1e2,,,x`,                                           // an exponent: the tree
		`9,much too long a type for the schema,,` + at + `,,,,x`,             // maxLength: a dead letter
		` 010 ,t,0007,` + at + `,,yes,,x`,                                    // spaces and zeros; a boolean that is none: a dead letter
		`11,` + "\u2028<&>\t" + `,,` + at + `,,,,x`,                          // escaped as the tree escapes it
		`12,t,,` + at + `,,,,`,                                               // "" for a string that is required? no: note is not
	}
	many := func(from, n int) []string {
		rows := make([]string, n)
		for i := range rows {
			rows[i] = fmt.Sprintf(`%d,t%d,%d,2026-01-01T00:00:00Z,%d.25,true,tag,"n, %d"`, from+i, i%7, i%50, i, i)
		}
		return rows
	}
	tests := map[string]struct {
		header  string
		rows    []string
		sorted  bool
		records int // written
		dead    int
		spliced int // at least
		err     string
	}{
		"mixed":                 {header: "\uFEFF" + header, rows: mixed, records: 7, dead: 5, spliced: 4},
		"several pages, sorted": {rows: many(100, 2500), sorted: true, records: 2500, spliced: 2500},
		"mixed pages":           {rows: append(many(100, 1500), mixed...), records: 1507, dead: 5, spliced: 1500},
		"a whole page":          {rows: many(100, 1000), records: 1000, spliced: 1000},
		"ragged on the second page": {rows: append(many(100, 1200), `1,2`, `3,t,1,,,,,x`),
			records: 1200, spliced: 1000, err: "the csv body is not CSV"},
		"a bare quote":   {rows: append(many(100, 3), `4,a"b,1,,,,,x`), records: 3, spliced: 3, err: "the csv body is not CSV"},
		"a column twice": {header: "id,type,type\n", rows: []string{`1,a,b`, `2,c,d`}, dead: 2}, // a value of each row would be lost
		"names collide":  {header: "id,type\xff,type\xfe\n", rows: []string{`1,a,b`}, dead: 1},
		"drift":          {header: "id,surprise\n", rows: []string{`1,a`, `2,b`}, records: 2},
		"no rows":        {rows: nil},
		"a header alone": {header: "id\n", rows: nil},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			body := cmpOr(tt.header, header) + strings.Join(tt.rows, "\n")
			if len(tt.rows) > 0 {
				body += "\n"
			}
			tree := syncExportOf(t, "csv", body, json.RawMessage(csvSchema), true, tt.sorted)
			spliced := syncExportOf(t, "csv", body, json.RawMessage(csvSchema), false, tt.sorted)
			checkAgainstTree(t, tree, spliced, exportWant{sorted: tt.sorted, records: tt.records, dead: tt.dead, spliced: tt.spliced, err: tt.err})
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// A jsonl body whose records lie inside each line (records_path): the
// records the walker is sure of are spliced, pages split where the tree
// path splits them (by records, not lines); the others, and every record
// of a line the page scan is not sure of, take the tree path: the same
// records, dead letters, states and errors both ways.
func TestSpliceLinesAtPathAgainstTree(t *testing.T) {
	schema, err := os.ReadFile("../schemas/events.json")
	if err != nil {
		t.Fatal(err)
	}
	line := func(recs ...string) string { return `{"meta":{"n":1},"data":[` + strings.Join(recs, ",") + `]}` }
	rec := func(id int) string {
		return fmt.Sprintf(`{"id":%d,"type":"t%d","occurred_at":"2026-01-01T00:00:00Z","payload":{"bytes":%d}}`, id, id%7, id)
	}
	many := func(from, lines, per int) []string {
		var out []string
		for l := range lines {
			var recs []string
			for r := range per {
				recs = append(recs, rec(from+l*per+r))
			}
			out = append(out, line(recs...))
		}
		return out
	}
	mixed := []string{
		line(rec(1), `{"id":"2","type":"wrong type"}`, `{"id":3,"type":"x","type":"last wins"}`),
		`{"data":{"id":4}}`, // one record, an object: the tree
		`{"data":null}`,     // none
		`{"data":[]}`,       // none
		`{"data":[{"id":5}],"data":[` + rec(6) + `]}`, // a key twice on the way: the tree keeps the last
		`{"d\u0061ta":[` + rec(7) + `]}`,              // an escaped key on the way: the tree
		line(`{"id":8,"surprise":[1]}`, `{"id":9,"occurred_at":"2026-02-30T00:00:00Z"}`),
		`  ` + line(rec(10)) + ` `,
	}
	tests := map[string]struct {
		lines   []string
		sorted  bool
		records int
		dead    int
		spliced int
		err     string
	}{
		"mixed":                 {lines: mixed, records: 7, dead: 2, spliced: 2},
		"several pages, sorted": {lines: many(100, 700, 3), sorted: true, records: 2100, spliced: 2100},
		"mixed pages":           {lines: append(many(100, 400, 3), mixed...), records: 1207, dead: 2, spliced: 1200},
		"records_path missing on the second page": {lines: append(many(100, 400, 3), `{"other":[]}`, line(rec(1))),
			records: 1200, spliced: 1000, err: `records_path "data" is not in line 401`},
		"not JSON": {lines: append(many(100, 2, 3), line(rec(1))+"x"), records: 6, spliced: 6, err: "line 3 of the jsonl body is not JSON"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			body := strings.Join(tt.lines, "\n") + "\n"
			tree := syncExportAt(t, "jsonl", "data", body, schema, true, tt.sorted)
			spliced := syncExportAt(t, "jsonl", "data", body, schema, false, tt.sorted)
			checkAgainstTree(t, tree, spliced, exportWant{sorted: tt.sorted, records: tt.records, dead: tt.dead, spliced: tt.spliced, err: tt.err})
		})
	}
}

// A paginated stream's page of texts is kept for the next page, but not
// one past maxKeptLines.
func TestLinesPoolKeepsSmallPages(t *testing.T) {
	dec, err := decoder.New(&streams.Definition{Name: "s"}, "jsonl", nil)
	if err != nil {
		t.Fatal(err)
	}
	var pool linesPool
	for _, tt := range []struct {
		line string
		kept bool
	}{{`{"id":1}`, true}, {`{"pad":"` + strings.Repeat("x", maxKeptLines) + `"}`, false}} {
		l := pool.get(dec)
		if err := dec.ReadLines(strings.NewReader(tt.line+"\n"), http.Header{}, l); err != nil {
			t.Fatal(err)
		}
		pool.put(l)
		if got := pool.get(dec) == l; got != tt.kept {
			t.Errorf("a page of %d bytes kept: %v, want %v", len(tt.line), got, tt.kept)
		}
	}
}
