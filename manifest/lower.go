package manifest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tap-dev/tap/manifest/interp"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streammap"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
)

// Lowering: a manifest's streams, with the connector's config, written in
// the tap's own stream language, which then compiles as a config file's
// streams do. The run is the tap's in every way (the splice path, STATE,
// dead letters, the rate limit): the engine never learns that the streams
// came from a manifest.
//
// Every expression is evaluated here, once: those that read only the
// config and $parameters become constants; those the run must compute
// become the language's own parts when they are one of the forms it
// has — a cursor read from a path of the response, a link header, the
// last record's field, a window's bounds, a parent record's key. An
// expression of another form is refused, naming its place and what the
// tap runs instead: never run half-understood.

// Lowered is a manifest compiled for a run.
type Lowered struct {
	// Tree is the config in the tap's own language: streams, auth,
	// headers, and the tap's settings of the config's "tap" object.
	Tree map[string]any
	// Secrets are the connector config's values at fields its spec marks
	// airbyte_secret, to be masked wherever they would appear.
	Secrets []string
	// CDKState is, by stream, its datetime cursor as the CDK keeps it in
	// state (settings.Config.CDKState).
	CDKState map[string]settings.CDKCursor
	// RefreshTokenField is the connector config's field of the OAuth
	// refresh token (settings.Config.RefreshTokenField).
	RefreshTokenField string
	// Cursors are, by stream, the cursors the manifest's expressions
	// compute (streams.Pagination.Compute): a stream's pagination in
	// Tree has the cursor's parameter and no path.
	Cursors map[string]streams.NextCursor
	// ResponseRules are, by stream, its response filters that read the
	// body (streams.Definition.ResponseRule); those of status codes
	// alone are also the stream's on_status in Tree.
	ResponseRules map[string]streams.ResponseRule
	// RequestParts are, by stream, the request parameters it computes
	// for each walk (streams.Definition.Parts).
	RequestParts map[string][]streams.RequestPart
	// RecordSteps are, by stream, the record filters and transformations
	// the stream maps cannot state (streams.Definition.RecordStep); the
	// others are the streams' maps in Tree.
	RecordSteps map[string]streams.RecordStep
	// Paths are, by stream, its path computed for each walk
	// (streams.Definition.ComputedPath); its path in Tree is url_base's.
	Paths map[string]streams.RequestValue
}

// Lower compiles the manifest's streams for c (checked by CheckConfig).
// A form the tap does not run is a Refusal in the *Error, one line per
// place.
func (m *Manifest) Lower(c *Config) (*Lowered, error) {
	l := &lowerer{m: m, config: c.Connector, out: map[string]any{}, cdk: map[string]settings.CDKCursor{}, maps: map[string]any{}, cursors: map[string]streams.NextCursor{}, responses: map[string]streams.ResponseRule{}, parts: map[string][]streams.RequestPart{}, steps: map[string]streams.RecordStep{}, computedPaths: map[string]streams.RequestValue{}}
	for k, v := range c.Tap {
		l.out[k] = v
	}
	override, _ := c.Tap["base_url"].(string)
	delete(l.out, "base_url")
	var defs []any
	for i, s := range m.Streams {
		if d := l.stream(s, fmt.Sprintf("streams[%d]", i)); d != nil {
			defs = append(defs, d)
		}
	}
	if len(l.problems) > 0 || len(l.refusals) > 0 {
		return nil, &Error{File: m.File, Problems: l.problems, Refusals: l.refusals}
	}
	base := l.origin
	if override != "" {
		base = strings.TrimSuffix(override, "/")
	}
	l.out["base_url"] = base
	l.out["streams"] = defs
	if l.auth != nil {
		// A token endpoint on the API's host moves with it.
		for _, k := range []string{"token_url", "login_url"} {
			if tu, ok := l.auth[k].(string); ok && override != "" && strings.HasPrefix(tu, l.origin+"/") {
				l.auth[k] = base + strings.TrimPrefix(tu, l.origin)
			}
		}
		l.out["auth"] = l.auth
	}
	if len(l.maps) > 0 {
		if _, own := c.Tap["stream_maps"]; own {
			return nil, &Error{File: m.File, Problems: []Problem{{Path: TapKey + ".stream_maps", Msg: "the manifest's transformations and record filters are stream maps: give no stream_maps of your own"}}}
		}
		l.out["stream_maps"] = l.maps
	}
	if l.start != "" {
		if _, set := l.out["start_date"]; !set {
			l.out["start_date"] = l.start
		}
	}
	var secrets []string
	if m.Spec != nil {
		names := map[string]bool{}
		secretFields(m.Spec.ConnectionSpecification, names)
		collectSecrets(c.Connector, names, &secrets)
	}
	return &Lowered{Tree: l.out, Secrets: secrets, CDKState: l.cdk, RefreshTokenField: l.refreshField, Cursors: l.cursors, ResponseRules: l.responses, RequestParts: l.parts, RecordSteps: l.steps, Paths: l.computedPaths}, nil
}

// Compile is the config a run of the manifest's streams takes: Lower's
// tree loaded as a config file's streams load (settings.FromTree), its
// stream maps compiled, the CDK's state shapes set. file names the
// connector's config in errors.
func (m *Manifest) Compile(file string, c *Config) (*settings.Config, error) {
	low, err := m.Lower(c)
	if err != nil {
		return nil, err
	}
	cfg, err := settings.FromTree(file, low.Tree, func(cfg *settings.Config) error {
		for i := range cfg.Streams {
			d := &cfg.Streams[i]
			d.ResponseRule, d.Parts, d.RecordStep, d.ComputedPath = low.ResponseRules[d.Name], low.RequestParts[d.Name], low.RecordSteps[d.Name], low.Paths[d.Name]
			if c, ok := low.Cursors[d.Name]; ok && !d.Pagination.Compute(c) {
				return fmt.Errorf("stream %q: pagination type %q takes no computed cursor", d.Name, d.Pagination.Type)
			}
		}
		return nil
	}, low.Secrets...)
	if err != nil {
		return nil, err
	}
	cfg.CDKState, cfg.RefreshTokenField = low.CDKState, low.RefreshTokenField
	if len(cfg.StreamMaps) > 0 {
		srcs := make(map[string]streammap.StreamSchema, len(cfg.Streams))
		for i := range cfg.Streams {
			d := &cfg.Streams[i]
			srcs[d.Name] = streammap.StreamSchema{Schema: cfg.Schemas[d.Name], KeyProperties: d.PrimaryKey}
		}
		if _, err := streammap.NewMapper(streammap.MapConfig{StreamMaps: cfg.StreamMaps}, srcs); err != nil {
			return nil, fmt.Errorf("%s: the stream maps of the manifest's transformations: %w", m.File, err)
		}
	}
	return cfg, nil
}

// lowerer is one manifest's lowering: the config it evaluates with, what
// the streams must share (the tap's config has one base URL, one auth and
// one start date), and what it found wrong.
type lowerer struct {
	m      *Manifest
	config map[string]any
	out    map[string]any
	cdk    map[string]settings.CDKCursor
	maps   map[string]any // by stream, its stream map (transform)

	origin, originFrom string
	refreshField       string // the connector config's field of the OAuth refresh token
	auth               map[string]any
	authFrom           string
	start, startFrom   string
	problems           []Problem
	refusals           []Refusal
	current            string                           // the name of the stream being lowered
	basePath           string                           // the path of its url_base, without a trailing /
	cdkPart            settings.CDKCursor               // its partitions as the CDK keeps them (CDKPartition, List)
	params             map[string]any                   // its requester's $parameters
	times              *string                          // its cursor's format of a window's bounds (paramExpr)
	interval           bool                             // a computed parameter reads the window's bounds
	parts              map[string][]streams.RequestPart // by stream, its computed request parameters
	cursors            map[string]streams.NextCursor    // by stream, its computed cursor
	responses          map[string]streams.ResponseRule  // by stream, its filters that read the body (responseFilters)
	steps              map[string]streams.RecordStep    // by stream, its record step (filter, transformations)
	computedPaths      map[string]streams.RequestValue  // by stream, its path computed for each walk (pathExpr)
}

func (l *lowerer) refuse(path, typ, why string, args ...any) {
	l.refusals = append(l.refusals, Refusal{Path: path, Type: typ, Why: fmt.Sprintf(why, args...)})
}

func (l *lowerer) problem(path, msg string, args ...any) {
	l.problems = append(l.problems, Problem{Path: path, Msg: fmt.Sprintf(msg, args...)})
}

// vars are what an expression evaluated at load reads: the config and its
// component's $parameters. partition, when not nil, gives each partition
// field a {placeholder} of the tap's language.
func (l *lowerer) vars(n *Node, partition map[string]any) *interp.Vars {
	return &interp.Vars{Config: l.config, Parameters: n.Parameters, StreamSlice: partition}
}

