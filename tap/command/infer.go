package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tap-dev/tap/inputfile"
	"github.com/tap-dev/tap/records/infer"
	"github.com/tap-dev/tap/schemas"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap"
	"github.com/tap-dev/tap/tap/inputs"
)

// InferSchema walks the first pages of a stream and prints a JSON Schema
// inferred from its records.
//
// The stream need not have a schema yet: a missing one (no "schema", or a
// path to a file that does not exist or is empty, as `> schemas/x.json`
// leaves it) is replaced by a placeholder for this command, for every
// stream. The target's own schema is never needed: if it has a usable one,
// it only tells whether its replication key is a number.
//
// What is read: the target's first pages that hold records (empty pages, as
// the first windows of a backfill often are, do not count), at most pages
// of them; no incremental filter unless start_date is set. A child stream
// is walked under its parent's records in order until enough pages were
// read; each ancestor reads at most pages pages.
func InferSchema(ctx context.Context, f inputs.Files, stream string, pages int, stdout, stderr io.Writer) error {
	if f.Config == "" {
		return &tap.UsageError{Msg: "--infer-schema needs --config"}
	}
	if pages < 1 {
		return &tap.UsageError{Msg: fmt.Sprintf("--infer-pages: expected a number of pages >= 1, got %d", pages)}
	}
	var log *slog.Logger
	var known map[string]any // the target's own schema, when it has a usable one
	cfg, err := settings.LoadWith(f.Config, func(c *tap.Config, streamsPath string) error {
		var err error
		log = f.Logger(c, stderr)
		known, err = prepareInference(c, streamsPath, stream, log)
		return err
	})
	if err != nil {
		return err
	}
	r, err := tap.Open(tap.ModeInfer, tap.Options{Config: cfg, Log: log})
	if err != nil {
		return err
	}
	defer r.Close()
	w := &inferWalk{r: r, budget: pages, root: &infer.Shape{}}
	for d := cfg.Stream(stream); d != nil; {
		w.chain = append([]*streams.Definition{d}, w.chain...)
		if d.Parent == nil || d.Parent.Stream == "" { // a top stream, or one of values
			break
		}
		d = cfg.Stream(d.Parent.Stream)
	}
	if err := cfg.CheckEnv(func(s string) bool {
		return slices.ContainsFunc(w.chain, func(d *streams.Definition) bool { return d.Name == s })
	}); err != nil {
		return err
	}
	w.ancestorPages = make([]int, len(w.chain)-1)
	target := w.chain[len(w.chain)-1]
	if err := w.planChain(cfg, known, log); err != nil {
		return err
	}

	start := time.Now()
	var part streams.Partition // a stream walked for values (parent.values) reads the first
	if p := w.chain[0].Parent; p != nil && len(p.Values) > 0 {
		if part, err = w.plans[0].Partition(map[string]any{p.Key: p.Values[0]}); err != nil {
			return err
		}
	}
	err = w.level(ctx, 0, part)
	if err != nil && !errors.Is(err, errInferDone) {
		return err
	}
	attrs := []any{"stream", stream, "records", w.records, "pages", w.pages, "empty_pages", w.empty,
		"requests", r.Requests(), "seconds", fmt.Sprintf("%.1f", time.Since(start).Seconds())}
	for i, n := range w.ancestorPages {
		attrs = append(attrs, "parent_pages_"+w.chain[i].Name, n)
	}
	log.Info("infer-schema: read", attrs...)
	if w.records == 0 {
		log.Warn("infer-schema: no records read; the schema lists only the keys of the stream definition", "stream", stream)
	}
	out := w.root.Schema()
	for _, k := range definitionKeys(target) {
		if _, ok := (*out.Properties)[k]; !ok {
			log.Warn("infer-schema: a key of the stream definition is in no record read; listed without a type", "stream", stream, "property", k)
			(*out.Properties)[k] = &infer.Schema{}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(*out.Properties)) {
		if p := (*out.Properties)[k]; p.Type == "null" {
			log.Warn("infer-schema: property is null in every record read; its type is \"null\", widen it by hand", "stream", stream, "property", k)
		}
	}
	return writeIndented(stdout, out)
}

// prepareInference checks that stream exists and gives a placeholder schema
// to the streams whose schema is missing, and to the target whatever its
// schema. It returns the target's own schema when it has a usable one.
func prepareInference(c *tap.Config, streamsPath, stream string, log *slog.Logger) (map[string]any, error) {
	target := c.Stream(stream)
	if target == nil {
		names := make([]string, len(c.Streams))
		for i, d := range c.Streams {
			names[i] = d.Name
		}
		defines := "no streams"
		if len(names) > 0 {
			defines = strings.Join(names, ", ")
		}
		return nil, &tap.UsageError{Msg: fmt.Sprintf("--infer-schema: no stream named %q (the config defines %s)", stream, defines)}
	}
	dir := filepath.Dir(streamsPath)
	var known map[string]any
	var others []string
	for i := range c.Streams {
		d := &c.Streams[i]
		missing, why := schemaMissing(d, dir)
		if d == target {
			if !missing {
				s, err := settings.LoadSchema(d, dir)
				if err != nil {
					log.Warn("infer-schema: ignoring the stream's current schema", "stream", d.Name, "error", err.Error())
				}
				known = s
			} else {
				log.Info("infer-schema: the stream has no schema yet", "stream", d.Name, "reason", why)
			}
			d.Schema = placeholderSchema(d)
			continue
		}
		if missing {
			others = append(others, d.Name)
			d.Schema = placeholderSchema(d)
		}
	}
	if others != nil {
		log.Info("infer-schema: other streams have no schema yet; not needed here", "streams", strings.Join(others, ","))
	}
	return known, nil
}

// schemaMissing reports whether a stream's schema is not written yet: no
// "schema", or a path to a file that does not exist or holds only blanks.
func schemaMissing(d *streams.Definition, dir string) (bool, string) {
	raw := bytes.TrimSpace(d.Schema)
	if len(raw) == 0 || string(raw) == "null" {
		return true, "no \"schema\" in its definition"
	}
	var name string
	if raw[0] != '"' || json.Unmarshal(raw, &name) != nil {
		return false, ""
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	b, err := inputfile.Read(p, inputfile.MaxConfig)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if rel, ok := strings.CutPrefix(filepath.ToSlash(name), "schemas/"); ok {
			if _, err := fs.Stat(schemas.FS, rel); err == nil {
				return false, "" // a bundled demo schema
			}
		}
		return true, p + " does not exist"
	case err == nil && len(bytes.TrimSpace(b)) == 0:
		return true, p + " is empty"
	}
	return false, ""
}

// placeholderSchema lists, untyped, the properties the definition names,
// which is all the config checks ask of a schema.
func placeholderSchema(d *streams.Definition) json.RawMessage {
	props := map[string]any{}
	for _, k := range definitionKeys(d) {
		props[k] = map[string]any{}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	return b
}

// definitionKeys are the properties a stream's definition names: primary
// key, replication key and the parent key copied into each record.
func definitionKeys(d *streams.Definition) []string {
	keys := append([]string(nil), d.PrimaryKey...)
	if d.ReplicationKey != "" {
		keys = append(keys, d.ReplicationKey)
	}
	if d.Parent != nil && d.Parent.As != "" {
		keys = append(keys, d.Parent.As)
	}
	return keys
}

// errInferDone ends the walk once enough pages were read.
var errInferDone = errors.New("infer-schema: enough pages read")

// pageReader is the engine as --infer-schema drives it: pages read as a
// sync reads them, nothing written.
type pageReader interface {
	ReadPages(ctx context.Context, d *streams.Definition, first streams.Request, page func(*streams.Page) error) error
	Requests() int
}

// inferWalk walks a stream (under its ancestors) and accumulates the shape
// of its records.
type inferWalk struct {
	r      pageReader
	chain  []*streams.Definition
	budget int // pages with records to read from the target

	plans []*streams.Plan // of chain[i]; ancestors are read whole

	root                  *infer.Shape
	records, pages, empty int
	ancestorPages         []int
}

// planChain plans each stream of the chain. Ancestors are read whole. The
// target's incremental filter: none without start_date, none for a
// numeric replication key (as a sync with no state), else start_date, in
// chunk windows when the stream is chunked.
func (w *inferWalk) planChain(cfg *tap.Config, known map[string]any, log *slog.Logger) error {
	now := time.Now().UTC()
	for _, d := range w.chain[:len(w.chain)-1] {
		p, err := streams.NewPlan(d, streams.Bounds{FullTable: true})
		if err != nil {
			return err
		}
		w.plans = append(w.plans, p)
	}
	d := w.chain[len(w.chain)-1]
	b := streams.Bounds{StartDate: cfg.Start, Now: now, FullTable: d.Incremental == nil || cfg.Start.IsZero()}
	if inc := d.Incremental; !b.FullTable {
		switch {
		case known != nil:
			b.Numeric = settings.StreamKeyKind(d, known) == "number"
		case inc.Overlap != "":
			b.Numeric = true
		case inc.Format == "" && inc.OverlapS == nil && inc.ChunkDays == 0:
			// No schema and nothing in the definition says the key is a time:
			// sending start_date to a numeric filter would be refused.
			log.Info("infer-schema: start_date not applied: without a schema the replication key may be a number; set incremental.format to filter by time", "stream", d.Name)
			b.FullTable = true
		}
	}
	p, err := streams.NewPlan(d, b)
	if err != nil {
		return err
	}
	w.plans = append(w.plans, p)
	return nil
}

// level walks chain[i] with the path variables of its parent record.
func (w *inferWalk) level(ctx context.Context, i int, part streams.Partition) error {
	d := w.chain[i]
	if i == len(w.chain)-1 {
		return w.target(ctx, d, w.plans[i], part)
	}
	child := w.plans[i+1]
	req, err := w.plans[i].Request(part, nil)
	if err != nil {
		return err
	}
	stop := errors.New("stop")
	walked := 0
	err = w.r.ReadPages(ctx, d, req, func(resp *streams.Page) error {
		walked++
		w.ancestorPages[i]++
		for _, rec := range resp.Records {
			m, err := tap.RecordObject(d, rec, part)
			if err != nil {
				return err
			}
			cp, err := child.Partition(m)
			if err != nil {
				return err
			}
			if err := w.level(ctx, i+1, cp); err != nil {
				return err
			}
		}
		if walked >= w.budget || lastAllowed(d, walked) {
			return stop
		}
		return nil
	})
	if errors.Is(err, stop) {
		return nil
	}
	return err
}

// target walks the inferred stream, window by window when chunked.
func (w *inferWalk) target(ctx context.Context, d *streams.Definition, plan *streams.Plan, part streams.Partition) error {
	var firsts []streams.Request
	if ws := plan.Windows(); len(ws) > 0 {
		for i := range ws {
			req, err := plan.Request(part, &ws[i])
			if err != nil {
				return err
			}
			firsts = append(firsts, req)
		}
	} else {
		req, err := plan.Request(part, nil)
		if err != nil {
			return err
		}
		firsts = append(firsts, req)
	}
	for _, req := range firsts {
		stop := errors.New("stop")
		walked := 0
		err := w.r.ReadPages(ctx, d, req, func(resp *streams.Page) error {
			walked++
			w.pages++
			if len(resp.Records) == 0 {
				w.empty++
			}
			for _, rec := range resp.Records {
				m, err := tap.RecordObject(d, rec, part)
				if err != nil {
					return err
				}
				w.root.Add(m)
				w.records++
			}
			if w.pages-w.empty >= w.budget {
				return errInferDone
			}
			if lastAllowed(d, walked) {
				return stop
			}
			return nil
		})
		if err != nil && !errors.Is(err, stop) {
			return err
		}
	}
	return nil
}

// lastAllowed reports whether a walk reached the stream's max_pages, which
// ends inference's reading quietly instead of failing as a sync would.
func lastAllowed(d *streams.Definition, walked int) bool {
	return d.Pagination.MaxPages > 0 && walked >= d.Pagination.MaxPages
}
