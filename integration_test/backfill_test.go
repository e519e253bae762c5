package integration_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// backfillDays is the span of the backfill tests: ten one-day windows.
const backfillDays = 10

var backfillStart = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func backfillDay(d int) string { return backfillStart.AddDate(0, 0, d).Format(time.RFC3339) }

// backfillRows are three rows a day over the ten days: id 10·d + k,
// updated at hour 3k of day d.
func backfillRows() []map[string]any {
	var rows []map[string]any
	for d := range backfillDays {
		for k := range 3 {
			rows = append(rows, map[string]any{"id": 10*d + k,
				"updated_at": backfillStart.AddDate(0, 0, d).Add(time.Duration(3*k) * time.Hour).Format(time.RFC3339)})
		}
	}
	return rows
}

// backfillServer serves backfillRows filtered by from (>=) and to (<), in
// pages of per_page; a request for the window starting on day bad (while
// it is >= 0) is answered with status, every time.
func backfillServer(t *testing.T, bad *atomic.Int64, status int) (string, *reqLog) {
	rows := backfillRows()
	log := &reqLog{run: 1}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		from, err1 := time.Parse(time.RFC3339, q.Get("from"))
		to, err2 := time.Parse(time.RFC3339, q.Get("to"))
		page, err3 := strconv.Atoi(q.Get("page"))
		size, err4 := strconv.Atoi(q.Get("per_page"))
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil || page < 1 || size < 1 {
			http.Error(w, `{"error": "bad query"}`, http.StatusBadRequest)
			return
		}
		if d := bad.Load(); d >= 0 && q.Get("from") == backfillDay(int(d)) {
			http.Error(w, `{"error": "this day is broken"}`, status)
			return
		}
		var in []map[string]any
		for _, row := range rows {
			at, _ := time.Parse(time.RFC3339, row["updated_at"].(string))
			if !at.Before(from) && at.Before(to) {
				in = append(in, row)
			}
		}
		lo := min((page-1)*size, len(in))
		writeJSONBody(w, map[string]any{"data": in[lo:min(lo+size, len(in))]})
	})
	return serve(t, log.wrap(h)), log
}

func backfillConfig(base string) map[string]any {
	stream := map[string]any{
		"name": "ticks", "path": "/ticks", "records_path": "data", "primary_key": []string{"id"},
		"replication_key": "updated_at",
		"incremental":     map[string]any{"param": "from", "end_param": "to", "chunk_days": 1},
		"pagination":      map[string]any{"type": "page_number", "page_param": "page", "page_size_param": "per_page", "page_size": 2},
		"schema": map[string]any{"type": "object", "properties": map[string]any{
			"id": map[string]any{"type": "integer"}, "updated_at": map[string]any{"type": "string", "format": "date-time"}}},
	}
	cfg := tapConfig(base, []any{stream})
	cfg["start_date"] = backfillDay(0)
	cfg["end_date"] = backfillDay(backfillDays)
	cfg["retry"] = map[string]any{"max_attempts": 2, "base_delay_ms": 1, "max_delay_ms": 2}
	return cfg
}

// ticksBookmark is bookmarks.ticks of the loader's state.
func ticksBookmark(t *testing.T, l *loader) map[string]any {
	t.Helper()
	b := l.stateBookmark("ticks")
	if b == nil {
		t.Fatalf("no bookmark for ticks in the state: %s", l.state)
	}
	return b
}

// windowsAsked counts a run's requests by the window they ask for (its
// day), and their pages.
func windowsAsked(log *reqLog, run int) (byDay map[int]int, pages []string) {
	byDay = map[int]int{}
	for _, r := range log.all() {
		if r.Run != run {
			continue
		}
		from, _ := time.Parse(time.RFC3339, r.Query.Get("from"))
		byDay[int(from.Sub(backfillStart).Hours()/24)]++
		pages = append(pages, r.Query.Get("from")+" page "+r.Query.Get("page"))
	}
	return byDay, pages
}

