// Package streammap applies Meltano SDK inline stream maps and schema
// flattening to a stream's schema and records.
package streammap

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/tap-dev/tap/streammap/pyexpr"
	"github.com/tap-dev/tap/streammap/pyexpr/lang"
)

// Inline stream maps and flattening, read as the Meltano SDK reads them
// (its "Inline Stream Maps" reference, singer_sdk/mapper.py): a stream
// map can rename (__alias__), copy (__source__), filter (__filter__),
// drop (null) streams, and add, compute or remove properties; flattening
// then spreads nested objects into parent__child properties.

// MapConfig is the stream map and flattening settings.
type MapConfig struct {
	// StreamMaps is the stream_maps object, decoded.
	StreamMaps map[string]any
	// StreamMapConfig is stream_map_config, the expressions' config.
	StreamMapConfig   map[string]any
	FlatteningEnabled bool
	// FlatteningMaxDepth is required when flattening is enabled.
	FlatteningMaxDepth *int
}

// StreamSchema is what the mapper needs of a source stream.
type StreamSchema struct {
	Schema        map[string]any
	KeyProperties []string
}

// Mapper holds the compiled maps of every source stream.
type Mapper struct {
	outputs map[string][]*Output
	active  bool
}

// Output is one stream a source stream is written as.
type Output struct {
	Name          string
	Source        string
	Schema        map[string]any
	KeyProperties []string

	passthrough bool       // no filter, no properties, no flattening
	splice      *spliceMap // nil: the map needs the record's tree
	includeAll  bool
	keys        []string // kept when __else__ is null
	filter      *pyexpr.Compiled
	props       []propMap
	vars        []envVar // the record properties the expressions read
	config      map[string]any
	flatDepth   int
	flatProps   map[string]any
	readsRecord bool // an expression reads the record whole
}

// envVar is a record property an expression reads, and its slot in the
// programs' environment.
type envVar struct {
	prop string
	slot int
}

type propMap struct {
	name   string
	remove bool
	expr   *pyexpr.Compiled
}

const nullString = "__NULL__"

func isNull(v any) bool { return v == nil || v == nullString }

// streamMap is one entry of stream_maps.
type streamMap struct {
	key    string
	def    map[string]any // nil: the stream is removed
	source string         // what the key matches: itself, or __source__
	copy   bool           // a __source__ map: a new stream beside the source
	glob   bool
}

func (sm streamMap) matches(stream string) bool {
	if sm.glob {
		return fnmatch(sm.source, stream)
	}
	return sm.source == stream
}