// atLoad is what an expression may read to be evaluated at load.
const atLoad = interp.Config | interp.Parameters

// text renders e at load; ok is false (and the refusal made) when e reads
// what only the run knows, or fails.
func (l *lowerer) text(e Expr, n *Node, field string, partition map[string]any) (string, bool) {
	reads := e.T.Reads()
	allowed := interp.VarSet(atLoad)
	if partition != nil {
		allowed |= interp.VarSet(interp.StreamSlice | interp.StreamPartition)
	}
	if reads&^allowed != 0 {
		l.refuse(join(n.Path, field), n.Type, "%q reads %s, which the tap computes only as a cursor, a link, a window's bounds or a parent's key", e.Src, reads&^allowed)
		return "", false
	}
	s, err := e.T.Render(l.vars(n, partition))
	if err != nil {
		l.problem(join(n.Path, field), "%v", err)
		return "", false
	}
	if partition != nil && reads&interp.VarSet(interp.StreamSlice|interp.StreamPartition) != 0 && !placeholdersOnly(e, l.vars(n, partition), partition, s) {
		l.refuse(join(n.Path, field), n.Type, "%q: a value built from the partition's (the tap fills in the partition's value as it is)", e.Src)
		return "", false
	}
	return s, true
}

// placeholdersOnly reports whether text, e rendered with the partition's
// {placeholder}s, holds them where e puts the partition's value as it is:
// it holds one, and rendered again with other stand-ins, it differs by
// them alone. An expression that splits, slices or formats the value
// would otherwise fill the path with what it made of the placeholder.
func placeholdersOnly(e Expr, v *interp.Vars, partition map[string]any, text string) bool {
	other := make(map[string]any, len(partition))
	want := text
	used := false
	for k, p := range partition {
		ph, _ := p.(string)
		used = used || strings.Contains(text, ph)
		stand := "\x00part-" + k + "\x00"
		other[k] = stand
		want = strings.ReplaceAll(want, ph, stand)
	}
	alt := *v
	alt.StreamSlice = other
	got, err := e.T.Render(&alt)
	return used && err == nil && got == want
}

// stream lowers one DeclarativeStream to a stream definition.
func (l *lowerer) stream(s *DeclarativeStream, path string) map[string]any {
	d := map[string]any{"name": s.Name}
	l.current, l.cdkPart, l.times, l.interval = s.Name, settings.CDKCursor{}, new(string), false
	before := len(l.problems) + len(l.refusals)
	r, ok := s.Retriever.(*SimpleRetriever)
	if !ok {
		l.refuse(join(path, "retriever"), s.Retriever.node().Type, "only a SimpleRetriever")
		return nil
	}
	req, ok := r.Requester.(*HttpRequester)
	if !ok {
		l.refuse(join(path, "retriever.requester"), r.Requester.node().Type, "only an HttpRequester")
		return nil
	}
	partition, asField := l.partition(r, s, d)
	l.request(req, d, partition)
	l.records(r.RecordSelector, d)
	l.paginator(r.Paginator, d)
	l.cursor(s.IncrementalSync, d)
	l.transform(s, r.RecordSelector, d, asField)
	if len(s.PrimaryKey) > 0 {
		var pk []any
		for _, p := range s.PrimaryKey {
			if len(p) != 1 {
				l.refuse(join(path, "primary_key"), "DeclarativeStream", "a key of a nested field (%s)", strings.Join(p, "."))
				continue
			}
			pk = append(pk, p[0])
		}
		d["primary_key"] = pk
	}
	l.schema(s, d, path)
	// The tap's language asks a record schema to list the key fields and
	// the field it writes a child's parent key into; a manifest's schema
	// may leave them out (the CDK reads any field).
	var listed []string
	if pk, ok := d["primary_key"].([]any); ok {
		for _, k := range pk {
			listed = append(listed, k.(string))
		}
	}
	if p, ok := d["parent"].(map[string]any); ok && p["as"] != nil {
		listed = append(listed, p["as"].(string))
	}
	if rk, ok := d["replication_key"].(string); ok {
		listed = append(listed, rk)
	}
	if schema, ok := d["schema"].(map[string]any); ok {
		// A record schema written as an array of records (goldcast's) is
		// read, as the CDK reads it, for the record's own.
		if items, ok := schema["items"].(map[string]any); ok && schema["type"] == "array" && items["type"] == "object" {
			schema = items
		}
		schema = maps.Clone(schema)
		if _, typed := schema["type"]; !typed {
			schema["type"] = "object"
		}
		props, _ := schema["properties"].(map[string]any)
		props = maps.Clone(props)
		if props == nil {
			props = map[string]any{}
		}
		for _, name := range listed {
			if _, ok := props[name]; !ok {
				props[name] = map[string]any{}
			}
		}
		schema["properties"] = props
		d["schema"] = schema
	}
	if len(l.problems)+len(l.refusals) > before {
		return nil
	}
	return d
}

// partition lowers a SubstreamPartitionRouter of one parent to the
// stream's parent: the partition field is the parent's key as the child's
// path and records name it. It returns the placeholders the path may read.
func (l *lowerer) partition(r *SimpleRetriever, s *DeclarativeStream, d map[string]any) (map[string]any, *AddedFieldDefinition) {
	if len(r.PartitionRouter) == 0 {
		return nil, nil
	}
	pr := r.PartitionRouter[0]
	if len(r.PartitionRouter) > 1 {
		l.refuse(pr.node().Path, pr.node().Type, "one partition router of a stream (the tap walks one parent or one list)")
		return nil, nil
	}
	if list, ok := pr.(*ListPartitionRouter); ok {
		return l.listPartition(list, s, d)
	}
	sub, ok := pr.(*SubstreamPartitionRouter)
	if !ok {
		l.refuse(pr.node().Path, pr.node().Type, "this partition router")
		return nil, nil
	}
	if len(sub.ParentStreamConfigs) != 1 {
		l.refuse(sub.Path, sub.Type, "a partition router of %d parents (the tap reads one)", len(sub.ParentStreamConfigs))
		return nil, nil
	}
	pc := sub.ParentStreamConfigs[0]
	key, ok1 := l.text(pc.ParentKey, &pc.Node, "parent_key", nil)
	field, ok2 := l.text(pc.PartitionField, &pc.Node, "partition_field", nil)
	if !ok1 || !ok2 {
		return nil, nil
	}
	param := ""
	if o := pc.RequestOption; o != nil {
		var ok bool
		if param, ok = l.queryOption(o, "the parent's key"); !ok {
			return nil, nil
		}
	}
	if len(pc.ExtraFields) > 0 {
		l.refuse(join(pc.Path, "extra_fields"), pc.Type, "extra_fields")
		return nil, nil
	}
	if pc.Stream == nil || !slices.ContainsFunc(l.m.Streams, func(s *DeclarativeStream) bool { return s.Name == pc.Stream.Name }) {
		l.refuse(join(pc.Path, "stream"), pc.Type, "a parent that is not one of the manifest's streams")
		return nil, nil
	}
	// The tap writes the parent's key into each child record under
	// parent.as: the field an AddFields of the partition's value adds,
	// else the partition field itself.
	as, added := partitionAdded(s, field)
	if as == "" {
		as = field
	}
	d["parent"] = map[string]any{"stream": pc.Stream.Name, "key": key, "as": as}
	l.cdkPart = settings.CDKCursor{CDKPartition: field}
	if param != "" {
		d["parent"].(map[string]any)["param"] = param
	}
	return map[string]any{field: "{" + as + "}"}, added
}

// joinURL is url_base joined with path as the CDK joins them: path under
// url_base, or path alone when it is an absolute URL.
func joinURL(base, path string) string {
	switch {
	case path == "":
		return base
	case strings.HasPrefix(path, "https://") || strings.HasPrefix(path, "http://"):
		return path
	}
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(path, "/")
}

// isParent reports whether stream name is the parent of one of the
// manifest's streams (a SubstreamPartitionRouter's parent_stream_configs).
func (l *lowerer) isParent(name string) bool {
	for _, s := range l.m.Streams {
		r, ok := s.Retriever.(*SimpleRetriever)
		if !ok {
			continue
		}
		for _, pr := range r.PartitionRouter {
			if sub, ok := pr.(*SubstreamPartitionRouter); ok {
				for _, pc := range sub.ParentStreamConfigs {
					if pc.Stream != nil && pc.Stream.Name == name {
						return true
					}
				}
			}
		}
	}
	return false
}

// partitionName is the name of a lowered parent's key in the stream's
// path and partitions: parent.as, else parent.key.
func partitionName(parent map[string]any) string {
	if as, ok := parent["as"].(string); ok && as != "" {
		return as
	}
	name, _ := parent["key"].(string)
	return name
}

