package demoapi

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/tap-dev/tap/demoapi/dataset"
)

// The report-style endpoints serve the invoices in other shapes than a
// JSON page, the way export and reporting APIs do:
//
//	GET  /v1/export/invoices?format=csv|jsonl|xml
//	     the whole table as one body, written as it is generated; with
//	     limit, one page from cursor, the next cursor in X-Next-Cursor;
//	     gzip=encoding (Content-Encoding) or gzip=type (application/gzip)
//	POST /v1/search/invoices  {"page": {"size": N, "after": "…"}}
//	     a cursor in the JSON body (or the X-Page-After header) → {"results", "page": {"next"}}
//	POST /v1/reports          {"polls": 3, "fail": false} → {"id", "status": "pending"}
//	GET  /v1/reports/{id}     pending for `polls` polls, then completed with
//	     two files (one relative URL, one absolute) or failed with a message
//	GET  /v1/reports/{id}/files/{k}   gzipped JSON Lines, half the invoices each

// errWritten: the handler wrote its answer itself (a streamed body).
var errWritten = errors.New("answer written")

// reportRoute maps the report endpoints.
func (s *Server) reportRoute(p string) (route, bool) {
	switch {
	case p == "/v1/export/invoices":
		return route{"export", http.MethodGet, (*Server).export}, true
	case p == "/v1/search/invoices":
		return route{"search", http.MethodPost, (*Server).search}, true
	case p == "/v1/reports":
		return route{"reports_create", http.MethodPost, (*Server).createReport}, true
	case strings.HasPrefix(p, "/v1/reports/") && strings.Contains(p, "/files/"):
		return route{"reports_file", http.MethodGet, (*Server).reportFile}, true
	case strings.HasPrefix(p, "/v1/reports/"):
		return route{"reports_poll", http.MethodGet, (*Server).pollReport}, true
	}
	return route{}, false
}

// report is one report job.
type report struct {
	polls, left int
	fail        bool
}

func (s *Server) invoiceCount() int64 {
	return s.g.Count(dataset.Invoices) + s.invoicesExtra.Load()
}

