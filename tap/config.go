package tap

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tap-dev/tap/demoapi"
	"github.com/tap-dev/tap/schemas"
	"github.com/tap-dev/tap/streams"
)

// DemoURL as base_url starts the bundled demo API in-process on loopback.
const DemoURL = "embedded://demo"

// Config is the --config file, with defaults applied and every stream's
// schema resolved.
type Config struct {
	BaseURL            string               `json:"base_url"`
	Auth               Auth                 `json:"auth"`
	Headers            map[string]string    `json:"headers"`
	StartDate          string               `json:"start_date"`
	Streams            []streams.Definition `json:"streams"`
	StreamsFile        string               `json:"streams_file"`
	RateLimit          RateLimit            `json:"rate_limit"`
	Retry              Retry                `json:"retry"`
	RequestTimeoutS    *float64             `json:"request_timeout_s"`
	MaxParallelStreams *int                 `json:"max_parallel_streams"`
	MaxPages           int                  `json:"max_pages"`
	OnSchemaViolation  string               `json:"on_schema_violation"`
	DeadLetterPath     string               `json:"dead_letter_path"`
	Demo               demoapi.Config       `json:"demo"`

	// Path is the file the config was read from; relative paths in it
	// resolve against its directory.
	Path string `json:"-"`
	// Start is StartDate parsed (the zero time when unset).
	Start time.Time `json:"-"`
	// Schemas holds each stream's decoded schema by stream name.
	Schemas map[string]map[string]any `json:"-"`
}

// Auth is the auth block. Token, Password and Value are secrets.
type Auth struct {
	Type     string `json:"type"`
	Token    string `json:"token"`
	Username string `json:"username"`
	Password string `json:"password"`
	Name     string `json:"name"`
	Value    string `json:"value"`
	In       string `json:"in"`
}

// RateLimit is the rate_limit block. Pointers tell "unset" (default) from
// an explicit zero (off).
type RateLimit struct {
	RequestsPerSecond *float64 `json:"requests_per_second"`
	Burst             int      `json:"burst"`
	MaxInFlight       int      `json:"max_in_flight"`
	DailyQuota        int      `json:"daily_quota"`
}

// Retry is the retry block.
type Retry struct {
	MaxAttempts    int `json:"max_attempts"`
	BaseDelayMS    int `json:"base_delay_ms"`
	MaxDelayMS     int `json:"max_delay_ms"`
	MaxRetryAfterS int `json:"max_retry_after_s"`
}

// Secrets returns the secret values of the config, so that output can be
// checked (and scrubbed) for them.
func (c *Config) Secrets() []string {
	var out []string
	add := func(s string) {
		if s == "" {
			return
		}
		out = append(out, s)
		// The forms a secret takes on the wire, should an API echo it.
		for _, e := range []string{url.QueryEscape(s), url.PathEscape(s)} {
			if e != s {
				out = append(out, e)
			}
		}
	}
	for _, s := range []string{c.Auth.Token, c.Auth.Password, c.Auth.Value, c.Demo.Token} {
		add(s)
	}
	if c.Auth.Type == "basic" && c.Auth.Password != "" {
		add(base64.StdEncoding.EncodeToString([]byte(c.Auth.Username + ":" + c.Auth.Password)))
	}
	return out
}

// Stream returns the definition named name.
func (c *Config) Stream(name string) *streams.Definition {
	for i := range c.Streams {
		if c.Streams[i].Name == name {
			return &c.Streams[i]
		}
	}
	return nil
}

// LoadConfig reads, checks and completes the config at path. Every error
// is an *InputError naming the file and the field.
func LoadConfig(path string) (*Config, error) { return loadConfigWith(path, nil) }

