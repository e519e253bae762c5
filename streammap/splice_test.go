package streammap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/codec"
)

// spliceSchema is the stream of the differential tests.
var spliceSchema = map[string]any{
	"type":     "object",
	"required": []any{"id"},
	"properties": map[string]any{
		"id":        map[string]any{"type": "integer"},
		"email":     map[string]any{"type": []any{"string", "null"}},
		"name":      map[string]any{"type": []any{"string", "null"}},
		"count":     map[string]any{"type": []any{"integer", "null"}},
		"price":     map[string]any{"type": []any{"number", "null"}},
		"active":    map[string]any{"type": []any{"boolean", "null"}},
		"tags":      map[string]any{"type": []any{"array", "null"}, "items": map[string]any{"type": "string"}},
		"meta":      map[string]any{"type": []any{"object", "null"}},
		"joined_at": map[string]any{"type": []any{"string", "null"}, "format": "date-time"},
	},
}

// spliceMaps are the map forms the README documents, each a map of
// stream "s"; tree: the map needs the record's tree.
var spliceMaps = []struct {
	name string
	def  map[string]any
	tree bool
}{
	{"hash, arithmetic, removal (the bench's)", map[string]any{"email": "md5(str(email))", "id_x2": "id * 2", "name": nil}, false},
	{"the README's customers map", map[string]any{
		"email_hash": "md5(config['seed'] + email) if email else None", "email": nil,
		"__filter__": "count is not None and count > 3", "__key_properties__": []any{"id"},
	}, false},
	{"__else__ null keeps the key", map[string]any{"email": "email", "__else__": nil}, false},
	{"__else__ null, the key overwritten", map[string]any{"id": "id * 10", "n": "name", "__else__": "__NULL__"}, false},
	{"__else__ null alone", map[string]any{"__else__": nil}, false},
	{"alias only", map[string]any{"__alias__": "t2"}, false},
	{"arithmetic and conditionals", map[string]any{
		"n": "count + 1 if count is not None else -1", "price": "float(price) * 2 if price is not None else None",
		"q": "count // 3 if count else 0", "r": "count % 7 if count else None", "p": "2 ** 10",
	}, false},
	{"string methods and subscripts", map[string]any{
		"upper": "name.upper() if name else ''", "domain": "email.split('@')[-1] if email else None",
		"first": "name[:2] if name else None", "x": "record['email']",
	}, false},
	{"self", map[string]any{"count": "self * 2 if self is not None else 0"}, false},
	{"dates", map[string]any{"year": "datetime.datetime.fromisoformat(joined_at).year if joined_at else None"}, false},
	{"json and nested values", map[string]any{"tags_json": "json.dumps(tags)", "meta": nil, "obj": "{'a': id, 'b': [1, name]}"}, false},
	{"booleans and hashes", map[string]any{"active": "not active", "sha": "sha256(str(id))", "big": "price > 10 if price is not None else False"}, false},
	{"filter only", map[string]any{"__filter__": "active"}, false},
	{"every property removed", map[string]any{
		"id": "id", "email": nil, "name": nil, "count": nil, "price": nil, "active": nil,
		"tags": nil, "meta": nil, "joined_at": nil,
	}, false},
	{"a runtime error on some records", map[string]any{"n": "int(name)"}, false},
	{"config and stream name", map[string]any{"s": "__stream_name__ + config['seed']", "f": "config['factor'] * id"}, false},
	{"the record whole", map[string]any{"r": "json.dumps(record)"}, true},
	{"record.get", map[string]any{"g": "record.get('email')"}, true},
	{"a filter on the record", map[string]any{"__filter__": "'email' in record"}, true},
	{"flattening", nil, true},
}

// builtRecord is a record's JSON text and where each member's value is.
type builtRecord struct {
	raw  []byte
	vals map[string][2]int
}

