package tap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/output"
)

// Replay is `tap replay --config C --dead-letters FILE [--state S]`: it
// re-sends the request letters of FILE (rebuilt from the stream's
// definition and the letter's context, window and bookmark: the URL a
// letter keeps is masked), re-validates its record letters against
// today's schemas, and writes what now passes as Singer messages. What
// still fails stays in FILE, which is replaced in one rename at the end:
// a replay stopped midway leaves FILE as it was.
//
// Replay moves no bookmark: its one STATE, at the end, is the --state
// given, unchanged ({} without one). A dead-lettered request held its
// stream's bookmark back, so the next sync reads those rows again too.
func Replay(ctx context.Context, f Files, lettersPath string, stdout, stderr io.Writer) error {
	if f.Config == "" || lettersPath == "" {
		return &UsageError{Msg: "replay needs --config and --dead-letters"}
	}
	cfg, err := loadConfig(f.Config)
	if err != nil {
		return err
	}
	// st is the one STATE written, as given; the engine reads its own
	// copy (walks and jobs note their progress in it).
	st, err := f.loadState(cfg)
	if err != nil {
		return err
	}
	work, err := st.Clone()
	if err != nil {
		return err
	}
	lines, err := readLetters(lettersPath)
	if err != nil {
		return err
	}
	// Letters this replay writes (still failing) go to a side file first,
	// then join FILE in the rename.
	side := lettersPath + ".replay"
	if err := os.Remove(side); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	cfg.DeadLetterPath = side
	cfg.OnSchemaViolation = settings.ViolationDeadLetter
	log := output.NewStderrLogger(stderr, f.Level(cfg), cfg.Redactor)
	st.SetRedactor(cfg.Redactor)
	work.SetRedactor(cfg.Redactor)
	base, stop, err := startAPI(cfg, log)
	if err != nil {
		return err
	}
	defer stop()
	out := output.NewSinger(stdout)
	e, err := newEngine(cfg, nil, work, out, log)
	if err != nil {
		return err
	}
	e.base = strings.TrimRight(base.String(), "/")
	defer os.Remove(side)
	defer e.dead.Close()
	e.replaying = true
	if e.client, err = newClient(cfg, base, log, e.requestMetric); err != nil {
		return err
	}
	for _, n := range e.nodes {
		if err := e.plan(n); err != nil {
			return err
		}
		n.held.Store(true) // no bookmark moves
	}
	var keep [][]byte
	sum := replaySummary{letters: len(lines)}
	// The same request dead-lettered by several runs (its bookmark held,
	// each run failed it again) is sent once: its records once, or one
	// new letter for them all.
	settled := map[string]string{}
	for i, l := range lines {
		if ctx.Err() != nil {
			return errors.New("interrupted; the dead letters file is unchanged")
		}
		walk := l.walkKey()
		if result, ok := settled[walk]; ok && walk != "" {
			sum.add(l, result)
			continue
		}
		before := e.dead.Count()
		done, err := e.replayLetter(ctx, l)
		if err != nil {
			log.Warn("dead letter kept", "file", lettersPath, "line", i+1, "error", err)
		}
		switch {
		case !done:
			keep = append(keep, l.raw)
			sum.add(l, "still_failing")
			continue
		case e.dead.Count() > before: // a new letter in its place
			settled[walk] = "still_failing"
		default:
			settled[walk] = "emitted"
		}
		sum.add(l, settled[walk])
	}
	if err := out.State("", st, 0); err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if err := e.dead.Close(); err != nil {
		return err
	}
	again, err := os.ReadFile(side)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := rewriteLetters(lettersPath, keep, again); err != nil {
		return err
	}
	for _, n := range e.nodes {
		sum.records += n.records.Load()
	}
	sum.left = len(keep) + bytes.Count(again, []byte{'\n'})
	e.replaySummary(sum, lettersPath)
	return nil
}

// replaySummary counts what a replay did with its letters.
type replaySummary struct {
	letters int
	// records is the records written; left the lines FILE holds after.
	records int64
	left    int
	// by counts the letters by stream, kind and result (emitted: its
	// records were written; still_failing: a letter is in FILE for it).
	by map[[3]string]int
}

func (s *replaySummary) add(l letterLine, result string) {
	if s.by == nil {
		s.by = map[[3]string]int{}
	}
	name, _ := l.m["stream"].(string)
	s.by[[3]string{name, l.kind, result}]++
}

// replaySummary logs one line for a person or a script, and a METRIC line
// per stream, kind and result.
func (e *engine) replaySummary(s replaySummary, path string) {
	emitted, failing := 0, 0
	for _, k := range slices.SortedFunc(maps.Keys(s.by), func(a, b [3]string) int {
		return strings.Compare(strings.Join(a[:], "\x00"), strings.Join(b[:], "\x00"))
	}) {
		if k[2] == "emitted" {
			emitted += s.by[k]
		} else {
			failing += s.by[k]
		}
		e.metric(e.metricsLevel(), "counter", "replayed_dead_letters", s.by[k], map[string]any{"endpoint": k[0], "kind": k[1], "result": k[2]})
	}
	for _, n := range e.nodes {
		if r := n.records.Load(); r > 0 {
			e.metric(e.metricsLevel(), "counter", "record_count", r, map[string]any{"endpoint": n.def.Name})
		}
	}
	e.log.Info("replay summary", "letters", s.letters, "emitted", emitted, "records", s.records,
		"still_failing", failing, "left", s.left, "file", path)
}

