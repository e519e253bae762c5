// Package state is the STATE document of a run: what the tap writes so
// that the next run goes on where this one stopped, and reads back before
// it sends a request.
//
// A state is a bookmark per stream plus whatever else the incoming state
// held, which is written back untouched (state in, state out). A bookmark
// has the shape the Meltano SDK writes, so its states are read as they are:
//
//	replication_key, replication_key_value  the stream's high-water mark
//	window            the chunk window the walk is at; with failed windows, the
//	                  largest key read ("high") too
//	failed_windows    chunk windows not read to their end, read first next run
//	partitions, floor a child stream's bookmark per parent
//	resume            where a walk in progress goes on: its page, how far into it
//	version, last_run_records, async_job
//
// At the top level, besides bookmarks: currently_syncing; job_done, the
// streams an interrupted run had ended; quota, the daily quota count.
//
// Rules the type keeps: replication_key_value stays at or before the start
// of the earliest failed window, so a reader that knows nothing of
// failed_windows never skips data (the engine's plan holds it there; the
// state only records it). A snapshot (MarshalJSON, StreamJSON) is the
// whole state, never a diff, with secrets masked; the run itself reads the
// real values. Load checks the document's shape; Check holds bookmarks to
// the types of the config's replication keys, so that a state written by
// hand or by another tap is refused before any request rather than sent to
// the API as a filter.
//
// A State is safe for concurrent use.
package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/inputfile"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/streams/pages"
)

// State is the state of a run, shared by every stream.
type State struct {
	mu        sync.Mutex
	bookmarks map[string]map[string]any
	// raw holds, as the JSON they came in, the bookmarks of streams the
	// config does not have (see Check): written back untouched, they are
	// neither kept as trees nor encoded again for every STATE.
	raw              map[string]json.RawMessage
	other            map[string]any // top-level keys other than bookmarks and currently_syncing
	currentlySyncing string
	// jobDone lists, while a run that has more than one stream is under
	// way, the streams it has ended (job_done): a run that continues an
	// interrupted one does not read them again.
	jobDone []string
	// quota, when set, gives the daily quota count every snapshot carries
	// (see SetQuotaSource).
	quota func() (day string, used int)
	// redact masks secrets in what is written: a resume cursor or URL may
	// echo a credential.
	redact *settings.Redactor
	// partIdx is, by child stream, the position of each partition in its
	// bookmark's list, so that a partition's bookmark is set in place.
	partIdx map[string]map[string]int
	// back lists the streams a bookmark of which moved back since the
	// last snapshot (MovedBack).
	back map[string]bool
	// cdk is, by stream, the CDK state shape its Airbyte state carries
	// too (UseCDK; nil: none).
	cdk map[string]settings.CDKCursor
	// airbyte holds the Airbyte per-stream states as read, with the
	// namespace of their stream_descriptor, for MatchNamespaces.
	airbyte []airbyteStream
	// ignored says, a line a state, which of them no stream took.
	ignored []string
	// For snapshots: the sorted top-level keys and stream names, reused;
	// by stream, its bookmark's sorted keys (codec.AppendObject).
	sortedTop, sortedStreams []string
	keyOrder                 map[string]*[]string
}

// airbyteStream is one Airbyte per-stream state.
type airbyteStream struct {
	name, namespace string
	state           map[string]any
}

// Bookmark fields.
const (
	keyReplicationKey = "replication_key"
	keyValue          = "replication_key_value"
	keyWindow         = "window"
	keyVersion        = "version"
	keyLastRecords    = "last_run_records"
	keyPartitions     = "partitions"
	keyContext        = "context"
	keyFloor          = "floor"
	keyResume         = "resume"
	keyFailedWindows  = "failed_windows"
)

// New returns an empty state.
func New() *State {
	return &State{bookmarks: map[string]map[string]any{}, other: map[string]any{},
		raw: map[string]json.RawMessage{}, partIdx: map[string]map[string]int{}, back: map[string]bool{}}
}