// loadConfigWith is LoadConfig with a hook that may amend the decoded
// config (definitions decoded, nothing checked yet) before it is checked;
// --infer-schema uses it for schemas not written yet. prepare's error is
// returned as is.
func loadConfigWith(path string, prepare func(c *Config, streamsPath string) error) (*Config, error) {
	raw, err := readJSONFile(path, "config")
	if err != nil {
		return nil, err
	}
	tree, err := resolveEnv(raw, "")
	if err != nil {
		return nil, inputErr(path, err)
	}
	var cfg Config
	if err := decodeWithStreams(tree, &cfg, &cfg.Streams); err != nil {
		return nil, inputErr(path, err)
	}
	cfg.Path = path
	streamsPath := path
	if cfg.StreamsFile != "" {
		if len(cfg.Streams) > 0 {
			return nil, inputErr(path, errors.New("streams_file: set either streams or streams_file, not both"))
		}
		streamsPath = filepath.Join(filepath.Dir(path), cfg.StreamsFile)
		raw, err := readJSONFile(streamsPath, "streams file")
		if err != nil {
			return nil, err
		}
		tree, err := resolveEnv(raw, "")
		if err != nil {
			return nil, inputErr(streamsPath, err)
		}
		var file struct {
			Streams []streams.Definition `json:"streams"`
		}
		if err := decodeWithStreams(tree, &file, &cfg.Streams); err != nil {
			return nil, inputErr(streamsPath, err)
		}
	}
	if prepare != nil {
		if err := prepare(&cfg, streamsPath); err != nil {
			return nil, err
		}
	}
	if err := cfg.check(); err != nil {
		return nil, inputErr(path, err)
	}
	if err := cfg.checkStreams(streamsPath); err != nil {
		return nil, inputErr(streamsPath, err)
	}
	return &cfg, nil
}

func (c *Config) check() error {
	if c.BaseURL == "" {
		return errors.New(`base_url: is required (e.g. "https://api.example.com" or "embedded://demo")`)
	}
	if c.BaseURL != DemoURL {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New(`base_url: expected an http(s) URL such as "https://api.example.com", or "embedded://demo"`)
		}
	}
	switch c.Auth.Type {
	case "", "none":
	case "bearer":
		if c.Auth.Token == "" {
			return errors.New("auth.token: is required for auth type bearer")
		}
	case "basic":
		if c.Auth.Username == "" {
			return errors.New("auth.username: is required for auth type basic")
		}
	case "api_key":
		if c.Auth.Name == "" || c.Auth.Value == "" {
			return errors.New("auth: name and value are required for auth type api_key")
		}
		if c.Auth.In != "" && c.Auth.In != "header" && c.Auth.In != "query" {
			return fmt.Errorf("auth.in: expected header or query, got %q", c.Auth.In)
		}
	default:
		return fmt.Errorf("auth.type: expected none, bearer, basic or api_key, got %q", c.Auth.Type)
	}
	if c.StartDate != "" {
		t, err := time.Parse(time.RFC3339, c.StartDate)
		if err != nil {
			if t, err = time.Parse(time.DateOnly, c.StartDate); err != nil {
				return fmt.Errorf("start_date: expected an RFC 3339 time such as 2024-01-01T00:00:00Z, got %q", c.StartDate)
			}
		}
		c.Start = t.UTC()
	}
	rl := &c.RateLimit
	if rl.RequestsPerSecond == nil {
		rl.RequestsPerSecond = ptr(10.0)
	} else if *rl.RequestsPerSecond < 0 {
		return fmt.Errorf("rate_limit.requests_per_second: expected a number >= 0 (0 = unlimited), got %v", *rl.RequestsPerSecond)
	}
	if err := defaultInt(&rl.Burst, 1, 1, "rate_limit.burst"); err != nil {
		return err
	}
	if err := defaultInt(&rl.MaxInFlight, 4, 1, "rate_limit.max_in_flight"); err != nil {
		return err
	}
	if rl.DailyQuota < 0 {
		return fmt.Errorf("rate_limit.daily_quota: expected an integer >= 0 (0 = off), got %d", rl.DailyQuota)
	}
	r := &c.Retry
	for _, f := range []struct {
		v        *int
		def, min int
		name     string
	}{
		{&r.MaxAttempts, 6, 1, "retry.max_attempts"},
		{&r.BaseDelayMS, 500, 1, "retry.base_delay_ms"},
		{&r.MaxDelayMS, 30000, 1, "retry.max_delay_ms"},
		{&r.MaxRetryAfterS, 300, 1, "retry.max_retry_after_s"},
	} {
		if err := defaultInt(f.v, f.def, f.min, f.name); err != nil {
			return err
		}
	}
	if r.MaxDelayMS < r.BaseDelayMS {
		return fmt.Errorf("retry.max_delay_ms: must be >= retry.base_delay_ms (%d), got %d", r.BaseDelayMS, r.MaxDelayMS)
	}
	if c.RequestTimeoutS == nil {
		c.RequestTimeoutS = ptr(30.0)
	} else if *c.RequestTimeoutS <= 0 {
		return fmt.Errorf("request_timeout_s: expected a number of seconds > 0, got %v", *c.RequestTimeoutS)
	}
	if c.MaxParallelStreams == nil {
		c.MaxParallelStreams = ptr(2)
	} else if *c.MaxParallelStreams < 1 {
		return fmt.Errorf("max_parallel_streams: expected an integer >= 1, got %d", *c.MaxParallelStreams)
	}
	if c.MaxPages < 0 {
		return fmt.Errorf("max_pages: expected an integer >= 0 (0 = unlimited), got %d", c.MaxPages)
	}
	switch c.OnSchemaViolation {
	case "":
		c.OnSchemaViolation = ViolationDeadLetter
	case ViolationFail, ViolationDeadLetter, ViolationEmit:
	default:
		return fmt.Errorf("on_schema_violation: expected fail, dead_letter or emit, got %q", c.OnSchemaViolation)
	}
	if c.DeadLetterPath == "" {
		c.DeadLetterPath = "dead_letter.jsonl"
	}
	if !filepath.IsAbs(c.DeadLetterPath) {
		c.DeadLetterPath = filepath.Join(filepath.Dir(c.Path), c.DeadLetterPath)
	}
	if c.BaseURL == DemoURL {
		if _, err := demoapi.New(c.Demo); err != nil {
			return err
		}
	}
	return nil
}

