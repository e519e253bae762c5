package integration_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tap-dev/tap/demoapi"
)

// The OAuth2 and JWT suite: the demo API's token endpoint behind a request
// log, the real binary, and every secret grepped for in what a run leaves.

const (
	oaClientID     = "oauth-client-id"
	oaClientSecret = "OAUTH-CLIENT-SECRET-91c2"
	oaRefresh      = "OAUTH-FIRST-REFRESH-5d0e"
)

// control checks an AirbyteControlMessage: type CONNECTOR_CONFIG, a
// numeric emitted_at and connectorConfig.config an object.
func (c *abChecker) control(v any) {
	m := c.object("control", v, "type", "emitted_at")
	abOpt(m, "type", func(v any) { c.str("control.type", v, "CONNECTOR_CONFIG") })
	abOpt(m, "emitted_at", func(v any) { c.number("control.emitted_at", v) })
	abOpt(m, "connectorConfig", func(v any) {
		cc := c.object("control.connectorConfig", v, "config")
		abOpt(cc, "config", func(v any) { c.object("control.connectorConfig.config", v) })
	})
}

func TestAirbyteValidatorChecksControl(t *testing.T) {
	good := `{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":1,"connectorConfig":{"config":{}}}}`
	if _, err := validateAirbyteLine([]byte(good)); err != nil {
		t.Errorf("a valid CONTROL message refused: %v", err)
	}
	for _, bad := range []string{
		`{"type":"CONTROL"}`,
		`{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG"}}`,
		`{"type":"CONTROL","control":{"type":"OTHER","emitted_at":1}}`,
		`{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":"1","connectorConfig":{"config":{}}}}`,
		`{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":1,"connectorConfig":{}}}`,
		`{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":1,"connectorConfig":{"config":[]}}}`,
	} {
		if _, err := validateAirbyteLine([]byte(bad)); err == nil {
			t.Errorf("accepted: %s", bad)
		}
	}
}

// oauthDemo is the small demo data set wanting access tokens of its
// /oauth/token endpoint instead of the sentinel token.
func oauthDemo(o demoapi.OAuth) demoapi.Config {
	cfg := demoBase()
	cfg.Token = ""
	o.ClientID, o.ClientSecret = oaClientID, oaClientSecret
	if o.RefreshToken == "" {
		o.RefreshToken = oaRefresh
	}
	cfg.OAuth = &o
	return cfg
}

// oauthServer starts the demo behind a request log.
func oauthServer(t *testing.T, cfg demoapi.Config) (*demoapi.Server, string, *reqLog) {
	t.Helper()
	srv, err := demoapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l := &reqLog{}
	return srv, serve(t, l.wrap(srv)), l
}

// oauthConfig is tapConfig with the auth block auth.
func oauthConfig(t *testing.T, base string, auth map[string]any, streams ...string) map[string]any {
	cfg := tapConfig(base, demoStreams(t, nil, streams...))
	cfg["auth"] = auth
	return cfg
}

// tokenRequests returns the forms of the token requests of run.
func tokenRequests(t *testing.T, l *reqLog, run int) []url.Values {
	t.Helper()
	var out []url.Values
	for _, r := range l.all() {
		if r.Run == run && r.Path == "/oauth/token" {
			f, err := url.ParseQuery(string(r.Body))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, f)
		}
	}
	return out
}

// secretsSeen returns every secret a run used on the wire: the access
// tokens the API was sent and the refresh tokens the token endpoint was.
func secretsSeen(l *reqLog) []string {
	var out []string
	for _, r := range l.all() {
		if tok, ok := strings.CutPrefix(r.Auth, "Bearer "); ok {
			out = append(out, tok)
		}
		if r.Path == "/oauth/token" {
			if f, err := url.ParseQuery(string(r.Body)); err == nil {
				for _, k := range []string{"refresh_token", "client_secret", "assertion"} {
					if v := f.Get(k); v != "" {
						out = append(out, v)
					}
				}
			}
		}
	}
	return out
}

