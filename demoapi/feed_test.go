package demoapi

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// seqsOf reads an NDJSON feed to its end message: the trades' seqs.
func seqsOf(t *testing.T, u string) []int64 {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var seqs []int64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var m struct {
			Type string
			Seq  int64
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a line is not JSON: %q", sc.Text())
		}
		switch m.Type {
		case "trade":
			seqs = append(seqs, m.Seq)
		case "end":
			return seqs
		}
	}
	t.Fatalf("no end message (%v)", sc.Err())
	return nil
}

// A lost message is lost once: the next connection serves it.
func TestFeedDropFiresOnce(t *testing.T) {
	_, base := start(t, Config{FeedTrades: 10, FeedDrop: 4})
	if got := seqsOf(t, base+"/v1/feed/ndjson?from=1"); len(got) != 9 || got[3] != 5 {
		t.Fatalf("first connection: %v, want 1..10 without 4", got)
	}
	if got := seqsOf(t, base+"/v1/feed/ndjson?from=4"); len(got) != 7 || got[0] != 4 {
		t.Fatalf("second connection from 4: %v, want 4..10", got)
	}
}

// The SSE feed resumes after Last-Event-ID; ids are seqs.
func TestFeedSSEResumesAfterLastEventID(t *testing.T) {
	_, base := start(t, Config{FeedTrades: 5})
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/feed/sse", nil)
	req.Header.Set("Last-Event-ID", "3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ids []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			ids = append(ids, id)
		}
		if sc.Text() == "event: end" {
			break
		}
	}
	if strings.Join(ids, ",") != "4,5" {
		t.Fatalf("ids %v, want 4,5", ids)
	}
}

// /v1/trades serves a seq range, and keyset pages with after_seq.
func TestTradesHistory(t *testing.T) {
	_, base := start(t, Config{FeedTrades: 50})
	for _, c := range []struct {
		query    string
		first, n int64
	}{
		{"from_seq=7&to_seq=9", 7, 3},
		{"after_seq=45&limit=10", 46, 5},
		{"from_seq=1&limit=4", 1, 4},
	} {
		a := mustGet(t, base+"/v1/trades?"+c.query)
		data := a.body.(map[string]any)["data"].([]any)
		if int64(len(data)) != c.n {
			t.Errorf("%s: %d trades, want %d", c.query, len(data), c.n)
			continue
		}
		for i, d := range data {
			seq, _ := d.(map[string]any)["seq"].(json.Number).Int64()
			if seq != c.first+int64(i) {
				t.Errorf("%s: trade %d has seq %d, want %d", c.query, i, seq, c.first+int64(i))
			}
		}
	}
	if a := get(t, base+"/v1/trades?from_seq=x"); a.status != http.StatusBadRequest {
		t.Errorf("from_seq=x: status %d, want 400", a.status)
	}
}
