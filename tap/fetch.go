package tap

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tap-dev/tap/client"
	"github.com/tap-dev/tap/records"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/decoder"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/streams/pages"
	"github.com/tap-dev/tap/tap/failure"
	"github.com/tap-dev/tap/tap/report"
	"github.com/tap-dev/tap/tap/splice"
)

// errIgnored ends a walk whose request answered a status listed in the
// stream's ignore_statuses.
var errIgnored = errors.New("status ignored")

// makePlan makes a node's plan for this run from the state and the config.
// A stream read only for its children, or read as a full table, has no
// filter and keeps its bookmark untouched.
func (n *node) makePlan() error {
	e := n.e
	if _, err := n.model.checker(); err != nil {
		return err
	}
	d := n.def
	end := e.now().UTC()
	if !e.cfg.End.IsZero() {
		end = e.cfg.End // exclusive: nothing at or after it is requested
	}
	b := streams.Bounds{StartDate: e.cfg.Start, Now: end, Numeric: n.model.numeric, FullTable: !n.model.selected || n.model.fullTable, Shard: e.policy.shard}
	if !b.FullTable && e.state != nil {
		b.Bookmark = e.state.Value(d.Name)
		b.Partitions, b.Floor = e.state.Partitions(d.Name)
		b.MaxPartitions = e.cfg.MaxPartitions
		if s, end, ok := e.state.Window(d.Name); ok {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return &InputError{File: "state", Err: fmt.Errorf("bookmarks.%s.window.start: expected an RFC 3339 time, got %q", d.Name, s)}
			}
			b.WindowStart = t
			if end != "" {
				if b.WindowEnd, err = time.Parse(time.RFC3339, end); err != nil {
					return &InputError{File: "state", Err: fmt.Errorf("bookmarks.%s.window.end: expected an RFC 3339 time, got %q", d.Name, end)}
				}
			}
		}
		failed, err := e.state.FailedWindows(d.Name)
		if err != nil {
			return &InputError{File: "state", Err: err}
		}
		b.Failed, b.WalkHigh = failed, e.state.WindowHigh(d.Name)
	}
	p, err := streams.NewPlan(d, b)
	var be *streams.BookmarkError
	switch {
	case errors.As(err, &be):
		return &InputError{File: "state", Err: fmt.Errorf("bookmarks.%s.replication_key_value: %v", d.Name, be.Err)}
	case errors.Is(err, streams.ErrNoWindowStart):
		return &InputError{File: e.cfg.Path, Err: fmt.Errorf("stream %q: %w", d.Name, err)}
	case err != nil:
		return err
	}
	n.plan = p
	if inc := d.Incremental; n.model.selected && inc != nil && inc.OverlapS == nil && b.Bookmark != nil && !b.Numeric && !p.FullTable() {
		e.log.Info(fmt.Sprintf("incremental: the default overlap applies: the filter starts %d s before the bookmark (incremental.overlap_s sets it; 0 turns it off)", streams.DefaultOverlapS), "stream", d.Name)
	}
	if n.model.selected && d.Parent == nil && e.state != nil {
		r, err := e.state.Resume(d.Name)
		if err != nil {
			return &InputError{File: "state", Err: err}
		}
		if r != nil {
			n.track.Resume(r)
		}
	}
	return nil
}

// continued is the paginator of a walk that starts past its first page:
// the request it starts with already holds its page position.
type continued struct{ streams.Paginator }

func (continued) First(req streams.Request) streams.Request { return req }

// walkTop walks a top-level stream (or one window of it) from first, or,
// when the last run stopped inside this walk, from the page it had not
// written, with the filter it began with. A resume position the API
// rejects (a 4xx) restarts the walk from first, with a WARN. The resume
// object is removed when the walk ends.
func (n *node) walkTop(ctx context.Context, first streams.Request, window *keys.Window) error {
	e := n.e
	name := n.def.Name
	n.track.StartWalk(0)
	if n.track.From() != nil {
		r := n.track.TakeUp()
		n.plan.ResumeHigh(r.High)
		e.log.Info("resuming the stream inside its walk", "stream", name, "pages_already_written", r.Pages)
		err := n.walk(ctx, walkStart{first: r.Next, window: window, resumed: true})
		if !rejected(err) {
			if err == nil {
				n.out.endWalk()
			}
			return err
		}
		e.log.Warn("the API rejected the resume position; restarting the stream from its bookmark",
			"stream", name, "status", statusOf(err))
		n.out.endWalk()
		n.track.StartWalk(0)
	}
	if err := n.walk(ctx, walkStart{first: first, window: window}); err != nil {
		return err
	}
	n.out.endWalk()
	return nil
}

