package tap

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
)

// State is the Singer state of a run, shared by every stream: the
// bookmarks by stream, plus whatever else the incoming state held, which
// is written back untouched (state in, state out).
//
// A bookmark is an object {"replication_key", "replication_key_value",
// "window"?, ...}, the shape the Meltano SDK writes, so its states are read
// as they are.
type State struct {
	mu               sync.Mutex
	bookmarks        map[string]map[string]any
	other            map[string]any // top-level keys other than bookmarks and currently_syncing
	currentlySyncing string
	// jobDone lists, while a run that has more than one stream is under
	// way, the streams it has ended (job_done): a run that continues an
	// interrupted one does not read them again (see engine.run).
	jobDone []string
	// quota, when set, gives the daily quota count every snapshot carries
	// (see trackQuota).
	quota func() (day string, used int)
	// redact masks secrets in what is written: a resume cursor or URL may
	// echo a credential.
	redact *settings.Redactor
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

// NewState returns an empty state.
func NewState() *State {
	return &State{bookmarks: map[string]map[string]any{}, other: map[string]any{}}
}

// LoadState reads a state file: a Singer state object, or the array of
// per-stream STATE messages (or a legacy state object) that Airbyte passes
// back.
func LoadState(path string) (*State, error) {
	tree, err := settings.ReadJSONFile(path, "state")
	if err != nil {
		return nil, err
	}
	st, err := stateFromTree(tree)
	if err != nil {
		return nil, inputErr(path, err)
	}
	return st, nil
}

// loadStateFor reads a state file and checks its bookmarks against the
// streams of cfg.
func loadStateFor(path string, cfg *Config) (*State, error) {
	st, err := LoadState(path)
	if err != nil {
		return nil, err
	}
	if err := st.check(cfg); err != nil {
		return nil, inputErr(path, err)
	}
	return st, nil
}

func stateFromTree(tree any) (*State, error) {
	st := NewState()
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
				st.bookmarks[name] = ss
			}
		case "LEGACY", nil:
			data, ok := obj["data"].(map[string]any)
			if !ok {
				return fmt.Errorf("[%d].data: expected the legacy state object", i)
			}
			inner, err := stateFromTree(data)
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

// Value returns the stream's bookmark value, or nil.
func (st *State) Value(stream string) any {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.bookmarks[stream][keyValue]
}

// Window returns the chunk window in progress of a stream, if any.
func (st *State) Window(stream string) (start, end string, ok bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	w, _ := st.bookmarks[stream][keyWindow].(map[string]any)
	start, _ = w["start"].(string)
	end, _ = w["end"].(string)
	return start, end, start != ""
}

// Partitions returns the per-partition bookmarks of a child stream and its
// floor, in the Meltano SDK's shape.
func (st *State) Partitions(stream string) (parts []streams.PartitionBookmark, floor any) {
	st.mu.Lock()
	defer st.mu.Unlock()
	b := st.bookmarks[stream]
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

// SetPartitions records a child stream's per-partition bookmarks and
// floor. The stream-wide value, which covered every parent at once, is
// dropped: a reader must not take it for a bookmark of each parent.
func (st *State) SetPartitions(stream, key string, parts []streams.PartitionBookmark, floor any) {
	st.update(stream, func(b map[string]any) {
		list := make([]any, len(parts))
		for i, p := range parts {
			list[i] = map[string]any{keyContext: p.Context, keyReplicationKey: key, keyValue: p.Value}
		}
		b[keyPartitions] = list
		delete(b, keyValue)
		delete(b, keyReplicationKey)
		if floor != nil {
			b[keyFloor] = floor
		}
	})
}

// Resume returns the resume object of a stream's walk in progress.
func (st *State) Resume(stream string) (map[string]any, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	r, ok := st.bookmarks[stream][keyResume].(map[string]any)
	return r, ok
}

// SetResume records where a walk in progress goes on; nil removes it.
func (st *State) SetResume(stream string, r map[string]any) {
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
	w, _ := st.bookmarks[stream][keyWindow].(map[string]any)
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
	return failedWindows("bookmarks."+stream, st.bookmarks[stream])
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

// failedWindows reads a bookmark's failed_windows: an array of
// {"start", "end", "error"}, start before end, both RFC 3339 times.
func failedWindows(field string, b map[string]any) ([]streams.FailedWindow, error) {
	raw, ok := b[keyFailedWindows]
	if !ok {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%s.%s: expected an array of {\"start\", \"end\", \"error\"}, got %s", field, keyFailedWindows, jsonText(raw))
	}
	out := make([]streams.FailedWindow, 0, len(list))
	for i, e := range list {
		where := fmt.Sprintf("%s.%s[%d]", field, keyFailedWindows, i)
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: expected an object {\"start\", \"end\", \"error\"}, got %s", where, jsonText(e))
		}
		var f streams.FailedWindow
		for _, edge := range []struct {
			name string
			t    *time.Time
		}{{"start", &f.Start}, {"end", &f.End}} {
			s, _ := m[edge.name].(string)
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: expected an RFC 3339 time, got %s", where, edge.name, jsonText(m[edge.name]))
			}
			*edge.t = t
		}
		if !f.Start.Before(f.End) {
			return nil, fmt.Errorf("%s.end: expected a time after start %s, got %s", where, jsonText(m["start"]), jsonText(m["end"]))
		}
		if v, ok := m["error"]; ok {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%s.error: expected a string, got %s", where, jsonText(v))
			}
			f.Error = s
		}
		out = append(out, f)
	}
	return out, nil
}

