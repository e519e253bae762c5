// Package replay is `tap replay --config C --dead-letters FILE [--state S]`:
// it re-sends the request letters of FILE (rebuilt from the stream's
// definition and the letter's context, window and bookmark: the URL a
// letter keeps is masked), re-validates its record letters against
// today's schemas, and writes what now passes as Singer messages. What
// still fails stays in FILE, which is replaced in one rename at the end:
// a replay stopped midway leaves FILE as it was.
//
// Replay moves no bookmark: its one STATE, at the end, is the --state
// given, unchanged ({} without one). A dead-lettered request held its
// stream's bookmark back, so the next sync reads those rows again too.
//
// It drives the engine (tap.Engine, opened for a replay) one letter at a
// time.
package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/inputfile"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap"
	"github.com/tap-dev/tap/tap/inputs"
	"github.com/tap-dev/tap/tap/metrics"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/runreport"
)

// Run replays the letters of the file lettersPath (see the package doc).
func Run(ctx context.Context, f inputs.Files, lettersPath string, stdout, stderr io.Writer) (err error) {
	if f.Config == "" || lettersPath == "" {
		return &tap.UsageError{Msg: "replay needs --config and --dead-letters"}
	}
	cfg, err := f.LoadConfig()
	if err != nil {
		return err
	}
	// st is the one STATE written, as given; the engine reads its own
	// copy (walks and jobs note their progress in it).
	st, err := f.LoadState(cfg)
	if err != nil {
		return err
	}
	work, err := st.Clone()
	if err != nil {
		return err
	}
	lines, read, err := readLetters(lettersPath)
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
	rec, log, finish := runreport.Start(cfg, "replay", f.Logger(cfg, stderr), st.Value)
	defer func() { err = errors.Join(err, finish(tap.ExitCode(err), err)) }()
	st.SetRedactor(cfg.Redactor)
	work.SetRedactor(cfg.Redactor)
	out := output.NewSinger(stdout)
	r, err := tap.Open(tap.ModeReplay, tap.Options{Config: cfg, State: work, Writer: out, Log: log, Report: rec})
	if err != nil {
		return err
	}
	defer os.Remove(side)
	defer r.Close()
	// A letter's resume position is followed on base_url's origin only, as
	// one from --state is: a letter file could otherwise send the stream's
	// credentials, and take its records, from any host.
	var base *url.URL // nil for embedded://demo: its address changes every run
	if cfg.BaseURL != settings.DemoURL {
		base, _ = url.Parse(cfg.BaseURL) // checked with the config
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
		before := r.DeadLetters()
		done, err := replayLetter(ctx, r, cfg, l, base)
		if err != nil {
			log.Warn("dead letter kept", "file", lettersPath, "line", i+1, "error", err)
		}
		switch {
		case !done:
			keep = append(keep, l.raw)
			sum.add(l, "still_failing")
			continue
		case r.DeadLetters() > before: // a new letter in its place
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
	if err := r.Close(); err != nil {
		return err
	}
	again, err := os.ReadFile(side)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := rewriteLetters(lettersPath, read, keep, again); err != nil {
		return err
	}
	var rows []metrics.Row // the report's: what the replay wrote, by stream
	r.Records(func(stream string, n int64) {
		sum.records += n
		rows = append(rows, metrics.Row{Stream: stream, Records: n})
	})
	if rec != nil {
		rec.Summary(rows, client.Stats{Requests: r.Requests()})
	}
	sum.left = len(keep) + bytes.Count(again, []byte{'\n'})
	sum.write(r, log, lettersPath)
	return nil
}

// replayer is the engine as a replay drives it: it writes a record
// letter's record again, or walks again what a request letter asks, and
// counts.
type replayer interface {
	WriteRecord(stream string, rec map[string]any, extracted time.Time) error
	Rewalk(ctx context.Context, w tap.Walk) error
	DeadLetters() int
	Records(f func(stream string, records int64))
	Metric(name string, value any, tags map[string]any)
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

// write logs one line for a person or a script, and a METRIC line per
// stream, kind and result.
func (s *replaySummary) write(r replayer, log *slog.Logger, path string) {
	emitted, failing := 0, 0
	for _, k := range slices.SortedFunc(maps.Keys(s.by), func(a, b [3]string) int {
		return strings.Compare(strings.Join(a[:], "\x00"), strings.Join(b[:], "\x00"))
	}) {
		if k[2] == "emitted" {
			emitted += s.by[k]
		} else {
			failing += s.by[k]
		}
		r.Metric("replayed_dead_letters", s.by[k], map[string]any{"endpoint": k[0], "kind": k[1], "result": k[2]})
	}
	r.Records(func(stream string, n int64) {
		if n > 0 {
			r.Metric("record_count", n, map[string]any{"endpoint": stream})
		}
	})
	log.Info("replay summary", "letters", s.letters, "emitted", emitted, "records", s.records,
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

// readLetters reads a dead-letter file, up to its last whole line, and
// returns the bytes read: a line being appended is left for the rewrite.
// A line that is not a letter is kept too, untouched: replay never drops
// what it cannot read.
func readLetters(path string) ([]letterLine, int64, error) {
	b, err := inputfile.Read(path, inputfile.MaxLetters)
	if err != nil {
		return nil, 0, &tap.InputError{File: path, Err: fmt.Errorf("cannot read the dead letters: %w", err)}
	}
	b = b[:bytes.LastIndexByte(b, '\n')+1]
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
	return out, int64(len(b)), nil
}

// replayLetter replays one letter; done says the letter is settled (its
// records written, or a new letter written in its place).
func replayLetter(ctx context.Context, r replayer, cfg *tap.Config, l letterLine, base *url.URL) (done bool, err error) {
	name, _ := l.m["stream"].(string)
	switch {
	case l.m == nil:
		return false, errors.New("not a JSON object")
	case cfg.Stream(name) == nil:
		return false, fmt.Errorf("stream %q is not in the config", name)
	case l.kind == records.KindRecord:
		rec, ok := l.m["record"].(map[string]any)
		if !ok {
			return false, errors.New(`"record": expected an object`)
		}
		extracted, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(l.m["time_extracted"]))
		return true, r.WriteRecord(name, rec, extracted)
	case l.kind == records.KindRequest:
		w, err := walkOf(name, l.m, base)
		if err != nil {
			return false, err
		}
		if err := r.Rewalk(ctx, w); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, fmt.Errorf("kind %q: expected record or request", l.kind)
}

// walkOf reads what a request letter asks to read again: its parent (the
// context), window, bookmark and the page that failed, which must be on
// base's origin (pages.Resume.CheckOrigin).
func walkOf(stream string, m map[string]any, base *url.URL) (tap.Walk, error) {
	w := tap.Walk{Stream: stream, Bookmark: m["bookmark"]}
	w.Context, _ = m["context"].(map[string]any)
	if wm, ok := m["window"].(map[string]any); ok {
		s, err1 := time.Parse(time.RFC3339, fmt.Sprint(wm["start"]))
		t, err2 := time.Parse(time.RFC3339, fmt.Sprint(wm["end"]))
		if err := errors.Join(err1, err2); err != nil {
			return w, fmt.Errorf("window: %w", err)
		}
		w.Window = &keys.Window{Start: s, End: t}
	}
	if t, ok := m["resume"].(map[string]any); ok {
		r, err := pages.ResumeFromTree(t)
		if err == nil {
			err = r.CheckOrigin(base)
		}
		if err != nil {
			return w, fmt.Errorf("resume.%w", err)
		}
		w.Resume = &r
	}
	return w, nil
}

// rewriteLetters replaces path by the kept lines, the new ones, then the
// lines other runs appended since the replay read its first read bytes,
// through a temporary file in the same directory renamed over it, so that
// a reader (or a replay killed midway) sees the old file or the new one,
// whole. It holds the file's exclusive lock from reading what was
// appended to the rename: a run appending meanwhile waits, then writes to
// the new file (records.DeadLetters opens it again).
func rewriteLetters(path string, read int64, keep [][]byte, again []byte) error {
	old, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("rewriting %s: %w", path, err)
	}
	defer old.Close()
	if err := records.LockFile(old, true); err != nil {
		return fmt.Errorf("rewriting %s: %w", path, err)
	}
	defer records.UnlockFile(old)
	if !records.Current(old, path) {
		return fmt.Errorf("rewriting %s: another replay replaced it meanwhile; its letters are as that replay left them", path)
	}
	appended, err := io.ReadAll(io.NewSectionReader(old, read, 1<<62))
	if err != nil {
		return fmt.Errorf("rewriting %s: %w", path, err)
	}
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
	buf.Write(appended)
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