// buildRecord writes rec with its keys in a random order and random
// spaces and tabs between tokens, noting where each value is.
func buildRecord(rng *rand.Rand, rec map[string]any) builtRecord {
	keys := make([]string, 0, len(rec))
	for k := range rec {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	space := func(b []byte) []byte {
		for range rng.IntN(3) {
			b = append(b, " \t"[rng.IntN(2)])
		}
		return b
	}
	b := space([]byte{'{'})
	vals := map[string][2]int{}
	for i, k := range keys {
		if i > 0 {
			b = space(append(space(b), ','))
		}
		b = space(append(space(codec.AppendString(b, k)), ':'))
		start := len(b)
		b, _ = codec.Append(b, rec[k])
		vals[k] = [2]int{start, len(b)}
	}
	return builtRecord{raw: append(space(b), '}'), vals: vals}
}

// randomRecord is a record of spliceSchema, some properties absent or null.
func randomRecord(rng *rand.Rand) map[string]any {
	pick := func(v any) any {
		if rng.IntN(6) == 0 {
			return nil
		}
		return v
	}
	words := []string{"ada", "Bob", "", "é ü", "x\"y", "12", "tab\there", "line\nbreak", "日本", "<&>"}
	word := func() string { return words[rng.IntN(len(words))] }
	rec := map[string]any{
		"id":        json.Number(fmt.Sprint(rng.IntN(2000) - 100)),
		"email":     pick(word() + "@" + word() + ".example"),
		"name":      pick(word()),
		"count":     pick(json.Number(fmt.Sprint(rng.IntN(20) - 5))),
		"price":     pick(json.Number(fmt.Sprintf("%d.%d", rng.IntN(50), rng.IntN(100)))),
		"active":    pick(rng.IntN(2) == 0),
		"tags":      pick([]any{word(), word()}),
		"meta":      pick(map[string]any{"k": word(), "n": json.Number("1.50")}),
		"joined_at": pick(fmt.Sprintf("20%02d-0%d-1%dT0%d:00:00Z", rng.IntN(30), 1+rng.IntN(9), rng.IntN(9), rng.IntN(9))),
	}
	for k := range rec {
		if k != "id" && rng.IntN(8) == 0 {
			delete(rec, k)
		}
	}
	return rec
}

// spliceOutput compiles one of spliceMaps.
func spliceOutput(t testing.TB, def map[string]any) *Output {
	t.Helper()
	cfg := MapConfig{
		StreamMaps:      map[string]any{"s": def},
		StreamMapConfig: map[string]any{"seed": "pepper", "factor": float64(3)},
	}
	if def == nil {
		depth := 1
		cfg = MapConfig{FlatteningEnabled: true, FlatteningMaxDepth: &depth}
	}
	m, err := NewMapper(cfg, map[string]StreamSchema{"s": {Schema: spliceSchema, KeyProperties: []string{"id"}}})
	if err != nil {
		t.Fatal(err)
	}
	return m.Outputs("s")[0]
}

// treeRecord is what the tap's tree path writes for raw, decoded again;
// keep false when the filter drops it.
func treeRecord(tr *Transformer, raw []byte) (rec any, keep bool, err error) {
	v, err := codec.Decode(raw)
	if err != nil {
		return nil, false, err
	}
	out, err := tr.TransformInPlace(v.(map[string]any))
	if err != nil || out == nil {
		return nil, false, err
	}
	var keys []string
	b, err := codec.AppendObject(nil, out, &keys)
	if err != nil {
		return nil, false, err
	}
	rec, err = codec.Decode(b)
	return rec, true, err
}

// splicedRecord is AppendSpliced's record for raw, decoded again.
func splicedRecord(tr *Transformer, raw []byte, vals [][]byte) (rec any, keep bool, err error) {
	b, keep, err := tr.AppendSpliced([]byte("junk before"), raw, vals)
	if err != nil || !keep {
		return nil, keep, err
	}
	b, ok := bytes.CutPrefix(b, []byte("junk before"))
	if !ok {
		return nil, false, errors.New("AppendSpliced did not append to dst")
	}
	rec, err = codec.Decode(b)
	if err != nil {
		return nil, false, fmt.Errorf("AppendSpliced wrote %s: %w", b, err)
	}
	return rec, true, nil
}

// walkerVals are the values a codec.Walker captures of SpliceProps, as
// the tap reads them; ok is false when the walker is not sure of the
// record or cannot capture them all.
func walkerVals(t testing.TB, props []string, raw []byte) (vals [][]byte, ok bool) {
	var known []string
	for _, p := range props {
		if spliceSchema["properties"].(map[string]any)[p] != nil {
			known = append(known, p)
		}
	}
	if len(known) > codec.MaxCaptures {
		return nil, false
	}
	shape, err := codec.CompileShape(spliceSchema, known...)
	if err != nil {
		t.Fatal(err)
	}
	var w codec.Walker
	end, splicable, caps, err := w.Walk(raw, 0, shape)
	if err != nil || !splicable || end != len(raw) {
		return nil, false
	}
	vals = make([][]byte, len(props))
	for i, p := range props {
		if slot := slices.Index(known, p); slot >= 0 {
			vals[i] = caps[slot]
		}
	}
	return vals, true
}

// sameOutcome: the bytes path fails where the tree path does, by handing
// the record to it (ErrNeedsTree), which reports the error.
func sameOutcome(tree, spliced error) bool {
	if tree != nil {
		return errors.Is(spliced, ErrNeedsTree)
	}
	return spliced == nil
}

// TestAppendSplicedMatchesTransform: over generated records, each map
// the README documents writes from the record's bytes the record the
// tree path writes (values; key order may differ), drops the same
// records and fails on the same ones (handing them to the tree path),
// with the values located by the test and by the codec's walker alike;
// with and without properties deselected in a catalog.
func TestAppendSplicedMatchesTransform(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 20))
	deselected := map[string]bool{"name": true, "count": true, "id_x2": true, "email_hash": true, "upper": true, "s": true}
	for _, tc := range spliceMaps {
		for _, drop := range []map[string]bool{nil, deselected} {
			t.Run(fmt.Sprintf("%s, %d deselected", tc.name, len(drop)), func(t *testing.T) {
				testAppendSpliced(t, rng, spliceOutput(t, tc.def), drop, tc.tree)
			})
		}
	}
}

