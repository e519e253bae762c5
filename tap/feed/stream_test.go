package feed

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"testing"

	"github.com/tap-dev/tap/streams"
)

// resolver is a Client that refuses every URL, noting what it was asked.
type resolver struct {
	raw string
	q   url.Values
}

var errRefused = errors.New("not on base_url's origin")

func (r *resolver) Resolve(raw string, q url.Values) (*url.URL, error) {
	r.raw, r.q = raw, q
	return nil, errRefused
}
func (r *resolver) Streaming() *http.Client { return http.DefaultClient }
func (r *resolver) Shown(u *url.URL) string { return u.String() }
func (r *resolver) Scrub(s string) string   { return s }

// Read asks the client for the feed's URL as an http(s) one, with the
// stream's params; a URL the client refuses is a URLError, the config's.
func TestReadResolvesTheFeedURL(t *testing.T) {
	for _, tt := range []struct {
		name string
		def  streams.Feed
		raw  string
		q    url.Values
	}{
		{"a websocket over TLS is https upgraded", streams.Feed{URL: "wss://api.example/feed"}, "https://api.example/feed", nil},
		{"a websocket is http upgraded", streams.Feed{URL: "ws://api.example/feed"}, "http://api.example/feed", nil},
		{"a path is under base_url, with its params", streams.Feed{Path: "/events", Params: map[string]string{"topic": "orders"}},
			"/events", url.Values{"topic": {"orders"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &resolver{}
			err := Read(context.Background(), Stream{Name: "s", Def: tt.def, Client: c, Log: slog.New(slog.DiscardHandler)})
			var ue *URLError
			if !errors.As(err, &ue) || !errors.Is(err, errRefused) {
				t.Fatalf("Read: %v, want a URLError wrapping the client's", err)
			}
			if c.raw != tt.raw || c.q.Encode() != tt.q.Encode() {
				t.Errorf("resolved %q ?%s, want %q ?%s", c.raw, c.q.Encode(), tt.raw, tt.q.Encode())
			}
		})
	}
}
