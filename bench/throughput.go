package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tap-dev/tap/demoapi"
)

// pageSize is the events page size of the throughput and memory scenarios
// (the demo's max_page_size).
const pageSize = 1000

// eventsDemo is the demo of the throughput and memory scenarios: n events,
// no faults, no quota.
func eventsDemo(n int) demoapi.Config {
	return demoapi.Config{Seed: 7, Events: n, MaxPageSize: pageSize}
}

// eventsConfig is the tap config of the throughput and memory scenarios:
// the events stream only, validated, unthrottled, one request at a time;
// with streamMaps when not nil.
func (b *bench) eventsConfig(name, baseURL string, streamMaps map[string]any) (string, error) {
	cfg := map[string]any{
		"base_url":             baseURL,
		"rate_limit":           map[string]any{"requests_per_second": 0, "max_in_flight": 1},
		"max_parallel_streams": 1,
		"request_timeout_s":    60,
		"on_schema_violation":  "dead_letter",
		"dead_letter_path":     filepath.Join(b.dir, name+".dead_letter.jsonl"),
		"streams":              []any{b.stream("events", pageSize)},
	}
	if streamMaps != nil {
		cfg["stream_maps"] = streamMaps
	}
	return b.writeConfig(name, cfg)
}

// runEvents runs the pinned tap on n events against a fresh demo and
// checks that it emitted every record.
func (b *bench) runEvents(ctx context.Context, n int, streamMaps map[string]any) (*tapRun, error) {
	srv, url, err := startDemo(eventsDemo(n))
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	name := fmt.Sprintf("events_%d.json", n)
	if streamMaps != nil {
		name = fmt.Sprintf("events_%d_mapped.json", n)
	}
	cfg, err := b.eventsConfig(name, url, streamMaps)
	if err != nil {
		return nil, err
	}
	return b.runPinnedTap(ctx, cfg, n, "events")
}

// runPinnedTap runs the tap on cfg pinned to its CPU and checks that it
// emitted want records.
func (b *bench) runPinnedTap(ctx context.Context, cfg string, want int, what string) (*tapRun, error) {
	// Generous: a tap at 10,000 records/s would take want/10,000 s.
	timeout := 2*time.Minute + time.Duration(want/10_000)*time.Second
	var r *tapRun
	err := b.pin.offTapCPU(func() error {
		var err error
		r, err = b.runTap(ctx, cfg, true, timeout)
		return err
	})
	if err != nil {
		return nil, err
	}
	if r.out.records != int64(want) {
		return nil, fmt.Errorf("%s: the tap emitted %d RECORD messages, want %d", what, r.out.records, want)
	}
	return r, nil
}

// throughput measures the tap and the raw baseline on n events, and
// returns the tap's run (the memory scenario's large run).
func (b *bench) throughput(ctx context.Context, rep *report, n int) (*tapRun, error) {
	const sc = "throughput"
	progress(fmt.Sprintf("throughput: tap on %s events", thousands(int64(n))))
	t, err := b.runEvents(ctx, n, nil)
	if err != nil {
		return nil, err
	}
	progress("throughput: raw baseline")
	base, err := baseline(ctx, n)
	if err != nil {
		return t, fmt.Errorf("baseline: %v", err)
	}

	tapRate := float64(n) / t.wall.Seconds()
	baseRate := float64(n) / base.wall.Seconds()
	rep.add(sc, "tap wall time", fmt.Sprintf("%.2f s", t.wall.Seconds()), "", "")
	rep.check(sc, "tap records/s", thousands(int64(tapRate)), ">= 100,000", tapRate >= 100000)
	rep.add(sc, "tap MB/s (stdout)", fmt.Sprintf("%.1f", float64(t.out.bytes)/1e6/t.wall.Seconds()), "", "")
	rep.add(sc, "tap stdout", fmt.Sprintf("%s lines, %.1f MB", thousands(t.out.lines), float64(t.out.bytes)/1e6), "", "")
	rep.add(sc, "tap CPU user+sys", fmt.Sprintf("%.2f+%.2f s (%.0f%% of wall)", t.user.Seconds(), t.sys.Seconds(),
		100*(t.user+t.sys).Seconds()/t.wall.Seconds()), "", "")
	rep.add(sc, "baseline wall time", fmt.Sprintf("%.2f s", base.wall.Seconds()), "", "")
	rep.add(sc, "baseline records/s", thousands(int64(baseRate)), "", "")
	rep.add(sc, "baseline MB/s (bodies)", fmt.Sprintf("%.1f", float64(base.out.bytes)/1e6/base.wall.Seconds()), "", "")
	// A figure, not a target: see the package doc (issue 20 replaced it).
	rep.add(sc, "tap/baseline (records/s)", fmt.Sprintf("%.2f", tapRate/baseRate), "", "")
	return t, nil
}

// baseRun is what the raw baseline measured.
type baseRun struct {
	wall time.Duration
	out  counter
}

// baseline fetches the same n events from a fresh demo with the same
// config the way the tap walks them — /v1/events?since_id=X&limit=1000,
// X the largest id of the last page, until a short page — with plain
// net/http, copying every body to a counter.
func baseline(ctx context.Context, n int) (*baseRun, error) {
	srv, url, err := startDemo(eventsDemo(n))
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{}, Timeout: time.Minute}
	defer client.CloseIdleConnections()

	r := &baseRun{}
	var body bytes.Buffer
	idKey := []byte(`{"id":`)
	records, since := 0, int64(-1) // the tap's first request has no since_id
	maxPages := n/pageSize + 2
	start := time.Now()
	for page := 0; ; page++ {
		if page >= maxPages {
			return nil, fmt.Errorf("no short page after %d pages", page)
		}
		u := url + "/v1/events?limit=" + strconv.Itoa(pageSize)
		if since >= 0 {
			u = url + "/v1/events?since_id=" + strconv.FormatInt(since, 10) + "&limit=" + strconv.Itoa(pageSize)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		body.Reset()
		_, err = io.Copy(&body, resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		data := body.Bytes()
		r.out.Write(data)
		// Every event starts with {"id": (its payload object does not), so
		// the last one holds the largest id.
		k := bytes.Count(data, idKey)
		records += k
		if k < pageSize {
			break
		}
		last := data[bytes.LastIndex(data, idKey)+len(idKey):]
		end := bytes.IndexAny(last, ",}")
		if end < 0 {
			return nil, fmt.Errorf("GET %s: cannot find the last id", u)
		}
		if since, err = strconv.ParseInt(string(last[:end]), 10, 64); err != nil {
			return nil, fmt.Errorf("GET %s: last id: %v", u, err)
		}
	}
	r.wall = time.Since(start)
	if records != n {
		return nil, fmt.Errorf("fetched %d events, want %d", records, n)
	}
	return r, nil
}
