package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/inputfile"
	"github.com/tap-dev/tap/schemas"
	"github.com/tap-dev/tap/streams"
)

// checkStreams checks every definition, alone and against its neighbours
// and its schema. file is where the definitions were written.
func (c *Config) checkStreams(file string) error {
	if len(c.Streams) == 0 {
		return errors.New("streams: at least one stream definition is required (inline \"streams\" or \"streams_file\")")
	}
	c.Schemas = make(map[string]map[string]any, len(c.Streams))
	shared := newRefs(c.Definitions)
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
		schema, err := loadSchema(d, filepath.Dir(file), shared)
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
			// overlap is subtracted from numbers only: on a time key it
			// would be ignored, and the late rows it was meant to catch
			// missed.
			if inc := d.Incremental; inc != nil && inc.Overlap != "" && StreamKeyKind(d, schema) == "time" {
				return fmt.Errorf("stream %q: incremental.overlap: replication key %q is a time; give its overlap in seconds as incremental.overlap_s (overlap is for numeric keys)", d.Name, d.ReplicationKey)
			}
		}
		if d.Parent != nil && d.Parent.As != "" {
			if _, ok := props[d.Parent.As]; !ok {
				return fmt.Errorf("stream %q: parent.as: %q is not a property of the stream's schema", d.Name, d.Parent.As)
			}
		}
		if err := completeDeletes(d, schema, filepath.Dir(file)); err != nil {
			return err
		}
		c.Schemas[d.Name] = schema
	}
	for i := range c.Streams {
		d := &c.Streams[i]
		if f := d.Feed; f != nil && f.Backfill != nil {
			switch b := c.Stream(f.Backfill.Stream); {
			case b == nil:
				return fmt.Errorf("stream %q: feed.backfill.stream: no stream named %q (the REST stream that serves a range of seqs)", d.Name, f.Backfill.Stream)
			case b.Feed != nil:
				return fmt.Errorf("stream %q: feed.backfill.stream: %q is a feed; name a REST stream", d.Name, f.Backfill.Stream)
			case b.Parent != nil || b.Async != nil:
				return fmt.Errorf("stream %q: feed.backfill.stream: %q must be a top-level REST stream (not a child, not async)", d.Name, f.Backfill.Stream)
			}
		}
		if d.Parent == nil || d.Parent.Stream == "" { // none, or values
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

// LoadSchema decodes a stream's schema: an inline object, or a path
// relative to dir. A path that is not on disk but names a bundled demo
// schema ("schemas/orders.json") is read from the binary.
func LoadSchema(d *streams.Definition, dir string) (map[string]any, error) {
	return loadSchema(d, dir, nil)
}

// loadSchema is LoadSchema with the refs to shared definitions expanded.
func loadSchema(d *streams.Definition, dir string, shared *refs) (map[string]any, error) {
	raw := bytes.TrimSpace(d.Schema)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("stream %q: schema: is required (a path to a JSON Schema file, or an inline schema object; tap --config CONFIG --infer-schema %s prints one from the stream's first pages)", d.Name, d.Name)
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
		b, err := inputfile.Read(p, inputfile.MaxConfig)
		if errors.Is(err, fs.ErrNotExist) && strings.HasPrefix(filepath.ToSlash(name), "schemas/") {
			b, err = schemas.FS.ReadFile(strings.TrimPrefix(filepath.ToSlash(name), "schemas/"))
		}
		if err != nil {
			return nil, fmt.Errorf("stream %q: schema: cannot read %s: %v", d.Name, p, err)
		}
		if err := checkUTF8(b); err != nil {
			return nil, fmt.Errorf("stream %q: schema %s: %v", d.Name, name, err)
		}
		raw = b
	}
	where := "schema"
	if name != "" {
		where += " " + name
	}
	v, err := codec.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("stream %q: %s: not JSON: %v", d.Name, where, err)
	}
	schema, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("stream %q: %s: expected a JSON Schema object", d.Name, where)
	}
	if schema, err = shared.schema(schema); err != nil {
		return nil, fmt.Errorf("stream %q: %w", d.Name, err)
	}
	if t, ok := schema["type"]; ok && !TypeIncludes(t, "object") {
		return nil, fmt.Errorf("stream %q: %s: expected \"type\": \"object\" (a record schema)", d.Name, where)
	}
	if p, ok := schema["properties"]; ok {
		if _, isObj := p.(map[string]any); !isObj {
			return nil, fmt.Errorf("stream %q: %s: \"properties\" must be an object", d.Name, where)
		}
	} else {
		return nil, fmt.Errorf("stream %q: %s: expected \"properties\" listing the record's fields", d.Name, where)
	}
	// Not compiled here: a run compiles the schemas of the streams it
	// walks (records.New), and --discover none.
	return schema, nil
}

// TypeIncludes reports whether a JSON Schema "type" (a name or a list)
// includes want.
func TypeIncludes(t any, want string) bool {
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

// KeyKind says what a replication key holds, from its schema: "time",
// "number", or "" for anything else (an opaque version string). A bookmark
// is held to it.
// StreamKeyKind is KeyKind of d's replication key in schema, "time" when
// incremental.key_format reads it as one (an epoch number, a layout).
func StreamKeyKind(d *streams.Definition, schema map[string]any) string {
	if d.Incremental != nil && d.Incremental.KeyFormat != "" {
		return "time"
	}
	return KeyKind(schema, d.ReplicationKey)
}

func KeyKind(schema map[string]any, key string) string {
	props, _ := schema["properties"].(map[string]any)
	p, _ := props[key].(map[string]any)
	switch {
	case p["format"] == "date-time" || p["format"] == "date":
		return "time"
	case TypeIncludes(p["type"], "integer") || TypeIncludes(p["type"], "number"):
		return "number"
	}
	return ""
}
