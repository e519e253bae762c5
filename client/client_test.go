package client

import (
	"github.com/tap-dev/tap/client/limit"

	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

const secret = "s3cr3t-T0ken/+="

// Credentials reach BaseURL's origin only; errors and logs never show them.
func TestAuth(t *testing.T) {
	tests := []struct {
		name   string
		auth   Auth
		hasIt  func(r *http.Request) bool
		noneOf func(r *http.Request) bool
	}{
		{"bearer", Auth{Type: "bearer", Token: secret},
			func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+secret }, nil},
		{"basic", Auth{Type: "basic", Username: "me", Password: secret},
			func(r *http.Request) bool { u, p, ok := r.BasicAuth(); return ok && u == "me" && p == secret }, nil},
		{"api_key header", Auth{Type: "api_key", Name: "X-Api-Key", Value: secret},
			func(r *http.Request) bool { return r.Header.Get("X-Api-Key") == secret }, nil},
		{"api_key query", Auth{Type: "api_key", Name: "api_key", Value: secret, In: "query"},
			func(r *http.Request) bool {
				return r.URL.Query().Get("api_key") == secret && r.URL.Query().Get("page") == "2"
			}, nil},
		{"api_key query custom name", Auth{Type: "api_key", Name: "appid", Value: secret, In: "query"},
			func(r *http.Request) bool { return r.URL.Query().Get("appid") == secret }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			flaky := 0
			main := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/fail" {
					w.WriteHeader(401)
					io.WriteString(w, `{"message":"token `+secret+` is not valid"}`)
					return
				}
				if r.URL.Path == "/flaky" && flaky == 0 {
					flaky++
					w.WriteHeader(503)
					return
				}
				io.WriteString(w, "{}")
			})
			other := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/redirect" {
					http.Redirect(w, r, main.URL+"/after-redirect?page=2", http.StatusFound)
					return
				}
				w.WriteHeader(500)
				io.WriteString(w, `{"message":"boom"}`)
			})
			e := newEnv(t, main.URL, func(c *Config) {
				c.Auth = tt.auth
				c.Headers = map[string]string{"User-Agent": "tap-test", "X-Session-Token": "hdr-" + secret}
				c.MaxAttempts = 2
				// What the tap's redactor knows: the secret in the forms it
				// takes on the wire.
				c.Redactor = secretsRedactor{secret, url.QueryEscape(secret), url.PathEscape(secret),
					base64.StdEncoding.EncodeToString([]byte("me:" + secret))}
			})
			ctx := context.Background()
			var errs []string
			if _, err := e.c.Do(ctx, Request{Stream: "s", URL: "/ok?page=2"}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.c.Do(ctx, Request{Stream: "s", URL: "/flaky?token=abc"}); err != nil {
				t.Fatal(err)
			}
			_, err := e.c.Do(ctx, Request{Stream: "s", URL: "/fail?page=2"})
			if err == nil {
				t.Fatal("want an error")
			}
			errs = append(errs, err.Error())
			// Another host: no credentials, even when asked to send our key.
			name := tt.auth.Name
			if name == "" {
				name = "access"
			}
			_, err = e.c.Do(ctx, Request{Stream: "s", URL: other.URL + "/elsewhere?" + url.Values{name: {secret}, "page": {"2"}}.Encode()})
			if err == nil {
				t.Fatal("want an error")
			}
			errs = append(errs, err.Error())
			// A redirect from another host back to ours gets credentials again.
			if _, err := e.c.Do(ctx, Request{Stream: "s", URL: other.URL + "/redirect"}); err != nil {
				t.Fatal(err)
			}

			if r := main.Request(0); !tt.hasIt(r) || r.Header.Get("User-Agent") != "tap-test" || r.Header.Get("X-Session-Token") == "" {
				t.Errorf("BaseURL did not get the credentials: %v %v", r.Header, r.URL)
			}
			for i := range main.Hits() {
				if r := main.Request(i); !tt.hasIt(r) && r.URL.Path != "/flaky" && r.URL.Path != "/fail" {
					t.Errorf("request %d to BaseURL (%s) lacks credentials", i, r.URL)
				}
			}
			for i := range other.Hits() {
				r := other.Request(i)
				if strings.Contains(r.URL.RawQuery+dumpHeader(r.Header), secret) ||
					strings.Contains(r.URL.RawQuery, url.QueryEscape(secret)) ||
					r.Header.Get("Authorization") != "" || r.Header.Get("X-Session-Token") != "" {
					t.Errorf("credentials sent to another host: %s %v", r.URL, r.Header)
				}
				if r.Header.Get("User-Agent") == "tap-test" {
					t.Errorf("default headers sent to another host")
				}
			}
			logs := e.log.String()
			for _, s := range append(errs, logs) {
				for _, leak := range []string{secret, url.QueryEscape(secret), base64.StdEncoding.EncodeToString([]byte("me:" + secret))} {
					if strings.Contains(s, leak) {
						t.Errorf("secret leaked in %q", s)
					}
				}
			}
			if !strings.Contains(errs[0], "token REDACTED is not valid") || !strings.Contains(logs, "token=REDACTED") {
				t.Errorf("errors %q\nlogs %s", errs, logs)
			}
		})
	}
}