func testAppendSpliced(t *testing.T, rng *rand.Rand, o *Output, drop map[string]bool, needsTree bool) {
	tree, spliced := o.Transformer().Without(drop), o.Transformer().Without(drop)
	if (spliced.splice == nil) != needsTree {
		t.Fatalf("byte-level map %v, want %v", spliced.splice != nil, !needsTree)
	}
	if _, ok := o.SpliceProps(); ok == needsTree {
		t.Fatalf("SpliceProps ok = %v, want %v", ok, !needsTree)
	}
	if needsTree {
		if _, _, err := spliced.AppendSpliced(nil, []byte(`{"id":1}`), nil); !errors.Is(err, ErrNeedsTree) {
			t.Fatalf("AppendSpliced on a map that needs the tree: err = %v, want ErrNeedsTree", err)
		}
		return
	}
	props := spliced.splice.props
	var kept, dropped, failed, walked int
	for i := range 3000 {
		rec := buildRecord(rng, randomRecord(rng))
		vals := make([][]byte, len(props))
		for j, p := range props {
			if at, ok := rec.vals[p]; ok {
				vals[j] = rec.raw[at[0]:at[1]]
			}
		}
		want, wantKeep, wantErr := treeRecord(tree, rec.raw)
		got, gotKeep, gotErr := splicedRecord(spliced, rec.raw, vals)
		if !sameOutcome(wantErr, gotErr) || wantKeep != gotKeep {
			t.Fatalf("record %d %s: tree keep %v, err %v; spliced keep %v, err %v", i, rec.raw, wantKeep, wantErr, gotKeep, gotErr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("record %d %s (-tree +spliced):\n%s", i, rec.raw, diff)
		}
		switch {
		case wantErr != nil:
			failed++
		case !wantKeep:
			dropped++
		default:
			kept++
		}
		if wvals, ok := walkerVals(t, props, rec.raw); ok {
			walked++
			again, keep, err := splicedRecord(spliced, rec.raw, wvals)
			if fmt.Sprint(err) != fmt.Sprint(gotErr) || keep != gotKeep || !cmp.Equal(again, got) {
				t.Fatalf("record %d %s: with the walker's captures %v %v %v, with the test's %v %v %v", i, rec.raw, again, keep, err, got, gotKeep, gotErr)
			}
		}
	}
	t.Logf("kept %d, dropped %d, failed %d; %d through the walker", kept, dropped, failed, walked)
	if kept == 0 {
		t.Error("no record kept: the map is not exercised")
	}
}

// AppendSpliced refuses values that are not where the record has them:
// the caller then maps the tree.
func TestAppendSplicedNeedsTree(t *testing.T) {
	o := spliceOutput(t, spliceMaps[0].def)
	props, _ := o.SpliceProps()
	raw := []byte(`{"id":1,"email":"a@b","name":"n"}`)
	at := func(s string) []byte {
		i := strings.Index(string(raw), s)
		return raw[i : i+len(s)]
	}
	valsFor := func(m map[string][]byte) [][]byte {
		vals := make([][]byte, len(props))
		for i, p := range props {
			vals[i] = m[p]
		}
		return vals
	}
	for _, tc := range []struct {
		name string
		raw  []byte
		vals [][]byte
	}{
		{"a copy, not within the record", raw, valsFor(map[string][]byte{"id": []byte("1"), "email": []byte(`"a@b"`), "name": []byte(`"n"`)})},
		{"a value under another key", raw, valsFor(map[string][]byte{"id": at("1"), "email": at(`"a@b"`), "name": at(`"a@b"`)})},
		{"a value that is not JSON", raw, valsFor(map[string][]byte{"id": at(`1,`), "email": at(`"a@b"`), "name": at(`"n"`)})},
		{"too few values", raw, nil},
		{"not an object", []byte(`[1]`), make([][]byte, len(props))},
	} {
		if _, _, err := o.Transformer().AppendSpliced(nil, tc.raw, tc.vals); !errors.Is(err, ErrNeedsTree) {
			t.Errorf("%s: err = %v, want ErrNeedsTree", tc.name, err)
		}
	}
}

// FuzzAppendSpliced: whatever the bytes, a record the walker finds
// splicable maps from its bytes to the record its tree maps to.
func FuzzAppendSpliced(f *testing.F) {
	f.Add([]byte(`{"id":1,"email":"a@b.example","name":"n","count":3}`))
	f.Add([]byte(`{ "name" : null ,	"id":-7 }`))
	f.Add([]byte(`{"email":"\u00e9","id":2,"meta":{"email":"x"},"tags":["name"]}`))
	f.Add([]byte(`{"id":0}`))
	o := spliceOutput(f, spliceMaps[0].def)
	props, _ := o.SpliceProps()
	tree, spliced := o.Transformer(), o.Transformer()
	f.Fuzz(func(t *testing.T, raw []byte) {
		vals, ok := walkerVals(t, props, raw)
		if !ok {
			return
		}
		want, wantKeep, wantErr := treeRecord(tree, raw)
		got, gotKeep, gotErr := splicedRecord(spliced, raw, vals)
		if !sameOutcome(wantErr, gotErr) || wantKeep != gotKeep || !cmp.Equal(want, got) {
			t.Fatalf("%s: tree %v %v %v, spliced %v %v %v", raw, want, wantKeep, wantErr, got, gotKeep, gotErr)
		}
	})
}

// BenchmarkAppendSpliced maps an event of the bench's events stream with
// the bench's map (a hash, an arithmetic property, a removal).
func BenchmarkAppendSpliced(b *testing.B) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"id": map[string]any{"type": "integer"}, "ip": map[string]any{"type": []any{"null", "string"}},
		"user_agent": map[string]any{"type": []any{"null", "string"}}, "type": map[string]any{"type": []any{"null", "string"}},
	}}
	m, err := NewMapper(MapConfig{StreamMaps: map[string]any{"events": map[string]any{
		"ip": "md5(str(ip))", "id_x2": "id * 2", "user_agent": nil,
	}}}, map[string]StreamSchema{"events": {Schema: schema, KeyProperties: []string{"id"}}})
	if err != nil {
		b.Fatal(err)
	}
	tr := m.Outputs("events")[0].Transformer()
	raw := []byte(`{"id":123456,"type":"page_view","actor_id":42,"occurred_at":"2026-01-01T00:00:00Z","source":"web","ip":"10.1.2.3","user_agent":"Mozilla/5.0 (X11; Linux x86_64)","payload":{"path":"/a/b","duration_ms":12,"bytes":345,"ok":true}}`)
	vals := make([][]byte, len(tr.splice.props))
	for i, p := range tr.splice.props {
		k := bytes.Index(raw, []byte(`"`+p+`":`))
		if k < 0 {
			continue // a new property
		}
		k += len(p) + 3
		vals[i] = raw[k : k+bytes.IndexAny(raw[k:], ",}")]
	}
	var out []byte
	b.ReportAllocs()
	for b.Loop() {
		if out, _, err = tr.AppendSpliced(out[:0], raw, vals); err != nil {
			b.Fatal(err)
		}
	}
}