// rejected reports whether err is the API refusing a request (a 4xx other
// than 429): a resume position it no longer knows.
func rejected(err error) bool {
	var se *client.StatusError
	return errors.As(err, &se) && se.Status >= 400 && se.Status <= 499 && se.Status != 429
}

func statusOf(err error) int {
	var se *client.StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

// A walkStart is where one walk of a stream's pages starts and what it
// is for: its first request, the partition (a child's parent record; zero
// for a top-level stream), the chunk window (nil: none) and whether it is
// a failed one read again, whether the walk goes on from the page the
// last run stopped at, and, for a child's walk, the parent that
// checkpoints it (nil: none). It travels down the walk's calls, to the
// records' children and to the dead letter the walk may end in.
type walkStart struct {
	first   streams.Request
	part    streams.Partition
	window  *keys.Window
	again   bool
	resumed bool
	tracker *node
	// kids: the walk checkpoints its records' children's walks (set by
	// follow, tracksChildren).
	kids bool
}

// walk follows one stream's pages from ws.first, handling every record:
// a report stream's through its job, whose files are walked as pages too.
func (n *node) walk(ctx context.Context, ws walkStart) error {
	if n.full() {
		return nil
	}
	var err error
	if n.def.Async != nil {
		err = n.walkReport(ctx, ws)
	} else {
		err = n.follow(ctx, ws, failure.Pages(n.model.fetchOf()), true)
	}
	return n.walkEnd(ws, err)
}

// walkReport drives a report stream through its job (tap/report), each of
// the job's files walked by follow. Replay runs a new job and leaves the
// state alone: its one STATE is the one it was given. A job that fails for
// good is a *report.Error, for deadLetter to judge.
func (n *node) walkReport(ctx context.Context, ws walkStart) error {
	e := n.e
	saved := ""
	if !e.policy.replay() {
		saved = e.state.AsyncJob(n.def.Name)
	}
	job := &report.Job{
		Def: n.def,
		Get: func(ctx context.Context, req streams.Request) (any, *url.URL, error) {
			return n.model.getJSON(ctx, req)
		},
		Now:    e.now,
		Redact: e.cfg.Redactor,
		Log:    e.log,
		SetID:  func(id string) { n.setAsyncJob(id) },
		Checkpoint: func() error {
			if n.model.selected && !e.policy.replay() {
				return n.out.checkpoint()
			}
			return nil
		},
		// A file's failure is the job's (report.Error), never a page of
		// the stream to resume at: its URL may be pre-signed.
		Read: func(ctx context.Context, file streams.Request) error {
			read := ws
			read.first = file
			return n.follow(ctx, read, n.model.fetchOf(), false)
		},
	}
	if err := job.Run(ctx, ws.first, saved); err != nil {
		return err
	}
	// Read whole: the next run starts a new job. The bookmark that moves
	// with the records goes out in the stream's final STATE.
	n.setAsyncJob("")
	return nil
}

// setAsyncJob records the job in progress in the state, unless replaying.
func (n *node) setAsyncJob(id string) {
	e := n.e
	if !e.policy.replay() {
		e.state.SetAsyncJob(n.def.Name, id, e.now())
	}
}

// follow walks n's pages from ws.first, fetched by fetch, handling every
// record; resumable says whether the walk may be where the next run
// resumes.
func (n *node) follow(ctx context.Context, ws walkStart, fetch streams.Fetch, resumable bool) error {
	e := n.e
	first, part := ws.first, ws.part
	p, err := n.model.paginator()
	if err != nil {
		return err
	}
	if ws.resumed {
		p = continued{p}
	}
	// A selected top-level stream checkpoints where its walk goes on; a
	// child of one, where its walk for the parent record goes on. A failed
	// window read again leaves the resume object to the walk's own window.
	track := resumable && n.model.selected && n.def.Parent == nil && !ws.again
	parent := ws.tracker
	kids := n.tracksChildren(ws.again)
	ws.kids = kids
	if track {
		n.track.Track(n.plan.Filter(first), p.First(first))
	}
	walkPages := e.walkPages
	if kids {
		// The next page is asked for only once this one's children are
		// walked, which takes far longer than a page: fetched ahead, it
		// would wait there, and a kill would lose it.
		walkPages = func(ctx context.Context, d *streams.Definition, p streams.Paginator, first streams.Request, fetch streams.Fetch, page func(*streams.Page) error) error {
			return pages.WalkInOrder(ctx, d, p, first, fetch, page)
		}
	}
	return walkPages(ctx, n.def, p, first, fetch, func(resp *streams.Page) error {
		if resp.More == nil {
			n.counts.Pages.Add(1) // a body read in pages counts once
		}
		n.counts.Received.Add(int64(len(resp.Records)))
		if resp.Doubt != "" && e.policy.testRun() {
			// A test reads one record: a walk that would end too early
			// is what it is there to find.
			return errors.New(resp.Doubt)
		}
		extracted := e.now()
		var err error
		if kids {
			err = n.handleTracked(ctx, resp, extracted, ws)
		} else {
			err = n.handlePage(ctx, resp, extracted, ws)
		}
		if err != nil {
			return err
		}
		if resp.Doubt != "" {
			e.log.Warn(resp.Doubt)
		}
		// Records of a sorted stream arrive in key order, so once a page
		// is written the largest key on it is safe to checkpoint.
		if err := n.plan.Page(); err != nil {
			return err
		}
		moved := n.out.commit()
		if resp.Next != nil && parent != nil {
			// The next run goes on with this partition's next page.
			parent.track.InChild(n.track.ChildPage(n.def.Name, part.ID(), e.relative(*resp.Next), n.plan.Partitions().High(part)))
			e.state.SetResume(parent.def.Name, parent.out.resumePoint())
			if err := parent.out.checkpoint(); err != nil {
				return err
			}
		}
		if track && resp.Next != nil {
			// The next run starts on the page after this one.
			n.track.NextPage(*resp.Next)
			e.state.SetResume(n.def.Name, n.out.resumePoint())
			moved = true
		}
		if moved && n.model.selected {
			return n.out.checkpoint()
		}
		return nil
	})
}

// walkPages is pages.Walk, but in order in a test run: a run that stops
// after RecordLimit records would mostly send a look-ahead request only to
// cancel it, and a test's requests would depend on timing.
func (e *engine) walkPages(ctx context.Context, d *streams.Definition, p streams.Paginator, first streams.Request, fetch streams.Fetch, page func(*streams.Page) error) error {
	if e.policy.testRun() {
		return pages.WalkInOrder(ctx, d, p, first, fetch, page)
	}
	return pages.Walk(ctx, d, p, first, fetch, page)
}

// walkEnd is what the error that ended a walk means for the run: a status
// the stream ignores and the record limit end it quietly; anything else
// fails the stream, or becomes a dead letter when the stream says so.
func (n *node) walkEnd(ws walkStart, err error) error {
	switch {
	case errors.Is(err, errIgnored):
		n.counts.Ignored.Add(1)
		return nil
	case errors.Is(err, errRecordLimit):
		n.windows.Cut()
		return nil
	}
	return n.deadLetter(ws, err)
}

// deadLetter turns the error of one walk of n (a child's walk for one
// parent, one chunk window, one report job, a whole stream) into a request
// dead letter when the stream asks for it — on_request_failure
// dead_letter, or an on_status rule dead_letter for the last status — and
// returns nil so that the run goes on, n's bookmark held (failure.Hold).
// Any other error is returned as is.
func (n *node) deadLetter(ws walkStart, err error) error {
	e := n.e
	d, part := n.def, ws.part
	w := failure.Walk{
		Stream: d.Name, First: ws.first, Context: part.Context, Window: ws.window, Resumed: ws.resumed,
		DeadLetter: e.policy.replay() || d.OnRequestFailure == streams.RequestFailureDeadLetter,
		OnStatus:   streams.StatusRules(e.cfg.OnStatus, d), Relative: e.relative,
	}
	var bookmark any
	if !n.plan.FullTable() && e.state != nil {
		bookmark = e.state.Value(d.Name)
	}
	held := ""
	if n.plan.Partitions() != nil {
		held = part.ID()
	}
	l, jerr := n.hold.Judge(w, err, e.dead, e.now(), bookmark, held)
	if !l.Written {
		return cmp.Or(jerr, err)
	}
	n.counts.DeadLetters.Add(1) // the summary table's column
	if n.def.Async != nil {
		// The letter has the job now: the next run starts a new one
		// rather than polling this one too.
		n.setAsyncJob("")
	}
	e.log.Warn("request dead-lettered; the run goes on", "stream", d.Name, "status", l.Status,
		"attempts", l.Attempts, "error", e.cfg.Redactor.Redact(l.Error))
	return nil
}

// fetcher sends a page request through the client; the body is decoded
// and its records extracted inside the client's retry loop, so a body cut
// short or a 200 carrying an error is retried like a 503. A whole body of
// the wrong kind (HTML, JSON nested past the decoder's limit) would come
// back the same on every attempt: it fails the request at once.
func (m *model) fetcher() streams.Fetch {
	n := m.n
	e := n.e
	d := n.def
	if d.Async != nil {
		return n.model.bodyFetcher(d.Async.DownloadFormat(d))
	}
	if d.Streamed() {
		return n.model.bodyFetcher(d.BodyFormat())
	}
	dec, derr := n.model.decoder(d.BodyFormat())
	spliced := n.model.splicer()
	var pool linesPool
	return func(ctx context.Context, req streams.Request) (*streams.Page, error) {
		if derr != nil {
			return nil, derr
		}
		page := &streams.Page{}
		var slot *splice.Page
		if spliced != nil {
			slot = spliced.Take()
		}
		creq := n.model.clientRequest(req, dec.Format())
		switch {
		case slot != nil && dec.SplitsLines():
			// A page of JSON texts, a record each (a jsonl or csv
			// page): walked as a body read as it arrives is.
			creq.Consume = func(r io.Reader, h http.Header) error {
				page.Records, page.Spliced = nil, nil
				lines := pool.get(dec)
				defer pool.put(lines)
				if err := dec.ReadLines(r, h, lines); err != nil {
					return err
				}
				if slot.ScanLines(lines) {
					page.Records, page.Spliced = slot.Records(), slot
					return nil
				}
				var err error
				page.Records, err = lines.Records()
				return err
			}
		case dec.Format() != streams.FormatJSON:
			creq.Consume = dec.PageConsumer(&page.Records)
		default:
			creq.Check = func(b []byte) error {
				b, err := decoder.GunzipJSON(b)
				if err != nil {
					return err
				}
				if slot != nil && slot.Scan(b) {
					page.Records, page.Spliced, page.Values = slot.Records(), slot, slot
					return nil
				}
				v, err := decodeRecords(b)
				if err != nil {
					return err
				}
				recs, err := d.Extract(v)
				var apiErr *streams.APIError
				if errors.As(err, &apiErr) {
					return client.Transient(err)
				}
				if err != nil {
					return err
				}
				page.Records, page.Spliced, page.Values = recs, nil, streams.Decoded{Body: v}
				return nil
			}
		}
		if slot != nil {
			creq.Buffer = func(size int) []byte { return slot.Buffer(ctx, size) }
		}
		resp, err := e.client.Do(ctx, creq)
		if slot != nil && (err != nil || resp.Ignored || page.Spliced == nil) {
			slot.Release() // the walk will not handle it
		}
		if err != nil {
			return nil, err
		}
		if resp.Ignored {
			return nil, errIgnored
		}
		page.URL, page.Header = resp.URL, resp.Header
		return page, nil
	}
}

// linesPool keeps the pages of a paginated jsonl or csv stream's bodies
// read as JSON texts (decoder.Lines) for the next page: a page's texts are
// copied into its splice.Page, and the walk may fetch pages concurrently.
type linesPool struct {
	mu   sync.Mutex
	free []*decoder.Lines
}

func (p *linesPool) get(dec *decoder.Decoder) *decoder.Lines {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		l := p.free[n-1]
		p.free = p.free[:n-1]
		return l
	}
	return dec.NewLines()
}

