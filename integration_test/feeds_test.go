package integration_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tap-dev/tap/demoapi"
)

// tradeSchema is the schema of the demo's trades.
var tradeSchema = map[string]any{"type": "object", "properties": map[string]any{
	"seq": map[string]any{"type": "integer"}, "type": map[string]any{"type": "string"}, "symbol": map[string]any{"type": "string"},
	"price": map[string]any{"type": "number"}, "size": map[string]any{"type": "integer"},
}}

var feedPaths = map[string]string{"websocket": "/v1/feed/ws", "sse": "/v1/feed/sse", "ndjson": "/v1/feed/ndjson"}

// feedStream is the trades stream read over protocol, with extra merged
// into its feed block.
func feedStream(protocol string, extra map[string]any) map[string]any {
	f := map[string]any{"protocol": protocol, "path": feedPaths[protocol], "seq_path": "seq", "type_path": "type",
		"record_types": []string{"trade"}, "heartbeat_types": []string{"heartbeat"}, "end_types": []string{"end"},
		"idle_timeout_s": 1, "max_reconnects": 5}
	if protocol == "websocket" {
		f["subscribe"] = map[string]any{"op": "subscribe", "channel": "trades", "from": "{from_seq}"}
	} else {
		f["resume_param"] = "from"
	}
	for k, v := range extra {
		f[k] = v
	}
	return map[string]any{"name": "trades", "primary_key": []string{"seq"}, "feed": f, "schema": tradeSchema}
}

// historyStream is the REST history a backfill reads.
func historyStream() map[string]any {
	return map[string]any{"name": "trade_history", "path": "/v1/trades", "records_path": "data", "primary_key": []string{"seq"}, "schema": tradeSchema}
}

var backfillBlock = map[string]any{"stream": "trade_history", "from_param": "from_seq", "to_param": "to_seq"}

// feedRun is what one run of the tap wrote of the feed stream.
type feedRun struct {
	seqs     []int64 // of the RECORD lines, in order
	stateSeq int64   // of the last STATE (-1: none)
}

