package settings

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tap-dev/tap/streams"
)

// Setting is one config setting. The registry of them drives the checks
// of a config (types, defaults, bounds, enums, unknown fields), --about
// and the Airbyte spec, so that the three cannot disagree.
type Setting struct {
	Name        string   `json:"name"`  // dotted for nested settings: "retry.max_attempts"
	Title       string   `json:"title"` // the label of Airbyte's form
	Type        string   `json:"type"`  // string, integer, number, boolean, object, array
	Default     any      `json:"default,omitempty"`
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
	Enum        []string `json:"enum,omitempty"` // the allowed values, when there are few
	Secret      bool     `json:"secret"`
	Required    bool     `json:"required,omitempty"`
	Format      string   `json:"format,omitempty"` // "date-time": an RFC 3339 time
	Description string   `json:"description"`

	// open marks an object whose members are not all settings of the
	// registry (headers, the demo knobs): members it does not list are
	// checked elsewhere, not refused as unknown.
	open bool
	// items is the JSON type of an array's items (object when empty).
	items string
}

// Log levels of log_level and metrics_log_level.
var logLevels = []string{"debug", "info", "warn", "error"}

// registry lists every config setting, in the order --about, the spec and
// docs/reference/config.md show them.
var registry = []Setting{
	{Name: "base_url", Title: "Base URL", Type: "string", Required: true, Description: `Base URL of the API; "embedded://demo" starts the bundled demo API in-process.`},
	{Name: "auth.type", Title: "Authentication type", Type: "string", Default: "none", Enum: []string{"none", "bearer", "basic", "api_key", "oauth2", "jwt", "session"}, Description: "How requests to base_url authenticate."},
	{Name: "auth.token", Title: "Bearer token", Type: "string", Secret: true, Description: "Bearer token (auth.type bearer)."},
	{Name: "auth.username", Title: "User name", Type: "string", Description: "User name (auth.type basic)."},
	{Name: "auth.password", Title: "Password", Type: "string", Secret: true, Description: "Password (auth.type basic)."},
	{Name: "auth.name", Title: "API key name", Type: "string", Description: "Header or query parameter name of the API key (auth.type api_key)."},
	{Name: "auth.value", Title: "API key", Type: "string", Secret: true, Description: "API key (auth.type api_key)."},
	{Name: "auth.in", Title: "API key goes in", Type: "string", Default: "header", Enum: []string{"header", "query"}, Description: "Where the API key goes (auth.type api_key)."},
	{Name: "auth.token_url", Title: "Token URL", Type: "string", Description: `Token endpoint (auth.type oauth2, jwt): an http(s) URL, or a path such as "/oauth/token" on base_url's host.`},
	{Name: "auth.grant_type", Title: "OAuth2 grant type", Type: "string", Default: "client_credentials", Enum: []string{"client_credentials", "refresh_token"}, Description: "OAuth2 grant (auth.type oauth2)."},
	{Name: "auth.client_id", Title: "Client ID", Type: "string", Description: "OAuth2 client id (auth.type oauth2)."},
	{Name: "auth.client_secret", Title: "Client secret", Type: "string", Secret: true, Description: "OAuth2 client secret (auth.type oauth2)."},
	{Name: "auth.refresh_token", Title: "Refresh token", Type: "string", Secret: true, Description: "OAuth2 refresh token (grant_type refresh_token); a rotated one is written back to the config file (Singer) or sent in a CONTROL message (Airbyte)."},
	{Name: "auth.auth_style", Title: "Client credentials sent as", Type: "string", Default: "header", Enum: []string{"header", "body"}, Description: "How the client id and secret reach the token endpoint: HTTP Basic (header) or form fields (body)."},
	{Name: "auth.scopes", Title: "Scopes", Type: "array", items: "string", Description: "Scopes asked for (auth.type oauth2, jwt): an array of strings."},
	{Name: "auth.token_params", Title: "Extra token request fields", Type: "object", open: true, Description: "Extra form fields of every token request (auth.type oauth2, jwt), such as audience; string values."},
	{Name: "auth.login_url", Title: "Login URL", Type: "string", Description: `Where a session token is asked for (auth.type session): an http(s) URL, or a path such as "/auth/login" on base_url's host.`},
	{Name: "auth.login_method", Title: "Login method", Type: "string", Default: "POST", Enum: []string{"GET", "POST"}, Description: "The login request's method (auth.type session)."},
	{Name: "auth.login_body", Title: "Login JSON body", Type: "object", open: true, Secret: true, Description: "The login request's JSON body (auth.type session); its strings are secrets."},
	{Name: "auth.login_form", Title: "Login form", Type: "object", open: true, Secret: true, Description: "The login request's form fields, instead of a JSON body (auth.type session); its strings are secrets."},
	{Name: "auth.login_params", Title: "Login query parameters", Type: "object", open: true, Secret: true, Description: "The login request's query parameters (auth.type session); its strings are secrets."},
	{Name: "auth.login_headers", Title: "Login headers", Type: "object", open: true, Description: "The login request's headers (auth.type session); those that name a credential are secrets, as the headers' are. auth.username and auth.password, when set, log in with HTTP Basic."},
	{Name: "auth.token_path", Title: "Session token path", Type: "string", Description: "Dotted path to the session token in the login answer (auth.type session); the token goes in auth.name (a header, or the query with auth.in query), or as a Bearer token when auth.name is unset."},
	{Name: "auth.expires_s", Title: "Session lifetime (s)", Type: "number", Description: "Seconds a session token lasts (auth.type session); 0 or unset: until the API refuses it with a 401, when the run logs in again."},
	{Name: "auth.issuer", Title: "Issuer (iss)", Type: "string", Description: "iss claim of the JWT assertion, e.g. the service account's email (auth.type jwt)."},
	{Name: "auth.subject", Title: "Subject (sub)", Type: "string", Description: "sub claim of the JWT assertion, the user acted for (auth.type jwt); optional."},
	{Name: "auth.audience", Title: "Audience (aud)", Type: "string", Description: "aud claim of the JWT assertion (auth.type jwt) [the token URL]."},
	{Name: "auth.private_key", Title: "Private key (PEM)", Type: "string", Secret: true, Description: "PEM RSA private key (PKCS #8 or PKCS #1) signing the JWT assertion with RS256 (auth.type jwt)."},
	{Name: "auth.key_id", Title: "Key ID (kid)", Type: "string", Description: "kid header of the JWT assertion (auth.type jwt); optional."},
	{Name: "headers", Title: "Extra request headers", Type: "object", open: true, Description: "Extra request headers, e.g. User-Agent. Credentials here (Authorization, Cookie, X-Api-Key, names holding key, token, secret, auth, session, signature or password) are secrets."},
	{Name: "path_params", Title: "Path parameters", Type: "object", open: true, Description: "Values of the {placeholders} of stream paths that no parent fills, such as GitHub's owner and repo: {\"owner\": \"tap-dev\"}; path-escaped."},
	{Name: "definitions", Title: "Shared schema definitions", Type: "object", open: true, Description: `JSON Schemas that stream schemas share, by name: a stream's schema may use {"$ref": "#/definitions/NAME"} at any depth (a config written by tap init from a large document does). A $ref inside 2 others is left {} (any value), which ends recursive definitions and bounds the schema of each stream. Also allowed in the streams file.`},
	{Name: "start_date", Title: "Start date", Type: "string", Format: "date-time", Description: "RFC 3339 time: the first bookmark of an incremental stream with no state."},
	{Name: "end_date", Title: "End date", Type: "string", Format: "date-time", Description: "RFC 3339 time, exclusive: chunked backfills cover [start_date or bookmark, end_date). Default: now."},
	{Name: "streams", Title: "Streams", Type: "array", Description: "Stream definitions (inline)."},
	{Name: "streams_file", Title: "Streams file", Type: "string", Description: `A file {"streams": [...]}; a relative path is read from the config file's folder, an absolute one as it is.`},
	{Name: "rate_limit.requests_per_second", Title: "Requests per second", Type: "number", Default: 10, Minimum: bound(0), Maximum: bound(1e6), Description: "Token bucket rate shared by every stream; 0 = unlimited."},
	{Name: "rate_limit.burst", Title: "Burst", Type: "integer", Default: 1, Minimum: bound(1), Maximum: bound(1e6), Description: "Token bucket size."},
	{Name: "rate_limit.max_in_flight", Title: "Requests in flight at most", Type: "integer", Default: 4, Minimum: bound(1), Maximum: bound(1000), Description: "Requests in flight at once."},
	{Name: "rate_limit.retries_spend_tokens", Title: "Retries spend tokens", Type: "boolean", Default: true, Description: "A retry after a 5xx, timeout or reset takes its tokens from the bucket like a new request (right for an API that counts every request). false: its backoff paces it and it takes none, for a rate set below the API's quota with room for retries."},
	{Name: "rate_limit.daily_quota", Title: "Daily quota (requests)", Type: "integer", Default: 0, Minimum: bound(0), Maximum: bound(1e12), Description: `Requests allowed per UTC day, counted across runs through the "quota" of STATE; reached → checkpoint and exit 75 until midnight UTC. 0 = off.`},
	{Name: "rate_limit.weight_per_minute", Title: "Weight per minute", Type: "integer", Default: 0, Minimum: bound(0), Maximum: bound(1e9), Description: `Request weight (a stream's "weight", default 1) allowed per UTC minute. 0 = off.`},
	{Name: "rate_limit.used_weight_header", Title: "Used-weight header", Type: "string", Description: "Response header reporting the weight used this minute (e.g. X-MBX-USED-WEIGHT-1M); trues up rate_limit.weight_per_minute."},
	{Name: "rate_limit.cost.points", Title: "Cost points", Type: "number", Default: 0, Minimum: bound(0), Maximum: bound(1e12), Description: "GraphQL cost budget: points available at most. 0 = off."},
	{Name: "rate_limit.cost.restore_per_s", Title: "Points restored per second", Type: "number", Default: 0, Minimum: bound(0), Maximum: bound(1e12), Description: "GraphQL cost budget: points restored per second; > 0 when points is set."},
	{Name: "rate_limit.cost.actual_path", Title: "Actual cost path", Type: "string", Default: "extensions.cost.actualQueryCost", Description: "Dotted path of a response's actual query cost."},
	{Name: "rate_limit.cost.remaining_path", Title: "Remaining points path", Type: "string", Default: "extensions.cost.throttleStatus.currentlyAvailable", Description: "Dotted path of a response's points still available."},
	{Name: "rate_limit.shared.redis_url", Title: "Redis URL", Type: "string", Secret: true, Description: `Redis URL (redis:// or rediss://) of a rate limit shared by every process naming the same rate_limit.shared.key: requests_per_second, burst, the weights and daily_quota are counted there. Unreachable at start → exit 2. Its password is masked wherever the tap shows text.`},
	{Name: "rate_limit.shared.key", Title: "Shared key prefix", Type: "string", Description: `Redis key prefix of the shared rate limit, e.g. "tap:acme"; every process naming it shares one quota. Required with rate_limit.shared.redis_url.`},
	{Name: "retry.max_attempts", Title: "Attempts per request", Type: "integer", Default: 6, Minimum: bound(1), Maximum: bound(100), Description: "Attempts per request, the first included."},
	{Name: "retry.base_delay_ms", Title: "Base backoff delay (ms)", Type: "integer", Default: 500, Minimum: bound(1), Maximum: bound(3_600_000), Description: "Base of the full-jitter exponential backoff."},
	{Name: "retry.max_delay_ms", Title: "Longest backoff delay (ms)", Type: "integer", Default: 30000, Minimum: bound(1), Maximum: bound(3_600_000), Description: "Cap of one backoff delay; at least retry.base_delay_ms."},
	{Name: "retry.max_retry_after_s", Title: "Longest Retry-After waited (s)", Type: "integer", Default: 300, Minimum: bound(1), Maximum: bound(86_400), Description: "A longer Retry-After defers the run (exit 75) instead of waiting."},
	{Name: "retry.max_total_s", Title: "Longest time per request (s)", Type: "number", Default: 0, Minimum: bound(0), Maximum: bound(86_400), Description: "Wall time one request may spend from its first attempt to its last retry; a retry that would end later is not made. 0 = no cap."},
	{Name: "on_status", Title: "Rules per HTTP status", Type: "object", open: true, Description: `Per-status rules for every stream, e.g. {"409": "retry", "404": "ignore", "403": "fail"}; a stream's own on_status wins; dead_letter writes the request to dead_letter_path and the run goes on.`},
	{Name: "circuit_breaker.threshold", Title: "Failures that open the circuit", Type: "integer", Default: 10, Minimum: bound(1), Maximum: bound(1e6), Description: "Consecutive transient failures, across every stream, that open the circuit."},
	{Name: "circuit_breaker.cooldown_s", Title: "Cooldown (s)", Type: "number", Default: 30, Minimum: bound(0.001), Maximum: bound(86_400), Description: "Time the open circuit sends nothing before one probe request."},
	{Name: "circuit_breaker.max_openings", Title: "Openings per run at most", Type: "integer", Default: 5, Minimum: bound(1), Maximum: bound(1000), Description: "The circuit opening this many times in one run fails the run."},
	{Name: "request_timeout_s", Title: "Request timeout (s)", Type: "number", Default: 30, Minimum: bound(0.001), Maximum: bound(86_400), Description: "Timeout of one request attempt, body included."},
	{Name: "feed.idle_timeout_s", Title: "Idle timeout (s)", Type: "number", Default: 10, Minimum: bound(streams.FeedIdleTimeoutMinS), Maximum: bound(streams.FeedIdleTimeoutMaxS), Description: "A feed stream's connection that sends nothing, not even a heartbeat, for this long is dead: reconnect from the last good seq. A stream's feed.idle_timeout_s wins."},
	{Name: "feed.max_reconnects", Title: "Max reconnects", Type: "integer", Default: 10, Minimum: bound(0), Maximum: bound(streams.FeedMaxReconnectsMax), Description: "Reconnects of a feed stream in one run (full-jitter backoff from retry.base_delay_ms); one more fails the run with STATE at the last good seq. A stream's feed.max_reconnects wins."},
	{Name: "max_parallel_streams", Title: "Streams synced at once", Type: "integer", Default: 2, Minimum: bound(1), Maximum: bound(1000), Description: "Top-level streams synced at once."},
	{Name: "max_pages", Title: "Pages per walk at most", Type: "integer", Default: 0, Minimum: bound(0), Maximum: bound(1e12), Description: "Pages allowed per stream walk; more is an error. 0 = unlimited."},
	{Name: "max_partitions", Title: "Per-parent bookmarks at most", Type: "integer", Default: 10000, Minimum: bound(1), Maximum: bound(1e9), Description: "Per-parent bookmarks a child stream keeps; beyond it the smallest are folded into one floor (re-read, never lost)."},
	{Name: "on_schema_violation", Title: "On schema violation", Type: "string", Enum: []string{ViolationFail, ViolationDeadLetter, ViolationEmit}, Description: "A record failing its schema stops the run (fail), goes to dead_letter_path (dead_letter) or is emitted anyway with the violation logged (emit). Default: dead_letter when dead_letter_path is set, else emit; in Airbyte mode dead_letter is emit (a file would stay in the container)."},
	{Name: "dead_letter_path", Title: "Dead letters file", Type: "string", Default: "dead_letter.jsonl", Description: "JSON-lines file of records that failed their schema and of requests that failed for good (on_request_failure dead_letter), a relative path is read from the config file's folder, an absolute one as it is; checked writable at start."},
	{Name: "trace_path", Title: "Request trace file", Type: "string", Description: "JSON-lines file of every HTTP attempt the run makes (time, stream, method, URL with secret query values masked, status or error, bytes, ms, attempt, the wait before it by reason); never a header or a body. Written afresh each run; a relative path is read from the config file's folder. --trace FILE sets it for one run. Unset: no trace."},
	{Name: "report_path", Title: "Run report file", Type: "string", Description: "A self-contained HTML report written at the end of every run (a Singer sync or --test, an Airbyte read, a replay), also one that fails or is interrupted: the run, a row per stream (feeds with their gaps and reconnects), records and requests over the run's time with each 429 marked, where the time went, backfill windows, reconciles, the warnings; inline CSS and SVG only, secrets masked. A relative path is read from the config file's folder. --report FILE sets it for one run. Unset: no report."},
	{Name: "summary_json_path", Title: "Run summary file (JSON)", Type: "string", Description: "The run summary as one JSON document written at the end of every run (as report_path): per stream and in total, records, pages, requests by status, retries, waits by reason, dead letters and their file, drift, bookmarks before and after, and the exit status. A relative path is read from the config file's folder. --summary-json FILE sets it for one run. Unset: none."},
	{Name: "dead_letter_alert", Title: "Dead letters before a WARN", Type: "integer", Default: 100, Minimum: bound(0), Maximum: bound(1e12), Description: "A run that writes more dead letters than this logs a WARN. 0 = warn at the first one."},
	{Name: "stream_maps", Title: "Stream maps", Type: "object", open: true, Description: "Inline stream maps, as the Meltano SDK reads them: per stream, properties set to an expression (md5(email)) or to null (removed), and __filter__, __alias__, __source__, __else__, __key_properties__."},
	{Name: "stream_map_config", Title: "Stream map config", Type: "object", open: true, Secret: true, Description: "Values that map expressions read as config['key'], such as a hash seed; its strings are secrets."},
	{Name: "flattening_enabled", Title: "Flatten nested objects", Type: "boolean", Default: false, Description: "Spread nested objects into parent__child properties (Meltano SDK flattening)."},
	{Name: "flattening_max_depth", Title: "Flattening depth", Type: "integer", Minimum: bound(0), Maximum: bound(100), Description: "Levels of nesting flattened; objects and arrays deeper are written as JSON strings. Required when flattening_enabled is true."},
	{Name: "log_level", Title: "Log level", Type: "string", Default: "info", Enum: logLevels, Description: "Least level of the log lines written; --log-level overrides it."},
	{Name: "metrics_log_level", Title: "Metrics log level", Type: "string", Default: "debug", Enum: logLevels, Description: "Level of the Singer METRIC lines; they are written when it is at least log_level: by default only in a debug log. Set info to have them in every run (for a tool that reads them); the stream done lines and the run summary say the same for a person."},
	{Name: "demo", Title: "Demo API", Type: "object", open: true, Description: "Knobs of the embedded demo API (counts, faults); only for embedded://demo."},
	{Name: "demo.token", Title: "Demo token", Type: "string", Secret: true, Description: `When set, the demo API wants "Authorization: Bearer <token>" or api_key=<token>.`},
	{Name: "demo.oauth", Title: "Demo OAuth2 endpoint", Type: "object", open: true, Secret: true, Description: "The demo's OAuth2 token endpoint /oauth/token: client_id, client_secret, refresh_token (the first; each use answers a new one), token_ttl_s [300], jwt_public_key, jwt_issuer, jwt_audience. When set, the data endpoints want its access tokens. Its strings are secrets."},
}