// maxKeptLines bounds the texts of a page kept for the next (a page of
// a paginated stream may be up to the decoder's page bound).
const maxKeptLines = 8 << 20

func (p *linesPool) put(l *decoder.Lines) {
	if l.Cap() > maxKeptLines {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, l)
}

// splicer is the reader of n's pages as spliced records (package splice
// says when a stream splices); nil when the run reads every record's tree.
func (m *model) splicer() *splice.Reader {
	n := m.n
	e := n.e
	return e.splice(splice.Stream{Def: n.def, Schema: e.cfg.Schemas[n.def.Name], Written: n.model.selected,
		Children: n.childKeys(), Drops: len(n.model.dropped) > 0, Maps: n.out.outs.Transformers(), Library: n.model.check.Library()})
}

// errStopped ends the reading of a body the walk let go before its end.
var errStopped = errors.New("the walk stopped reading the body")

// bodyFetcher sends a request whose body is read as it arrives, in format
// (a jsonl, csv or xml export; a report's file, in its download format):
// its records come in pages of decoder.PageRecords, each handed to the
// walk while the rest of the body is unread (streams.Page.More), so that
// a body of any size takes the memory of a few pages, and a sorted stream
// checkpoints after each. The last page carries the response's URL and
// header. An error reading the body retries the request (client.Request's
// Consume): the records already handed on are handed on again.
func (m *model) bodyFetcher(format string) streams.Fetch {
	n := m.n
	e := n.e
	dec, derr := n.model.decoder(format)
	var spliced *splice.Reader
	if derr == nil && dec.SplitsLines() {
		spliced = n.model.splicer()
	}
	return func(ctx context.Context, req streams.Request) (*streams.Page, error) {
		if derr != nil {
			return nil, derr
		}
		b := &body{}
		b.next, b.stop = iter.Pull2(func(yield func(*streams.Page, error) bool) {
			var last *streams.Page
			stopped := false
			hand := func(p *streams.Page, end bool) error {
				if end {
					last = p // handed on with the response's URL
					return nil
				}
				p.More = b
				if !yield(p, nil) {
					stopped = true
					return errStopped
				}
				return nil
			}
			creq := n.model.clientRequest(req, dec.Format())
			creq.Consume = func(r io.Reader, h http.Header) error {
				last = nil
				if spliced != nil {
					return dec.LinePages(r, h, 0, func(lines *decoder.Lines, end bool) error {
						p, err := splicedLines(spliced, lines)
						p.Header = h
						if err != nil {
							if len(p.Records) > 0 {
								if herr := hand(p, false); herr != nil {
									return herr
								}
							}
							return err
						}
						return hand(p, end)
					})
				}
				return dec.Pages(r, h, 0, func(recs []any, end bool) error {
					return hand(&streams.Page{Records: recs, Header: h}, end)
				})
			}
			resp, err := e.client.Do(ctx, creq)
			switch {
			case stopped:
			case err != nil:
				yield(nil, err)
			case resp.Ignored:
				yield(nil, errIgnored)
			default:
				if last == nil {
					last = &streams.Page{} // a 204: no body to read
				}
				last.URL, last.Header = resp.URL, resp.Header
				yield(last, nil)
			}
		})
		return b.Next()
	}
}

