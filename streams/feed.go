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
	Protocol string `json:"protocol" lang:"required,enum=websocket|sse|ndjson" doc:"websocket, sse or ndjson."`
	// Path is under base_url (ws(s):// follows its http(s)://); URL is
	// absolute. One of the two.
	Path string `json:"path" doc:"The feed path under base_url (ws(s):// follows http(s)://); or url."`
	URL  string `json:"url" doc:"The absolute feed URL; or path."`
	// Subscribe is the websocket message sent after connecting; the
	// string "{from_seq}" in it becomes the first seq asked for.
	Subscribe json.RawMessage `json:"subscribe" doc:"The websocket message sent after connecting; \"{from_seq}\" in it is the first seq asked for."`
	// ResumeParam is the query parameter of an sse or ndjson request
	// carrying the first seq asked for (sse also sends Last-Event-ID).
	ResumeParam string            `json:"resume_param" doc:"The query parameter of an sse or ndjson request carrying the first seq asked for (required for ndjson)."`
	Params      map[string]string `json:"params" doc:"Query parameters of the feed request."`

	SeqPath        string   `json:"seq_path" lang:"required" eg:"\"seq\"" doc:"Where a message holds its sequence number."`
	TypePath       string   `json:"type_path" doc:"Where a message holds its type (required with the *_types options)."`
	RecordTypes    []string `json:"record_types" doc:"The message types that are records [all]."`
	HeartbeatTypes []string `json:"heartbeat_types" doc:"The message types that only say the feed is alive."`
	EndTypes       []string `json:"end_types" doc:"The message types that end the feed."`

	// IdleTimeoutS without any message is a dead connection [the
	// config's feed.idle_timeout_s]; MaxReconnects bounds the reconnects
	// of one run [feed.max_reconnects]. Nil: the config's.
	IdleTimeoutS  *float64 `json:"idle_timeout_s" lang:"min=0.001,max=86400" doc:"Seconds without any message that make a dead connection [the config's feed.idle_timeout_s]."`
	MaxReconnects *int     `json:"max_reconnects" lang:"min=0,max=1000000" doc:"The reconnects of one run at most [the config's feed.max_reconnects]."`
	// StartSeq is the first seq of a run without STATE [1].
	StartSeq int64 `json:"start_seq" lang:"min=0,default=1" doc:"The first seq of a run without STATE."`

	OnGap    string        `json:"on_gap" lang:"enum=reconnect|backfill|fail,default=reconnect" doc:"What a gap in the seqs does."`
	Backfill *FeedBackfill `json:"backfill" doc:"With on_gap backfill: the REST stream that serves a range of seqs."`
	Stop     FeedStop      `json:"stop" doc:"When a run stops reading the feed."`
}

// FeedBackfill names the REST stream a gap is read from, with the query
// parameters of its first and last seq (both included).
type FeedBackfill struct {
	Stream    string `json:"stream" doc:"The REST stream that serves a range of seqs."`
	FromParam string `json:"from_param" doc:"The query parameter of the first seq of a range."`
	ToParam   string `json:"to_param" doc:"The query parameter of the last seq of a range."`
}

// FeedStop says when a batch run of a feed ends; 0 is not this rule. A
// message of end_types always ends it.
type FeedStop struct {
	AfterS     float64 `json:"after_s" lang:"min=0" doc:"The run has read the feed this many seconds."`
	IdleS      float64 `json:"idle_s" lang:"min=0" doc:"No record (heartbeats aside) for this many seconds."`
	MaxRecords int64   `json:"max_records" lang:"min=0" doc:"Records written in this run."`
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
	switch {
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
	if f.TypePath == "" && (len(f.RecordTypes) > 0 || len(f.HeartbeatTypes) > 0 || len(f.EndTypes) > 0) {
		return bad("type_path", "is required with record_types, heartbeat_types or end_types: where a message holds its type, e.g. \"type\"")
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
	}
	return nil
}
