package demoapi

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/demoapi/dataset"
)

// Accounts is the "demo.accounts" block: a table that changes from one
// generation to the next, as a real one changes between two runs of a
// tap, in the ways an updated_since cursor cannot see. Generation 1 holds
// Count rows; each later generation h
//
//   - hard-deletes about a tenth of the rows still live (half of them
//     with a deletion event at /v1/accounts/deletions, half without: only
//     a reconcile finds those);
//   - soft-deletes another tenth (deleted: true, updated_at moves on, so
//     the cursor sees it);
//   - adds Count/10 rows, half of them written late: their updated_at is
//     older than anything of generation 1, below any bookmark, so the
//     cursor never reads them (a reconcile lists their keys and fetches
//     them by id).
//
// Like every demo row, a generation is a pure function of the config:
// bumping "generation" between two runs plays the changes.
type Accounts struct {
	Count      int `json:"count"`      // [200] rows of generation 1
	Generation int `json:"generation"` // [1]
	// ListDelayMS delays each page of a keys-only listing (a request
	// with "fields"), so that a test can stop a run in the middle of one.
	ListDelayMS int `json:"list_delay_ms"`
}

const defaultAccounts = 200

// Account is one row of the accounts table, in whatever generation.
type Account struct {
	ID        int64
	Name      string
	Plan      string
	UpdatedAt time.Time
	// Deleted is the soft delete; Gone, a hard delete (the row is no
	// longer served), with Event telling whether a deletion event says so
	// and DeletedAt when.
	Deleted   bool
	Gone      bool
	Event     bool
	DeletedAt time.Time
}

// accountsBase is the time the accounts table starts from.
func (s *Server) accountsBase() time.Time {
	return time.Unix(s.cfg.dataEnd, 0).UTC().Add(-30 * 24 * time.Hour)
}

// AccountsTable is every row the accounts table of c has held up to its
// generation, in id order: the live, the soft-deleted and the gone.
func AccountsTable(c Config) ([]Account, error) {
	s, err := New(c)
	if err != nil {
		return nil, err
	}
	return s.accounts(), nil
}

func (s *Server) accountsConfig() Accounts {
	a := Accounts{}
	if s.cfg.Accounts != nil {
		a = *s.cfg.Accounts
	}
	if a.Count == 0 {
		a.Count = defaultAccounts
	}
	if a.Generation == 0 {
		a.Generation = 1
	}
	return a
}

func (s *Server) accounts() []Account {
	a := s.accountsConfig()
	base := s.accountsBase()
	genTime := func(h int) time.Time {
		return base.Add(time.Duration(a.Count)*10*time.Minute + time.Duration(h)*24*time.Hour)
	}
	rows := make([]Account, 0, a.Count+a.Count/10*a.Generation)
	plans := []string{"free", "team", "pro"}
	add := func(id int64, at time.Time) {
		rows = append(rows, Account{ID: id, Name: fmt.Sprintf("Account %d", id), Plan: plans[id%3], UpdatedAt: at})
	}
	for i := 1; i <= a.Count; i++ {
		add(int64(i), base.Add(time.Duration(i)*10*time.Minute))
	}
	for h := 2; h <= a.Generation; h++ {
		at := genTime(h)
		for i := range rows {
			r := &rows[i]
			if r.Gone || r.Deleted {
				continue
			}
			switch x := dataset.Mix(uint64(s.cfg.Seed)<<32^uint64(r.ID)*1000+uint64(h)) % 20; {
			case x < 2:
				r.Gone, r.Event = true, x == 0
				r.DeletedAt = at.Add(time.Duration(r.ID) * time.Second)
			case x < 4:
				r.Deleted = true
				r.UpdatedAt = at.Add(time.Duration(r.ID) * time.Second)
			}
		}
		added := a.Count / 10
		next := rows[len(rows)-1].ID + 1
		for j := range added {
			id := next + int64(j)
			if j%2 == 0 {
				add(id, base.Add(-time.Duration(id)*time.Minute)) // written late
			} else {
				add(id, at.Add(time.Duration(id)*time.Second))
			}
		}
	}
	return rows
}