// Load reads a state file: a Singer state object, or the array of
// per-stream STATE messages (or a legacy state object) that Airbyte passes
// back.
func Load(path string) (*State, error) {
	tree, err := settings.ReadJSONFile(path, "state", inputfile.MaxState)
	if err != nil {
		return nil, err
	}
	st, err := fromTree(tree)
	if err != nil {
		return nil, inputErr(path, err)
	}
	return st, nil
}

// LoadFor reads a state file and checks its bookmarks against the streams
// of cfg.
func LoadFor(path string, cfg *settings.Config, fullTable func(stream string) bool) (*State, error) {
	st, err := Load(path)
	if err != nil {
		return nil, err
	}
	st.UseCDK(cfg.CDKState)
	if err := st.Check(cfg, fullTable); err != nil {
		return nil, inputErr(path, err)
	}
	return st, nil
}

// LoadMatching reads a state file, applies the Airbyte per-stream states
// of the catalog's namespaces (MatchNamespaces), then checks the
// bookmarks against the streams of cfg.
func LoadMatching(path string, cfg *settings.Config, namespace func(stream string) string, fullTable func(stream string) bool) (*State, error) {
	st, err := Load(path)
	if err != nil {
		return nil, err
	}
	st.MatchNamespaces(namespace)
	st.UseCDK(cfg.CDKState)
	if err := st.Check(cfg, fullTable); err != nil {
		return nil, inputErr(path, err)
	}
	return st, nil
}

// Parse reads a state document, as Load does a file.
func Parse(data []byte) (*State, error) {
	tree, err := codec.Decode(data)
	if err != nil {
		return nil, err
	}
	return fromTree(tree)
}

func inputErr(file string, err error) error {
	var ie *settings.InputError
	if errors.As(err, &ie) {
		return err
	}
	return &settings.InputError{File: file, Err: err}
}

func fromTree(tree any) (*State, error) {
	st := New()
	if msgs, ok := tree.([]any); ok {
		return st, st.readAirbyte(msgs)
	}
	obj, ok := tree.(map[string]any)
	if !ok {
		return nil, errors.New("expected a JSON object (Singer state) or an array of Airbyte state messages")
	}
	if data, ok := obj["data"].(map[string]any); ok && obj["type"] == "LEGACY" {
		obj = data
	}
	for k, v := range obj {
		switch k {
		case "bookmarks":
			bm, ok := v.(map[string]any)
			if !ok {
				return nil, errors.New("bookmarks: expected an object of stream name to bookmark object")
			}
			for name, b := range bm {
				b, ok := b.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("bookmarks.%s: expected a bookmark object", name)
				}
				st.bookmarks[name] = b
			}
		case "currently_syncing":
			// A run that died mid-stream left it set; this run sets its own.
		case keyJobDone:
			list, ok := v.([]any)
			for _, name := range list {
				s, isName := name.(string)
				ok = ok && isName
				st.jobDone = append(st.jobDone, s)
			}
			if !ok {
				return nil, fmt.Errorf("%s: expected a list of stream names", keyJobDone)
			}
		default:
			st.other[k] = v
		}
	}
	return st, nil
}