// Schema-violation policies.
const (
	ViolationFail       = "fail"
	ViolationDeadLetter = "dead_letter"
	ViolationEmit       = "emit"
)

// checkStreams checks every definition, alone and against its neighbours
// and its schema. file is where the definitions were written.
func (c *Config) checkStreams(file string) error {
	if len(c.Streams) == 0 {
		return errors.New("streams: at least one stream definition is required (inline \"streams\" or \"streams_file\")")
	}
	c.Schemas = make(map[string]map[string]any, len(c.Streams))
	seen := map[string]bool{}
	for i := range c.Streams {
		d := &c.Streams[i]
		if err := d.Check(); err != nil {
			var fe *streams.FieldError
			if errors.As(err, &fe) && fe.Stream == "" {
				return fmt.Errorf("streams[%d].%s: %s", i, fe.Field, fe.Msg)
			}
			return err
		}
		if seen[d.Name] {
			return fmt.Errorf("stream %q: name: defined twice; stream names must be unique", d.Name)
		}
		seen[d.Name] = true
		if d.Pagination.MaxPages == 0 {
			d.Pagination.MaxPages = c.MaxPages
		}
		schema, err := loadSchema(d, filepath.Dir(file))
		if err != nil {
			return err
		}
		props, _ := schema["properties"].(map[string]any)
		for _, k := range d.PrimaryKey {
			if _, ok := props[k]; !ok {
				return fmt.Errorf("stream %q: primary_key: %q is not a property of the stream's schema", d.Name, k)
			}
		}
		if d.ReplicationKey != "" {
			if _, ok := props[d.ReplicationKey]; !ok {
				return fmt.Errorf("stream %q: replication_key: %q is not a property of the stream's schema", d.Name, d.ReplicationKey)
			}
		}
		if d.Parent != nil && d.Parent.As != "" {
			if _, ok := props[d.Parent.As]; !ok {
				return fmt.Errorf("stream %q: parent.as: %q is not a property of the stream's schema", d.Name, d.Parent.As)
			}
		}
		c.Schemas[d.Name] = schema
	}
	for i := range c.Streams {
		d := &c.Streams[i]
		if d.Parent == nil {
			continue
		}
		if !seen[d.Parent.Stream] {
			return fmt.Errorf("stream %q: parent.stream: no stream named %q", d.Name, d.Parent.Stream)
		}
		// A cycle of parents would walk forever.
		for p, hops := d.Parent.Stream, 0; p != ""; hops++ {
			if hops > len(c.Streams) {
				return fmt.Errorf("stream %q: parent.stream: parents form a cycle", d.Name)
			}
			pd := c.Stream(p)
			if pd.Parent == nil {
				break
			}
			p = pd.Parent.Stream
		}
	}
	return nil
}

