package dedupe

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

type fields map[string]string

func (f fields) Field(name string) (string, bool) { s, ok := f[name]; return s, ok }

func TestWindow(t *testing.T) {
	tests := []struct {
		name string
		key  []string
		rows []any
		want []bool // repeated
	}{
		{"a row again", []string{"id"}, []any{map[string]any{"id": json.Number("1")}, map[string]any{"id": json.Number("1")}}, []bool{false, true}},
		{"a string is not a number", []string{"id"}, []any{map[string]any{"id": json.Number("7")}, map[string]any{"id": "7"}}, []bool{false, false}},
		{"missing is not the text <nil>", []string{"id"}, []any{map[string]any{}, map[string]any{"id": "<nil>"}, map[string]any{"id": nil}, map[string]any{}}, []bool{false, false, false, true}},
		{"composite keys do not collide", []string{"a", "b"}, []any{map[string]any{"a": "x\x00y", "b": "z"}, map[string]any{"a": "x", "b": "y\x00z"}}, []bool{false, false}},
		{"a spliced row repeats a tree", []string{"id"}, []any{map[string]any{"id": "a\"b"}, fields{"id": `"a\"b"`}, fields{"id": `"c"`}, map[string]any{"id": "c"}}, []bool{false, true, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := New(tt.key, 10)
			for i, r := range tt.rows {
				got, err := w.Repeated(r)
				if err != nil {
					t.Fatal(err)
				}
				if got != tt.want[i] {
					t.Errorf("row %d: repeated %v, want %v", i, got, tt.want[i])
				}
			}
		})
	}
}

// TestWindowForgets: a row is compared with the last Pages pages only.
func TestWindowForgets(t *testing.T) {
	const page = 5
	w := New([]string{"id"}, page)
	row := func(i int) any { return map[string]any{"id": json.Number(fmt.Sprint(i))} }
	for i := range Pages * page {
		if rep, _ := w.Repeated(row(i)); rep {
			t.Fatalf("row %d: repeated", i)
		}
	}
	if rep, _ := w.Repeated(row(0)); !rep {
		t.Error("row 0, within the window: not repeated")
	}
	w.Repeated(row(Pages * page)) // pushes row 0 out
	if rep, _ := w.Repeated(row(0)); rep {
		t.Error("row 0, past the window: repeated")
	}
}

// TestWindowMemoryIsFlat: 300,000 rows hold no more than the window.
func TestWindowMemoryIsFlat(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	w := New([]string{"id"}, 100)
	rows := func(from, to int) {
		for i := from; i < to; i++ {
			w.Repeated(fields{"id": fmt.Sprint(i)})
		}
	}
	rows(0, 10_000)
	before := heap()
	rows(10_000, 300_000)
	after := heap()
	if after > before+1<<20 {
		t.Errorf("heap grew from %d to %d bytes over 290,000 rows", before, after)
	}
	if n := w.held(); n != Pages*100 || len(w.ring) != Pages*100 {
		t.Errorf("window holds %d keys (%d in the ring), want %d", n, len(w.ring), Pages*100)
	}
}

// held counts the table's occupied slots.
func (w *Window) held() int {
	n := 0
	for _, s := range w.table {
		if s.idx != 0 {
			n++
		}
	}
	return n
}

// TestWindowAgainstModel: random keys from a small set, through windows
// so small that probe runs wrap around the table and removals shift
// entries back, answer as a plain ring of the last keys does.
func TestWindowAgainstModel(t *testing.T) {
	tests := []struct {
		pageSize, keys, rows int
	}{
		{1, 6, 2_000},
		{2, 10, 5_000},
		{3, 20, 5_000},
		{5, 40, 20_000},
		{50, 300, 50_000},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("page %d, %d keys", tt.pageSize, tt.keys), func(t *testing.T) {
			w := New([]string{"id"}, tt.pageSize)
			var last []string // the model: the last keys the window took
			rnd := rand.New(rand.NewPCG(uint64(tt.pageSize), uint64(tt.keys)))
			repeats := 0
			for i := range tt.rows {
				k := fmt.Sprint(rnd.IntN(tt.keys))
				want := slices.Contains(last, k)
				got, err := w.Repeated(fields{"id": k})
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("row %d (key %s): repeated %v, want %v", i, k, got, want)
				}
				if want {
					repeats++
					continue
				}
				if last = append(last, k); len(last) > Pages*tt.pageSize {
					last = last[1:]
				}
				if n := w.held(); n != len(last) {
					t.Fatalf("row %d: table holds %d keys, want %d", i, n, len(last))
				}
			}
			if repeats == 0 || repeats == tt.rows {
				t.Errorf("%d repeats of %d rows: the test does not test both answers", repeats, tt.rows)
			}
		})
	}
}

// BenchmarkWindow is an offset walk's rows through the window: spliced
// rows keyed by an integer id, none repeated, pages of 1,000.
func BenchmarkWindow(b *testing.B) {
	rows := make([]fields, 10_000)
	for i := range rows {
		rows[i] = fields{"id": fmt.Sprint(i + 1)}
	}
	w := New([]string{"id"}, 1000)
	i := 0
	for b.Loop() {
		if _, err := w.Repeated(rows[i%len(rows)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
