package trace

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tap-dev/tap/client"
)

func TestLines(t *testing.T) {
	at := time.Date(2026, 12, 5, 4, 41, 51, 579000000, time.UTC)
	tests := []struct {
		in   client.Trace
		want string
	}{
		{client.Trace{Time: at, Stream: "items", Method: "GET", URL: "https://a.example/items?page=1", Status: 200, Bytes: 32, Duration: 1144 * time.Microsecond, Attempt: 1},
			`{"time":"2026-12-05T04:41:51.579Z","stream":"items","method":"GET","url":"https://a.example/items?page=1","status":200,"bytes":32,"ms":1.144,"attempt":1}`},
		{client.Trace{Time: at, Stream: "items", Method: "GET", URL: "https://a.example/items", Status: 200, Duration: time.Second, Attempt: 3,
			Waits: map[string]time.Duration{"backoff": 3702 * time.Microsecond, "bucket": 10 * time.Millisecond}},
			`{"time":"2026-12-05T04:41:51.579Z","stream":"items","method":"GET","url":"https://a.example/items","status":200,"bytes":0,"ms":1000,"attempt":3,"wait":{"bucket_ms":10,"backoff_ms":3.702},"wait_ms":13.702}`},
		{client.Trace{Time: at, Stream: "trades", URL: "wss://a.example/feed", Error: "timeout", Duration: 30 * time.Second, Attempt: 1},
			`{"time":"2026-12-05T04:41:51.579Z","stream":"trades","url":"wss://a.example/feed","status":0,"error":"timeout","bytes":0,"ms":30000,"attempt":1}`},
	}
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for _, tt := range tests {
		w.Attempt(tt.in)
		want += tt.want + "\n"
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("trace:\n%s\nwant:\n%s", got, want)
	}
}