// NewMapper compiles the stream maps for the given source streams. Every
// error names the map and, for expressions, the expression.
//
// Where the SDK lets the last of several matching keys win (JSON key
// order), a stream's own name wins over globs here, and two globs that
// match one stream are an error: the config's meaning does not hang on
// key order.
func NewMapper(cfg MapConfig, streams map[string]StreamSchema) (*Mapper, error) {
	depth := 0
	if cfg.FlatteningEnabled {
		if cfg.FlatteningMaxDepth == nil {
			return nil, errors.New("flattening_max_depth: required when flattening_enabled is true")
		}
		if *cfg.FlatteningMaxDepth < 0 {
			return nil, fmt.Errorf("flattening_max_depth: must be 0 or more, got %d", *cfg.FlatteningMaxDepth)
		}
		depth = *cfg.FlatteningMaxDepth
	}
	m := &Mapper{outputs: map[string][]*Output{}, active: len(cfg.StreamMaps) > 0 || depth > 0}
	dropUnmapped := false
	var entries []streamMap
	for _, k := range slices.Sorted(maps.Keys(cfg.StreamMaps)) {
		d := cfg.StreamMaps[k]
		switch {
		case k == "__else__":
			if !isNull(d) {
				return nil, fmt.Errorf("stream_maps.__else__: only null is supported, got %v", d)
			}
			dropUnmapped = true
			continue
		case strings.HasPrefix(k, "__"):
			return nil, fmt.Errorf("stream_maps.%s: unknown option", k)
		}
		e := streamMap{key: k, source: k}
		if !isNull(d) {
			def, ok := d.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("stream_maps.%s: expected an object, null or \"__NULL__\"", k)
			}
			e.def = def
			if v, ok := def["__source__"]; ok {
				src, ok := v.(string)
				if !ok || src == "" {
					return nil, fmt.Errorf("stream_maps.%s.__source__: expected a stream name", k)
				}
				e.source, e.copy = src, true
			}
		}
		e.glob = strings.ContainsAny(e.source, "*?[")
		entries = append(entries, e)
	}
	matched := map[string]bool{}
	names := map[string]string{} // output name → the source that writes it
	for _, s := range slices.Sorted(maps.Keys(streams)) {
		src := streams[s]
		if _, ok := src.Schema["properties"].(map[string]any); !ok {
			return nil, fmt.Errorf("stream %q: schema has no properties", s)
		}
		var own, glob *streamMap
		var extra []*Output
		for i := range entries {
			e := &entries[i]
			if !e.matches(s) {
				continue
			}
			matched[e.key] = true
			switch {
			case e.copy:
				o, err := compileOutput(e.key, e.key, s, e.def, src, cfg.StreamMapConfig, depth)
				if err != nil {
					return nil, err
				}
				extra = append(extra, o)
			case !e.glob:
				own = e
			case glob != nil:
				return nil, fmt.Errorf("stream_maps: %q and %q both match stream %q; name the stream to choose", glob.key, e.key, s)
			default:
				glob = e
			}
		}
		if own == nil {
			own = glob
		}
		var primary *Output
		switch {
		case own == nil && dropUnmapped, own != nil && own.def == nil:
		default:
			var def map[string]any
			alias := s
			if own != nil {
				def = own.def
				if v, ok := def["__alias__"]; ok {
					var err error
					if alias, err = evalAlias(v, s); err != nil {
						return nil, fmt.Errorf("stream_maps.%s.__alias__: %w", own.key, err)
					}
				}
			}
			key := s
			if own != nil {
				key = own.key
			}
			var err error
			if primary, err = compileOutput(key, alias, s, def, src, cfg.StreamMapConfig, depth); err != nil {
				return nil, err
			}
		}
		outs := extra
		if primary != nil {
			outs = append([]*Output{primary}, extra...)
		}
		for _, o := range outs {
			if o.passthrough {
				o.Schema = src.Schema
			}
			if prev, dup := names[o.Name]; dup {
				return nil, fmt.Errorf("stream_maps: two maps write a stream named %q (from %s and %s)", o.Name, prev, o.Source)
			}
			names[o.Name] = o.Source
		}
		m.outputs[s] = outs
	}
	for _, e := range entries {
		switch {
		case matched[e.key] || e.glob:
		case e.copy:
			return nil, fmt.Errorf("stream_maps.%s.__source__: no stream named %q", e.key, e.source)
		default:
			return nil, fmt.Errorf("stream_maps.%s: no stream of that name (a new stream needs __source__)", e.key)
		}
	}
	return m, nil
}

// Active reports whether any map or flattening is configured.
func (m *Mapper) Active() bool { return m != nil && m.active }

// Outputs lists the streams a source stream is written as; none means it
// is not written at all.
func (m *Mapper) Outputs(stream string) []*Output { return m.outputs[stream] }

// Output is the output stream of that name, or nil.
func (m *Mapper) Output(name string) *Output {
	for _, outs := range m.outputs {
		for _, o := range outs {
			if o.Name == name {
				return o
			}
		}
	}
	return nil
}

// fnmatch is Python's fnmatch on stream names: * ? [seq] [!seq].
func fnmatch(pattern, name string) bool {
	ok, err := path.Match(strings.ReplaceAll(pattern, "[!", "[^"), name)
	return err == nil && ok
}

