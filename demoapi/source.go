package demoapi

import (
	"fmt"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/demoapi/dataset"
)

// Source and LateRows are the test oracle: they say what the API holds, from
// the same generators that write the pages, so a test compares what the tap
// emitted with what it should have emitted without hard-coding either.

// streamNames are the names Source accepts.
var streamNames = []string{"customers", "orders", "order_items", "events", "invoices", "tickets", "bars", "issues"}

// Source returns the rows of a stream the API would serve right now
// (visible, committed, growth included), in the stream's primary-key order,
// each a map decoded from the same JSON the API serves (numbers as
// json.Number). For order_items it returns every item of every visible
// order, in (order_id, item number) order, each with "order_id" added.
// Streams: customers, orders, order_items, events, invoices, tickets, bars,
// issues.
func (s *Server) Source(stream string) ([]map[string]any, error) {
	g := s.g
	now := s.now()
	var each func(emit func(func([]byte) []byte)) // calls emit once per row
	idx := func(st uint64, app func(b []byte, i int64) []byte) func(func(func([]byte) []byte)) {
		return func(emit func(func([]byte) []byte)) {
			v := g.View(st, dataset.NoSince, dataset.NoBefore, now)
			for p := int64(0); p < v.Len(); p++ {
				i := v.At(p)
				emit(func(b []byte) []byte { return app(b, i) })
			}
		}
	}
	all := func(n int64, app func(b []byte, i int64) []byte) func(func(func([]byte) []byte)) {
		return func(emit func(func([]byte) []byte)) {
			for i := int64(0); i < n; i++ {
				emit(func(b []byte) []byte { return app(b, i) })
			}
		}
	}
	switch stream {
	case "customers":
		each = idx(dataset.Customers, g.AppendCustomer)
	case "orders":
		each = idx(dataset.Orders, g.AppendOrder)
	case "issues":
		each = idx(dataset.Issues, g.AppendIssue)
	case "order_items":
		each = func(emit func(func([]byte) []byte)) {
			v := g.View(dataset.Orders, dataset.NoSince, dataset.NoBefore, now)
			for p := int64(0); p < v.Len(); p++ {
				i := v.At(p)
				for k := int64(1); k <= g.ItemsCount(i); k++ {
					emit(func(b []byte) []byte {
						b = append(b, `{"order_id":`...)
						b = dataset.AppendInt(b, i+1)
						b = append(b, ',')
						return append(b, g.AppendItem(nil, i, k)[1:]...)
					})
				}
			}
		}
	case "events":
		each = all(g.Count(dataset.Events)+s.eventsExtra.Load(), func(b []byte, i int64) []byte { return g.AppendEvent(b, i+1) })
	case "invoices":
		each = all(g.Count(dataset.Invoices)+s.invoicesExtra.Load(), g.AppendInvoice)
	case "tickets":
		each = all(g.Count(dataset.Tickets), g.AppendTicket)
	case "bars":
		each = all(g.Count(dataset.Bars), g.AppendBar)
	default:
		return nil, fmt.Errorf("demoapi: unknown stream %q (known: %v)", stream, streamNames)
	}

	var rows []map[string]any
	var buf []byte
	var err error
	each(func(app func([]byte) []byte) {
		if err != nil {
			return
		}
		buf = app(buf[:0])
		v, e := codec.Decode(buf)
		row, ok := v.(map[string]any)
		if e != nil || !ok {
			err = fmt.Errorf("demoapi: %s: generated a row that is not a JSON object (%v): %s", stream, e, buf)
			return
		}
		rows = append(rows, row)
	})
	if rows == nil {
		rows = []map[string]any{}
	}
	return rows, err
}

// LateRows returns the late-committing rows of stream (customers, orders or
// issues) in primary-key order, whatever Now is, so that a test can choose a
// Now between a row's UpdatedAt and CommittedAt. Other streams have none.
func (s *Server) LateRows(stream string) []LateRow {
	var st uint64
	switch stream {
	case "customers":
		st = dataset.Customers
	case "orders":
		st = dataset.Orders
	case "issues":
		st = dataset.Issues
	default:
		return nil
	}
	g := s.g
	var out []LateRow
	for i := int64(0); i < g.Count(st); i++ {
		lag := g.Lag(st, i)
		if lag == 0 {
			continue
		}
		u := g.UpdatedAt(st, i)
		var id any = i + 1
		if st == dataset.Issues {
			b := g.AppendIssueID(nil, i)
			id = string(b[1 : len(b)-1])
		}
		out = append(out, LateRow{ID: id, UpdatedAt: time.Unix(u, 0).UTC(), CommittedAt: time.Unix(u+lag, 0).UTC()})
	}
	return out
}