// export writes invoices [from, to) in format, as they are generated.
func (s *Server) export(w http.ResponseWriter, r *http.Request, _ []byte) ([]byte, error) {
	q := r.URL.Query()
	format := q.Get("format")
	ct := map[string]string{"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson", "xml": "application/xml"}[format]
	if ct == "" {
		return nil, badRequest("format: expected csv, jsonl or xml, got %q", format)
	}
	total := s.invoiceCount()
	if q.Has("rows") {
		n, err := intParam(q, "rows", total, 0)
		if err != nil {
			return nil, err
		}
		total = n
	}
	from, to := int64(0), total
	if q.Has("limit") {
		limit, err := s.sizeParam(q, "limit", 100)
		if err != nil {
			return nil, err
		}
		if c := q.Get("cursor"); c != "" {
			n, err := strconv.ParseInt(strings.TrimPrefix(c, "inv_"), 10, 64)
			if err != nil || !strings.HasPrefix(c, "inv_") || n < 0 {
				return nil, badRequest("cursor: not a cursor this API gave out")
			}
			from = min(n, total)
		}
		to = min(from+limit, total)
		if to < total {
			w.Header().Set("X-Next-Cursor", "inv_"+strconv.FormatInt(to, 10))
		}
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	var out io.Writer = w
	switch q.Get("gzip") {
	case "encoding":
		h.Set("Content-Encoding", "gzip")
	case "type":
		h.Set("Content-Type", "application/gzip")
	case "":
	default:
		return nil, badRequest("gzip: expected encoding or type")
	}
	if q.Get("gzip") != "" {
		zw := gzip.NewWriter(w)
		defer zw.Close()
		out = zw
	}
	s.record("export", http.StatusOK)
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(out, 64<<10)
	defer bw.Flush()
	b := make([]byte, 0, 512)
	switch format {
	case "csv":
		bw.WriteString("id,customer_id,number,total,status,issued_at\n")
	case "xml":
		bw.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<invoices>\n")
		defer bw.WriteString("</invoices>\n")
	}
	for i := from; i < to; i++ {
		b = b[:0]
		switch format {
		case "csv":
			b = s.g.AppendInvoiceCSV(b, i)
		case "jsonl":
			b = append(s.g.AppendInvoice(b, i), '\n')
		case "xml":
			b = s.g.AppendInvoiceXML(b, i)
		}
		if _, err := bw.Write(b); err != nil {
			break // the client went away
		}
	}
	return nil, errWritten
}

// search pages the invoices with a cursor sent in the JSON body
// (page.after) or in the X-Page-After header.
func (s *Server) search(_ http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	var req struct {
		Page struct {
			Size  int64  `json:"size"`
			After string `json:"after"`
		} `json:"page"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil && err != io.EOF {
		return nil, badRequest("body: expected a JSON object: %v", err)
	}
	after := req.Page.After
	if h := r.Header.Get("X-Page-After"); h != "" {
		after = h
	}
	size := req.Page.Size
	if size <= 0 {
		size = 100
	}
	size = min(size, int64(s.cfg.MaxPageSize))
	total := s.invoiceCount()
	from := int64(0)
	if after != "" {
		n, err := strconv.ParseInt(strings.TrimPrefix(after, "after_"), 10, 64)
		if err != nil || !strings.HasPrefix(after, "after_") || n < 0 {
			return nil, badRequest("page.after: not a cursor this API gave out")
		}
		from = min(n, total)
	}
	to := min(from+size, total)
	b = append(b, `{"results":[`...)
	for i := from; i < to; i++ {
		if i > from {
			b = append(b, ',')
		}
		b = s.g.AppendInvoice(b, i)
	}
	b = append(b, `],"page":{"next":`...)
	if to < total {
		b = append(append(append(b, `"after_`...), strconv.FormatInt(to, 10)...), '"')
	} else {
		b = append(b, "null"...)
	}
	return append(b, "}}"...), nil
}

// createReport starts a report job.
func (s *Server) createReport(_ http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	req := struct {
		Polls *int `json:"polls"`
		Fail  bool `json:"fail"`
	}{}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil && err != io.EOF {
		return nil, badRequest("body: expected a JSON object: %v", err)
	}
	polls := 3
	if req.Polls != nil {
		polls = max(*req.Polls, 0)
	}
	s.mu.Lock()
	if s.reports == nil {
		s.reports = map[string]*report{}
	}
	id := fmt.Sprintf("rep_%d", len(s.reports)+1)
	s.reports[id] = &report{polls: polls, left: polls, fail: req.Fail}
	s.mu.Unlock()
	return append(b, `{"id":"`+id+`","status":"pending"}`...), nil
}

// pollReport answers the status of a job: pending, then completed (or
// failed) once it has been polled as often as it was created to be.
func (s *Server) pollReport(_ http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	id := strings.TrimPrefix(r.URL.Path, "/v1/reports/")
	s.mu.Lock()
	rep := s.reports[id]
	status := ""
	if rep != nil {
		switch {
		case rep.left > 0:
			rep.left--
			status = "pending"
		case rep.fail:
			status = "failed"
		default:
			status = "completed"
		}
	}
	s.mu.Unlock()
	if rep == nil {
		return nil, &apiError{status: http.StatusNotFound, msg: "no report " + id}
	}
	b = append(b, `{"id":"`+id+`","status":"`+status+`"`...)
	switch status {
	case "failed":
		b = append(b, `,"error":{"message":"report quota exceeded for this account"}`...)
	case "completed":
		abs := "http://" + r.Host + "/v1/reports/" + id + "/files/1"
		b = append(b, `,"result":{"files":[{"url":"/v1/reports/`+id+`/files/0"},{"url":"`+abs+`"}]}`...)
	}
	return append(b, '}'), nil
}

// reportFile writes file k (0 or 1) of a completed report: half the
// invoices each, gzipped JSON Lines.
func (s *Server) reportFile(w http.ResponseWriter, r *http.Request, _ []byte) ([]byte, error) {
	rest := strings.TrimPrefix(r.URL.Path, "/v1/reports/")
	id, k, _ := strings.Cut(rest, "/files/")
	s.mu.Lock()
	rep := s.reports[id]
	done := rep != nil && rep.left == 0 && !rep.fail
	s.mu.Unlock()
	if !done || (k != "0" && k != "1") {
		return nil, &apiError{status: http.StatusNotFound, msg: "no file " + k + " in report " + id}
	}
	total := s.invoiceCount()
	from, to := int64(0), total/2
	if k == "1" {
		from, to = total/2, total
	}
	w.Header().Set("Content-Type", "application/gzip")
	s.record("reports_file", http.StatusOK)
	w.WriteHeader(http.StatusOK)
	zw := gzip.NewWriter(w)
	bw := bufio.NewWriterSize(zw, 64<<10)
	b := make([]byte, 0, 512)
	for i := from; i < to; i++ {
		b = append(s.g.AppendInvoice(b[:0], i), '\n')
		if _, err := bw.Write(b); err != nil {
			break
		}
	}
	bw.Flush()
	zw.Close()
	return nil, errWritten
}