// evalAlias evaluates an __alias__: an expression over __stream_name__,
// or, when it is not one (customers_v2, aliased.stream), the name itself.
func evalAlias(v any, stream string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", errors.New("expected a string")
	}
	ce, err := pyexpr.Compile(s, &pyexpr.Scope{Vars: map[string]int{}}, false)
	if err != nil {
		return s, nil
	}
	out, err := ce.Program.Run(map[string]any{"stream": stream})
	if err != nil {
		return s, nil
	}
	name, ok := out.(string)
	if !ok || name == "" {
		return "", fmt.Errorf("%q does not give a stream name", s)
	}
	return name, nil
}

func compileOutput(mapKey, name, source string, def map[string]any, src StreamSchema, config map[string]any, depth int) (*Output, error) {
	where := "stream_maps." + mapKey
	props := src.Schema["properties"].(map[string]any)
	o := &Output{Name: name, Source: source, includeAll: true, config: config, flatDepth: depth, KeyProperties: src.KeyProperties}
	sc := &pyexpr.Scope{Props: map[string]map[string]any{}, Config: config, Vars: map[string]int{}}
	for k, v := range props {
		p, _ := v.(map[string]any)
		sc.Props[k] = p
	}
	if raw, ok := def["__key_properties__"]; ok {
		list, isList := raw.([]any)
		if !isList && !isNull(raw) {
			return nil, fmt.Errorf("%s.__key_properties__: expected a list of property names or null", where)
		}
		o.KeyProperties = []string{}
		for _, e := range list {
			k, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s.__key_properties__: expected a list of property names or null", where)
			}
			o.KeyProperties = append(o.KeyProperties, k)
		}
	}
	if v, ok := def["__else__"]; ok {
		if !isNull(v) {
			return nil, fmt.Errorf("%s.__else__: only null is supported, got %v", where, v)
		}
		o.includeAll = false
	}
	outProps := map[string]any{}
	var required []any
	if o.includeAll {
		maps.Copy(outProps, props)
		required, _ = src.Schema["required"].([]any)
	} else {
		// The SDK documents that key properties stay when __else__ is null.
		for _, k := range o.KeyProperties {
			if p, ok := props[k]; ok {
				outProps[k] = p
				o.keys = append(o.keys, k)
			}
		}
	}
	if raw, ok := def["__filter__"]; ok {
		s, ok := raw.(string)
		if !ok {
			return nil, fmt.Errorf("%s.__filter__: expected an expression (a string)", where)
		}
		sc.Self = ""
		ce, err := pyexpr.Compile(s, sc, true)
		if err != nil {
			return nil, fmt.Errorf("%s.__filter__: %q: %w", where, s, err)
		}
		o.filter = ce
	}
	removed := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(def)) {
		if strings.HasPrefix(k, "__") && strings.HasSuffix(k, "__") {
			switch k {
			case "__alias__", "__source__", "__filter__", "__else__", "__key_properties__":
				continue
			}
			return nil, fmt.Errorf("%s.%s: unknown option", where, k)
		}
		v := def[k]
		if isNull(v) {
			if slices.Contains(o.KeyProperties, k) {
				return nil, fmt.Errorf("%s.%s: removing a key property is not allowed; set __key_properties__ to the new key (or null)", where, k)
			}
			delete(outProps, k)
			removed[k] = true
			o.props = append(o.props, propMap{name: k, remove: true})
			continue
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s.%s: expected an expression (a string), null or \"__NULL__\"", where, k)
		}
		sc.Self = k
		ce, err := pyexpr.Compile(s, sc, false)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %q: %w", where, k, s, err)
		}
		outProps[k] = propertySchema(ce, src.Schema, props, outProps[k])
		o.props = append(o.props, propMap{name: k, expr: ce})
	}
	for _, k := range o.KeyProperties {
		if _, ok := outProps[k]; !ok {
			return nil, fmt.Errorf("%s.__key_properties__: %q is not a property of the mapped stream", where, k)
		}
	}
	schema := map[string]any{"type": "object", "properties": outProps}
	if o.includeAll {
		schema = maps.Clone(src.Schema)
		schema["properties"] = outProps
		var kept []any
		for _, r := range required {
			if s, _ := r.(string); !removed[s] {
				kept = append(kept, r)
			}
		}
		delete(schema, "required")
		if kept != nil {
			schema["required"] = kept
		}
	}
	if depth > 0 {
		flat, err := flattenSchema(schema, depth)
		if err != nil {
			return nil, fmt.Errorf("flattening stream %q: %w", name, err)
		}
		schema = flat
		o.flatProps = flat["properties"].(map[string]any)
	}
	o.Schema = schema
	for _, prop := range slices.Sorted(maps.Keys(sc.Vars)) {
		o.vars = append(o.vars, envVar{prop, sc.Vars[prop]})
	}
	o.passthrough = o.includeAll && o.filter == nil && len(o.props) == 0 && depth == 0
	o.readsRecord = o.filter != nil && o.filter.Record
	for _, p := range o.props {
		o.readsRecord = o.readsRecord || !p.remove && p.expr.Record
	}
	o.splice = newSpliceMap(o, nil)
	return o, nil
}