// SetVersion records the table version of a full-table stream.
func (st *State) SetVersion(stream string, version int64) {
	st.update(stream, func(b map[string]any) { b[keyVersion] = version })
}

// LastRecords returns how many records the stream's last run emitted.
func (st *State) LastRecords(stream string) (int64, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := st.bookmarks[stream][keyLastRecords]
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

func (st *State) update(stream string, f func(map[string]any)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	b := st.bookmarks[stream]
	if b == nil {
		b = map[string]any{}
		st.bookmarks[stream] = b
	}
	f(b)
}

// MarshalJSON writes the whole state: a full snapshot, never a diff.
func (st *State) MarshalJSON() ([]byte, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make(map[string]any, len(st.other)+2)
	maps.Copy(out, st.other)
	out["bookmarks"] = st.bookmarks
	if q := st.quotaLocked(); q != nil {
		out[quotaKey] = q
	}
	if !st.redact.Empty() {
		bookmarks := make(map[string]any, len(st.bookmarks))
		for k, v := range st.bookmarks {
			bookmarks[k] = v
		}
		out["bookmarks"] = bookmarks
		out = st.redact.Value(out).(map[string]any)
	}
	if st.jobDone != nil {
		out[keyJobDone] = st.jobDone
	}
	if st.currentlySyncing != "" {
		out["currently_syncing"] = st.currentlySyncing
	} else {
		out["currently_syncing"] = nil
	}
	return json.Marshal(out)
}

// clone is a deep copy of st, made through its JSON form; st must not
// have a redactor yet, which would mask the copy's values.
func (st *State) clone() (*State, error) {
	b, err := st.MarshalJSON()
	if err != nil {
		return nil, err
	}
	tree, err := codec.Decode(b)
	if err != nil {
		return nil, err
	}
	return stateFromTree(tree)
}

// StreamJSON returns one stream's bookmark object (Airbyte's stream_state).
func (st *State) StreamJSON(stream string) ([]byte, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	b := st.bookmarks[stream]
	if b == nil {
		b = map[string]any{}
	}
	if q := st.quotaLocked(); q != nil {
		b = maps.Clone(b)
		b[quotaKey] = q
	}
	if !st.redact.Empty() {
		return json.Marshal(st.redact.Value(b))
	}
	return json.Marshal(b)
}

// check holds the bookmarks of the config's streams to the type of their
// replication key, so that a state written by hand or by another tap is
// refused before any request rather than sent to the API as a filter.
func (st *State) check(cfg *Config) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i := range cfg.Streams {
		d := &cfg.Streams[i]
		b := st.bookmarks[d.Name]
		if b == nil {
			continue
		}
		field := "bookmarks." + d.Name
		if err := checkResume(field, b); err != nil {
			return err
		}
		if d.ReplicationKey == "" {
			continue
		}
		if v, ok := b[keyValue]; ok && v != nil {
			switch keyKind(cfg.Schemas[d.Name], d.ReplicationKey) {
			case "time":
				if _, ok := streams.ParseTimeKey(v); !ok {
					return fmt.Errorf("%s.%s: expected an RFC 3339 time (replication key %q is a date-time), got %s", field, keyValue, d.ReplicationKey, jsonText(v))
				}
			case "number":
				if _, ok := v.(json.Number); !ok {
					return fmt.Errorf("%s.%s: expected a number (replication key %q is numeric), got %s", field, keyValue, d.ReplicationKey, jsonText(v))
				}
			}
		}
		if err := checkPartitions(field, b, keyKind(cfg.Schemas[d.Name], d.ReplicationKey)); err != nil {
			return err
		}
		if w, ok := b[keyWindow]; ok {
			wm, _ := w.(map[string]any)
			if wm == nil {
				return fmt.Errorf("%s.%s: expected {\"start\", \"end\"}", field, keyWindow)
			}
			for _, edge := range []string{"start", "end"} {
				s, _ := wm[edge].(string)
				if _, err := time.Parse(time.RFC3339, s); err != nil {
					return fmt.Errorf("%s.%s.%s: expected an RFC 3339 time, got %s", field, keyWindow, edge, jsonText(wm[edge]))
				}
			}
			if h, ok := wm["high"]; ok {
				if _, isTime := streams.ParseTimeKey(h); !isTime {
					return fmt.Errorf("%s.%s.high: expected an RFC 3339 time (the largest %q read), got %s", field, keyWindow, d.ReplicationKey, jsonText(h))
				}
			}
		}
		if _, err := failedWindows(field, b); err != nil {
			return err
		}
	}
	return nil
}

