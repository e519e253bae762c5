package client

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSession: a session login is sent as configured (method, body,
// headers, query, HTTP Basic), its token read at TokenPath is put where
// Name and In say, kept while it lasts, asked for again when Lifetime
// has passed and once after a 401; a login answer without a token is an
// error that names the path and no secret.
func TestSession(t *testing.T) {
	const password = "pw-5e77c1d2"
	for _, tt := range []struct {
		name    string
		session Session
		answer  string          // the login's JSON answer; "%d" is the login's number
		steps   []time.Duration // before each request to /data, the clock moves this much
		revoke  int             // the token of this login (1-based) is refused once (0: none)
		want    []string        // the server's log: "login <method> <body> <query> <auth>" and "data <where the token was>"
		wantErr string          // of the first request
	}{
		{name: "a JSON body, the token as a bearer",
			session: Session{Body: []byte(`{"email":"me@example.com","password":"` + password + `"}`), ContentType: "application/json", TokenPath: "accessToken"},
			answer:  `{"accessToken": "tok-%d"}`, steps: []time.Duration{0, 0},
			want: []string{`login POST {"email":"me@example.com","password":"` + password + `"}  `, "data bearer tok-1", "data bearer tok-1"}},
		{name: "a nested token in a header of its own",
			session: Session{Method: "POST", TokenPath: "data.session.id", Name: "X-Session", In: "header"},
			answer:  `{"data": {"session": {"id": "tok-%d"}}}`, steps: []time.Duration{0},
			want: []string{"login POST  ", "data header tok-1"}},
		{name: "the token in the query, after a GET login with Basic and parameters",
			session: Session{Method: "GET", Query: url.Values{"scope": {"read"}}, Username: "me", Password: password, TokenPath: "token", Name: "session_id", In: "query"},
			answer:  `{"token": "tok-%d"}`, steps: []time.Duration{0},
			want: []string{"login GET  scope=read " + "Basic " + base64.StdEncoding.EncodeToString([]byte("me:"+password)), "data query tok-1"}},
		{name: "a lifetime: a new login once it has passed",
			session: Session{TokenPath: "t", Lifetime: time.Hour},
			answer:  `{"t": "tok-%d"}`, steps: []time.Duration{0, 30 * time.Minute, 31 * time.Minute},
			want: []string{"login POST  ", "data bearer tok-1", "data bearer tok-1", "login POST  ", "data bearer tok-2"}},
		{name: "a 401: one new login",
			session: Session{TokenPath: "t"}, answer: `{"t": "tok-%d"}`, steps: []time.Duration{0, 0}, revoke: 1,
			want: []string{"login POST  ", "data bearer tok-1", "login POST  ", "data bearer tok-2", "data bearer tok-2"}},
		{name: "an answer without the token",
			session: Session{TokenPath: "access_token", Username: "me", Password: password}, answer: `{"error": "nope"}`, steps: []time.Duration{0},
			want: []string{"login POST   Basic " + base64.StdEncoding.EncodeToString([]byte("me:"+password))}, wantErr: `the login answer holds no token at "access_token"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var log []string
			logins, refused := 0, false
			srv := newServer(t, func(_ int, w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/login":
					logins++
					body, _ := io.ReadAll(r.Body)
					log = append(log, strings.TrimRight(fmt.Sprintf("login %s %s %s %s", r.Method, body, r.URL.RawQuery, r.Header.Get("Authorization")), " "))
					fmt.Fprintf(w, tt.answer, logins)
				case "/data":
					where, tok := "bearer", strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
					switch tt.session.In {
					case "header":
						where, tok = "header", r.Header.Get(tt.session.Name)
					case "query":
						where, tok = "query", r.URL.Query().Get(tt.session.Name)
					}
					log = append(log, "data "+where+" "+tok)
					if tt.revoke > 0 && tok == fmt.Sprintf("tok-%d", tt.revoke) && !refused {
						refused = true
						w.WriteHeader(http.StatusUnauthorized)
						return
					}
					fmt.Fprint(w, `{}`)
				}
			})
			red := &learnRedactor{}
			red.Add(password)
			s := tt.session
			s.URL = srv.URL + "/login"
			e := newEnv(t, srv.URL, func(c *Config) { c.Auth = Auth{Type: "session", Session: s}; c.Redactor = red })
			for i, step := range tt.steps {
				e.clock.Sleep(context.Background(), step)
				_, err := e.c.Do(context.Background(), Request{URL: "/data"})
				if i == 0 && tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), password) {
						t.Fatalf("err = %v, want one naming %q and no secret", err, tt.wantErr)
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = strings.TrimRight(w, " ")
			}
			if diff := cmp.Diff(want, log); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if tt.wantErr == "" {
				if got := red.Redact("sent tok-1"); strings.Contains(got, "tok-1") {
					t.Errorf("the session token is not redacted: %q", got)
				}
			}
		})
	}
}