// partitionAdded is the field an AddFields of s adds of the partition's
// value at field ({{ stream_partition.field }}), which the tap writes as
// parent.as; "" when none does.
func partitionAdded(s *DeclarativeStream, field string) (string, *AddedFieldDefinition) {
	for _, t := range s.Transformations {
		if a, ok := t.(*AddFields); ok && !a.Condition.IsSet() {
			for _, f := range a.Fields {
				v, p, ok := f.Value.T.Path()
				if ok && v&(interp.StreamPartition|interp.StreamSlice) != 0 && len(p) == 1 && p[0] == field && len(f.Path) == 1 && f.ValueType == "" {
					return f.Path[0], f
				}
			}
		}
	}
	return "", nil
}

// listPartition lowers a ListPartitionRouter to parent.values: the stream
// is walked once for each value, which fills the path's placeholder of
// cursor_field and its request_option; the CDK adds it to no record
// unless an AddFields does (parent.as).
func (l *lowerer) listPartition(r *ListPartitionRouter, s *DeclarativeStream, d map[string]any) (map[string]any, *AddedFieldDefinition) {
	field, ok := l.text(r.CursorField, &r.Node, "cursor_field", nil)
	if !ok {
		return nil, nil
	}
	raw := r.Values.V
	if e, ok := raw.(Expr); ok {
		if extra := e.T.Reads() &^ interp.VarSet(atLoad); extra != 0 {
			l.refuse(join(r.Path, "values"), r.Type, "%q reads %s: the values are known at load", e.Src, extra)
			return nil, nil
		}
		x, err := e.T.Eval(l.vars(&r.Node, nil))
		if err != nil {
			l.problem(join(r.Path, "values"), "%v", err)
			return nil, nil
		}
		raw = x
	}
	items, isList := raw.([]any)
	if !isList {
		items = []any{raw} // one value, not its characters
	}
	values := []any{} // none: the stream is walked for none
	for i, item := range items {
		if e, ok := item.(Expr); ok {
			text, ok := l.text(e, &r.Node, fmt.Sprintf("values[%d]", i), nil)
			if !ok {
				return nil, nil
			}
			item = text
		}
		text, ok := scalarText(item)
		if !ok {
			l.refuse(join(r.Path, fmt.Sprintf("values[%d]", i)), r.Type, "a value that is %s", kindOf(item))
			return nil, nil
		}
		values = append(values, text)
	}
	parent := map[string]any{"values": values, "key": field}
	as, added := partitionAdded(s, field)
	if as != "" {
		parent["as"] = as
	}
	if o := r.RequestOption; o != nil {
		param, ok := l.queryOption(o, "the partition's value")
		if !ok {
			return nil, nil
		}
		parent["param"] = param
	}
	d["parent"] = parent
	l.cdkPart = settings.CDKCursor{CDKPartition: field, List: true}
	return map[string]any{field: "{" + partitionName(parent) + "}"}, added
}

// request lowers the requester: the URL (its origin shared by every
// stream), method, query parameters, headers, body and auth.
func (l *lowerer) request(r *HttpRequester, d map[string]any, partition map[string]any) {
	var full string
	l.basePath, l.params = "", r.Parameters
	if r.URL.IsSet() {
		u, ok := l.text(r.URL, &r.Node, "url", partition)
		if !ok {
			return
		}
		full = u
	} else {
		base, ok := l.text(r.URLBase, &r.Node, "url_base", nil)
		if !ok {
			return
		}
		full = base
		if bu, err := url.Parse(base); err == nil {
			l.basePath = strings.TrimRight(bu.EscapedPath(), "/")
		}
		switch {
		case r.Path.IsSet() && l.computedPath(r.Path, d, partition):
			// the walk computes the path; the origin is url_base's
		case r.Path.IsSet():
			p, ok := l.text(r.Path, &r.Node, "path", partition)
			if !ok {
				return
			}
			full = joinURL(base, p)
		}
	}
	// Braces of the placeholders survive url.Parse in a path.
	u, err := url.Parse(full)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		l.problem(join(r.Node.Path, "url_base"), "expected an http(s) URL, got %q", full)
		return
	}
	origin := u.Scheme + "://" + u.Host
	switch {
	case l.origin == "":
		l.origin, l.originFrom = origin, r.Node.Path
	case l.origin != origin:
		l.refuse(join(r.Node.Path, "url_base"), r.Type, "streams on two hosts (%s, and %s at %s): the tap's config has one base_url", origin, l.origin, l.originFrom)
		return
	}
	d["path"] = strings.NewReplacer("%7B", "{", "%7D", "}").Replace(u.EscapedPath())
	if q := u.Query(); len(q) > 0 {
		params := map[string]any{}
		for k, vs := range q {
			params[k] = vs[0]
		}
		d["params"] = params
	}
	if r.Method != "" {
		d["method"] = r.Method
	}
	l.requestParams(r, d, partition)
	l.requestHeaders(r, d)
	l.requestBody(r, d)
	if r.Authenticator != nil {
		l.authenticator(r.Authenticator)
	}
	if r.ErrorHandler != nil {
		l.errorHandler(r.ErrorHandler, d)
	}
}

// requestParams lowers request_parameters: each a constant at load.
// A parameter whose value is the partition's (the parent's key) is the
// parent's param.
func (l *lowerer) requestParams(r *HttpRequester, d map[string]any, partition map[string]any) {
	obj, ok := r.RequestParams.V.(map[string]any)
	if !r.RequestParams.IsSet() {
		return
	}
	if !ok {
		l.refuse(join(r.Node.Path, "request_parameters"), r.Type, "request parameters given as one expression")
		return
	}
	params, _ := d["params"].(map[string]any)
	if params == nil {
		params = map[string]any{}
	}
	for _, k := range sortedKeys(obj) {
		field := "request_parameters." + k
		var v string
		if e, isExpr := obj[k].(Expr); isExpr && l.computedParam(e, d, k, partition) {
			continue
		}
		if e, isExpr := obj[k].(Expr); isExpr && partition != nil {
			if v, ok = l.text(e, &r.Node, field, partition); ok && strings.ContainsAny(v, "{}") {
				if !l.parentParam(d, k, v, join(r.Node.Path, field), r.Type) {
					return
				}
				continue
			}
		} else {
			v, ok = l.constant(obj[k], &r.Node, field)
		}
		if !ok {
			continue
		}
		if v == "" {
			continue // the CDK leaves an empty parameter out
		}
		params[k] = v
	}
	if len(params) > 0 {
		d["params"] = params
	}
}

// computedParam makes the request parameter name of expression e a part
// computed for each walk (paramExpr) when e reads the window's bounds or
// the clock, or the partition's value other than as the whole value
// (which parent.param sends); it reports whether it did.
func (l *lowerer) computedParam(e Expr, d map[string]any, name string, partition map[string]any) bool {
	reads := e.T.Reads()
	walk := interp.VarSet(interp.StreamInterval | interp.Clock)
	if partition == nil {
		walk |= interp.VarSet(interp.StreamSlice | interp.StreamPartition)
	} else if _, path, ok := e.T.Path(); !ok || len(path) != 1 || partition[path[0]] == nil {
		walk |= interp.VarSet(interp.StreamSlice | interp.StreamPartition) // more than the partition's value
	}
	if reads&walk == 0 || reads&^interp.VarSet(paramReads) != 0 {
		return false
	}
	p := &paramExpr{t: e.T, base: interp.Vars{Config: l.config, Parameters: l.params}, times: l.times}
	if par, ok := d["parent"].(map[string]any); ok {
		p.part, p.cdkPart = partitionName(par), cmp.Or(l.cdkPart.CDKPartition, partitionName(par))
	}
	if reads&interp.VarSet(interp.StreamInterval|interp.StreamSlice) != 0 {
		l.interval, p.bounds = true, true
	}
	l.parts[l.current] = append(l.parts[l.current], streams.RequestPart{Name: name, In: streams.InQuery, Value: p})
	return true
}

