package integration_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// loader is a test Singer target. It reads the tap's stdout one line at a
// time, as target-postgres or target-jsonl would:
//
//   - SCHEMA gives the stream's key_properties (and bookmark_properties);
//   - RECORD is upserted by key_properties into an in-memory table per
//     stream, keeping the newest row by replication key when the stream
//     has one; a RECORD before its stream's SCHEMA is an error;
//   - STATE becomes the "last committed state" once every record before it
//     has been applied (trivially true here: lines are applied in order);
//   - ACTIVATE_VERSION drops the rows of older versions once the new
//     version has rows, as targets that support full-table versioning do.
//
// A run killed mid-write may leave a last line without its newline: that
// line is ignored (the target never saw it whole), but the records before
// it are kept even when they come after the last STATE, as a target that
// commits per batch would. The next run resumes from the last STATE.
//
// Every line that is not a valid Singer message fails the test.
type loader struct {
	t      testing.TB
	tables map[string]*table
	// state is the value of the last STATE committed, nil before any.
	state json.RawMessage
	runs  int

	// Per run (reset by feed).
	schemas  map[string]bool           // streams whose SCHEMA this run sent
	received map[string]int            // records received by stream
	dupes    map[string]int            // records whose key this run had already sent
	seen     map[string]map[string]int // keys received this run, by stream
	states   []json.RawMessage         // every STATE value of the run
	// inBookmarks are the bookmarks of the state the run started from;
	// maxKey is the largest replication-key value the run emitted so far.
	inBookmarks map[string]any
	maxKey      map[string]any
	// checkBookmarks makes every STATE's moved bookmark be checked against
	// the largest replication-key value emitted before it in the run.
	checkBookmarks bool
}

// table is a target table: rows by primary key.
type table struct {
	keys        []string
	bookmark    []string
	rows        map[string]map[string]any
	versions    map[string]int64
	newVersions map[int64]bool // versions that have rows
}

func newLoader(t testing.TB) *loader {
	return &loader{t: t, tables: map[string]*table{}, checkBookmarks: true}
}

// feed applies the stdout of one run. killed says the process was killed,
// so a last line without its newline is expected and ignored.
func (l *loader) feed(out []byte, killed bool) {
	l.t.Helper()
	l.runs++
	l.schemas = map[string]bool{}
	l.received = map[string]int{}
	l.dupes = map[string]int{}
	l.seen = map[string]map[string]int{}
	l.states = nil
	l.maxKey = map[string]any{}
	l.inBookmarks = bookmarkValues(l.state)
	// A walk resumed inside a stream carries the largest key its earlier
	// run emitted (resume.high): its bookmark may reach it.
	for name, h := range resumeHighs(l.state) {
		l.maxKey[name] = h
	}

	lines := bytes.Split(out, []byte("\n"))
	last := lines[len(lines)-1]
	lines = lines[:len(lines)-1]
	if len(last) > 0 {
		if !killed {
			l.t.Errorf("run %d: stdout ends with a line without its newline: %.200s", l.runs, last)
		} else {
			l.t.Logf("run %d: ignoring the last line, cut off by the kill (%d bytes)", l.runs, len(last))
		}
	}
	for i, line := range lines {
		if err := l.apply(line); err != nil {
			l.t.Errorf("run %d, stdout line %d is not a valid Singer message: %v\n%.300s", l.runs, i+1, err, line)
		}
	}
}

// message is a Singer message; fields are checked by apply.
type message struct {
	Type               string          `json:"type"`
	Stream             *string         `json:"stream"`
	Schema             json.RawMessage `json:"schema"`
	KeyProperties      *[]string       `json:"key_properties"`
	BookmarkProperties []string        `json:"bookmark_properties"`
	Record             json.RawMessage `json:"record"`
	Value              json.RawMessage `json:"value"`
	Version            *json.Number    `json:"version"`
	TimeExtracted      *string         `json:"time_extracted"`
}

