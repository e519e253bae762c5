package demoapi

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/tap-dev/tap/demoapi/dataset"
)

// The GraphQL endpoint serves one Relay connection, repository.issues, the
// way GitHub's API pages it: variables first/after, edges with cursors and
// pageInfo. It does not parse GraphQL; it only checks that the query asks
// for issues, which is all a declarative tap can get wrong about it. Errors
// come back as 200 with an "errors" array, as GraphQL servers do.

type gqlRequest struct {
	Query     string         `json:"query"`
	Variables map[string]any `json:"variables"`
}

// An issue cursor is std base64 of "cursor:v2:" + the row index + a
// checksum. It names the edge, not a position, so it stays valid whatever
// since filter the next request carries.
const issueCursorPrefix = "cursor:v2:"

func (s *Server) issueCursor(i int64) string {
	var b [len(issueCursorPrefix) + 12]byte
	n := copy(b[:], issueCursorPrefix)
	binary.BigEndian.PutUint64(b[n:], uint64(i))
	binary.BigEndian.PutUint32(b[n+8:], s.checksum(dataset.Issues, b[:n+8]))
	return base64.StdEncoding.EncodeToString(b[:])
}

func (s *Server) parseIssueCursor(c string) (int64, bool) {
	b, err := base64.StdEncoding.DecodeString(c)
	n := len(issueCursorPrefix)
	if err != nil || len(b) != n+12 || string(b[:n]) != issueCursorPrefix ||
		binary.BigEndian.Uint32(b[n+8:]) != s.checksum(dataset.Issues, b[:n+8]) {
		return 0, false
	}
	i := int64(binary.BigEndian.Uint64(b[n:]))
	return i, i >= 0 && i < s.g.Count(dataset.Issues)
}

func (s *Server) graphql(w http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		return nil, &apiError{status: http.StatusBadRequest, msg: "could not read the request body: " + err.Error(), graphql: true}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var req gqlRequest
	if err := dec.Decode(&req); err != nil {
		return nil, &apiError{status: http.StatusBadRequest, msg: "Problems parsing JSON", graphql: true}
	}
	fail := func(msg string) ([]byte, error) { return appendGraphQLError(b, msg), nil }
	if strings.TrimSpace(req.Query) == "" {
		return fail("A query attribute must be specified and must be a string.")
	}
	if !strings.Contains(req.Query, "issues") {
		return fail("This API only serves repository { issues(first:, after:, since:) }; the query does not select issues.")
	}
	vars := req.Variables
	first := int64(50)
	if v := vars["first"]; v != nil {
		num, ok := v.(json.Number)
		n, err := num.Int64()
		if !ok || err != nil || n < 1 {
			return fail("Variable $first of type Int must be a positive integer, got " + string(mustJSON(v)))
		}
		first = min(n, 100)
	}
	since := int64(dataset.NoSince)
	if v := vars["since"]; v != nil {
		str, ok := v.(string)
		t, okT := parseTime(str)
		if !ok || (str != "" && !okT) {
			return fail("Variable $since of type DateTime must be an RFC 3339 time, got " + string(mustJSON(v)))
		}
		if str != "" {
			since = ceilUnix(t)
		}
	}
	view := s.g.View(dataset.Issues, since, dataset.NoBefore, s.now())
	var pos int64
	if v := vars["after"]; v != nil {
		str, ok := v.(string)
		if !ok {
			return fail("Variable $after of type String must be a string, got " + string(mustJSON(v)))
		}
		if str != "" {
			i, ok := s.parseIssueCursor(str)
			if !ok {
				return fail("`" + str + "` does not appear to be a valid cursor.")
			}
			pos = view.Rank(i + 1)
		}
	}
	total := view.Len()
	end := min(pos+first, total)
	b = append(b, `{"data":{"repository":{"issues":{"edges":[`...)
	var last int64 = -1
	for p := pos; p < end; p++ {
		if p > pos {
			b = append(b, ',')
		}
		last = view.At(p)
		b = append(b, `{"cursor":"`...)
		b = append(b, s.issueCursor(last)...)
		b = append(b, `","node":`...)
		b = s.g.AppendIssue(b, last)
		b = append(b, '}')
	}
	b = append(b, `],"pageInfo":{"hasNextPage":`...)
	b = appendBool(b, end < total)
	b = append(b, `,"endCursor":`...)
	if last < 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = append(b, s.issueCursor(last)...)
		b = append(b, '"')
	}
	return append(b, "}}}}}"...), nil
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("?")
	}
	return b
}
