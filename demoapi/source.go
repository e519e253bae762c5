package demoapi

import (
	"fmt"
	"time"

	"github.com/tap-dev/tap/codec"
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
			v := g.view(st, noSince, noBefore, now)
			for p := int64(0); p < v.len(); p++ {
				i := v.at(p)
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
		each = idx(stCustomers, g.appendCustomer)
	case "orders":
		each = idx(stOrders, g.appendOrder)
	case "issues":
		each = idx(stIssues, g.appendIssue)
	case "order_items":
		each = func(emit func(func([]byte) []byte)) {
			v := g.view(stOrders, noSince, noBefore, now)
			for p := int64(0); p < v.len(); p++ {
				i := v.at(p)
				for k := int64(1); k <= g.itemsCount(i); k++ {
					emit(func(b []byte) []byte {
						b = append(b, `{"order_id":`...)
						b = appendInt(b, i+1)
						b = append(b, ',')
						return append(b, g.appendItem(nil, i, k)[1:]...)
					})
				}
			}
		}
	case "events":
		each = all(g.counts[stEvents]+s.eventsExtra.Load(), func(b []byte, i int64) []byte { return g.appendEvent(b, i+1) })
	case "invoices":
		each = all(g.counts[stInvoices]+s.invoicesExtra.Load(), g.appendInvoice)
	case "tickets":
		each = all(g.counts[stTickets], g.appendTicket)
	case "bars":
		each = all(g.counts[stBars], g.appendBar)
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
		st = stCustomers
	case "orders":
		st = stOrders
	case "issues":
		st = stIssues
	default:
		return nil
	}
	g := s.g
	var out []LateRow
	for i := int64(0); i < g.counts[st]; i++ {
		lag := g.lag(st, i)
		if lag == 0 {
			continue
		}
		u := g.updatedAt(st, i)
		var id any = i + 1
		if st == stIssues {
			b := g.appendIssueID(nil, i)
			id = string(b[1 : len(b)-1])
		}
		out = append(out, LateRow{ID: id, UpdatedAt: time.Unix(u, 0).UTC(), CommittedAt: time.Unix(u+lag, 0).UTC()})
	}
	return out
}