// readAirbyte reads Airbyte per-stream state messages.
func (st *State) readAirbyte(msgs []any) error {
	for i, m := range msgs {
		obj, ok := m.(map[string]any)
		if !ok {
			return fmt.Errorf("[%d]: expected an Airbyte state message object", i)
		}
		if obj["type"] == "STATE" { // a whole AirbyteMessage
			if inner, ok := obj["state"].(map[string]any); ok {
				obj = inner
			}
		}
		switch obj["type"] {
		case "STREAM":
			s, _ := obj["stream"].(map[string]any)
			desc, _ := s["stream_descriptor"].(map[string]any)
			name, _ := desc["name"].(string)
			if name == "" {
				return fmt.Errorf("[%d].stream.stream_descriptor.name: expected the stream name", i)
			}
			if ss, ok := s["stream_state"].(map[string]any); ok {
				// Each stream's state carries a copy of the daily quota
				// count: the latest one is the run's.
				if q, ok := ss[quotaKey]; ok {
					st.other[quotaKey] = mergeQuota(st.other[quotaKey], q)
					delete(ss, quotaKey)
				}
				// Airbyte matches a state to a stream by name and
				// namespace; until MatchNamespaces says otherwise, a
				// stream has none.
				ns, _ := desc["namespace"].(string)
				st.airbyte = append(st.airbyte, airbyteStream{name: name, namespace: ns, state: ss})
				if ns == "" {
					st.bookmarks[name] = ss
				} else {
					st.ignored = append(st.ignored, nsMismatch(name, ns, ""))
				}
			}
		case "LEGACY", nil:
			data, ok := obj["data"].(map[string]any)
			if !ok {
				return fmt.Errorf("[%d].data: expected the legacy state object", i)
			}
			inner, err := fromTree(data)
			if err != nil {
				return fmt.Errorf("[%d].data.%w", i, err)
			}
			maps.Copy(st.bookmarks, inner.bookmarks)
			maps.Copy(st.other, inner.other)
		case "GLOBAL":
			return fmt.Errorf("[%d].type: GLOBAL state is not supported; this source writes per-stream (STREAM) state", i)
		default:
			return fmt.Errorf("[%d].type: expected STREAM or LEGACY, got %v", i, obj["type"])
		}
	}
	return nil
}

// MatchNamespaces applies the Airbyte per-stream states read whose
// stream_descriptor's namespace is the one namespace gives for the stream
// ("" for none), as Airbyte applies a state to the stream of the same
// name and namespace; the others are ignored, and Ignored says so. Call
// it before Check, which then checks what was applied.
func (st *State) MatchNamespaces(namespace func(stream string) string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.ignored = nil
	for _, a := range st.airbyte {
		if want := namespace(a.name); a.namespace != want {
			if a.namespace == "" {
				delete(st.bookmarks, a.name)
			}
			st.ignored = append(st.ignored, nsMismatch(a.name, a.namespace, want))
		}
	}
	for _, a := range st.airbyte {
		if a.namespace != "" && a.namespace == namespace(a.name) {
			st.bookmarks[a.name] = a.state
		}
	}
}

// Ignored describes, a line each, the per-stream states of the input
// that no stream took, their namespace not being the stream's.
func (st *State) Ignored() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Clone(st.ignored)
}

func nsMismatch(stream, got, want string) string {
	name := func(ns string) string {
		if ns == "" {
			return "no namespace"
		}
		return fmt.Sprintf("namespace %q", ns)
	}
	return fmt.Sprintf("the state of stream %q has %s, and the catalog's stream has %s: it is ignored, as Airbyte does, and the stream reads as if it had no state", stream, name(got), name(want))
}