// loadSchema decodes a stream's schema: an inline object, or a path
// relative to dir. A path that is not on disk but names a bundled demo
// schema ("schemas/orders.json") is read from the binary.
func loadSchema(d *streams.Definition, dir string) (map[string]any, error) {
	raw := bytes.TrimSpace(d.Schema)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("stream %q: schema: is required (a path to a JSON Schema file, or an inline schema object)", d.Name)
	}
	var name string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &name); err != nil {
			return nil, fmt.Errorf("stream %q: schema: %v", d.Name, err)
		}
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) && strings.HasPrefix(filepath.ToSlash(name), "schemas/") {
			b, err = schemas.FS.ReadFile(strings.TrimPrefix(filepath.ToSlash(name), "schemas/"))
		}
		if err != nil {
			return nil, fmt.Errorf("stream %q: schema: cannot read %s: %v", d.Name, p, unwrapPathError(err))
		}
		raw = b
	}
	where := "schema"
	if name != "" {
		where += " " + name
	}
	v, err := decodeNumbers(raw)
	if err != nil {
		return nil, fmt.Errorf("stream %q: %s: not JSON: %v", d.Name, where, err)
	}
	schema, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("stream %q: %s: expected a JSON Schema object", d.Name, where)
	}
	if t, ok := schema["type"]; ok && !typeIncludes(t, "object") {
		return nil, fmt.Errorf("stream %q: %s: expected \"type\": \"object\" (a record schema)", d.Name, where)
	}
	if p, ok := schema["properties"]; ok {
		if _, isObj := p.(map[string]any); !isObj {
			return nil, fmt.Errorf("stream %q: %s: \"properties\" must be an object", d.Name, where)
		}
	} else {
		return nil, fmt.Errorf("stream %q: %s: expected \"properties\" listing the record's fields", d.Name, where)
	}
	if _, err := compileSchema(d.Name, schema); err != nil {
		return nil, fmt.Errorf("stream %q: %s: not a valid JSON Schema: %v", d.Name, where, err)
	}
	return schema, nil
}

func typeIncludes(t any, want string) bool {
	switch t := t.(type) {
	case string:
		return t == want
	case []any:
		for _, e := range t {
			if e == want {
				return true
			}
		}
	}
	return false
}