// computedPath makes the path expression e the stream's ComputedPath
// (pathExpr) when it reads the window's bounds or the clock, or the
// partition's value other than as a whole {placeholder}; it reports
// whether it did.
func (l *lowerer) computedPath(e Expr, d map[string]any, partition map[string]any) bool {
	reads := e.T.Reads()
	walk := interp.VarSet(interp.StreamInterval | interp.StreamSlice | interp.StreamPartition | interp.Clock)
	if reads&walk == 0 || reads&^interp.VarSet(paramReads) != 0 {
		return false
	}
	if partition != nil && reads&interp.VarSet(interp.StreamInterval|interp.Clock) == 0 {
		if s, err := e.T.Render(l.vars(&Node{}, partition)); err == nil && placeholdersOnly(e, l.vars(&Node{}, partition), partition, s) {
			return false // a {placeholder} the tap fills
		}
	}
	p := &pathExpr{paramExpr: paramExpr{t: e.T, base: interp.Vars{Config: l.config, Parameters: l.params}, times: l.times}, base: l.basePath}
	if par, ok := d["parent"].(map[string]any); ok {
		p.part, p.cdkPart = partitionName(par), cmp.Or(l.cdkPart.CDKPartition, partitionName(par))
	}
	if reads&interp.VarSet(interp.StreamInterval|interp.StreamSlice) != 0 {
		l.interval, p.bounds = true, true
	}
	l.computedPaths[l.current] = p
	return true
}

// parentParam makes param the parent's query parameter when value is the
// partition's placeholder, as a whole.
func (l *lowerer) parentParam(d map[string]any, param, value, at, typ string) bool {
	p, _ := d["parent"].(map[string]any)
	if p == nil || value != "{"+partitionName(p)+"}" {
		l.refuse(at, typ, "%q: a value built around the partition's (the tap sends the parent's key as it is)", value)
		return false
	}
	if cur, set := p["param"]; set && cur != param {
		l.refuse(at, typ, "the parent's key sent as two parameters (%s and %s)", cur, param)
		return false
	}
	p["param"] = param
	return true
}

// constant is a Value's leaf evaluated at load, as text.
func (l *lowerer) constant(v any, n *Node, field string) (string, bool) {
	switch x := v.(type) {
	case Expr:
		return l.text(x, n, field, nil)
	case nil:
		return "", true
	}
	if s, ok := scalarText(v); ok {
		return s, true
	}
	l.refuse(join(n.Path, field), n.Type, "a request value that is %s", kindOf(v))
	return "", false
}

// requestHeaders lowers request_headers, constants at load, to the
// stream's own headers.
func (l *lowerer) requestHeaders(r *HttpRequester, d map[string]any) {
	if !r.Headers.IsSet() {
		return
	}
	obj, ok := r.Headers.V.(map[string]any)
	if !ok {
		l.refuse(join(r.Node.Path, "request_headers"), r.Type, "request headers given as one expression")
		return
	}
	h := map[string]any{}
	for _, k := range sortedKeys(obj) {
		v, ok := l.constant(obj[k], &r.Node, "request_headers."+k)
		if ok && v != "" {
			h[k] = v
		}
	}
	if len(h) > 0 {
		d["headers"] = h
	}
}

// requestBody lowers a JSON body of constants.
func (l *lowerer) requestBody(r *HttpRequester, d map[string]any) {
	var v Value
	switch b := r.Body.(type) {
	case nil:
		v = r.BodyJSON
		if r.BodyData.IsSet() {
			l.refuse(join(r.Node.Path, "request_body_data"), r.Type, "a form body")
			return
		}
	case *RequestBodyJsonObject:
		v = b.Value
	default:
		l.refuse(b.node().Path, b.node().Type, "a body other than JSON")
		return
	}
	if !v.IsSet() {
		return
	}
	body, ok := l.tree(v.V, &r.Node, "request_body_json")
	if ok {
		d["body"] = body
	}
}

// tree evaluates a Value's tree at load.
func (l *lowerer) tree(v any, n *Node, field string) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ev, ok := l.tree(e, n, field+"."+k)
			if !ok {
				return nil, false
			}
			out[k] = ev
		}
		return out, true
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			ev, ok := l.tree(e, n, fmt.Sprintf("%s[%d]", field, i))
			if !ok {
				return nil, false
			}
			out[i] = ev
		}
		return out, true
	case Expr:
		if x.T.Reads()&^interp.VarSet(atLoad) != 0 {
			l.refuse(join(n.Path, field), n.Type, "%q reads what only the run knows", x.Src)
			return nil, false
		}
		val, err := x.T.Eval(l.vars(n, nil))
		if err != nil {
			l.problem(join(n.Path, field), "%v", err)
			return nil, false
		}
		return val, true
	}
	return v, true
}

// authenticator lowers the requester's authenticator to the config's
// auth, which every stream must share.
func (l *lowerer) authenticator(a Authenticator) {
	auth, ok := l.authOf(a)
	if !ok {
		return
	}
	n := a.node()
	switch {
	case l.authFrom == "":
		l.auth, l.authFrom = auth, n.Path
	case !sameAuth(l.auth, auth):
		l.refuse(n.Path, n.Type, "an authenticator other than that of %s: the tap's config has one", l.authFrom)
	}
}