// checkNoSecrets fails if any secret is in the run's stdout or stderr
// (save the lines allowed to hold them), state or dead letters.
func checkNoSecrets(t *testing.T, dir string, r result, allowed func(line []byte) bool, secrets ...string) {
	t.Helper()
	files := map[string][]byte{"stderr": r.stderr}
	var out [][]byte
	for _, line := range bytes.Split(r.stdout, []byte("\n")) {
		if allowed == nil || !allowed(line) {
			out = append(out, line)
		}
	}
	files["stdout"] = bytes.Join(out, []byte("\n"))
	for _, f := range []string{"state.json", "dead_letter.jsonl"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			files[f] = b
		}
	}
	for name, b := range files {
		for _, s := range secrets {
			if s != "" && bytes.Contains(b, []byte(s)) {
				t.Errorf("a secret (%d bytes, %.6s...) leaked into %s", len(s), s, name)
			}
		}
	}
}

// An access token living 1 s in a run of several seconds: refreshed, and
// no request fails.
func TestOAuthTokenExpiresMidRun(t *testing.T) {
	demo := oauthDemo(demoapi.OAuth{TokenTTLS: 1})
	demo.LatencyMS = 150
	srv, base, l := oauthServer(t, demo)
	cfg := oauthConfig(t, base, map[string]any{"type": "oauth2", "token_url": "/oauth/token",
		"client_id": oaClientID, "client_secret": oaClientSecret, "scopes": []string{"read"}}, "customers")
	// 60 customers 3 a page, one request at a time, each answered after
	// 150 ms at the earliest: the run outlives a 1 s token whatever the
	// machine's load.
	cfg["streams"] = demoStreams(t, map[string]int{"customers": 3}, "customers")
	cfg["max_parallel_streams"] = 1
	cfg["rate_limit"] = map[string]any{"requests_per_second": 0, "max_in_flight": 1}
	d := newTapDir(t, cfg)
	ld := newLoader(t)
	start := time.Now()
	r := d.sync(ld, 2*time.Minute)
	took := time.Since(start)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if bytes.Contains(r.stderr, []byte("ERROR")) {
		t.Errorf("an error was logged:\n%s", r.stderr)
	}
	want := len(source(t, srv, "customers"))
	if got := len(ld.rows("customers")); got != want {
		t.Errorf("%d customers, want %d", got, want)
	}
	toks := tokenRequests(t, l, 0)
	if len(toks) < 2 {
		t.Errorf("a run of %s with 1 s tokens asked for %d token(s)", took, len(toks))
	}
	for _, f := range toks {
		if f.Get("grant_type") != "client_credentials" || f.Get("scope") != "read" {
			t.Errorf("token request form %v", f)
		}
	}
	t.Logf("run of %s: %d token requests, %d answers 401", took.Round(time.Millisecond), len(toks), srv.Stats().ByStatus[401])
	checkNoSecrets(t, d.dir, r, nil, append(secretsSeen(l), oaClientSecret)...)
}