func (l *loader) apply(line []byte) error {
	if len(bytes.TrimSpace(line)) == 0 {
		return fmt.Errorf("empty line")
	}
	if !json.Valid(line) {
		return fmt.Errorf("not JSON")
	}
	var m message
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return err
	}
	stream := func() (string, error) {
		if m.Stream == nil || *m.Stream == "" {
			return "", fmt.Errorf("%s without a stream", m.Type)
		}
		return *m.Stream, nil
	}
	switch m.Type {
	case "SCHEMA":
		name, err := stream()
		if err != nil {
			return err
		}
		var schema map[string]any
		if err := json.Unmarshal(m.Schema, &schema); err != nil || schema == nil {
			return fmt.Errorf("SCHEMA of %q: schema is not a JSON object", name)
		}
		if m.KeyProperties == nil {
			return fmt.Errorf("SCHEMA of %q: key_properties missing", name)
		}
		props, _ := schema["properties"].(map[string]any)
		for _, k := range append(slices.Clone(*m.KeyProperties), m.BookmarkProperties...) {
			if _, ok := props[k]; !ok {
				return fmt.Errorf("SCHEMA of %q: key %q is not a property of the schema", name, k)
			}
		}
		tb := l.tables[name]
		if tb == nil {
			tb = &table{rows: map[string]map[string]any{}, versions: map[string]int64{}, newVersions: map[int64]bool{}}
			l.tables[name] = tb
		}
		tb.keys, tb.bookmark = *m.KeyProperties, m.BookmarkProperties
		l.schemas[name] = true
	case "RECORD":
		name, err := stream()
		if err != nil {
			return err
		}
		if !l.schemas[name] {
			return fmt.Errorf("RECORD of %q before its SCHEMA", name)
		}
		rec, err := decodeObject(m.Record)
		if err != nil {
			return fmt.Errorf("RECORD of %q: record: %v", name, err)
		}
		if m.TimeExtracted != nil {
			if _, err := time.Parse(time.RFC3339Nano, *m.TimeExtracted); err != nil {
				return fmt.Errorf("RECORD of %q: time_extracted %q is not RFC 3339", name, *m.TimeExtracted)
			}
		}
		tb := l.tables[name]
		key, err := keyOf(rec, tb.keys)
		if err != nil {
			return fmt.Errorf("RECORD of %q: %v", name, err)
		}
		l.received[name]++
		if l.seen[name] == nil {
			l.seen[name] = map[string]int{}
		}
		if l.seen[name][key]++; l.seen[name][key] > 1 {
			l.dupes[name]++
		}
		var version int64
		if m.Version != nil {
			if version, err = m.Version.Int64(); err != nil {
				return fmt.Errorf("RECORD of %q: version %s is not an integer", name, *m.Version)
			}
			tb.newVersions[version] = true
		}
		if len(tb.bookmark) == 1 {
			rk := tb.bookmark[0]
			if v := rec[rk]; v != nil {
				if old := l.maxKey[name]; old == nil || compareKeys(v, old) > 0 {
					l.maxKey[name] = v
				}
				if prev, ok := tb.rows[key]; ok && prev[rk] != nil && compareKeys(prev[rk], v) > 0 {
					return nil // the table holds a newer row
				}
			}
		}
		tb.rows[key] = rec
		tb.versions[key] = version
	case "STATE":
		if len(m.Value) == 0 || m.Value[0] != '{' {
			return fmt.Errorf("STATE without an object value")
		}
		if _, err := decodeObject(m.Value); err != nil {
			return fmt.Errorf("STATE value: %v", err)
		}
		if l.checkBookmarks {
			l.checkState(m.Value)
		}
		l.state = slices.Clone(m.Value)
		l.states = append(l.states, l.state)
	case "ACTIVATE_VERSION":
		name, err := stream()
		if err != nil {
			return err
		}
		if m.Version == nil {
			return fmt.Errorf("ACTIVATE_VERSION of %q without a version", name)
		}
		v, err := m.Version.Int64()
		if err != nil {
			return fmt.Errorf("ACTIVATE_VERSION of %q: version %s is not an integer", name, *m.Version)
		}
		if !l.schemas[name] {
			return fmt.Errorf("ACTIVATE_VERSION of %q before its SCHEMA", name)
		}
		tb := l.tables[name]
		if tb.newVersions[v] {
			for k, kv := range tb.versions {
				if kv != v {
					delete(tb.rows, k)
					delete(tb.versions, k)
				}
			}
		}
	default:
		return fmt.Errorf("unknown message type %q", m.Type)
	}
	return nil
}

// checkState checks that a STATE moves no bookmark beyond the largest
// replication-key value emitted before it in the run.
func (l *loader) checkState(value json.RawMessage) {
	l.t.Helper()
	for name, v := range bookmarkValues(value) {
		if in, ok := l.inBookmarks[name]; ok && compareKeys(v, in) == 0 {
			continue // not moved by this run
		}
		max := l.maxKey[name]
		if max == nil {
			l.t.Errorf("run %d: STATE sets the bookmark of %q to %v before any record of it was emitted in the run", l.runs, name, v)
			continue
		}
		if compareKeys(v, max) > 0 {
			l.t.Errorf("run %d: STATE sets the bookmark of %q to %v, beyond the largest value emitted before it (%v)", l.runs, name, v, max)
		}
	}
}

// bookmarkValues returns bookmarks.<stream>.replication_key_value of a
// state value, by stream.
func bookmarkValues(state json.RawMessage) map[string]any {
	out := map[string]any{}
	if state == nil {
		return out
	}
	v, err := decodeObject(state)
	if err != nil {
		return out
	}
	bms, _ := v["bookmarks"].(map[string]any)
	for name, b := range bms {
		if bm, ok := b.(map[string]any); ok && bm["replication_key_value"] != nil {
			out[name] = bm["replication_key_value"]
		}
	}
	return out
}