// propertySchema types a computed property: the whole record is an
// object; a plain reference copies the referenced property's schema; a
// function or operator gives its result type; otherwise the property's
// existing schema, then string — the SDK's documented fallback. Computed
// properties may be null.
func propertySchema(ce *pyexpr.Compiled, raw map[string]any, props map[string]any, existing any) map[string]any {
	if ce.Whole {
		return nullable(raw)
	}
	if p, ok := props[ce.Ref].(map[string]any); ok && ce.Ref != "" {
		return nullable(p)
	}
	if t, format := ce.JSONType(); t != "" {
		s := map[string]any{"type": []any{t, "null"}}
		if format != "" {
			s["format"] = format
		}
		return s
	}
	if p, ok := existing.(map[string]any); ok {
		return nullable(p)
	}
	return map[string]any{"type": []any{"string", "null"}}
}

func nullable(s map[string]any) map[string]any {
	c := maps.Clone(s)
	switch t := s["type"].(type) {
	case string:
		if t != "null" {
			c["type"] = []any{t, "null"}
		}
	case []any:
		if !slices.Contains(t, any("null")) {
			c["type"] = append(slices.Clone(t), "null")
		}
	}
	return c
}

// Transformer applies one Output's map to records. It reuses its
// evaluation state, so each goroutine needs its own.
type Transformer struct {
	o       *Output
	env     lang.Env
	results []lang.Value // the values of the properties of the record in hand
	added   []int        // the properties new to it
	spans   []span
	drop    map[string]bool
	splice  *spliceMap // o's, or with drop: nil when the map needs the tree
}

// Transformer returns a new Transformer for o.
func (o *Output) Transformer() *Transformer {
	t := &Transformer{o: o, splice: o.splice}
	vars := pyexpr.SlotStream + 1
	for _, v := range o.vars {
		vars = max(vars, v.slot+1)
	}
	t.env.Vars = make([]lang.Value, vars)
	t.env.Vars[pyexpr.SlotConfig] = lang.Of(o.config)
	t.env.Vars[pyexpr.SlotStream] = lang.StringValue(o.Source)
	return t
}

// Without makes t leave the named properties (deselected in a catalog)
// out of the records it writes; it returns t.
func (t *Transformer) Without(drop map[string]bool) *Transformer {
	if len(drop) > 0 {
		t.drop = drop
		if t.o.splice != nil {
			t.splice = newSpliceMap(t.o, drop)
		}
	}
	return t
}