// A rotating refresh token, across two runs: the second run uses the
// token the first wrote back; the config keeps every other byte.
func TestOAuthRotationAcrossRuns(t *testing.T) {
	_, base, l := oauthServer(t, oauthDemo(demoapi.OAuth{TokenTTLS: 60}))
	auth := map[string]any{"type": "oauth2", "token_url": base + "/oauth/token", "grant_type": "refresh_token",
		"client_id": oaClientID, "client_secret": oaClientSecret, "refresh_token": oaRefresh, "auth_style": "body"}
	d := newTapDir(t, oauthConfig(t, base, auth, "customers", "orders"))
	path := filepath.Join(d.dir, "config.json")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	original, _ := os.ReadFile(path)

	// refreshOf reads auth.refresh_token of the config file, and checks
	// that putting the previous one back gives the previous bytes.
	refreshOf := func(prev []byte, prevToken string) (string, []byte) {
		t.Helper()
		now, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Auth struct {
				RefreshToken string `json:"refresh_token"`
			} `json:"auth"`
		}
		if err := json.Unmarshal(now, &c); err != nil {
			t.Fatalf("the rewritten config is not JSON: %v", err)
		}
		rt := c.Auth.RefreshToken
		if rt == prevToken {
			t.Fatalf("the refresh token was not rotated in the config")
		}
		q := func(s string) []byte { b, _ := json.Marshal(s); return b }
		if back := bytes.Replace(now, q(rt), q(prevToken), 1); !bytes.Equal(back, prev) {
			t.Errorf("the config changed beyond auth.refresh_token:\nbefore:\n%s\nafter:\n%s", prev, now)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("config mode %v, want 0600 (%v)", fi.Mode().Perm(), err)
		}
		return rt, now
	}

	ld := newLoader(t)
	l.setRun(1)
	r1 := d.sync(ld, time.Minute)
	if r1.code != 0 {
		t.Fatalf("run 1: exit %d\n%s", r1.code, r1.stderr)
	}
	rt1, after1 := refreshOf(original, oaRefresh)
	if toks := tokenRequests(t, l, 1); len(toks) != 1 || toks[0].Get("refresh_token") != oaRefresh || toks[0].Get("client_secret") != oaClientSecret {
		t.Errorf("run 1 token requests: %d, want 1 with the first refresh token and the client in the body", len(toks))
	}

	l.setRun(2)
	r2 := d.sync(ld, time.Minute)
	if r2.code != 0 {
		t.Fatalf("run 2: exit %d\n%s", r2.code, r2.stderr)
	}
	toks := tokenRequests(t, l, 2)
	if len(toks) != 1 || toks[0].Get("refresh_token") != rt1 {
		t.Errorf("run 2 did not use the rotated refresh token (%d token requests)", len(toks))
	}
	rt2, _ := refreshOf(after1, rt1)
	entries, _ := os.ReadDir(d.dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
	secrets := append(secretsSeen(l), oaClientSecret, rt2)
	checkNoSecrets(t, d.dir, r1, nil, secrets...)
	checkNoSecrets(t, d.dir, r2, nil, secrets...)

	// A refresh token used already is revoked: exit 1 naming the host and
	// the OAuth error, after one token request.
	writeFile(t, path, original)
	l.setRun(3)
	r3 := runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	if r3.code != 1 {
		t.Fatalf("revoked token: exit %d, want 1\n%s", r3.code, r3.stderr)
	}
	host := strings.TrimPrefix(base, "http://")
	last := lastLine(r3.stderr)
	if !strings.Contains(last, "token request to "+host+" failed: invalid_grant") {
		t.Errorf("the error does not name the host and the OAuth error: %s", last)
	}
	if n := len(tokenRequests(t, l, 3)); n != 1 {
		t.Errorf("revoked token: %d token requests, want 1 (no retry storm)", n)
	}
	for _, r := range l.all() {
		if r.Run == 3 && r.Path != "/oauth/token" {
			t.Errorf("revoked token: the API was sent %s", r.Path)
		}
	}
	checkNoSecrets(t, d.dir, r3, nil, secrets...)
}

