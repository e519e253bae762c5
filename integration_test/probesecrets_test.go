package integration_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestInitProbeKeepsCredentialsOnTheOrigin: a probe whose API redirects
// to another host (another loopback listener) does not send that host the
// --auth-header credential, whatever the header's name; Go itself drops
// only Authorization and Cookie.
func TestInitProbeKeepsCredentialsOnTheOrigin(t *testing.T) {
	t.Parallel()
	for _, header := range []string{"X-Api-Key", "Api-Token", "Authorization"} {
		t.Run(header, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			other := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = append(seen, r.Header.Get(header))
				mu.Unlock()
				w.Write([]byte(`[{"id":1},{"id":2}]`))
			}))
			origin := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, other+"/v1/things", http.StatusTemporaryRedirect)
			}))
			dir := t.TempDir()
			r := runTap(t, dir, time.Minute, nil, "init", "--probe", origin+"/v1/things", "--auth-header", header+": "+sentinel, "--out", "c.json")
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 1 {
				t.Fatalf("the other host got %d requests, want 1 (exit %d, stderr %s)", len(seen), r.code, r.stderr)
			}
			if strings.Contains(seen[0], sentinel) {
				t.Errorf("the other host received the credential in %s", header)
			}
		})
	}
}

// TestInitProbeSecretParams: a probe URL's secret-looking query
// parameters (session, passwd, pwd, jwt, credential) become an
// {"env": …} reference in the config, never their value.
func TestInitProbeSecretParams(t *testing.T) {
	t.Parallel()
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[{"id":1},{"id":2}]`))
	}))
	for _, param := range []string{"session", "passwd", "pwd", "jwt", "credential"} {
		t.Run(param, func(t *testing.T) {
			dir := t.TempDir()
			r := runTap(t, dir, time.Minute, nil, "init", "--probe", base+"/v1/things?"+param+"="+sentinel, "--out", "c.json")
			if r.code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
			}
			b, err := os.ReadFile(filepath.Join(dir, "c.json"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b)+string(r.stderr), sentinel) {
				t.Errorf("the %s value was written:\n%s", param, b)
			}
			if !strings.Contains(string(b), `"env": "TAP_API_KEY"`) {
				t.Errorf("no env reference for %s:\n%s", param, b)
			}
		})
	}
}