// letterLine is one line of a dead-letter file: its bytes, kept as they
// are when the letter stays, and what replay reads of it.
type letterLine struct {
	raw  []byte
	kind string
	m    map[string]any
}

// walkKey names the walk a request letter asks to read again: its stream,
// context, window, bookmark and resume page; "" for any other line.
func (l letterLine) walkKey() string {
	if l.kind != records.KindRequest {
		return ""
	}
	b, err := codec.Marshal([]any{l.m["stream"], l.m["context"], l.m["window"], l.m["bookmark"], l.m["resume"]})
	if err != nil {
		return ""
	}
	return string(b)
}

// readLetters reads a dead-letter file. A line that is not a letter is
// kept too, untouched: replay never drops what it cannot read.
func readLetters(path string) ([]letterLine, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &InputError{File: path, Err: fmt.Errorf("cannot read the dead letters: %w", errors.Unwrap(err))}
	}
	var out []letterLine
	for _, raw := range bytes.Split(b, []byte{'\n'}) {
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		l := letterLine{raw: raw}
		if v, err := codec.Decode(raw); err == nil {
			l.m, _ = v.(map[string]any)
			l.kind, _ = l.m["kind"].(string)
		}
		out = append(out, l)
	}
	return out, nil
}

// replayLetter replays one letter; done says the letter is settled (its
// records written, or a new letter written in its place).
func (e *engine) replayLetter(ctx context.Context, l letterLine) (done bool, err error) {
	name, _ := l.m["stream"].(string)
	n := e.byName[name]
	switch {
	case l.m == nil:
		return false, errors.New("not a JSON object")
	case n == nil:
		return false, fmt.Errorf("stream %q is not in the config", name)
	case l.kind == records.KindRecord:
		rec, ok := l.m["record"].(map[string]any)
		if !ok {
			return false, errors.New(`"record": expected an object`)
		}
		extracted, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(l.m["time_extracted"]))
		return true, e.replayRecord(n, rec, extracted)
	case l.kind == records.KindRequest:
		return e.replayRequest(ctx, n, l.m)
	}
	return false, fmt.Errorf("kind %q: expected record or request", l.kind)
}

// replayRecord validates a record against today's schema: it is written,
// or written to the dead letters again.
func (e *engine) replayRecord(n *node, m map[string]any, extracted time.Time) error {
	ok, err := n.check.Check(m, extracted)
	if err != nil || !ok {
		return err
	}
	if n.outs != nil {
		return e.emitMapped(n, m, extracted)
	}
	b, err := n.encode(m)
	if err != nil {
		return fmt.Errorf("stream %q: %w", n.def.Name, err)
	}
	if err := e.schema(n); err != nil {
		return err
	}
	if err := e.out.Record(n.def.Name, b, extracted, 0); err != nil {
		return err
	}
	n.records.Add(1)
	return nil
}

// replayRequest walks a request letter's stream again, for its parent and
// window, from the bookmark it was filtered from, starting at the page
// that failed when the letter says which: only what the failed request
// would have read. A failure is written as a new letter (e.replaying) and
// settles the old one.
func (e *engine) replayRequest(ctx context.Context, n *node, m map[string]any) (bool, error) {
	d := n.def
	wm, _ := m["window"].(map[string]any)
	b := streams.Bounds{Bookmark: m["bookmark"], StartDate: e.cfg.Start, Now: e.now().UTC(), Numeric: n.numeric}
	b.FullTable = b.Bookmark == nil && wm == nil
	p, err := streams.NewPlan(d, b)
	if err != nil {
		return false, fmt.Errorf("stream %q: %w", d.Name, err)
	}
	n.plan = p
	var part streams.Partition
	if par := d.Parent; par != nil {
		c, _ := m["context"].(map[string]any)
		name := par.Key
		if par.As != "" {
			name = par.As
		}
		if part, err = p.Partition(map[string]any{par.Key: c[name]}); err != nil {
			return false, err
		}
	}
	var w *keys.Window
	if wm != nil {
		s, err1 := time.Parse(time.RFC3339, fmt.Sprint(wm["start"]))
		t, err2 := time.Parse(time.RFC3339, fmt.Sprint(wm["end"]))
		if err := errors.Join(err1, err2); err != nil {
			return false, fmt.Errorf("window: %w", err)
		}
		w = &keys.Window{Start: s, End: t}
	}
	req, err := p.Request(part, w)
	if err != nil {
		return false, err
	}
	if t, ok := m["resume"].(map[string]any); ok {
		r, err := pages.ResumeFromTree(t)
		if err != nil {
			return false, fmt.Errorf("resume.%w", err)
		}
		req, n.continuing = r.Next, true
	}
	n.window = w
	defer func() { n.window, n.continuing = nil, false }()
	if err := e.walk(ctx, n, req, part); err != nil {
		return false, err
	}
	return true, nil
}

// rewriteLetters replaces path by the kept lines then the new ones, through
// a temporary file in the same directory renamed over it, so that a reader
// (or a replay killed midway) sees the old file or the new one, whole.
func rewriteLetters(path string, keep [][]byte, again []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("rewriting %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename, nothing is there
	var buf bytes.Buffer
	for _, l := range keep {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	buf.Write(again)
	_, err = tmp.Write(buf.Bytes())
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("rewriting %s: %w", path, err)
	}
	if dir, err := os.Open(filepath.Dir(path)); err == nil {
		dir.Sync() // the rename itself survives a crash
		dir.Close()
	}
	return nil
}