func (s *Server) appendAccount(b []byte, r *Account, fields []string) []byte {
	want := func(name string) bool { return fields == nil || slices.Contains(fields, name) }
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, r.ID, 10)
	if want("name") {
		b = append(b, `,"name":`...)
		b = codec.AppendString(b, r.Name)
	}
	if want("plan") {
		b = append(b, `,"plan":`...)
		b = codec.AppendString(b, r.Plan)
	}
	if want("deleted") {
		b = append(b, `,"deleted":`...)
		b = strconv.AppendBool(b, r.Deleted)
	}
	if want("updated_at") {
		b = append(b, `,"updated_at":"`...)
		b = r.UpdatedAt.AppendFormat(b, time.RFC3339)
		b = append(b, '"')
	}
	return append(b, '}')
}

// accountsList is GET /v1/accounts: page_number pagination (page,
// per_page) in id order, updated_since, and fields=a,b for a projection
// (the id always comes).
func (s *Server) accountsList(w http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	q := r.URL.Query()
	per, err := s.sizeParam(q, "per_page", 50)
	if err != nil {
		return nil, err
	}
	page, err := intParam(q, "page", 1, 1)
	if err != nil {
		return nil, err
	}
	since, err := sinceParam(q, "updated_since")
	if err != nil {
		return nil, err
	}
	var fields []string
	if f := q.Get("fields"); f != "" {
		fields = strings.Split(f, ",")
		if d := s.accountsConfig().ListDelayMS; d > 0 && !sleep(r.Context(), time.Duration(d)*time.Millisecond) {
			return nil, context.Canceled
		}
	}
	b = append(b, '[')
	skip, n := (page-1)*per, int64(0)
	for _, row := range s.accounts() {
		if row.Gone || row.UpdatedAt.Unix() < since {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if n == per {
			break
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = s.appendAccount(b, &row, fields)
		n++
	}
	return append(b, ']'), nil
}

// accountByID is GET /v1/accounts/{id}: the row, or 404 once it is gone.
func (s *Server) accountByID(w http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/v1/accounts/"), 10, 64)
	if err == nil {
		for _, row := range s.accounts() {
			if row.ID == id && !row.Gone {
				return s.appendAccount(b, &row, nil), nil
			}
		}
	}
	return nil, &apiError{status: http.StatusNotFound, msg: "account not found"}
}

// accountDeletions is GET /v1/accounts/deletions: the deletion events,
// {"data": [{"id", "account_id", "deleted_at"}], "next_cursor"}, oldest
// first, from since (deleted_at >= since), limit a page.
func (s *Server) accountDeletions(w http.ResponseWriter, r *http.Request, b []byte) ([]byte, error) {
	q := r.URL.Query()
	limit, err := s.sizeParam(q, "limit", 20)
	if err != nil {
		return nil, err
	}
	since, err := sinceParam(q, "since")
	if err != nil {
		return nil, err
	}
	from, err := intParam(q, "cursor", 0, 0)
	if err != nil {
		return nil, err
	}
	var events []Account
	for _, row := range s.accounts() {
		if row.Event && row.DeletedAt.Unix() >= since {
			events = append(events, row)
		}
	}
	slices.SortStableFunc(events, func(a, b Account) int { return a.DeletedAt.Compare(b.DeletedAt) })
	end := min(int64(len(events)), from+limit)
	b = append(b, `{"data":[`...)
	for i := from; i < end; i++ {
		if i > from {
			b = append(b, ',')
		}
		e := events[i]
		b = fmt.Appendf(b, `{"id":"del_%d","account_id":%d,"deleted_at":"%s"}`, e.ID, e.ID, e.DeletedAt.Format(time.RFC3339))
	}
	b = append(b, `],"next_cursor":`...)
	if end < int64(len(events)) {
		b = fmt.Appendf(b, `"%d"`, end)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}'), nil
}