// readFeedRun reads the trades records and the last STATE's seq from a
// run's stdout; a last line cut by a kill is left out, as a target would.
func readFeedRun(t *testing.T, stdout []byte) feedRun {
	t.Helper()
	r := feedRun{stateSeq: -1}
	lines := bytes.Split(stdout, []byte("\n"))
	for _, line := range lines[:len(lines)-1] {
		var m struct {
			Type   string `json:"type"`
			Stream string `json:"stream"`
			Record struct {
				Seq int64 `json:"seq"`
			} `json:"record"`
			Value struct {
				Bookmarks map[string]struct {
					Seq *int64 `json:"seq"`
				} `json:"bookmarks"`
			} `json:"value"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("stdout line is not JSON: %v: %.200s", err, line)
		}
		switch {
		case m.Type == "RECORD" && m.Stream == "trades":
			r.seqs = append(r.seqs, m.Record.Seq)
		case m.Type == "STATE":
			if b, ok := m.Value.Bookmarks["trades"]; ok && b.Seq != nil {
				r.stateSeq = *b.Seq
			}
		}
	}
	return r
}

// checkSeqs fails unless seqs is exactly from..to, in order.
func checkSeqs(t *testing.T, seqs []int64, from, to int64) {
	t.Helper()
	if int64(len(seqs)) != to-from+1 {
		t.Errorf("%d records, want seqs %d..%d (%d)", len(seqs), from, to, to-from+1)
	}
	for i, s := range seqs {
		if s != from+int64(i) {
			t.Errorf("record %d has seq %d, want %d (seqs %d..%d once each, in order)", i, s, from+int64(i), from, to)
			return
		}
	}
}

// Each fault of the demo's feeds, over each protocol, is recovered: the
// records are exactly seqs 1..N, once each and in order, and the fault is
// counted.
func TestFeedFaultsRecovered(t *testing.T) {
	t.Parallel()
	const n = 400
	faults := []struct {
		name   string
		demo   func(*demoapi.Config)
		feed   map[string]any
		metric string // the counter that must be 1
	}{
		{"lost message, reconnect", func(c *demoapi.Config) { c.FeedDrop = 150 }, nil, "feed_gaps"},
		{"lost message, backfill", func(c *demoapi.Config) { c.FeedDrop = 150 },
			map[string]any{"on_gap": "backfill", "backfill": backfillBlock}, "feed_backfilled"},
		{"silence without close", func(c *demoapi.Config) { c.FeedSilenceAfter = 200 }, nil, "feed_silences"},
		{"abrupt close", func(c *demoapi.Config) { c.FeedCloseAfter = 250 }, nil, "feed_reconnects"},
		{"duplicates after a reconnect", func(c *demoapi.Config) { c.FeedCloseAfter = 250; c.FeedReplay = 40 }, nil, "duplicates_dropped"},
	}
	for _, protocol := range []string{"websocket", "sse", "ndjson"} {
		for _, f := range faults {
			t.Run(protocol+"/"+f.name, func(t *testing.T) {
				dc := demoBase()
				dc.FeedTrades = n
				f.demo(&dc)
				srv, err := demoapi.New(dc)
				if err != nil {
					t.Fatal(err)
				}
				log := &reqLog{}
				base := serve(t, log.wrap(srv))
				d := newTapDir(t, tapConfig(base, []any{feedStream(protocol, f.feed), historyStream()}))
				r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
				d.checkSecrets(r)
				if r.code != 0 {
					t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
				}
				run := readFeedRun(t, r.stdout)
				checkSeqs(t, run.seqs, 1, n)
				if run.stateSeq != n {
					t.Errorf("last STATE has seq %d, want %d", run.stateSeq, n)
				}
				if want := f.metric + "=1"; f.metric != "duplicates_dropped" && !strings.Contains(string(r.stderr), want) {
					t.Errorf("stderr lacks %s:\n%s", want, r.stderr)
				}
				if f.metric == "duplicates_dropped" && !strings.Contains(string(r.stderr), "duplicates_dropped=40") {
					t.Errorf("stderr lacks duplicates_dropped=40:\n%s", r.stderr)
				}
				if f.metric == "feed_silences" {
					// Found within idle_timeout_s (1 s) + 1 s: the
					// reconnect comes that soon after the first connection.
					var feedReqs []loggedReq
					for _, q := range log.all() {
						if q.Path == feedPaths[protocol] {
							feedReqs = append(feedReqs, q)
						}
					}
					if len(feedReqs) != 2 {
						t.Fatalf("%d feed connections, want 2", len(feedReqs))
					}
					if gap := feedReqs[1].At.Sub(feedReqs[0].At); gap > 2*time.Second {
						t.Errorf("the silence was found %s after the connection, want within idle_timeout_s + 1 s", gap)
					}
				}
			})
		}
	}
}

// A feed mixed with paged streams in one run: both are read whole.
func TestFeedWithPagedStreams(t *testing.T) {
	t.Parallel()
	dc := demoBase()
	dc.FeedTrades = 300
	dc.FeedIntervalMS = 2 // the feed runs while the pages are read
	srv, base := startDemo(t, dc)
	streams := append([]any{feedStream("sse", nil)}, demoStreams(t, nil, "customers", "orders")...)
	d := newTapDir(t, tapConfig(base, streams))
	l := newLoader(t)
	r := d.sync(l, time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	checkSeqs(t, readFeedRun(t, r.stdout).seqs, 1, 300)
	for _, name := range []string{"customers", "orders"} {
		assertTable(t, l, name, demoKeys[name], source(t, srv, name))
	}
	if !strings.Contains(string(r.stderr), "feed_gaps") {
		t.Errorf("the summary has no feed columns:\n%s", r.stderr)
	}
}

// stop.max_records ends a batch; the next run resumes at seq + 1 exactly.
func TestFeedStopsAndResumesExactly(t *testing.T) {
	t.Parallel()
	dc := demoBase()
	dc.FeedTrades = 250
	_, base := startDemo(t, dc)
	for _, protocol := range []string{"websocket", "sse", "ndjson"} {
		t.Run(protocol, func(t *testing.T) {
			d := newTapDir(t, tapConfig(base, []any{feedStream(protocol, map[string]any{"stop": map[string]any{"max_records": 100}})}))
			l := newLoader(t)
			for i, want := range [][2]int64{{1, 100}, {101, 200}, {201, 250}} {
				r := d.sync(l, time.Minute)
				if r.code != 0 {
					t.Fatalf("run %d: exit %d; stderr:\n%s", i+1, r.code, r.stderr)
				}
				run := readFeedRun(t, r.stdout)
				checkSeqs(t, run.seqs, want[0], want[1])
				if run.stateSeq != want[1] {
					t.Errorf("run %d: last STATE has seq %d, want %d", i+1, run.stateSeq, want[1])
				}
			}
		})
	}
}

// stop.idle_s ends a run of a feed that has caught up (heartbeats only);
// stop.after_s one that goes on.
func TestFeedStopsOnTime(t *testing.T) {
	t.Parallel()
	dc := demoBase()
	dc.FeedTrades, dc.FeedNoEnd, dc.FeedHeartbeatMS = 50, true, 100
	_, base := startDemo(t, dc)
	for _, c := range []struct {
		name string
		stop map[string]any
		want string
	}{
		{"idle", map[string]any{"idle_s": 0.5}, "no record within stop.idle_s"},
		{"after", map[string]any{"after_s": 1}, "stop.after_s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newTapDir(t, tapConfig(base, []any{feedStream("ndjson", map[string]any{"stop": c.stop})}))
			start := time.Now()
			r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
			if r.code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
			}
			if !strings.Contains(string(r.stderr), c.want) {
				t.Errorf("stderr does not say why the run ended (%q):\n%s", c.want, r.stderr)
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Errorf("the run took %s", d)
			}
			run := readFeedRun(t, r.stdout)
			checkSeqs(t, run.seqs, 1, 50)
			if run.stateSeq != 50 {
				t.Errorf("last STATE has seq %d, want 50", run.stateSeq)
			}
		})
	}
}

// SIGTERM ends a feed run cleanly: its last STATE is at the last record
// written, and the next run goes on from the seq after it.
func TestFeedSIGTERM(t *testing.T) {
	t.Parallel()
	dc := demoBase()
	dc.FeedTrades, dc.FeedIntervalMS = 1000, 2
	_, base := startDemo(t, dc)
	d := newTapDir(t, tapConfig(base, []any{feedStream("websocket", nil)}))
	cmd := exec.Command(tapBin, "--config", "config.json")
	cmd.Dir = d.dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	first := readFeedRun(t, out.Bytes())
	if len(first.seqs) == 0 || len(first.seqs) == 1000 {
		t.Fatalf("%d records before SIGTERM; stderr:\n%s", len(first.seqs), errb.String())
	}
	last := first.seqs[len(first.seqs)-1]
	checkSeqs(t, first.seqs, 1, last)
	if first.stateSeq != last {
		t.Fatalf("after SIGTERM the last STATE has seq %d, the last record %d; stderr:\n%s", first.stateSeq, last, errb.String())
	}
	l := newLoader(t)
	l.feed(out.Bytes(), false)
	r := d.sync(l, time.Minute)
	if r.code != 0 {
		t.Fatalf("resumed run: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	checkSeqs(t, readFeedRun(t, r.stdout).seqs, last+1, 1000)
}

// SIGKILL at random moments of a feed run, then resume: across the runs
// every seq is written, none missing, and each run starts at the seq
// after the STATE it resumed from (so a seq is written twice only after
// a kill, past its last STATE). -long kills 20 times over each protocol.
func TestFeedKillResume(t *testing.T) {
	t.Parallel()
	kills, protocols := 5, []string{"websocket"}
	if *long {
		kills, protocols = 20, []string{"websocket", "sse", "ndjson"}
	}
	for _, protocol := range protocols {
		t.Run(protocol, func(t *testing.T) {
			const n = 4000
			dc := demoBase()
			dc.FeedTrades, dc.FeedIntervalMS = n, 1
			_, base := startDemo(t, dc)
			d := newTapDir(t, tapConfig(base, []any{feedStream(protocol, nil)}))
			l := newLoader(t)
			rng := rand.New(rand.NewPCG(31, uint64(len(protocol))))
			seen := map[int64]bool{}
			resumed := int64(0)
			for run := 1; run <= kills+1; run++ {
				var out []byte
				killed := false
				if run <= kills {
					never := make(chan struct{})
					close(never)
					k := d.syncKill(l, never, time.Duration(100+rng.IntN(400))*time.Millisecond, time.Minute, nil)
					out, killed = k.stdout, k.killed
				} else {
					r := d.sync(l, 2*time.Minute)
					if r.code != 0 {
						t.Fatalf("final run: exit %d; stderr:\n%s", r.code, r.stderr)
					}
					out = r.stdout
				}
				fr := readFeedRun(t, out)
				if len(fr.seqs) > 0 {
					checkSeqs(t, fr.seqs, resumed+1, fr.seqs[len(fr.seqs)-1])
				}
				for _, s := range fr.seqs {
					seen[s] = true
				}
				if fr.stateSeq >= 0 {
					resumed = fr.stateSeq
				}
				t.Logf("run %d: killed=%v, %d records, STATE at seq %d", run, killed, len(fr.seqs), resumed)
				if !killed && run <= kills {
					break // the feed ended before the kill
				}
			}
			for s := int64(1); s <= n; s++ {
				if !seen[s] {
					t.Fatalf("seq %d was never written (of %d)", s, n)
				}
			}
			if len(seen) != n {
				t.Errorf("%d distinct seqs written, want %d", len(seen), n)
			}
		})
	}
}

// A feed that never sends anything and a server that accepts and never
// answers are each bounded by their timeouts: the run fails with an error
// naming the stream.
func TestFeedBoundedByTimeouts(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		var held []net.Conn // accepted, never read, never answered
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	deaf := "http://" + ln.Addr().String()
	for _, c := range []struct {
		name, base, protocol, want string
	}{
		{"never sends, websocket", "", "websocket", "the feed went silent"},
		{"never sends, sse", "", "sse", "the feed went silent"},
		{"never answers, websocket", deaf, "websocket", "timeout"},
		{"never answers, ndjson", deaf, "ndjson", "timeout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.base == "" {
				dc := demoBase()
				dc.FeedMute = true // its first connection
				_, c.base = startDemo(t, dc)
			}
			cfg := tapConfig(c.base, []any{feedStream(c.protocol, map[string]any{"max_reconnects": 0})})
			cfg["request_timeout_s"] = 1
			d := newTapDir(t, cfg)
			start := time.Now()
			r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
			took := time.Since(start)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
			}
			msg := lastLine(r.stderr)
			if !strings.Contains(msg, `stream "trades"`) || !strings.Contains(msg, c.want) || !strings.Contains(msg, "max_reconnects") {
				t.Errorf("error %q: want the stream, %q and max_reconnects named", msg, c.want)
			}
			if took > 10*time.Second {
				t.Errorf("the run took %s; its timeouts are 1 s", took)
			}
		})
	}
}

// sample_feeds.json runs as it is against the embedded demo: each of its
// feeds recovers from its fault and writes its trades once each, in order.
func TestSampleFeeds(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../sample_feeds.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.json"), b)
	r := runTap(t, dir, 2*time.Minute, nil, "--config", "config.json")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	want := map[string]int64{"trades_ws": 2000, "trades_sse": 2000, "trades_ndjson": 1500}
	got := map[string][]int64{}
	for _, line := range bytes.Split(r.stdout, []byte("\n")) {
		var m struct {
			Type, Stream string
			Record       struct{ Seq int64 }
		}
		if json.Unmarshal(line, &m) == nil && m.Type == "RECORD" {
			got[m.Stream] = append(got[m.Stream], m.Record.Seq)
		}
	}
	for stream, n := range want {
		t.Run(stream, func(t *testing.T) { checkSeqs(t, got[stream], 1, n) })
	}
	if len(got["customers"]) == 0 {
		t.Error("the paged stream wrote nothing")
	}
	for _, c := range []string{"feed_gaps=1", "feed_silences=1", "duplicates_dropped="} {
		if !strings.Contains(string(r.stderr), c) {
			t.Errorf("no stream's done line has %s: a fault of the sample did not fire", c)
		}
	}
}

// A configured secret in a feed's URL never reaches stderr, not even in
// the error of a feed that gave up.
func TestFeedErrorHidesSecrets(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accepted, never answered
		}
	}()
	s := feedStream("ndjson", map[string]any{"max_reconnects": 0})
	f := s["feed"].(map[string]any)
	delete(f, "path")
	f["url"] = "http://" + ln.Addr().String() + "/v1/feed/ndjson?key=" + sentinel
	cfg := tapConfig("http://"+ln.Addr().String(), []any{s})
	cfg["request_timeout_s"] = 1
	d := newTapDir(t, cfg)
	r := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	if r.code != 1 || !strings.Contains(lastLine(r.stderr), "max_reconnects") {
		t.Fatalf("exit %d, want 1 with the feed's error; stderr:\n%s", r.code, r.stderr)
	}
	d.checkSecrets(r)
}

// A feed in Airbyte mode is offered as full_refresh: a full refresh reads
// it from its start, whatever seq the state it is given holds, so that an
// overwrite destination loses nothing before that seq. (A run by Singer's
// rules resumes after the seq, as TestFeedStopsAndResumesExactly shows.)
func TestFeedFullRefreshReadsFromTheStart(t *testing.T) {
	t.Parallel()
	dc := demoBase()
	dc.FeedTrades = 60
	_, base := startDemo(t, dc)
	d := newTapDir(t, tapConfig(base, []any{feedStream("ndjson", map[string]any{"stop": map[string]any{"max_records": 40}})}))
	writeFile(t, filepath.Join(d.dir, "catalog.json"), []byte(`{"streams": [{"stream": {"name": "trades", "json_schema": {}, "supported_sync_modes": ["full_refresh"]},
		"sync_mode": "full_refresh", "destination_sync_mode": "overwrite"}]}`))
	writeFile(t, filepath.Join(d.dir, "state.json"), []byte(`[{"type": "STREAM", "stream": {"stream_descriptor": {"name": "trades"}, "stream_state": {"seq": 20}}}]`))
	r := runTap(t, d.dir, time.Minute, nil, "read", "--config", "config.json", "--catalog", "catalog.json", "--state", "state.json")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	var seqs []int64
	for _, line := range bytes.Split(bytes.TrimSpace(r.stdout), []byte("\n")) {
		var m struct {
			Type   string
			Record struct {
				Stream string
				Data   struct{ Seq int64 }
			}
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("stdout line is not JSON: %v: %.200s", err, line)
		}
		if m.Type == "RECORD" && m.Record.Stream == "trades" {
			seqs = append(seqs, m.Record.Data.Seq)
		}
	}
	checkSeqs(t, seqs, 1, 40)
}

// `tap check` checks a feed by connecting to it (not by a GET of a first
// page, which a feed does not have): each protocol connects; a feed the
// API does not serve fails the check, naming the stream.
func TestCheckConnectsToFeeds(t *testing.T) {
	t.Parallel()
	dc := demoBase()
	dc.FeedTrades = 50
	_, base := startDemo(t, dc)
	for _, tt := range []struct {
		protocol, path, want string
	}{
		{"websocket", "", `"status":"SUCCEEDED"`},
		{"sse", "", `"status":"SUCCEEDED"`},
		{"ndjson", "", `"status":"SUCCEEDED"`},
		{"ndjson", "/v1/feed/nope", `{"message":"Connection check failed: stream \"trades\": feed: HTTP 404`},
		{"websocket", "/v1/feed/nope", `{"message":"Connection check failed: stream \"trades\": feed: HTTP 404`},
	} {
		t.Run(tt.protocol+tt.path, func(t *testing.T) {
			extra := map[string]any{}
			if tt.path != "" {
				extra["path"] = tt.path
			}
			d := newTapDir(t, tapConfig(base, []any{feedStream(tt.protocol, extra)}))
			r := runTap(t, d.dir, time.Minute, nil, "check", "--config", "config.json")
			if r.code != 0 || !bytes.Contains(r.stdout, []byte(tt.want)) {
				t.Fatalf("exit %d, stdout:\n%s\nwant %s", r.code, r.stdout, tt.want)
			}
		})
	}
}