func checkResume(field string, b map[string]any) error {
	raw, ok := b[keyResume]
	if !ok {
		return nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("%s.%s: expected an object {\"request\", \"filter\", ...}", field, keyResume)
	}
	if _, err := streams.ResumeFromTree(m); err != nil {
		return fmt.Errorf("%s.%s.%w", field, keyResume, err)
	}
	return nil
}

// checkPartitions holds a child stream's partitions and floor to the shape
// the Meltano SDK writes and to the type of the replication key.
func checkPartitions(field string, b map[string]any, kind string) error {
	checkValue := func(where string, v any) error {
		switch kind {
		case "time":
			if _, ok := streams.ParseTimeKey(v); !ok {
				return fmt.Errorf("%s: expected an RFC 3339 time, got %s", where, jsonText(v))
			}
		case "number":
			if _, ok := v.(json.Number); !ok {
				return fmt.Errorf("%s: expected a number, got %s", where, jsonText(v))
			}
		}
		return nil
	}
	if v, ok := b[keyFloor]; ok && v != nil {
		if err := checkValue(field+"."+keyFloor, v); err != nil {
			return err
		}
	}
	raw, ok := b[keyPartitions]
	if !ok {
		return nil
	}
	list, ok := raw.([]any)
	if !ok {
		return fmt.Errorf("%s.%s: expected an array of {\"context\", \"replication_key_value\"}", field, keyPartitions)
	}
	for i, e := range list {
		where := fmt.Sprintf("%s.%s[%d]", field, keyPartitions, i)
		m, _ := e.(map[string]any)
		if _, ok := m[keyContext].(map[string]any); !ok {
			return fmt.Errorf("%s.%s: expected an object such as {\"order_id\": 3}", where, keyContext)
		}
		if v := m[keyValue]; v != nil {
			if err := checkValue(where+"."+keyValue, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyKind says what a replication key holds, from its schema: "time",
// "number", or "" for anything else (an opaque version string).
func keyKind(schema map[string]any, key string) string {
	props, _ := schema["properties"].(map[string]any)
	p, _ := props[key].(map[string]any)
	switch {
	case p["format"] == "date-time" || p["format"] == "date":
		return "time"
	case settings.TypeIncludes(p["type"], "integer") || settings.TypeIncludes(p["type"], "number"):
		return "number"
	}
	return ""
}

func jsonText(v any) string {
	b, _ := codec.Marshal(v)
	if len(b) > 60 {
		b = append(b[:57], "..."...)
	}
	return string(b)
}

// checkBackfills makes sure every selected chunked backfill knows where it
// begins — start_date, a bookmark or a window in progress — before any
// request is sent.
func checkBackfills(cfg *Config, st *State, sel *Selection) error {
	for i := range cfg.Streams {
		d := &cfg.Streams[i]
		inc := d.Incremental
		if inc == nil || inc.ChunkDays == 0 || !cfg.Start.IsZero() || !sel.Selected(d.Name) ||
			keyKind(cfg.Schemas[d.Name], d.ReplicationKey) == "number" {
			continue
		}
		if _, _, inProgress := st.Window(d.Name); st.Value(d.Name) != nil || inProgress {
			continue
		}
		return &InputError{File: cfg.Path, Err: fmt.Errorf("stream %q: incremental.chunk_days: needs start_date in the config (or a bookmark in the state) to know where the backfill begins", d.Name)}
	}
	return nil
}