// Value returns the stream's bookmark value, or nil.
func (st *State) Value(stream string) any {
	if st == nil {
		return nil // no state: nothing read yet
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.bm(stream)[keyValue]
}

// Window returns the chunk window in progress of a stream, if any.
func (st *State) Window(stream string) (start, end string, ok bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	w, _ := st.bm(stream)[keyWindow].(map[string]any)
	start, _ = w["start"].(string)
	end, _ = w["end"].(string)
	return start, end, start != ""
}

// Partitions returns the per-partition bookmarks of a child stream and its
// floor, in the Meltano SDK's shape.
func (st *State) Partitions(stream string) (parts []streams.PartitionBookmark, floor any) {
	st.mu.Lock()
	defer st.mu.Unlock()
	b := st.bm(stream)
	list, _ := b[keyPartitions].([]any)
	for _, e := range list {
		m, _ := e.(map[string]any)
		ctx, _ := m[keyContext].(map[string]any)
		if ctx == nil || m[keyValue] == nil {
			continue
		}
		parts = append(parts, streams.PartitionBookmark{Context: ctx, Value: m[keyValue]})
	}
	return parts, b[keyFloor]
}

// SetPartitions records what changed in a child stream's per-partition
// bookmarks: those set (by ID, in place, or added), those folded into
// the floor (removed), and the floor. The stream-wide value, which
// covered every parent at once, is dropped: a reader must not take it for
// a bookmark of each parent. Its cost is that of the changes, not of
// every partition: a run checkpoints after each parent.
func (st *State) SetPartitions(stream, key string, set []streams.PartitionBookmark, folded []string, floor any) {
	st.update(stream, func(b map[string]any) {
		list, idx := st.partitionsLocked(stream, key, b)
		for _, p := range set {
			e := map[string]any{keyContext: p.Context, keyReplicationKey: key, keyValue: p.Value}
			i, ok := idx[p.ID]
			if !ok {
				idx[p.ID] = len(list)
				list = append(list, e)
				continue
			}
			if old, _ := list[i].(map[string]any); old != nil && movedBack(old[keyValue], p.Value) {
				st.back[stream] = true
			}
			list[i] = e
		}
		if len(folded) > 0 {
			gone := make(map[int]bool, len(folded))
			for _, id := range folded {
				if i, ok := idx[id]; ok {
					gone[i] = true
				}
			}
			kept := list[:0]
			for i, e := range list {
				if !gone[i] {
					kept = append(kept, e)
				}
			}
			clear(list[len(kept):])
			list = kept
			st.partIdx[stream] = nil // rebuilt when next needed
		}
		b[keyPartitions] = list
		delete(b, keyValue)
		delete(b, keyReplicationKey)
		if floor != nil {
			if movedBack(b[keyFloor], floor) {
				st.back[stream] = true
			}
			b[keyFloor] = floor
		}
	})
}

// partitionsLocked returns the partition list of a child stream's
// bookmark b and the index of its entries by partition ID, made from the
// list when the state was read; of two entries for one partition, the
// later is kept, at the earlier's place, as the plan reads them, and each
// names the replication key, as the entries the run writes do.
func (st *State) partitionsLocked(stream, key string, b map[string]any) ([]any, map[string]int) {
	list, _ := b[keyPartitions].([]any)
	if idx := st.partIdx[stream]; idx != nil {
		return list, idx
	}
	idx := make(map[string]int, len(list))
	kept := list[:0:0]
	for _, e := range list {
		m, _ := e.(map[string]any)
		ctx, _ := m[keyContext].(map[string]any)
		if ctx == nil {
			kept = append(kept, e) // not a partition the plan reads; kept as it was
			continue
		}
		m[keyReplicationKey] = key
		id := keys.PartitionID(ctx)
		if i, ok := idx[id]; ok {
			kept[i] = e
			continue
		}
		idx[id] = len(kept)
		kept = append(kept, e)
	}
	st.partIdx[stream] = idx
	return kept, idx
}

// movedBack reports whether a bookmark going from old to v moves back:
// v is below old, or cannot be compared with it.
func movedBack(old, v any) bool {
	if old == nil {
		return false
	}
	if v == nil {
		return true
	}
	c, err := keys.Compare(v, old)
	return err != nil || c < 0
}

// MovedBack reports whether a bookmark of stream ("" for any stream)
// moved back since the last snapshot of it (MarshalJSON, or StreamJSON
// of the stream): the STATE written before would skip rows not read.
func (st *State) MovedBack(stream string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if stream == "" {
		return len(st.back) > 0
	}
	return st.back[stream]
}

// Resume returns where a stream's walk in progress goes on; nil when none.
// A resume read from the state file is checked here, when the walk asks.
func (st *State) Resume(stream string) (*pages.Resume, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch r := st.bm(stream)[keyResume].(type) {
	case *pages.Resume:
		return r, nil
	case map[string]any:
		p, err := pages.ResumeFromTree(r)
		if err != nil {
			return nil, fmt.Errorf("bookmarks.%s.resume.%w", stream, err)
		}
		return &p, nil
	}
	return nil, nil
}

// SetResume records where a walk in progress goes on; nil removes it. The
// state keeps r, typed, until a snapshot encodes it: r must not change
// after.
func (st *State) SetResume(stream string, r *pages.Resume) {
	st.update(stream, func(b map[string]any) {
		if r == nil {
			delete(b, keyResume)
			return
		}
		b[keyResume] = r
	})
}

// SetValue moves the stream's bookmark.
func (st *State) SetValue(stream, key string, value any) {
	st.update(stream, func(b map[string]any) {
		if movedBack(b[keyValue], value) {
			st.back[stream] = true
		}
		b[keyReplicationKey] = key
		b[keyValue] = value
	})
}

// SetWindow records the chunk window in progress; an empty start clears it.
func (st *State) SetWindow(stream, start, end string) {
	st.SetWindowHigh(stream, start, end, nil)
}

// WindowHigh returns the largest key of the windows read, which the
// window in progress carries while failed windows hold the bookmark back.
func (st *State) WindowHigh(stream string) any {
	st.mu.Lock()
	defer st.mu.Unlock()
	w, _ := st.bm(stream)[keyWindow].(map[string]any)
	return w["high"]
}

// SetWindowHigh records the chunk window in progress and, unless nil, the
// largest key of the windows read; an empty start clears both.
func (st *State) SetWindowHigh(stream, start, end string, high any) {
	st.update(stream, func(b map[string]any) {
		if start == "" {
			delete(b, keyWindow)
			return
		}
		w := map[string]any{"start": start, "end": end}
		if high != nil {
			w["high"] = high
		}
		b[keyWindow] = w
	})
}

// FailedWindows returns the chunk windows a stream's last run did not read
// to their end, as check validated them.
func (st *State) FailedWindows(stream string) ([]streams.FailedWindow, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return failedWindows("bookmarks."+stream, st.bm(stream))
}

// SetFailedWindows records the chunk windows not read to their end; none
// removes the field.
func (st *State) SetFailedWindows(stream string, ws []streams.FailedWindow) {
	st.update(stream, func(b map[string]any) {
		if len(ws) == 0 {
			delete(b, keyFailedWindows)
			return
		}
		list := make([]any, len(ws))
		for i, w := range ws {
			list[i] = map[string]any{"start": w.Start.UTC().Format(time.RFC3339), "end": w.End.UTC().Format(time.RFC3339), "error": w.Error}
		}
		b[keyFailedWindows] = list
	})
}

// SetVersion records the table version of a full-table stream.
func (st *State) SetVersion(stream string, version int64) {
	st.update(stream, func(b map[string]any) { b[keyVersion] = version })
}

// LastRecords returns how many records the stream's last run emitted.
func (st *State) LastRecords(stream string) (int64, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := st.bm(stream)[keyLastRecords]
	switch n := n.(type) {
	case json.Number:
		v, err := n.Int64()
		return v, err == nil
	case int64:
		return n, true
	}
	return 0, false
}

// SetLastRecords notes how many records the stream emitted in this run.
func (st *State) SetLastRecords(stream string, n int64) {
	st.update(stream, func(b map[string]any) { b[keyLastRecords] = n })
}

// keyAsyncJob is the bookmark field holding the report job in progress.
const keyAsyncJob = "async_job"

// AsyncJob returns the id of the report job a stream has in progress.
func (st *State) AsyncJob(stream string) string {
	st.mu.Lock()
	defer st.mu.Unlock()
	if job, ok := st.bm(stream)[keyAsyncJob].(map[string]any); ok {
		id, _ := job["id"].(string)
		return id
	}
	return ""
}

// SetAsyncJob records the report job a stream has in progress; "" clears it.
func (st *State) SetAsyncJob(stream, id string, created time.Time) {
	st.update(stream, func(b map[string]any) {
		if id == "" {
			delete(b, keyAsyncJob)
			return
		}
		b[keyAsyncJob] = map[string]any{"id": id, "created_at": created.UTC().Format(time.RFC3339)}
	})
}

// SetSyncing sets currently_syncing; clearing it only clears the stream
// that set it.
func (st *State) SetSyncing(stream string, running bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if running {
		st.currentlySyncing = stream
	} else if st.currentlySyncing == stream {
		st.currentlySyncing = ""
	}
}

// keyJobDone is the top-level list of the streams a run under way has
// ended.
const keyJobDone = "job_done"

// JobDone returns the streams the run this state comes from had ended
// when it stopped; none when it ended.
func (st *State) JobDone() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Clone(st.jobDone)
}

