package client

import (
	"context"
	"net/http"
	"net/url"
)

// Streaming returns an http.Client for long-lived answers, such as a
// feed's websocket or its one endless response: each request goes
// through the client's transport (credentials for BaseURL's origin only,
// the rate limit, the circuit breaker, Config.Timeout until the answer's
// headers), but its body is not bounded by the timeout and the in-flight
// slot is let go once the headers are in. Retries and reconnects are the
// caller's: a feed resumes from its own position, not from the request.
func (c *Client) Streaming() *http.Client {
	base := c.hc.Transport.(*transport).base
	return &http.Client{Transport: &transport{c: c, base: base, long: true}, CheckRedirect: checkRedirect}
}

type streamKey struct{}

// WithStream names the stream a Streaming request is for, in the
// client's stats and its OnAttempt hook.
func WithStream(ctx context.Context, stream string) context.Context {
	return context.WithValue(ctx, streamKey{}, stream)
}

func streamOf(ctx context.Context) string {
	s, _ := ctx.Value(streamKey{}).(string)
	return s
}

// Resolve is the absolute URL of a request path: a relative one under
// BaseURL, an absolute one as is, with q merged into its query.
func (c *Client) Resolve(raw string, q url.Values) (*url.URL, error) { return c.resolve(raw, q) }

// Shown is u as logs and errors may show it: no userinfo, credential-like
// query parameters and configured secrets masked.
func (c *Client) Shown(u *url.URL) string { return c.red.url(u) }

// Scrub masks the configured secrets in text from an API (an error body).
func (c *Client) Scrub(s string) string { return c.red.scrub(s) }
