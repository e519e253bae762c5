package streams

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// The bounds of a feed's idle timeout and reconnects, the same for the
// config's feed block (the settings registry) and a stream's: a timeout
// of a nanosecond would make a ticker of zero period (a panic), one of
// centuries overflow time.Duration, and either fail every connect.
const (
	FeedIdleTimeoutMinS  = 0.001
	FeedIdleTimeoutMaxS  = 86_400
	FeedMaxReconnectsMax = 1_000_000
)

// Feed protocols.
const (
	FeedWebSocket = "websocket"
	FeedSSE       = "sse"
	FeedNDJSON    = "ndjson"
)

// What a feed does on a gap in its sequence numbers.
const (
	GapReconnect = "reconnect"
	GapBackfill  = "backfill"
	GapFail      = "fail"
)

// FromSeqVar is the placeholder of the first sequence number asked for,
// in a websocket's subscribe message.
const FromSeqVar = "{from_seq}"

// Feed makes a stream read a message feed instead of pages: numbered
// messages over a websocket, server-sent events or one long response of
// JSON lines. The tap drives it (tap/feed); this package only checks it.
type Feed struct {
	Protocol string `json:"protocol"`
	// Path is under base_url (ws(s):// follows its http(s)://); URL is
	// absolute. One of the two.
	Path string `json:"path"`
	URL  string `json:"url"`
	// Subscribe is the websocket message sent after connecting; the
	// string "{from_seq}" in it becomes the first seq asked for.
	Subscribe json.RawMessage `json:"subscribe"`
	// ResumeParam is the query parameter of an sse or ndjson request
	// carrying the first seq asked for (sse also sends Last-Event-ID).
	ResumeParam string            `json:"resume_param"`
	Params      map[string]string `json:"params"`

	SeqPath        string   `json:"seq_path"`
	TypePath       string   `json:"type_path"`
	RecordTypes    []string `json:"record_types"`
	HeartbeatTypes []string `json:"heartbeat_types"`
	EndTypes       []string `json:"end_types"`

	// IdleTimeoutS without any message is a dead connection [the
	// config's feed.idle_timeout_s]; MaxReconnects bounds the reconnects
	// of one run [feed.max_reconnects]. Nil: the config's.
	IdleTimeoutS  *float64 `json:"idle_timeout_s"`
	MaxReconnects *int     `json:"max_reconnects"`
	// StartSeq is the first seq of a run without STATE [1].
	StartSeq int64 `json:"start_seq"`

	OnGap    string        `json:"on_gap"` // [reconnect]
	Backfill *FeedBackfill `json:"backfill"`
	Stop     FeedStop      `json:"stop"`
}

// FeedBackfill names the REST stream a gap is read from, with the query
// parameters of its first and last seq (both included).
type FeedBackfill struct {
	Stream    string `json:"stream"`
	FromParam string `json:"from_param"`
	ToParam   string `json:"to_param"`
}

// FeedStop says when a batch run of a feed ends; 0 is not this rule. A
// message of end_types always ends it.
type FeedStop struct {
	AfterS     float64 `json:"after_s"`     // the run has read the feed this long
	IdleS      float64 `json:"idle_s"`      // no record (heartbeats aside) for this long
	MaxRecords int64   `json:"max_records"` // records written in this run
}

// GapRule is what the feed does on a gap.
func (f *Feed) GapRule() string {
	if f.OnGap == "" {
		return GapReconnect
	}
	return f.OnGap
}

// FirstSeq is the seq a run without STATE asks for.
func (f *Feed) FirstSeq() int64 { return max(f.StartSeq, 1) }