// SetJobDone adds stream to the streams the run has ended.
func (st *State) SetJobDone(stream string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if i, found := slices.BinarySearch(st.jobDone, stream); !found {
		st.jobDone = slices.Insert(st.jobDone, i, stream)
	}
}

// EndJob forgets the streams ended, the run being over, and reports
// whether there were any.
func (st *State) EndJob() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	had := st.jobDone != nil
	st.jobDone = nil
	return had
}

// bm is a stream's bookmark, decoded first if it is held raw; the caller
// holds st.mu.
func (st *State) bm(stream string) map[string]any {
	if raw, ok := st.raw[stream]; ok {
		delete(st.raw, stream)
		if tree, err := codec.Decode(raw); err == nil {
			st.bookmarks[stream], _ = tree.(map[string]any)
		}
	}
	return st.bookmarks[stream]
}

// packLocked keeps the bookmarks of the streams cfg does not have as the
// JSON they came in.
func (st *State) packLocked(cfg *settings.Config) error {
	known := make(map[string]bool, len(cfg.Streams))
	for i := range cfg.Streams {
		known[cfg.Streams[i].Name] = true
	}
	for name, b := range st.bookmarks {
		if known[name] {
			continue
		}
		raw, err := json.Marshal(b)
		if err != nil {
			return fmt.Errorf("bookmarks.%s: %w", name, err)
		}
		st.raw[name] = raw
		delete(st.bookmarks, name)
	}
	return nil
}

