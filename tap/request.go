package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tap-dev/tap/tap/failure"
	"io"
	"net/http"
	"net/url"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/decoder"
)

// clientRequest is the one adapter from a stream's request to the
// client's: the request itself, an Accept header asking for format (none
// for JSON, unless the stream sets one), and what the client's limits and
// status rules need — the merged on_status rules (ignore_statuses among
// them), the stream's weight and, under a GraphQL cost budget, the query's
// cost estimate (its page size, the "first" variable of the body). The
// caller adds how the body is read (Check, Consume, Buffer).
func (m *model) clientRequest(req streams.Request, format string) client.Request {
	n := m.n
	e := n.e
	d := n.def
	r := client.Request{
		Stream: d.Name, Method: req.Method, URL: req.URL, Query: req.Query, Body: req.Body,
		Header:         decoder.WithAccept(req.Header, format),
		IgnoreStatuses: d.IgnoreStatuses,
	}
	if rules := n.model.statusRules(); rules != nil {
		r.OnStatus = rules     // the client only reads them
		r.IgnoreStatuses = nil // in the rules
	}
	if rr := d.ResponseRule; rr != nil {
		r.Classify = func(status int, h http.Header, body []byte) (client.StatusRule, bool) {
			rule, ok := rr.Rule(status, h, body)
			return failure.ClientRule(rule), ok
		}
	}
	r.Weight = max(d.Weight, 1)
	if d.GraphQL != nil && e.cfg.RateLimit.Cost.Points > 0 {
		r.Cost = graphqlFirst(r.Body)
	}
	return r
}

// graphqlFirst is the page size a GraphQL body asks for (variables.first),
// or 1 when it asks for none.
func graphqlFirst(body []byte) float64 {
	var b struct {
		Variables struct {
			First json.Number `json:"first"`
		} `json:"variables"`
	}
	if json.Unmarshal(body, &b) == nil {
		if f, err := b.Variables.First.Float64(); err == nil && f >= 1 {
			return f
		}
	}
	return 1
}

// decodeJSON is the one check of a JSON body, inside the client's retry
// loop: a body cut short (what a connection closed too early leaves,
// without a Content-Length to tell) is transient, retried like a 503;
// a whole body that is not JSON would come back the same on every
// attempt, so it fails the request at once.
func decodeJSON(b []byte) (any, error) { return decodeBody(b, codec.Decode) }

// decodeRecords is decodeJSON for a page of records, whose colliding
// property names are marked (codec.DecodeRecords).
func decodeRecords(b []byte) (any, error) { return decodeBody(b, codec.DecodeRecords) }

func decodeBody(b []byte, decode func([]byte) (any, error)) (any, error) {
	v, err := decode(b)
	if err != nil {
		if cutShort(b) {
			return nil, client.Transient(fmt.Errorf("response body is cut short: %w", err))
		}
		return nil, fmt.Errorf("response body is not JSON: %w", err)
	}
	return v, nil
}

// cutShort reports whether a body that failed to decode ends in the middle
// of a JSON document (or is empty). Anything else is a whole body that
// another attempt would only repeat.
func cutShort(b []byte) bool {
	if len(bytes.TrimSpace(b)) == 0 {
		return true
	}
	var v any
	err := json.NewDecoder(bytes.NewReader(b)).Decode(&v)
	return errors.Is(err, io.ErrUnexpectedEOF)
}

// getJSON sends req, one of a report job's own requests, and decodes its
// JSON answer.
func (m *model) getJSON(ctx context.Context, req streams.Request) (any, *url.URL, error) {
	n := m.n
	e := n.e
	var body any
	creq := n.model.clientRequest(req, streams.FormatJSON)
	// The job's own requests are not the stream's pages: the stream's
	// status rules and weight are for its pages.
	creq.IgnoreStatuses, creq.OnStatus, creq.Weight, creq.Cost = nil, nil, 0, 0
	creq.Check = func(b []byte) (err error) {
		body, err = decodeJSON(b)
		return err
	}
	resp, err := e.client.Do(ctx, creq)
	if err != nil {
		return nil, nil, err
	}
	return body, resp.URL, nil
}