// groups are the titles and descriptions of the objects that hold nested
// settings, for the spec's form.
var groups = map[string]struct{ Title, Description string }{
	"auth":              {"Authentication", "How requests to base_url authenticate."},
	"rate_limit":        {"Rate limits", "The limits every stream's requests share: a token bucket, requests in flight, the daily quota, weights and a GraphQL cost budget."},
	"rate_limit.cost":   {"GraphQL cost budget", "Points a query reserves before it is sent, trued up by the cost the response reports."},
	"rate_limit.shared": {"Shared rate limit (Redis)", "A rate limit counted in Redis, shared by every process naming the same key."},
	"retry":             {"Retries", "How a failed attempt is retried: attempts, full-jitter backoff, Retry-After."},
	"circuit_breaker":   {"Circuit breaker", "Consecutive transient failures stop every request for a cooldown."},
	"feed":              {"Streaming feeds", "Limits of the websocket, SSE and NDJSON feed streams: idle timeout and reconnects; a stream's own feed block wins."},
}

// demoOnly reports whether s configures the bundled demo API: a knob of
// the tap's own demo and tests, not of a connection to a real API, so
// the Meltano plugin definition leaves it out and the Airbyte spec hides
// it from the form (a config may still carry it: the registry checks it).
func (s *Setting) demoOnly() bool {
	return s.Name == "demo" || strings.HasPrefix(s.Name, "demo.")
}

