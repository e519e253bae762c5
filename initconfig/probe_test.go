package initconfig

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProbe(t *testing.T) {
	const secret = "pr0be-s3cret"
	bodies := map[string]string{
		"/link":   `[{"id": 1, "updated_at": "2026-01-01T00:00:00Z"}, {"id": 2, "updated_at": "2026-01-02T00:00:00Z"}]`,
		"/next":   `{"results": [{"id": "a"}], "links": {"next": "/next?page=2"}, "count": 9}`,
		"/cursor": `{"data": [{"id": 1}], "meta": {"next_cursor": "abc"}}`,
		"/stripe": `{"object": "list", "data": [{"id": "ch_2"}, {"id": "ch_1"}], "has_more": true}`,
		"/pages":  `{"tickets": [{"ticket_id": 7, "subject": "s"}, {"ticket_id": 8, "subject": null}], "page": 1, "total_pages": 4}`,
		"/single": `{"id": 1, "name": "not a list"}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/link" {
			w.Header().Set("Link", `<http://`+r.Host+`/link?page=2>; rel="next"`)
		}
		if r.Header.Get("Authorization") != "Bearer "+secret && r.URL.Query().Get("api_key") != secret {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		b, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(b))
	}))
	defer srv.Close()
	auth := "Authorization: Bearer " + secret
	tests := map[string]struct {
		url, header string
		want        facts
		notes       []string
		wantErr     string
	}{
		"link header":      {url: "/link?per_page=2", header: auth, want: facts{PK: "id", ReplicationKey: "updated_at", Pagination: "link_header"}, notes: []string{"replication key updated_at guessed", "set TAP_TOKEN"}},
		"next url":         {url: "/next", header: auth, want: facts{RecordsPath: "results", PK: "id", Pagination: "next_url"}, notes: []string{"links.next holds the next page's URL"}},
		"cursor":           {url: "/cursor", header: auth, want: facts{RecordsPath: "data", PK: "id", Pagination: "cursor"}, notes: []string{"sent back as the cursor parameter (guessed"}},
		"stripe has_more":  {url: "/stripe", header: auth, want: facts{RecordsPath: "data", PK: "id", Pagination: "cursor"}, notes: []string{"the next page starts after the last record's id"}},
		"page counters":    {url: "/pages?page=1&per_page=2", header: auth, want: facts{RecordsPath: "tickets", PK: "ticket_id", Pagination: "page_number"}, notes: []string{"primary key ticket_id guessed"}},
		"key in the query": {url: "/cursor?api_key=" + secret, want: facts{RecordsPath: "data", PK: "id", Pagination: "cursor"}, notes: []string{"the query parameter api_key is an API key"}},
		"not a list":       {url: "/single", header: auth, wantErr: "holds no array of objects"},
		"refused":          {url: "/cursor?api_key=wrong", wantErr: "answered 401 Unauthorized, expected a 2xx list of records"},
		"bad header":       {url: "/cursor", header: "Bearer " + secret, wantErr: `--auth-header: expected "Name: value"`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := Probe(context.Background(), srv.URL+tt.url, tt.header)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), secret) {
					t.Fatalf("err = %v, want %q without the secret", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(map[string]facts{r.Config.Streams[0].Name: tt.want}, factsOf(r)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			b, _ := r.Config.JSON()
			all := strings.Join(r.Notes, "\n")
			if strings.Contains(string(b), secret) || strings.Contains(all, secret) {
				t.Errorf("the secret is in the config or the notes:\n%s\n%s", b, all)
			}
			for _, n := range tt.notes {
				if !strings.Contains(all, n) {
					t.Errorf("no note says %q; notes:\n%s", n, all)
				}
			}
			loadsAsIs(t, r)
		})
	}
}

func TestProbeUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := Probe(context.Background(), url+"/x?token=s3cret", "")
	if err == nil || !strings.Contains(err.Error(), "is unreachable") || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("err = %v", err)
	}
}