func sameAuth(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if fmt.Sprint(b[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

func (l *lowerer) authOf(a Authenticator) (map[string]any, bool) {
	switch x := a.(type) {
	case *NoAuth:
		return nil, true
	case *BearerAuthenticator:
		tok, ok := l.text(x.APIToken, &x.Node, "api_token", nil)
		return map[string]any{"type": "bearer", "token": tok}, ok
	case *BasicHttpAuthenticator:
		user, ok1 := l.text(x.Username, &x.Node, "username", nil)
		pass := ""
		ok2 := true
		if x.Password.IsSet() {
			pass, ok2 = l.text(x.Password, &x.Node, "password", nil)
		}
		return map[string]any{"type": "basic", "username": user, "password": pass}, ok1 && ok2
	case *ApiKeyAuthenticator:
		tok, ok := l.text(x.APIToken, &x.Node, "api_token", nil)
		if !ok {
			return nil, false
		}
		in, name := "header", ""
		switch {
		case x.InjectInto != nil:
			switch x.InjectInto.InjectInto {
			case "header":
			case "request_parameter":
				in = "query"
			default:
				l.refuse(join(x.Path, "inject_into"), x.Type, "an API key sent in the %s", x.InjectInto.InjectInto)
				return nil, false
			}
			name, ok = l.optionName(x.InjectInto)
		case x.Header.IsSet():
			name, ok = l.text(x.Header, &x.Node, "header", nil)
		default:
			l.problem(x.Path, "an ApiKeyAuthenticator needs header or inject_into")
			return nil, false
		}
		return map[string]any{"type": "api_key", "name": name, "value": tok, "in": in}, ok
	case *SelectiveAuthenticator:
		sel, ok := lookupPath(l.config, x.SelectionPath)
		name, _ := sel.(string)
		chosen := x.Authenticators[name]
		if !ok || chosen == nil {
			l.problem(join(x.Path, "authenticator_selection_path"), "the config's %s is %q, which names none of the authenticators", strings.Join(x.SelectionPath, "."), name)
			return nil, false
		}
		return l.authOf(chosen)
	case *OAuthAuthenticator:
		return l.oauth(x)
	case *SessionTokenAuthenticator:
		return l.session(x)
	}
	n := a.node()
	l.refuse(n.Path, n.Type, "this authenticator is not lowered to the tap's auth yet")
	return nil, false
}

// session lowers a SessionTokenAuthenticator to auth type session: its
// login requester's URL, method, parameters, headers and body evaluated
// at load, its own authenticator (none, or HTTP Basic), the token's path,
// how long it lasts and where it goes.
func (l *lowerer) session(x *SessionTokenAuthenticator) (map[string]any, bool) {
	r := x.LoginRequester
	a := map[string]any{"type": "session", "token_path": strings.Join(x.SessionTokenPath, "."), "login_method": cmp.Or(strings.ToUpper(r.Method), "GET")}
	var loginURL string
	if r.URL.IsSet() {
		u, ok := l.text(r.URL, &r.Node, "url", nil)
		if !ok {
			return nil, false
		}
		loginURL = u
	} else {
		base, ok := l.text(r.URLBase, &r.Node, "url_base", nil)
		if !ok {
			return nil, false
		}
		loginURL = base
		if r.Path.IsSet() {
			p, ok := l.text(r.Path, &r.Node, "path", nil)
			if !ok {
				return nil, false
			}
			loginURL = joinURL(base, p)
		}
	}
	a["login_url"] = loginURL
	switch la := r.Authenticator.(type) {
	case nil, *NoAuth:
	case *BasicHttpAuthenticator:
		basic, ok := l.authOf(la)
		if !ok {
			return nil, false
		}
		a["username"], a["password"] = basic["username"], basic["password"]
	default:
		l.refuse(la.node().Path, la.node().Type, "a login authenticated other than by HTTP Basic")
		return nil, false
	}
	for _, f := range []struct {
		v    Value
		name string
		to   string
	}{{r.RequestParams, "request_parameters", "login_params"}, {r.Headers, "request_headers", "login_headers"}, {r.BodyData, "request_body_data", "login_form"}} {
		if !f.v.IsSet() {
			continue
		}
		obj, ok := f.v.V.(map[string]any)
		if !ok {
			l.refuse(join(r.Node.Path, f.name), r.Type, "a login's %s given as one expression", f.name)
			return nil, false
		}
		m := map[string]any{}
		for _, k := range sortedKeys(obj) {
			v, ok := l.constant(obj[k], &r.Node, f.name+"."+k)
			if !ok {
				return nil, false
			}
			if v != "" {
				m[k] = v
			}
		}
		if len(m) > 0 {
			a[f.to] = m
		}
	}
	body := map[string]any{}
	l.requestBody(&HttpRequester{Node: r.Node, BodyJSON: r.BodyJSON, Body: r.Body}, body)
	if b, ok := body["body"].(map[string]any); ok && len(b) > 0 {
		a["login_body"] = b
	}
	if x.ExpirationDuration != "" {
		months, dur, err := interp.ParseDuration(x.ExpirationDuration)
		if err != nil || months != 0 || dur <= 0 {
			l.refuse(join(x.Path, "expiration_duration"), x.Type, "%q: a lifetime of seconds, hours, days or weeks", x.ExpirationDuration)
			return nil, false
		}
		a["expires_s"] = dur.Seconds()
	}
	switch ra := x.RequestAuthentication.(type) {
	case *SessionTokenBearer:
	case *SessionTokenAPIKey:
		switch ra.InjectInto.InjectInto {
		case "header":
			a["in"] = "header"
		case "request_parameter":
			a["in"] = "query"
		default:
			l.refuse(join(ra.Path, "inject_into"), ra.Type, "a session token sent in the %s", ra.InjectInto.InjectInto)
			return nil, false
		}
		name, ok := l.optionName(ra.InjectInto)
		if !ok {
			return nil, false
		}
		a["name"] = name
	default:
		n := x.RequestAuthentication.node()
		l.refuse(n.Path, n.Type, "this session token injection")
		return nil, false
	}
	return a, true // a part refused above fails the whole lowering
}

// oauth lowers an OAuthAuthenticator of the refresh-token or
// client-credentials grant.
func (l *lowerer) oauth(x *OAuthAuthenticator) (map[string]any, bool) {
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"access_token_value", x.AccessTokenValue.IsSet()},
		{"refresh_request_headers", x.RefreshRequestHeaders.IsSet()},
		{"refresh_token_updater", x.RefreshTokenUpdater != nil},
		{"send_refresh_request_as_query_params", x.RefreshAsQueryParams},
	} {
		if f.set {
			l.refuse(join(x.Path, f.name), x.Type, "%s", f.name)
			return nil, false
		}
	}
	get := func(e Expr, field string) string {
		if !e.IsSet() {
			return ""
		}
		s, _ := l.text(e, &x.Node, field, nil)
		return s
	}
	grant := get(x.GrantType, "grant_type")
	if grant == "" {
		grant = "refresh_token"
	}
	a := map[string]any{"type": "oauth2", "grant_type": grant,
		"token_url":     get(x.TokenRefreshEndpoint, "token_refresh_endpoint"),
		"client_id":     get(x.ClientID, "client_id"),
		"client_secret": get(x.ClientSecret, "client_secret"),
	}
	rt := x.RefreshToken // the refresh token's expression
	if grant == "refresh_token" {
		a["refresh_token"] = get(x.RefreshToken, "refresh_token")
	}
	if len(x.Scopes) > 0 {
		scopes := make([]any, len(x.Scopes)) // the config tree's form of a list
		for i, sc := range x.Scopes {
			scopes[i] = sc
		}
		a["scopes"] = scopes
	}
	// The refresh request's extra fields, constants at load, are the
	// token request's parameters.
	if x.RefreshRequestBody.IsSet() {
		body, ok := x.RefreshRequestBody.V.(map[string]any)
		if !ok {
			l.refuse(join(x.Path, "refresh_request_body"), x.Type, "a refresh request body given as one expression")
			return nil, false
		}
		params := map[string]any{}
		for _, k := range sortedKeys(body) {
			v, ok := l.constant(body[k], &x.Node, "refresh_request_body."+k)
			if !ok {
				return nil, false
			}
			switch k {
			case "grant_type", "client_id", "client_secret", "refresh_token":
				// The token request sends these: the body's stands in
				// for one the authenticator leaves out.
				if cur, _ := a[k].(string); cur == "" {
					a[k] = v
					if e, ok := body[k].(Expr); ok && k == "refresh_token" {
						rt = e
					}
				} else if v != "" && v != cur {
					l.refuse(join(x.Path, "refresh_request_body."+k), x.Type, "%s in the refresh request body other than the authenticator's", k)
					return nil, false
				}
				continue
			}
			if v != "" {
				params[k] = v
			}
		}
		if len(params) > 0 {
			a["token_params"] = params
		}
	}
	if grant == "refresh_token" {
		// A token the API rotates is written back where the connector's
		// config holds it, which the expression must name.
		var v interp.Var
		var path []string
		ok := rt.IsSet()
		if ok {
			v, path, ok = rt.T.Path()
		}
		if !ok || v != interp.Config || len(path) == 0 {
			l.refuse(join(x.Path, "refresh_token"), x.Type, "%q: the tap keeps a rotated refresh token in the config field the expression reads, which must be one ({{ config['refresh_token'] }})", rt.Src)
			return nil, false
		}
		l.refreshField = strings.Join(path, ".")
	}
	return a, true
}

// optionName is a RequestOption's field name, at load.
func (l *lowerer) optionName(o *RequestOption) (string, bool) {
	if !o.FieldName.IsSet() {
		l.refuse(join(o.Path, "field_path"), o.Type, "a field_path (a nested field of a JSON body)")
		return "", false
	}
	return l.text(o.FieldName, &o.Node, "field_name", nil)
}

// queryOption is a RequestOption that must be a query parameter.
func (l *lowerer) queryOption(o *RequestOption, what string) (string, bool) {
	if o.InjectInto != "request_parameter" {
		l.refuse(join(o.Path, "inject_into"), o.Type, "%s sent in the %s (the tap sends it as a query parameter)", what, o.InjectInto)
		return "", false
	}
	return l.optionName(o)
}

// pageInjects are the places a paginator's RequestOption may put its
// value, as the tap's pagination.inject names them.
var pageInjects = map[string]string{"request_parameter": streams.InjectQuery, "body_json": streams.InjectBody, "header": streams.InjectHeader}

// pageOption is a paginator's RequestOption: its name, and where it goes
// into pg["inject"], which every option of one paginator must share
// (the tap's paginators put all their parameters in one place).
func (l *lowerer) pageOption(o *RequestOption, what string, pg map[string]any) (string, bool) {
	where, ok := pageInjects[o.InjectInto]
	if !ok {
		l.refuse(join(o.Path, "inject_into"), o.Type, "%s sent in the %s (the tap sends it in the query, a JSON body or a header)", what, o.InjectInto)
		return "", false
	}
	if had, set := pg["inject"].(string); set && had != where {
		l.refuse(join(o.Path, "inject_into"), o.Type, "%s sent in the %s, and the paginator's other option elsewhere (the tap sends them to one place)", what, o.InjectInto)
		return "", false
	}
	pg["inject"] = where
	if where == streams.InjectBody && !o.FieldName.IsSet() && len(o.FieldPath) > 0 {
		var parts []string
		for i, f := range o.FieldPath {
			p, ok := l.text(f, &o.Node, fmt.Sprintf("field_path[%d]", i), nil)
			if !ok {
				return "", false
			}
			parts = append(parts, p)
		}
		return strings.Join(parts, "."), true
	}
	return l.optionName(o)
}

// records lowers the record selector: a DpathExtractor's constant path.
func (l *lowerer) records(s *RecordSelector, d map[string]any) {
	ex, ok := s.Extractor.(*DpathExtractor)
	if !ok {
		l.refuse(s.Extractor.node().Path, s.Extractor.node().Type, "only a DpathExtractor")
		return
	}
	var parts []string
	for i, f := range ex.FieldPath {
		p, ok := l.text(f, &ex.Node, fmt.Sprintf("field_path[%d]", i), nil)
		if !ok {
			return
		}
		if strings.Contains(p, ".") { // a segment of its own, or a * of the tap's records_path
			l.refuse(join(ex.Path, fmt.Sprintf("field_path[%d]", i)), ex.Type, "a field_path with %q in it", p)
			return
		}
		parts = append(parts, p)
	}
	d["records_path"] = strings.Join(parts, ".")
	// The CDK's DpathExtractor yields an object where the records are
	// as one record.
	d["object_is_record"] = true
}

// schema lowers the schema loader: an inline schema, or a file next to
// the manifest.
func (l *lowerer) schema(s *DeclarativeStream, d map[string]any, path string) {
	if len(s.SchemaLoader) == 0 {
		file := filepath.Join(l.m.Dir, "schemas", s.Name+".json")
		d["schema"] = file
		return
	}
	switch x := s.SchemaLoader[0].(type) {
	case *InlineSchemaLoader:
		// The tap's language asks for the properties the schema lists;
		// a manifest's schema may list none (the CDK then reads any).
		schema := map[string]any{"properties": map[string]any{}}
		for k, v := range x.Schema {
			schema[k] = v
		}
		d["schema"] = schema
	case *JsonFileSchemaLoader:
		p := "./schemas/" + s.Name + ".json"
		if x.FilePath.IsSet() {
			var ok bool
			if p, ok = l.text(x.FilePath, &x.Node, "file_path", nil); !ok {
				return
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(l.m.Dir, p)
		}
		d["schema"] = p
		if b, err := os.ReadFile(p); err == nil {
			var schema map[string]any
			if json.Unmarshal(b, &schema) == nil && schema != nil {
				d["schema"] = schema // read here, so a child's partition field can be added
			}
		}
	default:
		n := s.SchemaLoader[0].node()
		l.refuse(n.Path, n.Type, "this schema loader")
	}
}

// paginator lowers the DefaultPaginator's strategy to a pagination type.
func (l *lowerer) paginator(p Paginator, d map[string]any) {
	dp, ok := p.(*DefaultPaginator)
	if !ok {
		d["pagination"] = map[string]any{"type": "none"}
		return
	}
	pg := map[string]any{}
	if dp.PageSizeOption != nil {
		name, ok := l.pageOption(dp.PageSizeOption, "the page size", pg)
		if !ok {
			return
		}
		pg["page_size_param"] = name
	}
	size := func(e Expr, n *Node) bool {
		if !e.IsSet() {
			return true
		}
		s, ok := l.text(e, n, "page_size", nil)
		if !ok {
			return false
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			l.problem(join(n.Path, "page_size"), "expected a whole number above 0, got %q", s)
			return false
		}
		pg["page_size"] = v
		return true
	}
	var tokenParam string
	nextURL := false
	switch o := dp.PageTokenOption.(type) {
	case *RequestPath:
		nextURL = true
	case *RequestOption:
		var ok bool
		if tokenParam, ok = l.pageOption(o, "the page token", pg); !ok {
			return
		}
	case nil:
	}
	switch s := dp.Strategy.(type) {
	case *PageIncrement:
		if !size(s.PageSize, &s.Node) || !l.needParam(tokenParam, nextURL, &s.Node) {
			return
		}
		pg["type"], pg["page_param"], pg["start_page"] = "page_number", tokenParam, 1
		if s.StartFromPage != nil {
			pg["start_page"] = *s.StartFromPage
		}
	case *OffsetIncrement:
		if !size(s.PageSize, &s.Node) || !l.needParam(tokenParam, nextURL, &s.Node) {
			return
		}
		if pg["page_size"] == nil && pg["page_size_param"] != nil {
			l.refuse(s.Path, s.Type, "a page_size_option without a page_size to send")
			return
		}
		pg["type"], pg["offset_param"] = "offset", tokenParam
	case *CursorPagination:
		if !size(s.PageSize, &s.Node) || !l.cursorPagination(s, pg, tokenParam, nextURL) {
			return
		}
	default:
		n := dp.Strategy.node()
		l.refuse(n.Path, n.Type, "this pagination strategy")
		return
	}
	if pg["inject"] == streams.InjectQuery {
		delete(pg, "inject") // the language's default
	}
	// A next URL or link carries the page size on; the first request
	// sends it as a parameter.
	if t := pg["type"]; (t == "next_url" || t == "link_header") && pg["inject"] != nil {
		l.refuse(dp.Path, dp.Type, "a next page's URL with the page size sent in the %s (the tap sends it in the first request's query)", pg["inject"])
		return
	}
	if t := pg["type"]; (t == "next_url" || t == "link_header") && pg["page_size"] != nil {
		if name, ok := pg["page_size_param"].(string); ok {
			params, _ := d["params"].(map[string]any)
			if params == nil {
				params = map[string]any{}
			}
			params[name] = strconv.Itoa(pg["page_size"].(int))
			d["params"] = params
		}
		delete(pg, "page_size")
		delete(pg, "page_size_param")
	}
	d["pagination"] = pg
}

func (l *lowerer) needParam(param string, nextURL bool, n *Node) bool {
	if param == "" || nextURL {
		l.refuse(n.Path, n.Type, "a page number or offset sent other than as a query parameter")
		return false
	}
	return true
}

// cursorPagination lowers a cursor_value of one of the forms the tap
// reads: a path of the response (a token, or with a RequestPath the next
// page's URL), the link header's next URL, or a field of the last record.
func (l *lowerer) cursorPagination(s *CursorPagination, pg map[string]any, param string, nextURL bool) bool {
	v, path, ok := s.CursorValue.T.Path()
	at := join(s.Path, "cursor_value")
	if !ok {
		return l.computedCursor(s, pg, param, nextURL)
	}
	dotted := strings.Join(path, ".")
	switch {
	case v == interp.Headers && len(path) == 3 && strings.EqualFold(path[0], "link") && path[1] == "next" && path[2] == "url" && nextURL:
		pg["type"] = "link_header"
	case v == interp.Response && nextURL && len(path) > 0:
		pg["type"], pg["next_url_path"] = "next_url", dotted
	case v == interp.Response && param != "" && len(path) > 0:
		pg["type"], pg["cursor_param"], pg["next_cursor_path"] = "cursor", param, dotted
	case v == interp.LastRecord && param != "" && len(path) == 1:
		pg["type"], pg["cursor_param"], pg["cursor_from_last_record"] = "cursor", param, path[0]
	case param != "" || nextURL:
		return l.computedCursor(s, pg, param, nextURL)
	default:
		l.refuse(at, s.Type, "%q with this page_token_option", s.CursorValue.Src)
		return false
	}
	if !s.StopCondition.IsSet() {
		return true
	}
	// The tap stops when the cursor is missing, null or empty; a stop
	// condition that says the same adds nothing. "not response.has_more"
	// is the cursor type's has_more_path.
	// A stop condition on a part of the cursor's path (the link header's
	// "next") stops no sooner than the cursor's absence does.
	if sv, sp, ok := s.StopCondition.C.NotPath(); ok && sv == v && len(sp) > 0 && len(sp) <= len(path) && slices.Equal(sp, path[:len(sp)]) {
		return true
	}
	if sv, sp, ok := s.StopCondition.C.NotPath(); ok && sv == interp.Response && pg["type"] == "cursor" && len(sp) > 0 {
		pg["has_more_path"] = strings.Join(sp, ".")
		return true
	}
	if sv, sp, ok := s.StopCondition.C.FalsePath(); ok && sv == interp.Response && pg["type"] == "cursor" && len(sp) > 0 {
		pg["has_more_path"] = strings.Join(sp, ".")
		return true
	}
	delete(pg, "next_url_path")
	delete(pg, "next_cursor_path")
	delete(pg, "cursor_from_last_record")
	delete(pg, "has_more_path")
	return l.computedCursor(s, pg, param, nextURL)
}

// computedCursor lowers a CursorPagination whose value or stop condition
// is no path the tap's paginators read to a cursor the manifest's own
// expressions compute on each page (cursorExpr), sent as param.
func (l *lowerer) computedCursor(s *CursorPagination, pg map[string]any, param string, nextURL bool) bool {
	if param == "" && !nextURL {
		l.refuse(join(s.Path, "cursor_value"), s.Type, "%q: a cursor with no page_token_option to send it", s.CursorValue.Src)
		return false
	}
	reads := s.CursorValue.T.Reads()
	if s.StopCondition.IsSet() {
		reads |= s.StopCondition.C.Template().Reads()
	}
	if extra := reads &^ interp.VarSet(cursorReads); extra != 0 {
		l.refuse(join(s.Path, "cursor_value"), s.Type, "%q reads %s: a cursor is computed from the page, the config and $parameters", s.CursorValue.Src, extra)
		return false
	}
	c := &cursorExpr{value: s.CursorValue.T, base: interp.Vars{Config: l.config, Parameters: s.Parameters}}
	if s.StopCondition.IsSet() {
		c.stop = s.StopCondition.C
	}
	if nextURL {
		pg["type"] = "next_url" // the value is the next page's URL, or its path under url_base
		delete(pg, "cursor_param")
		c.under = l.basePath + "/"
	} else {
		pg["type"], pg["cursor_param"] = "cursor", param
	}
	l.cursors[l.current] = c
	return true
}

// cursor lowers a DatetimeBasedCursor to the replication key and the
// incremental filter.
func (l *lowerer) cursor(is IncrementalSync, d map[string]any) {
	if is == nil {
		return
	}
	c, ok := is.(*DatetimeBasedCursor)
	if !ok {
		l.refuse(is.node().Path, is.node().Type, "this incremental sync")
		return
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"global_substream_cursor", c.GlobalSubstreamCursor},
		{"partition_field_start", c.PartitionFieldStart != ""},
		{"partition_field_end", c.PartitionFieldEnd != ""},
	} {
		if f.set {
			l.refuse(join(c.Path, f.name), c.Type, "%s", f.name)
			return
		}
	}
	field, ok := l.text(c.CursorField, &c.Node, "cursor_field", nil)
	if !ok {
		return
	}
	// is_data_feed (newest first; the CDK stops paging at the first
	// record below the state) is read whole: every page is asked for and
	// the records below the bookmark dropped, the same records for more
	// requests. is_client_side_incremental is what the tap does of a
	// cursor the requests do not send (tap/clientside).
	d["replication_key"] = field
	// The records' cursor values must compare as the tap compares them:
	// times (RFC 3339 or dates) by instant, epoch numbers as numbers.
	recordFormat := c.DatetimeFormat
	if len(c.CursorDatetimeFormats) > 0 {
		recordFormat = c.CursorDatetimeFormats[0]
	}
	requestFormat, keyFormat, ok := l.timeFormats(c.DatetimeFormat, recordFormat, &c.Node)
	if !ok {
		return
	}
	if len(c.CursorDatetimeFormats) > 1 {
		// The CDK tries each of the records' formats in turn: so does
		// the key's format, its alternatives separated by |.
		alts := []string{cmp.Or(keyFormat, "rfc3339")}
		for _, f := range c.CursorDatetimeFormats[1:] {
			_, k, ok := l.timeFormats(c.DatetimeFormat, f, &c.Node)
			if !ok {
				return
			}
			alts = append(alts, cmp.Or(k, "rfc3339"))
		}
		if keyFormat != "" || slices.ContainsFunc(alts, func(a string) bool { return a != "rfc3339" }) {
			keyFormat = strings.Join(alts, "|")
		}
	}
	*l.times = requestFormat
	shape := settings.CDKCursor{Field: field, Format: requestFormat}
	if p, ok := d["parent"].(map[string]any); ok {
		shape.Partition, shape.CDKPartition, shape.List = partitionName(p), l.cdkPart.CDKPartition, l.cdkPart.List
	}
	l.cdk[d["name"].(string)] = shape
	inc := map[string]any{"format": requestFormat, "overlap_s": 0}
	if keyFormat != "" {
		inc["key_format"] = keyFormat
	}
	if c.StartTimeOption != nil {
		if inc["param"], ok = l.queryOption(c.StartTimeOption, "the window's start"); !ok {
			return
		}
	}
	if c.EndTimeOption != nil {
		if inc["end_param"], ok = l.queryOption(c.EndTimeOption, "the window's end"); !ok {
			return
		}
	}
	if c.LookbackWindow.IsSet() {
		s, ok := l.text(c.LookbackWindow, &c.Node, "lookback_window", nil)
		if !ok {
			return
		}
		months, dur, err := interp.ParseDuration(s)
		if err != nil || months != 0 || dur < 0 || dur%time.Second != 0 {
			l.refuse(join(c.Path, "lookback_window"), c.Type, "%q: a lookback of whole seconds, days or weeks", s)
			return
		}
		inc["overlap_s"] = int(dur / time.Second)
	}
	if c.Step.IsSet() && inc["end_param"] != nil {
		s, ok := l.text(c.Step, &c.Node, "step", nil)
		if !ok {
			return
		}
		months, dur, err := interp.ParseDuration(s)
		if err != nil || months != 0 || dur <= 0 || dur%(24*time.Hour) != 0 {
			l.refuse(join(c.Path, "step"), c.Type, "%q: the tap's windows are whole days", s)
			return
		}
		inc["chunk_days"] = int(dur / (24 * time.Hour))
		// With a cursor_granularity the CDK sends a window's last
		// instant (its end less the granularity) as its end.
		if c.CursorGranularity != "" {
			inc["end_inclusive"] = true
		}
	}
	switch {
	case inc["param"] != nil:
		d["incremental"] = inc
	case l.interval:
		// A computed parameter of the window's bounds asks for the
		// changes: the block gives it the walk's lower bound (start
		// date or bookmark less the lookback), with no parameter of
		// the tap's own.
		for _, k := range []string{"end_param", "chunk_days", "end_inclusive"} {
			delete(inc, k) // windows need an end_param of the tap's own
		}
		d["incremental"] = inc
	case inc["end_param"] != nil:
		l.refuse(join(c.Path, "end_time_option"), c.Type, "a window's end sent without its start (no start_time_option)")
		return
	case keyFormat != "":
		// No filter sent: every record is asked for, and the run drops
		// those at or below the bookmark, its key read as a time.
		d["incremental"] = map[string]any{"key_format": keyFormat}
	}
	l.startDate(c)
}

// startDate evaluates the cursor's start at load: the config's
// start_date, which every stream must share.
func (l *lowerer) startDate(c *DatetimeBasedCursor) {
	st := c.StartDatetime
	s, ok := l.text(st.Datetime, &st.Node, "datetime", nil)
	if !ok {
		return
	}
	format := st.DatetimeFormat
	if format == "" {
		format = c.DatetimeFormat
	}
	t, err := interp.CompileDatetimeFormat(format).Parse(s)
	if err != nil {
		if t, err = time.Parse(time.RFC3339, s); err != nil {
			l.problem(join(st.Path, "datetime"), "%q does not read as %q", s, format)
			return
		}
	}
	start := t.UTC().Format(time.RFC3339)
	switch {
	case l.startFrom == "":
		l.start, l.startFrom = start, st.Path
	case l.start != start:
		l.refuse(st.Path, st.Type, "a start (%s) other than that of %s (%s): the tap's config has one start_date", start, l.startFrom, l.start)
	}
}

// timeFormats are the tap's formats of a datetime cursor: request, the
// incremental.format a window's bounds are sent in (the manifest's
// datetime_format); key, the incremental.key_format the records' cursor
// values read in ("" when the tap compares them as times already: RFC
// 3339 or a date).
func (l *lowerer) timeFormats(request, record string, n *Node) (req, key string, ok bool) {
	switch record {
	case "%s":
		key = "unix"
	case "%ms":
		key = "unix_ms"
	default:
		sample := time.Date(2024, 3, 4, 5, 6, 7, 8000, time.UTC)
		rf := interp.CompileDatetimeFormat(record)
		got, ok := keys.ParseTime(rf.Format(sample))
		back, err := rf.Parse(rf.Format(sample))
		if !ok || err != nil || !got.Equal(back) {
			layout, ok := goLayout(record)
			if !ok {
				l.refuse(join(n.Path, "cursor_datetime_formats"), n.Type, "records' cursor format %q", record)
				return "", "", false
			}
			// A fraction of any length, and Z or an offset, as
			// Python's strptime reads them.
			key = strings.ReplaceAll(strings.ReplaceAll(layout, ".000000", ".999999"), "-0700", "Z0700")
		}
	}
	switch request {
	case "%s":
		return "unix", key, true
	case "%ms":
		return "unix_ms", key, true
	case "%Y-%m-%d":
		return "date", key, true
	}
	layout, ok := goLayout(request)
	if !ok {
		l.refuse(join(n.Path, "datetime_format"), n.Type, "datetime_format %q", request)
		return "", "", false
	}
	return layout, key, true
}

// goLayout writes a strftime format as a Go time layout: ok is false for
// a directive the layout cannot say, or literal text Go would read as one.
func goLayout(f string) (string, bool) {
	directives := map[byte]string{'Y': "2006", 'm': "01", 'd': "02", 'H': "15", 'M': "04", 'S': "05",
		'f': "000000", 'z': "-0700", 'y': "06", 'b': "Jan", 'B': "January", 'a': "Mon", 'A': "Monday", 'p': "PM", '%': "%"}
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c == '%' {
			if i+1 == len(f) {
				return "", false
			}
			i++
			s, ok := directives[f[i]]
			if !ok {
				return "", false
			}
			b.WriteString(s)
			continue
		}
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' && c != 'T' && c != 'Z' {
			return "", false
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

// errorHandler lowers response filters of HTTP codes to the stream's
// on_status rules; the tap's own backoff (exponential, honouring
// Retry-After) stands in for the backoff strategies.
func (l *lowerer) errorHandler(h ErrorHandler, d map[string]any) {
	var handlers []ErrorHandler
	switch x := h.(type) {
	case *CompositeErrorHandler:
		handlers = x.ErrorHandlers
	default:
		handlers = []ErrorHandler{h}
	}
	rules := map[string]any{}
	var filters responseFilters
	body := false // a filter reads the body: the stream's ResponseRule
	for _, h := range handlers {
		dh, ok := h.(*DefaultErrorHandler)
		if !ok {
			l.refuse(h.node().Path, h.node().Type, "this error handler")
			return
		}
		for _, f := range dh.ResponseFilters {
			var rule string
			switch f.Action {
			case "IGNORE":
				rule = "ignore"
			case "FAIL":
				rule = "fail"
			case "RETRY", "RATE_LIMITED":
				rule = "retry"
			default:
				l.refuse(join(f.Path, "action"), f.Type, "action %s", f.Action)
				return
			}
			for _, code := range f.HTTPCodes {
				k := strconv.Itoa(code)
				if _, set := rules[k]; !set { // the first filter to match wins, as in the CDK
					rules[k] = rule
				}
			}
			rf := responseFilter{codes: f.HTTPCodes, contains: f.ErrorMessageContains, rule: rule, base: interp.Vars{Config: l.config, Parameters: f.Parameters}}
			if f.Predicate.IsSet() {
				if extra := f.Predicate.C.Template().Reads() &^ interp.VarSet(atLoad|interp.Response|interp.Headers); extra != 0 {
					l.refuse(join(f.Path, "predicate"), f.Type, "%q reads %s: a predicate reads the answer, the config and $parameters", f.Predicate.Src, extra)
					return
				}
				rf.pred = f.Predicate.C
			}
			body = body || rf.pred != nil || rf.contains != ""
			filters = append(filters, rf)
		}
	}
	if len(rules) > 0 {
		d["on_status"] = rules
	}
	if body {
		l.responses[l.current] = filters
	}
}

// secretFields gathers the names of a spec's properties marked
// airbyte_secret, at any depth (a oneOf of auth methods).
func secretFields(v any, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			for name, p := range props {
				if pm, ok := p.(map[string]any); ok && pm["airbyte_secret"] == true {
					into[name] = true
				}
			}
		}
		for _, e := range x {
			secretFields(e, into)
		}
	case []any:
		for _, e := range x {
			secretFields(e, into)
		}
	}
}

