package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/internal/taptest"
)

func TestTable(t *testing.T) {
	rows := []Row{
		{Stream: "customers", Records: 500, Pages: 5, Requests: 6, ByClass: [6]int64{2: 5, 5: 1}, Retries: 1,
			Waits: client.Waits{WaitBucket: 1250 * time.Millisecond, WaitBackoff: 300 * time.Millisecond}},
		{Stream: "orders", Records: 97, Pages: 1, Requests: 1, ByClass: [6]int64{2: 1}, DeadLetters: 3, Drift: 2},
		{Stream: "order_items", Records: 12345, Pages: 100, Requests: 101, ByClass: [6]int64{0: 1, 2: 100},
			Retries: 1, Waits: client.Waits{WaitSlot: 2 * time.Second, WaitRetryAfter: 4 * time.Second, WaitBreaker: time.Second}},
	}
	tb := taptest.ReadTable(t, strings.Split(Table(rows), "\n"))
	want := []string{"stream", "records", "pages", "requests", "no_response", "2xx", "5xx", "retries",
		"slot_s", "bucket_s", "retry_after_s", "backoff_s", "breaker_s", "dead_letters", "drift"}
	if diff := cmp.Diff(want, tb.Header); diff != "" {
		t.Errorf("header (-want +got), the classes seen only:\n%s", diff)
	}
	cell := func(stream string, values ...string) map[string]string {
		m := map[string]string{}
		for i, v := range values {
			m[want[i]] = v
		}
		m["stream"] = stream
		return m
	}
	wantRows := map[string]map[string]string{
		"customers":   cell("customers", "", "500", "5", "6", "0", "5", "1", "1", "0.0", "1.2", "0.0", "0.3", "0.0", "0", "0"),
		"orders":      cell("orders", "", "97", "1", "1", "0", "1", "0", "0", "0.0", "0.0", "0.0", "0.0", "0.0", "3", "2"),
		"order_items": cell("order_items", "", "12345", "100", "101", "1", "100", "0", "1", "2.0", "0.0", "4.0", "0.0", "1.0", "0", "0"),
		"total":       cell("total", "", "12942", "106", "108", "1", "106", "1", "2", "2.0", "1.2", "4.0", "0.3", "1.0", "3", "2"),
	}
	if diff := cmp.Diff(wantRows, tb.Rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}

	// One stream: no total row, and no request columns for classes never seen.
	one := strings.Split(Table(rows[1:2]), "\n")
	if len(one) != 2 || strings.Contains(one[0], "5xx") || strings.Contains(one[0], "no_response") {
		t.Errorf("one stream's table:\n%s", strings.Join(one, "\n"))
	}
}

// A column that is zero for every stream is left out: a quiet run's table
// is its records, pages and requests.
func TestTableDropsZeroColumns(t *testing.T) {
	rows := []Row{
		{Stream: "customers", Records: 500, Pages: 5, Requests: 5, ByClass: [6]int64{2: 5}},
		{Stream: "orders", Records: 0, Pages: 1, Requests: 1, ByClass: [6]int64{2: 1}, Waits: client.Waits{WaitBucket: 300 * time.Millisecond}},
	}
	tb := taptest.ReadTable(t, strings.Split(Table(rows), "\n"))
	want := []string{"stream", "records", "pages", "requests", "2xx", "bucket_s"}
	if diff := cmp.Diff(want, tb.Header); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
}