func (st *State) update(stream string, f func(map[string]any)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	b := st.bm(stream)
	if b == nil {
		b = map[string]any{}
		st.bookmarks[stream] = b
	}
	f(b)
}

// MarshalJSON writes the whole state: a full snapshot, never a diff.
func (st *State) MarshalJSON() ([]byte, error) { return st.AppendJSON(make([]byte, 0, 256)) }

// AppendJSON appends the whole state's JSON, as MarshalJSON writes it, to
// b. A STATE is written for every page: the snapshot is written straight
// from the bookmarks, keys sorted in reused slices, with no tree built
// for it (building one was a third of a snapshot's allocations).
func (st *State) AppendJSON(b []byte) ([]byte, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	clear(st.back)
	quota := st.quotaLocked()
	top := st.sortedTop[:0]
	for k := range st.other {
		switch k {
		case "bookmarks", "currently_syncing", quotaKey:
		case keyJobDone:
			if st.jobDone == nil {
				top = append(top, k)
			}
		default:
			top = append(top, k)
		}
	}
	top = append(top, "bookmarks", "currently_syncing")
	if quota != nil {
		top = append(top, quotaKey)
	}
	if st.jobDone != nil {
		top = append(top, keyJobDone)
	}
	slices.Sort(top)
	st.sortedTop = top
	start := len(b)
	b = append(b, '{')
	var err error
	for i, k := range top {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(codec.AppendString(b, k), ':')
		switch k {
		case "bookmarks":
			b, err = st.appendBookmarks(b)
		case "currently_syncing":
			if st.currentlySyncing == "" {
				b = append(b, "null"...)
			} else {
				b = codec.AppendString(b, st.currentlySyncing)
			}
		case quotaKey:
			b, err = codec.Append(b, quota)
		case keyJobDone:
			if st.jobDone != nil {
				b, err = codec.Append(b, st.jobDone)
			} else {
				b, err = codec.Append(b, st.other[k])
			}
		default:
			b, err = codec.Append(b, st.other[k])
		}
		if err != nil {
			return nil, err
		}
	}
	b = append(b, '}')
	masked, err := st.masked(b[start:])
	if err != nil {
		return nil, err
	}
	return append(b[:start], masked...), nil
}