// resumeHighs returns bookmarks.<stream>.resume.high of a state value, or
// window.high when larger.
func resumeHighs(state json.RawMessage) map[string]any {
	out := map[string]any{}
	if state == nil {
		return out
	}
	v, _ := decodeObject(state)
	bms, _ := v["bookmarks"].(map[string]any)
	for name, b := range bms {
		bm, _ := b.(map[string]any)
		if r, ok := bm["resume"].(map[string]any); ok && r["high"] != nil {
			out[name] = r["high"]
		}
		// A backfill that went on past failed windows carries the largest
		// key of the windows it read (window.high).
		if w, ok := bm["window"].(map[string]any); ok && w["high"] != nil && (out[name] == nil || compareKeys(w["high"], out[name]) > 0) {
			out[name] = w["high"]
		}
	}
	return out
}

// stateBookmark returns bookmarks.<stream> of the loader's state, or nil.
func (l *loader) stateBookmark(stream string) map[string]any {
	if l.state == nil {
		return nil
	}
	v, err := decodeObject(l.state)
	if err != nil {
		return nil
	}
	bms, _ := v["bookmarks"].(map[string]any)
	bm, _ := bms[stream].(map[string]any)
	return bm
}

func decodeObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return v, nil
}

// keyOf is the text of a record's primary key: the JSON array of its
// values, so that numbers keep their text and composite keys cannot clash.
func keyOf(rec map[string]any, keys []string) (string, error) {
	if len(keys) == 0 {
		b, err := json.Marshal(rec)
		return string(b), err
	}
	vals := make([]any, len(keys))
	for i, k := range keys {
		v, ok := rec[k]
		if !ok || v == nil {
			return "", fmt.Errorf("key property %q missing or null", k)
		}
		vals[i] = v
	}
	b, err := json.Marshal(vals)
	return string(b), err
}