// A refresh token given as {"env": ...} cannot be written back: a WARN
// says so, and the run goes on.
func TestOAuthRotationFromEnvWarns(t *testing.T) {
	_, base, _ := oauthServer(t, oauthDemo(demoapi.OAuth{}))
	auth := map[string]any{"type": "oauth2", "token_url": "/oauth/token", "grant_type": "refresh_token",
		"client_id": oaClientID, "client_secret": oaClientSecret, "refresh_token": map[string]any{"env": "TAP_TEST_RT"}}
	d := newTapDir(t, oauthConfig(t, base, auth, "customers"))
	before, _ := os.ReadFile(filepath.Join(d.dir, "config.json"))
	r := runTap(t, d.dir, time.Minute, []string{"TAP_TEST_RT=" + oaRefresh}, "--config", "config.json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !bytes.Contains(r.stderr, []byte("WARN")) || !bytes.Contains(r.stderr, []byte("cannot be written back")) {
		t.Errorf("no WARN about the rotated token:\n%s", r.stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(d.dir, "config.json")); !bytes.Equal(before, after) {
		t.Errorf("the config was rewritten")
	}
	checkNoSecrets(t, d.dir, r, nil, oaRefresh, oaClientSecret)
}

// A JWT signed with a key made here: the demo checks its signature, iss,
// aud and exp.
func TestOAuthJWTBearer(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	priv := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	pubDER, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))
	srv, base, l := oauthServer(t, oauthDemo(demoapi.OAuth{JWTPublicKey: pub, JWTIssuer: "svc@tap.test", JWTAudience: "https://aud.tap.test"}))
	auth := map[string]any{"type": "jwt", "token_url": "/oauth/token", "issuer": "svc@tap.test",
		"audience": "https://aud.tap.test", "subject": "user@tap.test", "private_key": priv, "key_id": "k1"}
	d := newTapDir(t, oauthConfig(t, base, auth, "customers"))
	ld := newLoader(t)
	r := d.sync(ld, time.Minute)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got, want := len(ld.rows("customers")), len(source(t, srv, "customers")); got != want {
		t.Errorf("%d customers, want %d", got, want)
	}
	toks := tokenRequests(t, l, 0)
	if len(toks) != 1 || toks[0].Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		t.Errorf("token requests: %v", toks)
	}
	// The PEM's base64 lines, which a leak would carry even re-wrapped.
	keyLines := strings.Split(strings.TrimSpace(priv), "\n")
	checkNoSecrets(t, d.dir, r, nil, append(secretsSeen(l), keyLines[1:len(keyLines)-1]...)...)

	// The wrong audience: the demo refuses the assertion.
	auth["audience"] = "https://elsewhere.test"
	d.writeConfig(oauthConfig(t, base, auth, "customers"))
	r = runTap(t, d.dir, time.Minute, nil, "--config", "config.json")
	if r.code != 1 || !strings.Contains(lastLine(r.stderr), "invalid_grant") {
		t.Errorf("wrong audience: exit %d, %s", r.code, lastLine(r.stderr))
	}
}