// appendBookmarks appends the bookmarks object: each stream's, its keys in
// the order kept for it (codec.AppendObject), or the JSON it came in.
func (st *State) appendBookmarks(b []byte) ([]byte, error) {
	names := st.sortedStreams[:0]
	for k := range st.bookmarks {
		names = append(names, k)
	}
	for k := range st.raw {
		names = append(names, k)
	}
	slices.Sort(names)
	st.sortedStreams = names
	if st.keyOrder == nil {
		st.keyOrder = map[string]*[]string{}
	}
	b = append(b, '{')
	for i, name := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(codec.AppendString(b, name), ':')
		if raw, ok := st.raw[name]; ok {
			b = append(b, raw...)
			continue
		}
		order := st.keyOrder[name]
		if order == nil {
			order = new([]string)
			st.keyOrder[name] = order
		}
		var err error
		if b, err = codec.AppendObject(b, st.bookmarks[name], order); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// masked is b, a snapshot's JSON, with the secrets it holds masked — a
// resume cursor or URL may echo one — in its strings and its keys, and
// HTML-escaped as encoding/json writes it. A snapshot that holds none
// (nearly all) is not decoded for it: that was half of a STATE's cost.
func (st *State) masked(b []byte) ([]byte, error) {
	if st.redact.Holds(b) {
		tree, err := codec.Decode(b)
		if err != nil {
			return nil, err
		}
		if b, err = codec.Append(b[:0], st.redact.Value(tree)); err != nil {
			return nil, err
		}
	}
	return htmlEscaped(b), nil
}

// htmlEscaped escapes <, > and & as encoding/json does, so that a
// snapshot's text is what json.Marshal wrote before (a next URL's query
// holds &). Outside strings JSON has none of them.
func htmlEscaped(b []byte) []byte {
	if !bytes.ContainsAny(b, "<>&") {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for _, c := range b {
		switch c {
		case '<':
			out = append(out, `\u003c`...)
		case '>':
			out = append(out, `\u003e`...)
		case '&':
			out = append(out, `\u0026`...)
		default:
			out = append(out, c)
		}
	}
	return out
}

// Clone is a deep copy of st, made through its JSON form; st must not
// have a redactor yet, which would mask the copy's values.
func (st *State) Clone() (*State, error) {
	b, err := st.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// SetRedactor masks, in every snapshot from now on, the secrets r knows.
func (st *State) SetRedactor(r *settings.Redactor) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.redact = r
}

// Reset forgets a stream's bookmark (and chunk window), so that a
// full_refresh of an incremental stream reads it all again.
func (st *State) Reset(stream string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.bookmarks, stream)
	delete(st.raw, stream)
	delete(st.partIdx, stream)
}

// StreamJSON returns one stream's bookmark object (Airbyte's stream_state).
func (st *State) StreamJSON(stream string) ([]byte, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.back, stream)
	b := st.bm(stream)
	if b == nil {
		b = map[string]any{}
	}
	b = st.cdkLocked(stream, b)
	if q := st.quotaLocked(); q != nil {
		b = maps.Clone(b)
		b[quotaKey] = q
	}
	out, err := codec.Append(nil, b)
	if err != nil {
		return nil, err
	}
	return st.masked(out)
}