// Transform maps one record: nil means the filter dropped it. The input
// is not modified; the result may be the input itself when the map
// changes nothing.
func (t *Transformer) Transform(rec map[string]any) (map[string]any, error) {
	return t.transform(rec, false)
}

// TransformInPlace is Transform for a caller that no longer needs rec: it
// may change rec and return it, which spares copying the record.
func (t *Transformer) TransformInPlace(rec map[string]any) (map[string]any, error) {
	return t.transform(rec, true)
}

func (t *Transformer) transform(rec map[string]any, inPlace bool) (map[string]any, error) {
	o := t.o
	if o.passthrough && t.drop == nil {
		return rec, nil
	}
	if o.readsRecord {
		t.env.Vars[pyexpr.SlotRecord] = lang.Of(rec) // boxed: an allocation
	}
	for _, v := range o.vars {
		t.env.Vars[v.slot] = lang.Of(pyexpr.Normalize(rec[v.prop]))
	}
	if keep, err := t.evaluate(); err != nil || !keep {
		return nil, err
	}
	result := func(i int) any {
		if v := t.results[i]; v.Kind() == lang.Int {
			return json.Number(strconv.Itoa(v.Int())) // pyexpr.Value's
		}
		return t.results[i].Any()
	}
	out := rec
	switch {
	case !o.includeAll:
		out = make(map[string]any, len(o.keys)+len(o.props))
		for _, k := range o.keys {
			if v, ok := rec[k]; ok {
				out[k] = v
			}
		}
	case !inPlace:
		// Sized for the new properties too: growing a map is costly.
		out = make(map[string]any, len(rec)+len(o.props))
		for k, v := range rec {
			out[k] = v
		}
	}
	// Removals, then replacements, then new properties: growing a map is
	// the costliest step here, and a full small map grows on any
	// assignment, even to a key it holds.
	for _, p := range o.props {
		if p.remove {
			delete(out, p.name)
		}
	}
	t.added = t.added[:0]
	for i, p := range o.props {
		if p.remove {
			continue
		}
		if _, ok := out[p.name]; ok {
			out[p.name] = result(i)
		} else {
			t.added = append(t.added, i)
		}
	}
	for _, i := range t.added {
		out[o.props[i].name] = result(i)
	}
	clear(t.results) // keep no record values alive
	if o.flatDepth > 0 {
		flat, err := flattenRecord(out, o.flatProps, o.flatDepth)
		if err != nil {
			return nil, fmt.Errorf("stream %q: flattening: %w", o.Name, err)
		}
		out = flat
	}
	for k := range t.drop {
		delete(out, k)
	}
	return out, nil
}

// evaluate runs the filter and the property expressions over t.env into
// t.results; keep is false when the filter drops the record. Every
// expression sees the record as it came: all are evaluated before any
// property changes. A result is as pyexpr.Value makes it, but for an
// int, a string, a bool and None, left unboxed for the bytes path to
// write as they are.
func (t *Transformer) evaluate() (keep bool, err error) {
	o := t.o
	if o.filter != nil {
		keep, err := o.filter.Program.Eval(&t.env)
		if err != nil {
			return false, fmt.Errorf("stream map %q: __filter__ %q: %w", o.Name, o.filter.Src, pyexpr.RuntimeError(err))
		}
		if !keep.Bool() {
			return false, nil
		}
	}
	t.results = t.results[:0]
	for _, p := range o.props {
		var v lang.Value
		if !p.remove {
			var err error
			v, err = p.expr.Program.Eval(&t.env)
			switch v.Kind() {
			case lang.Nil, lang.Bool, lang.Int, lang.String:
			default:
				if err == nil {
					var x any
					x, err = pyexpr.Value(v.Any())
					v = lang.Of(x)
				}
			}
			if err != nil {
				return false, fmt.Errorf("stream map %q, property %q: %q: %w", o.Name, p.name, p.expr.Src, pyexpr.RuntimeError(err))
			}
		}
		t.results = append(t.results, v)
	}
	return true, nil
}