// compareKeys orders replication-key values: numbers exactly, RFC 3339
// times as instants, other strings as text; nil first.
func compareKeys(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	if ra, ok := ratOf(a); ok {
		if rb, ok := ratOf(b); ok {
			return ra.Cmp(rb)
		}
	}
	sa, _ := a.(string)
	sb, _ := b.(string)
	ta, errA := time.Parse(time.RFC3339Nano, sa)
	tb, errB := time.Parse(time.RFC3339Nano, sb)
	if errA == nil && errB == nil {
		return ta.Compare(tb)
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

func ratOf(v any) (*big.Rat, bool) {
	switch n := v.(type) {
	case json.Number:
		return new(big.Rat).SetString(string(n))
	case float64:
		return new(big.Rat).SetFloat64(n), true
	}
	return nil, false
}

// rows returns the table of a stream (nil when the stream never had a
// SCHEMA).
func (l *loader) rows(stream string) map[string]map[string]any {
	if tb := l.tables[stream]; tb != nil {
		return tb.rows
	}
	return nil
}

// keysOf returns the primary-key texts of source rows.
func keysOf(t testing.TB, rows []map[string]any, keys []string) map[string]map[string]any {
	t.Helper()
	out := make(map[string]map[string]any, len(rows))
	for _, r := range rows {
		k, err := keyOf(r, keys)
		if err != nil {
			t.Fatalf("source row %v: %v", r, err)
		}
		if _, dup := out[k]; dup {
			t.Fatalf("source has the key %s twice", k)
		}
		out[k] = r
	}
	return out
}

// assertTable checks that the loader's table of stream equals want
// exactly: the same primary keys, and the same whole records (numbers
// compared as their JSON text).
func assertTable(t testing.TB, l *loader, stream string, keys []string, want []map[string]any) {
	t.Helper()
	got := l.rows(stream)
	w := keysOf(t, want, keys)
	var missing, extra, differ []string
	for k, wr := range w {
		gr, ok := got[k]
		switch {
		case !ok:
			missing = append(missing, k)
		case !cmp.Equal(wr, gr):
			differ = append(differ, fmt.Sprintf("%s: %s", k, cmp.Diff(wr, gr)))
		}
	}
	for k := range got {
		if _, ok := w[k]; !ok {
			extra = append(extra, k)
		}
	}
	if len(missing)+len(extra)+len(differ) == 0 {
		return
	}
	sort.Strings(missing)
	sort.Strings(extra)
	sort.Strings(differ)
	first := func(s []string) []string { return s[:min(len(s), 8)] }
	t.Errorf("stream %q: the target's table differs from the source (%d rows, want %d): %d missing %v, %d extra %v, %d different:\n%s",
		stream, len(got), len(w), len(missing), first(missing), len(extra), first(extra), len(differ), strings.Join(first(differ), "\n"))
}

// assertSubset checks that every row the loader holds for stream is a row
// of want, unchanged (a run that stopped early).
func assertSubset(t testing.TB, l *loader, stream string, keys []string, want []map[string]any) {
	t.Helper()
	w := keysOf(t, want, keys)
	bad := 0
	for k, gr := range l.rows(stream) {
		wr, ok := w[k]
		if !ok {
			t.Errorf("stream %q: row %s is not in the source", stream, k)
		} else if !cmp.Equal(wr, gr) {
			t.Errorf("stream %q: row %s differs from the source: %s", stream, k, cmp.Diff(wr, gr))
		}
		if bad++; bad > 10 && t.Failed() {
			return
		}
	}
}

// TestLoader checks the loader itself on hand-written streams of messages.
func TestLoader(t *testing.T) {
	schema := `{"type":"SCHEMA","stream":"s","schema":{"type":"object","properties":{"id":{"type":"integer"},"u":{"type":"string"}}},"key_properties":["id"],"bookmark_properties":["u"]}`
	rec := func(id int, u string) string {
		return fmt.Sprintf(`{"type":"RECORD","stream":"s","record":{"id":%d,"u":%q}}`, id, u)
	}
	state := func(u string) string {
		return fmt.Sprintf(`{"type":"STATE","value":{"bookmarks":{"s":{"replication_key":"u","replication_key_value":%q}}}}`, u)
	}
	t.Run("upsert keeps the newest and counts duplicates", func(t *testing.T) {
		l := newLoader(t)
		out := strings.Join([]string{schema,
			rec(1, "2026-01-02T00:00:00Z"), rec(2, "2026-01-01T00:00:00Z"),
			rec(1, "2026-01-01T00:00:00Z"), // older: kept out
			state("2026-01-02T00:00:00Z"),
			rec(3, "2026-01-03T00:00:00Z"),
		}, "\n") + "\n"
		l.feed([]byte(out), false)
		if got := l.rows("s")[`[1]`]["u"]; got != "2026-01-02T00:00:00Z" {
			t.Errorf("row 1 has u %v, want the newest", got)
		}
		if len(l.rows("s")) != 3 || l.received["s"] != 4 || l.dupes["s"] != 1 {
			t.Errorf("rows %d received %d dupes %d, want 3, 4, 1", len(l.rows("s")), l.received["s"], l.dupes["s"])
		}
		if !strings.Contains(string(l.state), "2026-01-02") {
			t.Errorf("state %s", l.state)
		}
	})
	t.Run("a cut last line is ignored, records after the last STATE kept", func(t *testing.T) {
		l := newLoader(t)
		out := strings.Join([]string{schema, rec(1, "2026-01-01T00:00:00Z"), state("2026-01-01T00:00:00Z"), rec(2, "2026-01-02T00:00:00Z"), `{"type":"RECORD","stream":"s","rec`}, "\n")
		l.feed([]byte(out), true)
		if len(l.rows("s")) != 2 || !strings.Contains(string(l.state), "2026-01-01") {
			t.Errorf("rows %v state %s", l.rows("s"), l.state)
		}
	})
	// Invalid streams of messages must fail the test: run them against a
	// recording TB.
	bad := map[string]string{
		"record before schema":     rec(1, "x") + "\n",
		"not JSON":                 "hello\n",
		"unknown type":             `{"type":"LOG","stream":"s"}` + "\n",
		"schema without keys":      `{"type":"SCHEMA","stream":"s","schema":{"type":"object","properties":{}}}` + "\n",
		"record without stream":    schema + "\n" + `{"type":"RECORD","record":{"id":1}}` + "\n",
		"record without its key":   schema + "\n" + `{"type":"RECORD","stream":"s","record":{"u":"x"}}` + "\n",
		"state without value":      `{"type":"STATE"}` + "\n",
		"activate without version": schema + "\n" + `{"type":"ACTIVATE_VERSION","stream":"s"}` + "\n",
		"cut line in a clean run":  schema + "\n" + rec(1, "x"),
		"bookmark beyond records":  schema + "\n" + rec(1, "2026-01-01T00:00:00Z") + "\n" + state("2026-01-05T00:00:00Z") + "\n",
	}
	for name, out := range bad {
		t.Run("rejects "+name, func(t *testing.T) {
			rt := &recordingTB{TB: t}
			newLoader(rt).feed([]byte(out), false)
			if len(rt.errs) == 0 {
				t.Errorf("the loader accepted %q", out)
			}
		})
	}
}

// recordingTB collects Errorf calls instead of failing.
type recordingTB struct {
	testing.TB
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Helper()             {}
func (r *recordingTB) Logf(string, ...any) {}