// missingDays lists the days whose three rows are not all in the table.
func missingDays(l *loader) []int {
	var out []int
	rows := l.tables["ticks"].rows
	for d := range backfillDays {
		for k := range 3 {
			if _, ok := rows["["+strconv.Itoa(10*d+k)+"]"]; !ok { // keyOf's form
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// A ten-window backfill whose fourth window fails every time: the other
// nine are read, the run exits 1, the state records the failure; a second
// run, with the window healed, asks for that window only and the bookmark
// reaches the end.
func TestBackfillFailedWindow(t *testing.T) {
	t.Parallel()
	var bad atomic.Int64
	bad.Store(3)
	base, log := backfillServer(t, &bad, http.StatusInternalServerError)
	d := newTapDir(t, backfillConfig(base))
	l := newLoader(t)

	r := d.sync(l, time.Minute)
	if r.code != 1 {
		t.Fatalf("run 1: exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	if got := missingDays(l); fmt.Sprint(got) != "[3]" {
		t.Errorf("run 1: days missing from the target: %v, want [3]", got)
	}
	byDay, _ := windowsAsked(log, 1)
	for day := range backfillDays {
		// Two pages a window; the failed one twice (in the walk, and once
		// more at the end) × two attempts, on its first page.
		if want := map[bool]int{true: 4, false: 2}[day == 3]; byDay[day] != want {
			t.Errorf("run 1: %d requests for day %d, want %d", byDay[day], day, want)
		}
	}
	b := ticksBookmark(t, l)
	fw, _ := json.Marshal(b["failed_windows"])
	if !bytes.Contains(fw, []byte(`"start":"`+backfillDay(3)+`"`)) || !bytes.Contains(fw, []byte(`"end":"`+backfillDay(4)+`"`)) ||
		!bytes.Contains(fw, []byte("500")) {
		t.Errorf("run 1: failed_windows = %s, want day 3 with its 500", fw)
	}
	if got, want := b["replication_key_value"], backfillStart.AddDate(0, 0, 2).Add(6*time.Hour).Format(time.RFC3339); got != want {
		t.Errorf("run 1: replication_key_value %v, want %s, the last row before the failed window", got, want)
	}
	if !bytes.Contains(r.stderr, []byte("INFO windows completed=9 failed=1 deferred=0 resumed=0 stream=ticks\n")) {
		t.Errorf("run 1: no windows line in the summary:\n%s", r.stderr)
	}
	if line := lastLine(r.stderr); !strings.Contains(line, "1 backfill window still failed") {
		t.Errorf("run 1: the last line does not say a window failed: %s", line)
	}

	bad.Store(-1)
	log.setRun(2)
	if r := d.sync(l, time.Minute); r.code != 0 {
		t.Fatalf("run 2: exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	} else if !bytes.Contains(r.stderr, []byte("INFO windows completed=1 failed=0 deferred=0 resumed=1 stream=ticks\n")) {
		t.Errorf("run 2: no windows line in the summary:\n%s", r.stderr)
	}
	if byDay, pages := windowsAsked(log, 2); len(byDay) != 1 || byDay[3] != 2 {
		t.Errorf("run 2 asked for %v, want the two pages of day 3 only", pages)
	}
	if got := missingDays(l); len(got) != 0 {
		t.Errorf("run 2: days missing from the target: %v", got)
	}
	b = ticksBookmark(t, l)
	if got, want := b["replication_key_value"], backfillStart.AddDate(0, 0, backfillDays-1).Add(6*time.Hour).Format(time.RFC3339); got != want {
		t.Errorf("run 2: replication_key_value %v, want %s, the last row of the backfill", got, want)
	}
	for _, k := range []string{"failed_windows", "window", "resume"} {
		if v, ok := b[k]; ok {
			t.Errorf("run 2: the bookmark keeps %s: %v", k, v)
		}
	}
}

// A window the API defers (418) is recorded and the run stops there with
// exit 75; the next run reads it first, then goes on at the next window.
func TestBackfillDeferredWindow(t *testing.T) {
	t.Parallel()
	var bad atomic.Int64
	bad.Store(5)
	base, log := backfillServer(t, &bad, http.StatusTeapot)
	d := newTapDir(t, backfillConfig(base))
	l := newLoader(t)

	r := d.sync(l, time.Minute)
	if r.code != 75 {
		t.Fatalf("run 1: exit %d, want 75; stderr:\n%s", r.code, r.stderr)
	}
	if got := missingDays(l); fmt.Sprint(got) != "[5 6 7 8 9]" {
		t.Errorf("run 1: days missing from the target: %v, want [5 6 7 8 9]", got)
	}
	if byDay, pages := windowsAsked(log, 1); byDay[5] != 1 || len(byDay) != 6 {
		t.Errorf("run 1 asked for %v: want days 0 to 4, then day 5 once, nothing after", pages)
	}
	b := ticksBookmark(t, l)
	fw, _ := json.Marshal(b["failed_windows"])
	if !bytes.Contains(fw, []byte(`"start":"`+backfillDay(5)+`"`)) || !bytes.Contains(fw, []byte("deferred")) {
		t.Errorf("run 1: failed_windows = %s, want day 5, deferred", fw)
	}
	if w, _ := b["window"].(map[string]any); w["start"] != backfillDay(6) {
		t.Errorf("run 1: window %v, want the walk's position at day 6", b["window"])
	}
	if !bytes.Contains(r.stderr, []byte("INFO windows completed=5 failed=0 deferred=1 resumed=0 stream=ticks\n")) {
		t.Errorf("run 1: no windows line in the summary:\n%s", r.stderr)
	}

	bad.Store(-1)
	log.setRun(2)
	if r := d.sync(l, time.Minute); r.code != 0 {
		t.Fatalf("run 2: exit %d, want 0; stderr:\n%s", r.code, r.stderr)
	} else if !bytes.Contains(r.stderr, []byte("INFO windows completed=5 failed=0 deferred=0 resumed=2 stream=ticks\n")) {
		t.Errorf("run 2: no windows line in the summary:\n%s", r.stderr)
	}
	var order []string
	for _, q := range log.all() {
		if q.Run == 2 && q.Query.Get("page") == "1" {
			order = append(order, q.Query.Get("from"))
		}
	}
	want := []string{backfillDay(5), backfillDay(6), backfillDay(7), backfillDay(8), backfillDay(9)}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("run 2 walked the windows %v, want %v", order, want)
	}
	if got := missingDays(l); len(got) != 0 {
		t.Errorf("run 2: days missing from the target: %v", got)
	}
}
