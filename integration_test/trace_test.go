package integration_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRequestTrace runs a sync whose API throttles once (429 with
// Retry-After) and fails once (503), with --trace: one line per attempt,
// as many as the run summary's requests, each with its status, attempt
// number and the wait before it by reason; the API key sent in the query
// appears in no line.
func TestRequestTrace(t *testing.T) {
	t.Parallel()
	srv, _ := reportServer(t, false)
	cfg := reportConfig(srv.URL)
	d := newTapDir(t, cfg)
	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json", "--trace", "requests.jsonl")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	raw, err := os.ReadFile(filepath.Join(d.dir, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), sentinel) {
		t.Fatalf("the trace holds the API key:\n%s", raw)
	}
	type line struct {
		Time    time.Time
		Stream  string
		Method  string
		URL     string
		Status  int
		Bytes   int64
		MS      *float64
		Attempt int
		Wait    map[string]float64
		WaitMS  float64 `json:"wait_ms"`
	}
	var lines []line
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		var l line
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("trace line %q: %v", sc.Text(), err)
		}
		if l.Time.IsZero() || l.Stream != "items" || l.Method != "GET" || l.MS == nil || !strings.Contains(l.URL, "/items?") || !strings.Contains(l.URL, "key=") {
			t.Errorf("trace line lacks a field: %s", sc.Text())
		}
		lines = append(lines, l)
	}
	var got []string
	for _, l := range lines {
		got = append(got, strconv.Itoa(l.Status)+"#"+strconv.Itoa(l.Attempt))
	}
	if want := "429#1 200#2 503#1 200#2"; strings.Join(got, " ") != want {
		t.Fatalf("attempts (status#attempt) %q, want %q", strings.Join(got, " "), want)
	}
	if ra := lines[1].Wait["retry_after_ms"]; ra < 900 || lines[1].WaitMS < ra {
		t.Errorf("the retry of the 429 waited %v (wait_ms %v), want Retry-After's second", lines[1].Wait, lines[1].WaitMS)
	}
	if _, ok := lines[3].Wait["backoff_ms"]; !ok {
		t.Errorf("the retry of the 503 has no backoff wait: %+v", lines[3])
	}
	if lines[0].Wait != nil || lines[0].Bytes != 0 && lines[1].Bytes == 0 {
		t.Errorf("the first attempt: %+v; the second: %+v", lines[0], lines[1])
	}
	// The trace agrees with the run summary.
	m := regexp.MustCompile(`run summary records=\d+ seconds=\S+ requests=(\d+)`).FindSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no run summary in stderr:\n%s", r.stderr)
	}
	if n, _ := strconv.Atoi(string(m[1])); n != len(lines) {
		t.Errorf("the summary says %d requests, the trace has %d lines", n, len(lines))
	}
}

// summaryCounts reads the run summary line's requests and by_status.
func summaryCounts(t *testing.T, stderr []byte) (int, map[string]int) {
	t.Helper()
	m := regexp.MustCompile(`run summary records=\d+ seconds=\S+ requests=(\d+) by_status=(\S*)`).FindSubmatch(stderr)
	if m == nil {
		t.Fatalf("no run summary in stderr:\n%s", stderr)
	}
	n, _ := strconv.Atoi(string(m[1]))
	by := map[string]int{}
	for _, kv := range strings.Split(string(m[2]), ",") {
		if code, count, ok := strings.Cut(kv, ":"); ok {
			by[code], _ = strconv.Atoi(count)
		}
	}
	return n, by
}

// TestTraceAndSummaryJSONAgree: on the sample config and on a throttled
// run, the trace's lines and --summary-json's requests and statuses are
// the run summary's; neither they nor the run's report hold the bearer
// token (the sample's) or the API key (sent in the query string).
func TestTraceAndSummaryJSONAgree(t *testing.T) {
	t.Parallel()
	throttled, _ := reportServer(t, false)
	dir := t.TempDir()
	sample := sampleConfig(t, dir)
	td := newTapDir(t, reportConfig(throttled.URL))
	for _, c := range []struct {
		name, dir, config string
	}{{"sample", dir, sample}, {"throttled", td.dir, "config.json"}} {
		t.Run(c.name, func(t *testing.T) {
			r := runTap(t, c.dir, 2*time.Minute, nil, "--config", c.config, "--trace", "trace.jsonl", "--summary-json", "summary.json", "--report", "report.html")
			if r.code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
			}
			requests, byStatus := summaryCounts(t, r.stderr)
			trace, err := os.ReadFile(filepath.Join(c.dir, "trace.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			traced := map[string]int{}
			for _, line := range strings.Split(strings.TrimSpace(string(trace)), "\n") {
				var l struct{ Status int }
				if err := json.Unmarshal([]byte(line), &l); err != nil {
					t.Fatal(err)
				}
				traced[strconv.Itoa(l.Status)]++
			}
			raw, err := os.ReadFile(filepath.Join(c.dir, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			var sum struct {
				ExitStatus int `json:"exit_status"`
				Total      struct {
					Requests int            `json:"requests"`
					ByStatus map[string]int `json:"requests_by_status"`
				}
				Streams map[string]struct{ Records int64 }
			}
			if err := json.Unmarshal(raw, &sum); err != nil {
				t.Fatal(err)
			}
			if sum.Total.Requests != requests || len(strings.Split(strings.TrimSpace(string(trace)), "\n")) != requests {
				t.Errorf("requests: summary %d, --summary-json %d, trace lines %d", requests, sum.Total.Requests, strings.Count(string(trace), "\n"))
			}
			if !maps.Equal(sum.Total.ByStatus, byStatus) || !maps.Equal(traced, byStatus) {
				t.Errorf("by status: summary %v, --summary-json %v, trace %v", byStatus, sum.Total.ByStatus, traced)
			}
			if sum.ExitStatus != 0 || len(sum.Streams) == 0 {
				t.Errorf("summary.json: exit %d, %d streams", sum.ExitStatus, len(sum.Streams))
			}
			page, err := os.ReadFile(filepath.Join(c.dir, "report.html"))
			if err != nil {
				t.Fatal(err)
			}
			for what, b := range map[string][]byte{"trace": trace, "summary": raw, "report": page} {
				if bytes.Contains(b, []byte(sentinel)) || bytes.Contains(b, []byte("demo-token")) {
					t.Errorf("the %s holds a secret", what)
				}
			}
		})
	}
}
