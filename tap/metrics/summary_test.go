package metrics

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/records"
)

// The summary over fixed counters: the key=value line with the client's
// totals, each selected stream's drift report and a METRIC line per
// finding, in the streams' order, then the table as one message.
func TestSummary(t *testing.T) {
	a, b := &Stream{Name: "a"}, &Stream{Name: "b"}
	a.Records.Add(10)
	a.Pages.Add(2)
	a.Request(200)
	a.Request(200)
	a.Request(503)
	a.DeadLetters.Add(1)
	b.Records.Add(3)
	b.Pages.Add(1)
	b.Request(0)
	b.Request(200)
	st := client.Stats{Requests: 5, ByStatus: map[int]int{503: 1, 200: 3, 0: 1}, Retries: 2, Ignored: 1,
		Waits:           client.Waits{WaitSlot: time.Second, WaitBucket: 2 * time.Second, WaitRetryAfter: 3 * time.Second, WaitBackoff: 4 * time.Second, WaitBreaker: 5 * time.Second},
		RetriesByStream: map[string]int{"a": 1, "b": 1},
		ByStream:        map[string]client.Waits{"a": {WaitBucket: 1500 * time.Millisecond}, "b": {WaitBackoff: 4 * time.Second}},
	}
	rep, rec := newReporter(slog.LevelInfo, slog.LevelInfo)
	r := NewRun(rep)
	r.Add(a, true)
	r.Add(&Stream{Name: "parent"}, false) // no row, no drift, not in the total
	r.Add(b, true)
	var reported []string
	r.Summary(2500*time.Millisecond, st, 4, func(stream string) []records.Entry {
		reported = append(reported, stream)
		r.Log.Warn("schema drift: in " + stream)
		if stream != "b" {
			return nil
		}
		return []records.Entry{{Kind: "extra_property", Field: "x", Count: 2}, {Kind: "type_change", Field: "/id", Count: 1}}
	})
	got := rec.Lines()
	if len(got) == 0 {
		t.Fatal("no lines")
	}
	tableLine := got[len(got)-1]
	want := lines(`
INFO run summary records=13 seconds=2.5 requests=5 by_status=0:1,200:3,503:1 retries=2 ignored=1 wait_slot_s=1.0 wait_bucket_s=2.0 wait_retry_after_s=3.0 wait_backoff_s=4.0 wait_breaker_s=5.0 dead_letters=4
WARN schema drift: in a
WARN schema drift: in b
INFO METRIC: {"metric":"schema_drift","tags":{"endpoint":"b","field":"x","kind":"extra_property"},"type":"counter","value":2}
INFO METRIC: {"metric":"schema_drift","tags":{"endpoint":"b","field":"/id","kind":"type_change"},"type":"counter","value":1}`)
	if diff := cmp.Diff(want, got[:len(got)-1]); diff != "" {
		t.Errorf("lines before the table (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, reported); diff != "" {
		t.Errorf("drift reported for (-want +got):\n%s", diff)
	}
	table, ok := strings.CutPrefix(tableLine, "INFO run summary by stream:\n")
	if !ok {
		t.Fatalf("the last line is not the table: %q", tableLine)
	}
	tb := taptest.ReadTable(t, strings.Split(table, "\n"))
	cols := []string{"records", "pages", "requests", "no_response", "2xx", "5xx", "retries", "bucket_s", "backoff_s", "dead_letters", "drift"}
	for stream, want := range map[string][]string{
		"a":     {"10", "2", "3", "0", "2", "1", "1", "1.5", "0.0", "1", "0"},
		"b":     {"3", "1", "2", "1", "1", "0", "1", "0.0", "4.0", "0", "2"},
		"total": {"13", "3", "5", "1", "3", "1", "2", "1.5", "4.0", "1", "2"},
	} {
		var row []string
		for _, c := range cols {
			row = append(row, tb.Rows[stream][c])
		}
		if diff := cmp.Diff(want, row); diff != "" {
			t.Errorf("stream %s, columns %v (-want +got):\n%s", stream, cols, diff)
		}
	}
}

// A run without drift checks and without streams still ends with both
// lines.
func TestSummaryEmpty(t *testing.T) {
	rep, rec := newReporter(slog.LevelInfo, slog.LevelInfo)
	NewRun(rep).Summary(0, client.Stats{}, 0, nil)
	want := []string{
		"INFO run summary records=0 seconds=0.0 requests=0 by_status= retries=0 ignored=0 wait_slot_s=0.0 wait_bucket_s=0.0 wait_retry_after_s=0.0 wait_backoff_s=0.0 wait_breaker_s=0.0 dead_letters=0",
		"INFO run summary by stream:\n" + Table(nil),
	}
	if diff := cmp.Diff(want, rec.Lines()); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}