// checkFeed reports the first problem of d.Feed.
func (d *Definition) checkFeed() error {
	f := d.Feed
	bad := func(field, format string, args ...any) error {
		return &FieldError{Stream: d.Name, Field: "feed." + field, Msg: fmt.Sprintf(format, args...)}
	}
	switch f.Protocol {
	case FeedWebSocket, FeedSSE, FeedNDJSON:
	case "":
		return bad("protocol", "is required: \"websocket\", \"sse\" or \"ndjson\"")
	default:
		return bad("protocol", "must be \"websocket\", \"sse\" or \"ndjson\", got %q", f.Protocol)
	}
	switch {
	case f.Path == "" && f.URL == "":
		return bad("path", "is required (or feed.url), e.g. \"/v1/stream\"")
	case f.Path != "" && f.URL != "":
		return bad("url", "give feed.path or feed.url, not both")
	case f.Path != "" && !strings.HasPrefix(f.Path, "/"):
		return bad("path", "must start with \"/\" (it is under base_url), got %q", f.Path)
	}
	if f.URL != "" {
		u, err := url.Parse(f.URL)
		if err != nil || u.Host == "" {
			return bad("url", "must be an absolute URL, got %q", f.URL)
		}
		want := []string{"http", "https"}
		if f.Protocol == FeedWebSocket {
			want = []string{"ws", "wss"}
		}
		if u.Scheme != want[0] && u.Scheme != want[1] {
			return bad("url", "a %s feed needs a %s:// or %s:// URL, got %q", f.Protocol, want[0], want[1], f.URL)
		}
	}
	if len(f.Subscribe) > 0 && string(f.Subscribe) != "null" {
		if f.Protocol != FeedWebSocket {
			return bad("subscribe", "is for a websocket feed; a %s feed asks with feed.resume_param", f.Protocol)
		}
		if !json.Valid(f.Subscribe) {
			return bad("subscribe", "must be JSON")
		}
	}
	switch {
	case f.ResumeParam != "" && f.Protocol == FeedWebSocket:
		return bad("resume_param", "is for an sse or ndjson feed; a websocket feed asks with feed.subscribe")
	case f.ResumeParam == "" && f.Protocol == FeedNDJSON:
		return bad("resume_param", "is required for an ndjson feed: the query parameter carrying the first seq asked for, e.g. \"from\"")
	}
	if f.SeqPath == "" {
		return bad("seq_path", "is required: where a message holds its sequence number, e.g. \"seq\"")
	}
	if f.TypePath == "" && (len(f.RecordTypes) > 0 || len(f.HeartbeatTypes) > 0 || len(f.EndTypes) > 0) {
		return bad("type_path", "is required with record_types, heartbeat_types or end_types: where a message holds its type, e.g. \"type\"")
	}
	if v := f.IdleTimeoutS; v != nil && !(*v >= FeedIdleTimeoutMinS && *v <= FeedIdleTimeoutMaxS) {
		return bad("idle_timeout_s", "must be a number of seconds from %v to %v, got %v", FeedIdleTimeoutMinS, FeedIdleTimeoutMaxS, *v)
	}
	if v := f.MaxReconnects; v != nil && (*v < 0 || *v > FeedMaxReconnectsMax) {
		return bad("max_reconnects", "must be an integer from 0 to %d, got %d", FeedMaxReconnectsMax, *v)
	}
	if f.StartSeq < 0 {
		return bad("start_seq", "must be an integer >= 0, got %d", f.StartSeq)
	}
	switch f.OnGap {
	case "", GapReconnect, GapFail:
		if f.Backfill != nil {
			return bad("backfill", "is only read with on_gap \"backfill\", got on_gap %q", f.GapRule())
		}
	case GapBackfill:
		b := f.Backfill
		switch {
		case b == nil || b.Stream == "":
			return bad("backfill.stream", "is required with on_gap \"backfill\": the REST stream that serves a range of seqs")
		case b.Stream == d.Name:
			return bad("backfill.stream", "names the feed itself; name a REST stream")
		case b.FromParam == "" || b.ToParam == "":
			return bad("backfill", "needs from_param and to_param: the query parameters of the first and last seq of a range")
		}
	default:
		return bad("on_gap", "must be \"reconnect\", \"backfill\" or \"fail\", got %q", f.OnGap)
	}
	s := f.Stop
	switch {
	case s.AfterS < 0:
		return bad("stop.after_s", "must be a number of seconds >= 0, got %v", s.AfterS)
	case s.IdleS < 0:
		return bad("stop.idle_s", "must be a number of seconds >= 0, got %v", s.IdleS)
	case s.MaxRecords < 0:
		return bad("stop.max_records", "must be an integer >= 0, got %d", s.MaxRecords)
	}
	other := func(field, what string) error {
		return &FieldError{Stream: d.Name, Field: field, Msg: "a feed stream " + what}
	}
	switch {
	case d.Async != nil:
		return other("async", "is not a report job: give feed or async, not both")
	case d.Parent != nil:
		return other("parent", "cannot be a child stream")
	case d.GraphQL != nil:
		return other("graphql", "does not page a GraphQL connection")
	case d.Pagination.Type != "" && d.Pagination.Type != PageNone:
		return other("pagination.type", fmt.Sprintf("reads messages, not pages; remove pagination, got %q", d.Pagination.Type))
	case d.Incremental != nil || d.ReplicationKey != "":
		return other("replication_key", "keeps its place by seq (bookmarks.<stream>.seq); remove replication_key and incremental")
	case d.Format != "" && d.Format != FormatJSON:
		return other("format", fmt.Sprintf("reads JSON messages, got %q", d.Format))
	}
	return nil
}
