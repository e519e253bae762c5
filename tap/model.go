package tap

import (
	"context"
	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/decoder"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/failure"
	"maps"
)

// model is what a stream's definition and the catalog compile to for a
// run: its selection and validator, made at load, then its status rules,
// its paginator (the definition checked once), its page fetcher (with its
// decoder and splice reader) and the decoders of its streamed bodies,
// each built on its first use and serves every walk and every
// request of the stream after it: a child walked for 1,000 parent records
// builds them once, not 1,000 times. A node is walked by one goroutine at
// a time, so the model needs no lock.
type model struct {
	n *node // the stream it is the model of

	// From the catalog: whether the stream is written, the properties it
	// drops and whether it is read as a full table. With stream maps, the
	// stream is selected when one of the streams its maps write is.
	selected  bool
	dropped   map[string]bool
	fullTable bool

	numeric bool               // the replication key is a number, not a time
	check   *records.Validator // the record's schema, with its policy and dead letters

	statusDone bool
	onStatus   map[int]client.StatusRule // nil: no rules

	pager    streams.Paginator
	pagerErr error

	fetch    streams.Fetch
	decoders map[string]decoded

	// values are the records of the parent of a stream's parent.values
	// (engine.addStreams): its one page, fetched from no API.
	values []map[string]any
}

type decoded struct {
	dec *decoder.Decoder
	err error
}

// statusRules are n's on_status rules for the client, merged once: the
// config's on_status, the stream's ignore_statuses and its on_status.
func (m *model) statusRules() map[int]client.StatusRule {
	n := m.n
	e := n.e
	if !m.statusDone {
		m.statusDone = true
		if rules := streams.StatusRules(e.cfg.OnStatus, n.def); len(rules) > 0 {
			m.onStatus = make(map[int]client.StatusRule, len(rules))
			for code, rule := range rules {
				m.onStatus[code] = failure.ClientRule(rule)
			}
		}
	}
	return m.onStatus
}

// paginator is n's paginator, its definition checked once. Every
// paginator is an immutable value that serves any number of walks.
func (m *model) paginator() (streams.Paginator, error) {
	n := m.n
	if m.pager == nil && m.pagerErr == nil {
		m.pager, m.pagerErr = pages.New(n.def)
	}
	return m.pager, m.pagerErr
}

// fetchOf is n's page fetcher (e.fetch: the client's, or a test's), built
// once: its decoder and its splice reader serve every walk.
func (m *model) fetchOf() streams.Fetch {
	n := m.n
	e := n.e
	if m.fetch == nil && m.values != nil {
		m.fetch = func(context.Context, streams.Request) (*streams.Page, error) {
			recs := make([]any, len(m.values))
			for i, r := range m.values {
				recs[i] = maps.Clone(r) // a walk's records are its own
			}
			return &streams.Page{Records: recs}, nil
		}
	}
	if m.fetch == nil {
		m.fetch = e.fetch(n)
	}
	return m.fetch
}

// decoder returns the decoder of n's bodies in format, built once.
func (m *model) decoder(format string) (*decoder.Decoder, error) {
	n := m.n
	e := n.e
	d, ok := m.decoders[format]
	if !ok {
		d.dec, d.err = decoder.New(n.def, format, e.cfg.Schemas[n.def.Name])
		if m.decoders == nil {
			m.decoders = map[string]decoded{}
		}
		m.decoders[format] = d
	}
	return d.dec, d.err
}