// splicedLines is the page of a jsonl body's lines or a csv body's rows:
// spliced when the stream's Shape reads every record's text, else their
// trees (with the error of the first line that is not JSON, and the
// records before it). lines is the decoder's, reused once this returns.
func splicedLines(r *splice.Reader, lines *decoder.Lines) (*streams.Page, error) {
	slot := r.Take()
	if slot.ScanLines(lines) {
		return &streams.Page{Records: slot.Records(), Spliced: slot, Values: slot}, nil
	}
	slot.Release()
	recs, err := lines.Records()
	return &streams.Page{Records: recs}, err
}

// body is the pages of one response read as it arrives (streams.Parts):
// the client reads it on the coroutine of next, which stops at each page
// until the walk asks for the next.
type body struct {
	next func() (*streams.Page, error, bool)
	stop func()
}

// Next reads the next page; the body is let go after its last.
func (b *body) Next() (*streams.Page, error) {
	p, err, ok := b.next()
	if !ok || err != nil || p.More == nil {
		b.stop()
	}
	return p, err
}

// Close stops reading the body, and returns once the client has let it go.
func (b *body) Close() { b.stop() }

// noParentKey settles a parent record whose key is null or missing, so no
// request of child stream c can be made for it: a fault of the record, as
// on_schema_violation says — by default a request letter of c, so that one
// such record does not stop the other parents' children; emit logs it;
// fail fails the run. c's bookmark is not held: no request failed.
func (n *node) noParentKey(err error) error {
	e := n.e
	d := n.def
	switch e.cfg.OnSchemaViolation {
	case settings.ViolationFail:
		return err
	case settings.ViolationEmit:
		e.log.Warn("a parent record has no key; its child records are not read", "stream", d.Name, "error", err.Error())
		return nil
	}
	name := d.Parent.Key
	if d.Parent.As != "" {
		name = d.Parent.As
	}
	l := records.RequestLetter{Stream: d.Name, Context: map[string]any{name: nil},
		Method: cmp.Or(strings.ToUpper(d.Method), "GET"), URL: d.Path, Error: err.Error(), Time: e.now()}
	if werr := e.dead.Request(l); werr != nil {
		return errors.Join(err, werr)
	}
	n.counts.DeadLetters.Add(1)
	e.log.Warn("a parent record has no key; its child records are not read, and a dead letter says so", "stream", d.Name, "error", err.Error())
	return nil
}