// smallInt agrees with strconv on what it takes, and leaves the rest to it.
func TestSmallInt(t *testing.T) {
	for _, s := range []string{"0", "-0", "7", "-12", "123456789012345678", "-123456789012345678",
		"1234567890123456789", "01", "-", "", "1.5", "1e3", "12a", "--1"} {
		n, ok := smallInt([]byte(s + " ")[:len(s)])
		want, err := strconv.ParseInt(s, 10, 64)
		wantOK := err == nil && len(strings.TrimPrefix(s, "-")) <= 18 && !strings.HasPrefix(strings.TrimPrefix(s, "-"), "0") || s == "0" || s == "-0"
		if ok != wantOK || ok && int64(n) != want {
			t.Errorf("smallInt(%q) = %d, %v; want %d, %v", s, n, ok, want, wantOK)
		}
	}
}

// One Transformer serves both paths: what the bytes path makes in its
// reused memory (a hash's hex, a record's strings read in place) never
// shows in a record the tree path made before.
func TestTreeRecordOutlivesSplicedOnes(t *testing.T) {
	tr := spliceOutput(t, spliceMaps[0].def).Transformer()
	props, _ := tr.o.SpliceProps()
	spliced := func(i int) {
		raw := []byte(fmt.Sprintf(`{"id":%d,"email":"user%d@b.example","name":"m"}`, i, i))
		vals, ok := walkerVals(t, props, raw)
		if !ok {
			t.Fatalf("%s: not walked", raw)
		}
		if _, _, err := tr.AppendSpliced(nil, raw, vals); err != nil {
			t.Fatal(err)
		}
	}
	spliced(0)
	rec, err := codec.Decode([]byte(`{"id":1,"email":"a@b.example","name":"n"}`))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := tr.Transform(rec.(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(tree)
	for i := range 100 {
		spliced(i)
	}
	if got := fmt.Sprint(tree); got != want {
		t.Errorf("the tree path's record changed: %s, was %s", got, want)
	}
}

// appendInt writes what strconv does.
func TestAppendInt(t *testing.T) {
	for _, n := range []int{0, 7, -7, 9, 10, -10, 99, 100, 123456, -246912, math.MaxInt, math.MinInt, math.MinInt + 1} {
		if got, want := string(appendInt([]byte("x"), n)), "x"+strconv.Itoa(n); got != want {
			t.Errorf("appendInt(%d) = %s, want %s", n, got, want)
		}
	}
}

// A map's integer arithmetic is exact on both paths: 10^17 × 100 and an
// id beyond int64 doubled are written digit for digit (int64 wrapped).
func TestMapIntegersAreExactOnBothPaths(t *testing.T) {
	o := spliceOutput(t, map[string]any{"id_x2": "id * 2", "n": "count * 100"})
	props, _ := o.SpliceProps()
	for _, tt := range []struct{ raw, want string }{
		{`{"id":123456789012345678901234567890,"count":100000000000000000}`,
			`{"count":100000000000000000,"id":123456789012345678901234567890,"id_x2":246913578024691357802469135780,"n":10000000000000000000}`},
		{`{"id":4611686018427387904,"count":-92233720368547759}`,
			`{"count":-92233720368547759,"id":4611686018427387904,"id_x2":9223372036854775808,"n":-9223372036854775900}`},
	} {
		want, err := codec.Decode([]byte(tt.want))
		if err != nil {
			t.Fatal(err)
		}
		tree, _, err := treeRecord(o.Transformer(), []byte(tt.raw))
		if err != nil || !cmp.Equal(tree, want) {
			t.Errorf("tree: %s → %v, %v; want %s", tt.raw, tree, err, tt.want)
		}
		vals, ok := walkerVals(t, props, []byte(tt.raw))
		if !ok {
			t.Fatalf("%s: not walked", tt.raw)
		}
		spliced, _, err := splicedRecord(o.Transformer(), []byte(tt.raw), vals)
		if err != nil || !cmp.Equal(spliced, want) {
			t.Errorf("spliced: %s → %v, %v; want %s", tt.raw, spliced, err, tt.want)
		}
	}
}