func bound(v float64) *float64 { return &v }

// Settings returns the registry: every config setting, nested ones dotted.
func Settings() []Setting { return slices.Clone(registry) }

// lookup returns the setting named name, or nil.
func lookup(name string) *Setting {
	for i := range registry {
		if registry[i].Name == name {
			return &registry[i]
		}
	}
	return nil
}

// isGroup reports whether name is the parent of registry settings
// ("auth", "retry") without being one itself.
func isGroup(name string) bool {
	for _, s := range registry {
		if strings.HasPrefix(s.Name, name+".") {
			return true
		}
	}
	return false
}

// applyRegistry checks the decoded config tree against the registry and
// fills in the defaults, so that decoding it afterwards cannot fail on a
// value and every unset setting holds its default. A null or an empty
// string counts as unset.
func applyRegistry(tree map[string]any) error {
	if err := checkUnknown(tree, ""); err != nil {
		return err
	}
	for i := range registry {
		s := &registry[i]
		parent, key, err := parentOf(tree, s.Name)
		if err != nil {
			return err
		}
		if parent == nil { // inside an open object that is absent
			continue
		}
		v, ok := parent[key]
		if !ok || v == nil || v == "" {
			if s.Required {
				return fmt.Errorf("%s: is required", s.Name)
			}
			if s.Default != nil {
				parent[key] = defaultValue(s.Default)
			} else {
				delete(parent, key)
			}
			continue
		}
		if parent[key], err = s.check(v); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return nil
}

// checkUnknown refuses members of tree (at prefix) that no setting names.
func checkUnknown(tree map[string]any, prefix string) error {
	for _, k := range slices.Sorted(maps.Keys(tree)) {
		name := prefix + k
		switch s := lookup(name); {
		case s != nil && (s.Type != "object" || s.open):
		case isGroup(name):
			obj, ok := tree[k].(map[string]any)
			if !ok {
				if tree[k] == nil {
					continue
				}
				return fmt.Errorf("%s: expected an object, got %s", name, kind(tree[k]))
			}
			if err := checkUnknown(obj, name+"."); err != nil {
				return err
			}
		default:
			known := make([]string, 0, len(registry))
			for _, s := range registry {
				if rest, ok := strings.CutPrefix(s.Name, prefix); ok {
					first, _, _ := strings.Cut(rest, ".")
					known = append(known, first)
				}
			}
			return fmt.Errorf("unknown field %q%s", name, didYouMean(k, known))
		}
	}
	return nil
}

// parentOf returns the object holding the dotted name, creating the
// groups on the way, and the name's last part. An open object on the way
// that is absent gives nil: its members are not filled in.
func parentOf(tree map[string]any, name string) (map[string]any, string, error) {
	parts := strings.Split(name, ".")
	node := tree
	for i, p := range parts[:len(parts)-1] {
		child, ok := node[p].(map[string]any)
		if !ok {
			if node[p] != nil {
				return nil, "", fmt.Errorf("%s: expected an object, got %s", strings.Join(parts[:i+1], "."), kind(node[p]))
			}
			if s := lookup(strings.Join(parts[:i+1], ".")); s != nil && s.open {
				return nil, "", nil
			}
			child = map[string]any{}
			node[p] = child
		}
		node = child
	}
	return node, parts[len(parts)-1], nil
}

// defaultValue is a default as the JSON decoder would have produced it.
func defaultValue(d any) any {
	switch d := d.(type) {
	case int:
		return json.Number(strconv.Itoa(d))
	case float64:
		return json.Number(strconv.FormatFloat(d, 'g', -1, 64))
	}
	return d
}

// check checks one set value and returns it in the form the config struct
// decodes (an integer written 1e3 becomes 1000).
func (s *Setting) check(v any) (any, error) {
	want := map[string]string{"string": "a string", "integer": "an integer", "number": "a number",
		"boolean": "true or false", "object": "an object", "array": "an array"}[s.Type]
	switch s.Type {
	case "string":
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("expected a string, got %s", kind(v))
		}
		if len(s.Enum) > 0 && !slices.Contains(s.Enum, str) {
			return nil, fmt.Errorf("expected %s, got %q", orList(s.Enum), str)
		}
		return str, nil
	case "integer", "number":
		n, ok := v.(json.Number)
		switch x := v.(type) { // a tree a front end wrote rather than decoded
		case float64:
			n, ok = json.Number(strconv.FormatFloat(x, 'g', -1, 64)), true
		case int:
			n, ok = json.Number(strconv.Itoa(x)), true
		}
		if !ok {
			return nil, fmt.Errorf("expected %s, got %s", want, kind(v))
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("expected %s%s, got %s", want, s.bounds(), n)
		}
		if s.Type == "integer" && f != math.Trunc(f) {
			return nil, fmt.Errorf("expected an integer, got number %s", n)
		}
		if (s.Minimum != nil && f < *s.Minimum) || (s.Maximum != nil && f > *s.Maximum) {
			return nil, fmt.Errorf("expected %s%s, got %s", want, s.bounds(), n)
		}
		if s.Type == "integer" {
			return json.Number(strconv.FormatInt(int64(f), 10)), nil
		}
		return n, nil
	case "boolean":
		if _, ok := v.(bool); !ok {
			return nil, fmt.Errorf("expected true or false, got %s", kind(v))
		}
	case "object":
		if _, ok := v.(map[string]any); !ok {
			return nil, fmt.Errorf("expected an object, got %s", kind(v))
		}
	case "array":
		if _, ok := v.([]any); !ok {
			return nil, fmt.Errorf("expected an array, got %s", kind(v))
		}
	}
	return v, nil
}

// bounds is " >= 1 and <= 100", as an error shows it.
func (s *Setting) bounds() string {
	var b strings.Builder
	if s.Minimum != nil {
		fmt.Fprintf(&b, " >= %s", strconv.FormatFloat(*s.Minimum, 'f', -1, 64))
	}
	if s.Maximum != nil {
		if b.Len() > 0 {
			b.WriteString(" and")
		}
		fmt.Fprintf(&b, " <= %s", strconv.FormatFloat(*s.Maximum, 'f', -1, 64))
	}
	return b.String()
}

// kind names a decoded value's JSON type the way encoding/json's errors
// do ("got number"), without the value, which may be a secret.
func kind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// orList is "a, b or c".
func orList(vs []string) string {
	if len(vs) == 1 {
		return vs[0]
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " or " + vs[len(vs)-1]
}

// Level returns the slog level named by a log_level value: debug, info,
// warn or error.
func Level(name string) (slog.Level, error) {
	switch name {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("expected %s, got %q", orList(logLevels), name)
}