// walkChild walks a child stream once for one parent record, its path
// placeholders filled from the parent's key; from, when set, is where the
// last run stopped inside this walk.
func (n *node) walkChild(ctx context.Context, parent map[string]any, from *pages.Resume, tracker *node) error {
	e := n.e
	if !n.needed() {
		return nil
	}
	part, err := n.plan.Partition(parent)
	if errors.Is(err, streams.ErrNoParentKey) {
		return n.noParentKey(err)
	}
	if err != nil {
		return err
	}
	req, err := n.plan.Request(part, nil)
	if err != nil {
		return err
	}
	n.track.StartWalk(0)
	if from != nil && from.Partition == part.ID() {
		n.track.StartWalk(from.Pages)
		if ps := n.plan.Partitions(); ps != nil {
			ps.ResumeHigh(part, from.High)
		}
		err = n.walk(ctx, walkStart{first: from.Next, part: part, resumed: true, tracker: tracker})
		if rejected(err) {
			e.log.Warn("the API rejected the resume position; restarting the walk for this parent record",
				"stream", n.def.Name, "partition", part.ID(), "status", statusOf(err))
			n.track.StartWalk(0)
			err = n.walk(ctx, walkStart{first: req, part: part, tracker: tracker})
		}
	} else {
		err = n.walk(ctx, walkStart{first: req, part: part, tracker: tracker})
	}
	if err != nil {
		return err
	}
	if n.hold.PartitionHeld(part.ID()) {
		return nil // dead-lettered: the partition keeps its bookmark
	}
	// The partition's own bookmark is safe once its walk has ended.
	if ps := n.plan.Partitions(); ps != nil {
		if err := ps.Close(part); err != nil {
			return err
		}
	}
	if n.out.commit() && n.model.selected {
		return n.out.checkpoint()
	}
	return nil
}