func dumpHeader(h http.Header) string {
	var b strings.Builder
	h.Write(&b)
	return b.String()
}

func TestRedact(t *testing.T) {
	r := newRedactor(Auth{Type: "api_key", Name: "AppID", Value: "topsecretvalue", In: "query"}, secretsRedactor{"topsecretvalue"})
	tests := []struct{ in, want string }{
		{"https://user:pw@api.example.com/v1/x?limit=10", "https://api.example.com/v1/x?limit=10"},
		{"https://api.example.com/v1/x?token=abc&limit=10", "https://api.example.com/v1/x?token=REDACTED&limit=10"},
		{"https://h/p?ACCESS_TOKEN=a&Api_Key=b&apikey=c&key=d&secret=e&password=f&signature=g&sig=h&client_secret=i",
			"https://h/p?ACCESS_TOKEN=REDACTED&Api_Key=REDACTED&apikey=REDACTED&key=REDACTED&secret=REDACTED&password=REDACTED&signature=REDACTED&sig=REDACTED&client_secret=REDACTED"},
		{"https://h/p?appid=xyz&q=1", "https://h/p?appid=REDACTED&q=1"},
		{"https://h/p?X-Amz-Signature=abc&X-Amz-Date=1", "https://h/p?X-Amz-Signature=REDACTED&X-Amz-Date=1"},
		{"https://h/p?cursor=topsecretvalue", "https://h/p?cursor=REDACTED"},
		{"https://h/keys/topsecretvalue/x", "https://h/keys/REDACTED/x"},
		{"https://h/p?tokens=1&monkey=2", "https://h/p?tokens=1&monkey=2"},
		{"https://h/p#frag", "https://h/p"},
		{"https://h", "https://h/"},
	}
	for _, tt := range tests {
		u := mustURL(t, tt.in)
		if got := r.url(u); got != tt.want {
			t.Errorf("url(%s)\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
	if got := r.pathQuery(mustURL(t, "https://u:p@h/v1/o?key=1&a=b")); got != "/v1/o?key=REDACTED&a=b" {
		t.Errorf("pathQuery = %s", got)
	}
}

func TestNewValidation(t *testing.T) {
	base := mustURL(t, "https://api.example.com")
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{}, "client: Config.BaseURL must be"},
		{Config{BaseURL: mustURL(t, "ftp://x")}, "client: Config.BaseURL must be"},
		{Config{BaseURL: mustURL(t, "https://u:p@x")}, "client: Config.BaseURL must be"},
		{withSettings(Config{BaseURL: base, Limit: limit.Config{Burst: -1}}), "client: Config.Limit.Burst must be >= 1"},
		{withSettings(Config{BaseURL: base, Limit: limit.Config{MaxInFlight: -2}}), "client: Config.Limit.MaxInFlight must be >= 1"},
		{withSettings(Config{BaseURL: base, Limit: limit.Config{RequestsPerSecond: -1}}), "client: Config.Limit.RequestsPerSecond must be >= 0"},
		{withSettings(Config{BaseURL: base, Limit: limit.Config{DailyQuota: -1}}), "client: Config.Limit.DailyQuota must be >= 0"},
		{withSettings(Config{BaseURL: base, MaxAttempts: -1}), "client: Config.MaxAttempts must be >= 1"},
		{withSettings(Config{BaseURL: base, BaseDelay: -time.Second}), "client: Config.BaseDelay must be > 0"},
		{withSettings(Config{BaseURL: base, BaseDelay: time.Minute}), "client: Config.MaxDelay (30s) must be >= Config.BaseDelay"},
		{withSettings(Config{BaseURL: base, Limit: limit.Config{MaxRetryAfter: -1}}), "client: Config.Limit.MaxRetryAfter must be > 0"},
		{withSettings(Config{BaseURL: base, Timeout: -1}), "client: Config.Timeout must be > 0"},
		{withSettings(Config{BaseURL: base, Auth: Auth{Type: "oauth"}}), `client: Config.Auth.Type must be none, bearer, basic, api_key, oauth2, jwt or session, got "oauth"`},
		{withSettings(Config{BaseURL: base, Auth: Auth{Type: "api_key", Name: "k", Value: "v", In: "body"}}), "client: Config.Auth.In must be header or query"},
		{withSettings(Config{BaseURL: base}), ""},
		{withSettings(Config{BaseURL: base, Auth: Auth{Type: "none"}, Limit: limit.Config{Burst: 3}}), ""},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg)
		if tt.want == "" {
			if err != nil {
				t.Errorf("New: %v", err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("New: err %v, want %q", err, tt.want)
		}
	}
	// The client takes the settings whole: their defaults are the
	// registry's (package settings), written nowhere else.
	for _, tt := range []struct {
		unset func(*Config)
		want  string
	}{
		{func(c *Config) { c.Limit.Burst = 0 }, "client: Config.Limit.Burst must be >= 1, got 0"},
		{func(c *Config) { c.Limit.MaxInFlight = 0 }, "client: Config.Limit.MaxInFlight must be >= 1, got 0"},
		{func(c *Config) { c.Limit.MaxRetryAfter = 0 }, "client: Config.Limit.MaxRetryAfter must be > 0, got 0s"},
		{func(c *Config) { c.MaxAttempts = 0 }, "client: Config.MaxAttempts must be >= 1, got 0"},
		{func(c *Config) { c.BaseDelay = 0 }, "client: Config.BaseDelay must be > 0, got 0s"},
		{func(c *Config) { c.MaxDelay = 0 }, "client: Config.MaxDelay must be > 0, got 0s"},
		{func(c *Config) { c.Timeout = 0 }, "client: Config.Timeout must be > 0, got 0s"},
		{func(c *Config) { c.BreakerThreshold = 0 }, "client: Config.BreakerThreshold must be >= 1, got 0"},
		{func(c *Config) { c.BreakerCooldown = 0 }, "client: Config.BreakerCooldown must be > 0, got 0s"},
		{func(c *Config) { c.BreakerMaxOpenings = 0 }, "client: Config.BreakerMaxOpenings must be >= 1, got 0"},
	} {
		cfg := withSettings(Config{BaseURL: base})
		tt.unset(&cfg)
		if _, err := New(cfg); err == nil || err.Error() != tt.want {
			t.Errorf("New with a setting left zero: err %v, want %q", err, tt.want)
		}
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		base, ref string
		q         url.Values
		want      string
	}{
		{"https://api.example.com", "/v1/orders", nil, "https://api.example.com/v1/orders"},
		{"https://api.example.com/api/", "/v1/orders", nil, "https://api.example.com/api/v1/orders"},
		{"https://api.example.com/api", "v1/orders?x=1", url.Values{"limit": {"100"}}, "https://api.example.com/api/v1/orders?limit=100&x=1"},
		{"https://api.example.com", "/v1/a%2Fb", nil, "https://api.example.com/v1/a%2Fb"},
		{"https://api.example.com", "https://cdn.example.com/next?cursor=a%3D%3D&z=1", nil, "https://cdn.example.com/next?cursor=a%3D%3D&z=1"},
		{"https://api.example.com", "/x?limit=5", url.Values{"limit": {"100"}}, "https://api.example.com/x?limit=100"},
		{"https://api.example.com/base", "", nil, "https://api.example.com/base"},
	}
	for _, tt := range tests {
		c, err := New(withSettings(Config{BaseURL: mustURL(t, tt.base)}))
		if err != nil {
			t.Fatal(err)
		}
		u, err := c.resolve(tt.ref, tt.q)
		if err != nil || u.String() != tt.want {
			t.Errorf("resolve(%q, %q) = %v, %v; want %s", tt.base, tt.ref, u, err, tt.want)
		}
	}
	c, _ := New(withSettings(Config{BaseURL: mustURL(t, "https://api.example.com")}))
	for _, bad := range []string{"ftp://x/y", "//other/x", "%zz"} {
		if _, err := c.Do(context.Background(), Request{Stream: "s", URL: bad}); err == nil {
			t.Errorf("Do(%q) succeeded", bad)
		}
	}
}

// A POST body is resent whole on every attempt, as JSON.
func TestPostBodyResent(t *testing.T) {
	var bodies []string
	srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, r.Method+" "+r.Header.Get("Content-Type")+" "+string(b))
		if n == 1 {
			w.WriteHeader(502)
			return
		}
		io.WriteString(w, `{"data":{}}`)
	})
	e := newEnv(t, srv.URL, nil)
	resp, err := e.c.Do(context.Background(), Request{Stream: "gql", Method: "post", URL: "/graphql", Body: []byte(`{"query":"{ x }"}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := `POST application/json {"query":"{ x }"}`
	if len(bodies) != 2 || bodies[0] != want || bodies[1] != want {
		t.Errorf("bodies %q", bodies)
	}
	if resp.URL.String() != srv.URL+"/graphql" || resp.Attempts != 2 {
		t.Errorf("resp %+v", resp)
	}
}

// A context cancelled before Do sends nothing.
func TestCancelledBeforeDo(t *testing.T) {
	srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {})
	e := newEnv(t, srv.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.c.Do(ctx, Request{Stream: "s", URL: "/x"})
	if !errors.Is(err, context.Canceled) || srv.Hits() != 0 {
		t.Errorf("err %v, hits %d", err, srv.Hits())
	}
}

// Each redirect hop is an attempt of its own through the limiter; the hop
// before gives its in-flight slot back, so one slot is enough.
func TestRedirectOneSlot(t *testing.T) {
	srv := newServer(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new?x=1", http.StatusMovedPermanently)
			return
		}
		io.WriteString(w, `{"moved":true}`)
	})
	var paths []string
	e := newEnv(t, srv.URL, func(c *Config) {
		c.Limit.MaxInFlight = 1
		c.OnAttempt = func(_, _, path string, status int, _ time.Duration) { paths = append(paths, path) }
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := e.c.Do(ctx, Request{Stream: "s", URL: "/old"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.URL.String() != srv.URL+"/new?x=1" || string(resp.Body) != `{"moved":true}` || resp.Attempts != 1 {
		t.Errorf("resp %+v", resp)
	}
	if st := e.c.Stats(); st.Requests != 2 || st.ByStatus[301] != 1 || st.ByStatus[200] != 1 {
		t.Errorf("stats %+v", st)
	}
	if strings.Join(paths, " ") != "/old /new" {
		t.Errorf("OnAttempt paths %v", paths)
	}
}