func collectSecrets(v any, names map[string]bool, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && names[k] {
				*out = append(*out, s)
			}
			collectSecrets(e, names, out)
		}
	case []any:
		for _, e := range x {
			collectSecrets(e, names, out)
		}
	}
}

func lookupPath(v any, path []string) (any, bool) {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// transform lowers a stream's AddFields, RemoveFields and RecordFilter to
// its stream map (the Meltano SDK's, which the tap runs on the splice path
// too): an added field is a property computed by the expression written
// in Python (Template.Python), a removed one a property set to null, the
// filter __filter__. The map's expressions read the record as it came, as
// the CDK's transformations read it in turn: an expression that reads a
// field an earlier transformation added is refused, as is one of a nested
// field, a condition, or the replication key or a key field changed.
// asField is the AddFields of the partition's value, which parent.as does.
func (l *lowerer) transform(s *DeclarativeStream, sel *RecordSelector, d map[string]any, asField *AddedFieldDefinition) {
	m := map[string]any{}
	added := map[string]bool{}
	protected := map[string]bool{}
	if rk, ok := d["replication_key"].(string); ok {
		protected[rk] = true
	}
	for _, k := range s.PrimaryKey {
		protected[strings.Join(k, ".")] = true
	}
	readsAdded := func(reads []string) string {
		for _, r := range reads {
			if added[r] {
				return r
			}
		}
		return ""
	}
	// mapped: every transformation is a stream map's (which runs on the
	// splice path); else the manifest's interpreter runs them all.
	mapped := true
transformations:
	for _, t := range s.Transformations {
		switch x := t.(type) {
		case *AddFields:
			if x.Condition.IsSet() {
				mapped = false
				break transformations
			}
			for _, f := range x.Fields {
				if f == asField {
					added[f.Path[0]] = true
					continue
				}
				if len(f.Path) != 1 || protected[f.Path[0]] {
					mapped = false // a nested field, the cursor or a key
					break transformations
				}
				src, reads, ok := f.Value.T.Python(l.vars(&x.Node, nil))
				if !ok || readsAdded(reads) != "" {
					mapped = false
					break transformations
				}
				if fn, ok := map[string]string{"string": "str", "integer": "int", "number": "float", "boolean": "bool"}[f.ValueType]; ok {
					src = fn + "(" + src + ")"
				}
				m[f.Path[0]] = src
				added[f.Path[0]] = true
			}
		case *RemoveFields:
			if x.Condition.IsSet() {
				l.refuse(join(x.Path, "condition"), x.Type, "a condition on the fields removed")
				return
			}
			for _, p := range x.FieldPointers {
				if len(p) != 1 || protected[p[0]] || added[p[0]] {
					mapped = false
					break transformations
				}
				m[p[0]] = nil
			}
		default:
			n := t.node()
			l.refuse(n.Path, n.Type, "this transformation")
			return
		}
	}
	f := sel.RecordFilter
	if f != nil && !f.Condition.IsSet() {
		f = nil
	}
	// A parent's children read its records as the CDK emits them,
	// filtered and transformed: a map, which changes what is written,
	// comes too late for them.
	if !mapped || (f != nil || len(s.Transformations) > 0) && l.isParent(s.Name) {
		l.recordStep(s, sel, d, asField, protected)
		return
	}
	if f != nil {
		src, reads, ok := f.Condition.C.Python(l.vars(&f.Node, nil))
		if !ok {
			l.recordStep(s, sel, d, asField, protected)
			return
		}
		if r := readsAdded(reads); r != "" && sel.TransformBeforeFiltering {
			l.refuse(join(f.Path, "condition"), f.Type, "%q reads %s, which a transformation added", f.Condition.Src, r)
			return
		}
		m["__filter__"] = src
	}
	if len(m) > 0 {
		l.maps[s.Name] = m
	}
}

// stepReads is what a record step's expressions may read.
const stepReads = atLoad | interp.Record | interp.StreamPartition | interp.StreamSlice | interp.Clock

// recordStep lowers a stream's record filter and transformations to one
// step the manifest's interpreter runs on each record (recordStep), where
// the stream maps cannot state them.
func (l *lowerer) recordStep(s *DeclarativeStream, sel *RecordSelector, d map[string]any, asField *AddedFieldDefinition, protected map[string]bool) {
	st := &recordStep{transformFirst: sel.TransformBeforeFiltering}
	if par, ok := d["parent"].(map[string]any); ok {
		st.part, st.cdkPart = partitionName(par), cmp.Or(l.cdkPart.CDKPartition, partitionName(par))
	}
	check := func(at, typ, src string, t *interp.Template) bool {
		if extra := t.Reads() &^ interp.VarSet(stepReads); extra != 0 {
			l.refuse(at, typ, "%q reads %s: a record's step reads the record, its partition, the config and $parameters", src, extra)
			return false
		}
		return true
	}
	if f := sel.RecordFilter; f != nil && f.Condition.IsSet() {
		if !check(join(f.Path, "condition"), f.Type, f.Condition.Src, f.Condition.C.Template()) {
			return
		}
		st.filter, st.filterBase = f.Condition.C, interp.Vars{Config: l.config, Parameters: f.Parameters}
	}
	for _, t := range s.Transformations {
		switch x := t.(type) {
		case *AddFields:
			base := interp.Vars{Config: l.config, Parameters: x.Parameters}
			var when *interp.Condition
			if x.Condition.IsSet() {
				if !check(join(x.Path, "condition"), x.Type, x.Condition.Src, x.Condition.C.Template()) {
					return
				}
				when = x.Condition.C
			}
			for i, f := range x.Fields {
				if f == asField {
					continue // parent.as writes it
				}
				if !check(join(x.Path, fmt.Sprintf("fields[%d].value", i)), x.Type, f.Value.Src, f.Value.T) {
					return
				}
				st.steps = append(st.steps, fieldStep{path: f.Path, value: f.Value.T, valueType: f.ValueType, when: when, base: base})
			}
		case *RemoveFields:
			for i, p := range x.FieldPointers {
				if slices.ContainsFunc(p, func(k string) bool { return strings.ContainsAny(k, "*?[") }) || protected[strings.Join(p, ".")] {
					l.refuse(join(x.Path, fmt.Sprintf("field_pointers[%d]", i)), x.Type, "a field removed at %s (a glob, the cursor or a key, which the tap reads)", strings.Join(p, "."))
					return
				}
				st.steps = append(st.steps, fieldStep{path: p})
			}
		}
	}
	l.steps[s.Name] = st
}
