package output

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tap-dev/tap/internal/taptest"
)

func TestLineWriterWritesWholeLines(t *testing.T) {
	line := func(n int, c byte) string { return strings.Repeat(string(c), n-1) + "\n" }
	type msg struct {
		size  int // with the newline
		flush bool
	}
	tests := map[string]struct {
		msgs       []msg
		wantWrites int // before Flush
	}{
		"small lines stay buffered":  {msgs: []msg{{100, false}, {200, false}}, wantWrites: 0},
		"flush writes them together": {msgs: []msg{{100, false}, {200, false}, {50, true}}, wantWrites: 1},
		"a full batch is written":    {msgs: []msg{{lineBatch / 2, false}, {lineBatch / 2, false}}, wantWrites: 1},
		"a line that does not fit starts the next batch": {
			msgs: []msg{{lineBatch - 10, false}, {100, false}}, wantWrites: 1},
		"lines that straddle batches": {msgs: slices.Repeat([]msg{{3000, false}}, 30), wantWrites: 1},
		"a line larger than the batch is written alone": {
			msgs: []msg{{100, false}, {3 * lineBatch, false}, {100, false}}, wantWrites: 2},
		"a huge line flushed": {msgs: []msg{{5 * lineBatch, true}}, wantWrites: 1},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			rec := &taptest.Writes{}
			lw := newLineWriter(rec)
			var want strings.Builder
			for i, m := range tt.msgs {
				l := line(m.size, byte('a'+i%26))
				want.WriteString(l)
				if err := lw.write(m.flush, func(b []byte) []byte { return append(b, l[:len(l)-1]...) }); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(rec.Calls()); n != tt.wantWrites {
				t.Errorf("%d writes before Flush, want %d", n, tt.wantWrites)
			}
			if err := lw.Flush(); err != nil {
				t.Fatal(err)
			}
			taptest.CheckWholeLines(t, rec, lineBatch, want.String())
		})
	}
}

// Parallel streams share the writer; their lines must come out whole.
func TestLineWriterParallel(t *testing.T) {
	rec := &taptest.Writes{}
	lw := newLineWriter(rec)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				lw.write(i%500 == 0, func(b []byte) []byte {
					return fmt.Appendf(b, "g%d-%d-%s", g, i, strings.Repeat("x", i%300))
				})
			}
		})
	}
	wg.Wait()
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	all := rec.Bytes()
	taptest.CheckWholeLines(t, rec, lineBatch, string(all))
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(string(all), "\n"), "\n") {
		var g, i int
		var xs string
		if _, err := fmt.Sscanf(l, "g%d-%d-%s", &g, &i, &xs); err != nil && !strings.HasSuffix(l, "-") {
			t.Fatalf("mangled line %q: %v", l, err)
		}
		if len(l)-len(fmt.Sprintf("g%d-%d-", g, i)) != i%300 {
			t.Fatalf("line %q has the wrong length", l)
		}
		seen[l] = true
	}
	if len(seen) != 4*2000 {
		t.Fatalf("%d distinct lines, want %d", len(seen), 4*2000)
	}
}

// BenchmarkSingerRecord is the RECORD write path: a record of ~300 bytes
// wrapped, batched and written.
func BenchmarkSingerRecord(b *testing.B) {
	w := NewSinger(io.Discard)
	rec := []byte(`{"actor_id":42,"id":123456,"ip":"10.1.2.3","occurred_at":"2026-10-02T10:11:12Z","payload":{"bytes":56789,"duration_ms":1234,"ok":true,"path":"/pricing"},"source":"web","type":"page_view","user_agent":"Mozilla/5.0 (X11; Linux x86_64)"}`)
	extracted := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	for b.Loop() {
		if err := w.Record("events", rec, extracted, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(rec)))
}