func defaultInt(v *int, def, min int, name string) error {
	if *v == 0 {
		*v = def
		return nil
	}
	if *v < min {
		return fmt.Errorf("%s: expected an integer >= %d, got %d", name, min, *v)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// resolveEnv replaces every {"env": "NAME"} object of the decoded tree by
// the value of that environment variable.
func resolveEnv(v any, path string) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if name, ok := v["env"].(string); ok && len(v) == 1 {
			val, set := os.LookupEnv(name)
			if !set {
				return nil, fmt.Errorf("%s: environment variable %s is not set", fieldName(path), name)
			}
			return val, nil
		}
		for k, e := range v {
			r, err := resolveEnv(e, join(path, k))
			if err != nil {
				return nil, err
			}
			v[k] = r
		}
	case []any:
		for i, e := range v {
			r, err := resolveEnv(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			v[i] = r
		}
	}
	return v, nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func fieldName(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}

// decodeWithStreams decodes a config or streams file into out, and its
// "streams" array into defs one definition at a time, so that an error
// names the stream it is in.
func decodeWithStreams(tree any, out any, defs *[]streams.Definition) error {
	obj, ok := tree.(map[string]any)
	if !ok {
		return errors.New("expected a JSON object at the top level")
	}
	list, has := obj["streams"]
	delete(obj, "streams")
	stringifyValues(obj["headers"])
	if err := decodeStrict(obj, out); err != nil {
		return err
	}
	if !has || list == nil {
		return nil
	}
	items, ok := list.([]any)
	if !ok {
		return fmt.Errorf("streams: expected an array, got %s", strings.TrimPrefix(strings.TrimPrefix(jsonType(list), "an "), "a "))
	}
	*defs = make([]streams.Definition, len(items))
	for i, item := range items {
		if m, ok := item.(map[string]any); ok {
			stringifyValues(m["params"])
		}
		if err := decodeStrict(item, &(*defs)[i]); err != nil {
			if m, ok := item.(map[string]any); ok {
				if name, ok := m["name"].(string); ok && name != "" {
					return fmt.Errorf("stream %q: %w", name, err)
				}
			}
			return fmt.Errorf("streams[%d]: %w", i, err)
		}
	}
	return nil
}

// stringifyValues turns the numbers and booleans of a string map (query
// parameters, headers) into their text: {"limit": 100} means "100".
func stringifyValues(v any) {
	m, _ := v.(map[string]any)
	for k, e := range m {
		switch e := e.(type) {
		case json.Number:
			m[k] = e.String()
		case bool:
			m[k] = fmt.Sprint(e)
		}
	}
}

// decodeStrict decodes a resolved tree into out, refusing unknown fields so
// that a typo in a setting is an error rather than a silent default.
func decodeStrict(tree any, out any) error {
	b, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	if _, ok := tree.(map[string]any); !ok {
		return errors.New("expected a JSON object at the top level")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return describeDecodeError(err)
	}
	return nil
}

// describeDecodeError turns encoding/json's errors into "field: expected
// X, got Y" without quoting the value, which may be a secret.
func describeDecodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%s: expected %s, got %s", fieldName(te.Field), goTypeName(te.Type.String()), te.Value)
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("unknown field %s", msg)
	}
	return err
}

func goTypeName(t string) string {
	t = strings.TrimPrefix(t, "*")
	switch {
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map["), strings.Contains(t, "."):
		return "an object"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	}
	return t
}

// readJSONFile reads and decodes a JSON file, naming line and column on a
// syntax error.
func readJSONFile(path, what string) (any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &InputError{File: path, Err: fmt.Errorf("cannot read %s: %v", what, unwrapPathError(err))}
	}
	v, err := decodeNumbers(b)
	if err != nil {
		return nil, &InputError{File: path, Err: describeSyntax(b, err)}
	}
	return v, nil
}

// decodeNumbers decodes exactly one JSON value, numbers as json.Number.
func decodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the JSON value at offset %d", dec.InputOffset())
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("unexpected data after the JSON value at offset %d", dec.InputOffset())
	}
	return v, nil
}

func describeSyntax(b []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the offending byte itself.
		line, col := lineCol(b, max(se.Offset-1, 0))
		return fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, se.Error())
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		line, col := lineCol(b, int64(len(b)))
		return fmt.Errorf("invalid JSON at line %d, column %d: unexpected end of input", line, col)
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

func lineCol(b []byte, off int64) (line, col int) {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	line, col = 1, 1
	for _, c := range b[:off] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// sortedKeys returns the keys of m in order, so that output is stable.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