// Airbyte mode: the rotated refresh token leaves in a CONTROL message
// valid against the protocol, holding the whole updated config; check
// reports a refused client as a config error.
func TestOAuthAirbyteControl(t *testing.T) {
	_, base, l := oauthServer(t, oauthDemo(demoapi.OAuth{}))
	dir := abDir(t)
	path := filepath.Join(dir, "config.json")
	var cfg map[string]any
	readJSON(t, path, &cfg)
	cfg["base_url"] = base
	delete(cfg, "demo")
	cfg["auth"] = map[string]any{"type": "oauth2", "token_url": "/oauth/token", "grant_type": "refresh_token",
		"client_id": oaClientID, "client_secret": oaClientSecret, "refresh_token": oaRefresh}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	writeFile(t, path, b)

	isControl := func(line []byte) bool { return bytes.HasPrefix(line, []byte(`{"type":"CONTROL"`)) }
	run := runAirbyte(t, dir, "read", "--config", "config.json", "--catalog", "configured_catalog.json")
	if run.code != 0 {
		t.Fatalf("read: exit %d\n%s", run.code, run.stdout)
	}
	controls := run.of("CONTROL")
	if len(controls) != 1 {
		t.Fatalf("%d CONTROL messages, want 1", len(controls))
	}
	got, _ := json.Marshal(abGet(controls[0], "control", "connectorConfig", "config"))
	var sent map[string]any
	json.Unmarshal(got, &sent)
	rt := abGet(sent, "auth", "refresh_token")
	toks := tokenRequests(t, l, 0)
	if rt == oaRefresh || rt == nil {
		t.Fatalf("the CONTROL config holds refresh_token %v, not a rotated one", rt)
	}
	sent["auth"].(map[string]any)["refresh_token"] = oaRefresh
	if abCanonical(sent) != abCanonical(cfg) {
		t.Errorf("the CONTROL config differs from the config beyond the refresh token:\n%s\n%s", abCanonical(sent), abCanonical(cfg))
	}
	// The CONTROL message comes before any record read with the new token.
	for i, m := range run.msgs {
		if m["type"] == "RECORD" {
			t.Errorf("a RECORD (message %d) before the CONTROL message", i)
		}
		if m["type"] == "CONTROL" {
			break
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
		t.Errorf("Airbyte mode rewrote the config file")
	}
	checkNoSecrets(t, dir, run.result, isControl, append(secretsSeen(l), oaClientSecret, rt.(string))...)
	if len(toks) != 1 {
		t.Errorf("%d token requests, want 1", len(toks))
	}

	// check with a wrong client secret: TRACE ERROR config_error naming
	// the token URL's host and the OAuth error code, exit 2.
	cfg["auth"].(map[string]any)["client_secret"] = "WRONG-SECRET-0a9c"
	b, _ = json.MarshalIndent(cfg, "", "  ")
	writeFile(t, path, b)
	run = runAirbyte(t, dir, "check", "--config", "config.json")
	if run.code != 2 {
		t.Errorf("check: exit %d, want 2", run.code)
	}
	trace := run.errorTrace()
	msg, _ := abGet(trace, "message").(string)
	host := strings.TrimPrefix(base, "http://")
	if abGet(trace, "failure_type") != "config_error" || !strings.Contains(msg, host) || !strings.Contains(msg, "invalid_client") {
		t.Errorf("check: trace %v, want a config_error naming %s and invalid_client", trace, host)
	}
	checkNoSecrets(t, dir, run.result, nil, "WRONG-SECRET-0a9c", oaClientSecret)
}

// readOnlyDir makes dir unwritable until the test ends: chmod for a user,
// the immutable attribute for root (whom modes do not stop).
func readOnlyDir(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("running as root, and chattr +i cannot make a directory read-only here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
}

// A config that cannot be rewritten (a ConfigMap, read-only) with a
// refresh token the API may rotate: exit 2 before any token request, the
// error naming the file; the token is not spent.
func TestOAuthRotationConfigReadOnly(t *testing.T) {
	t.Parallel()
	_, base, log := oauthServer(t, oauthDemo(demoapi.OAuth{}))
	auth := map[string]any{"type": "oauth2", "token_url": "/oauth/token", "grant_type": "refresh_token",
		"client_id": oaClientID, "client_secret": oaClientSecret, "refresh_token": oaRefresh}
	cfg := oauthConfig(t, base, auth, "customers")
	d := newTapDir(t, cfg)
	cfg["dead_letter_path"] = filepath.Join(d.dir, "dead_letter.jsonl")
	d.writeConfig(cfg)
	ro := t.TempDir()
	cfgPath := filepath.Join(ro, "config.json")
	b, err := os.ReadFile(filepath.Join(d.dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfgPath, b)
	readOnlyDir(t, ro)
	for _, args := range [][]string{{"--config", cfgPath}, {"--config", cfgPath, "--test"}} {
		r := runTap(t, d.dir, time.Minute, nil, args...)
		want := "tap: " + cfgPath + ": auth.refresh_token: the API may rotate the refresh token, and the config file must be rewritten to keep the new one, but it cannot be"
		if r.code != 2 || !strings.Contains(string(r.stderr), want) {
			t.Errorf("tap %v: exit %d, want 2 and %q; stderr:\n%s\nstdout:\n%s", args, r.code, want, r.stderr, r.stdout)
		}
		if got := len(tokenRequests(t, log, 0)); got != 0 {
			t.Errorf("tap %v: %d token requests, want none", args, got)
		}
		checkNoSecrets(t, d.dir, r, nil, oaRefresh, oaClientSecret)
	}
}
