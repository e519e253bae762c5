package state

import (
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
	"github.com/tap-dev/tap/streams/pages"
)

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

// Check holds the bookmarks of the config's streams to the type of their
// replication key, so that a state written by hand or by another tap is
// refused before any request rather than sent to the API as a filter.
// The bookmarks of other streams are kept from then on as the JSON they
// came in: a state with many of them costs each STATE a copy, not a new
// encoding of each.
//
// fullTable (nil: none) names the streams this run reads as a full
// table: a bookmark of theirs in the future is no harm, as the walk does
// not use it; it is kept, and Ignored says so.
func (st *State) Check(cfg *settings.Config, fullTable func(stream string) bool) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.checkLocked(cfg); err != nil {
		return err
	}
	if err := st.checkSkipsLocked(cfg, time.Now(), fullTable); err != nil {
		return err
	}
	return st.packLocked(cfg)
}

// futureSlack is how far past the clock a bookmark may be: an API's clock
// runs a little ahead of ours, not days.
const futureSlack = 24 * time.Hour

// checkSkipsLocked refuses bookmarks a run would skip rows by: a time
// bookmark past now (a run reads nothing until then, and what is written
// meanwhile never), a window that ends before it starts (what lies
// between is never asked for), and a replication_key that is not the
// stream's (the value is another field's, no bound of this one).
func (st *State) checkSkipsLocked(cfg *settings.Config, now time.Time, fullTable func(string) bool) error {
	for i := range cfg.Streams {
		d := &cfg.Streams[i]
		b := st.bookmarks[d.Name]
		if b == nil || d.ReplicationKey == "" {
			continue
		}
		field := "bookmarks." + d.Name
		if k, ok := b[keyReplicationKey].(string); ok && k != "" && k != d.ReplicationKey {
			return fmt.Errorf("%s.%s: %q, but the stream's replication_key is %q: the bookmark bounds another field, and reading from it could skip rows; remove the stream's bookmark to read it from start_date", field, keyReplicationKey, k, d.ReplicationKey)
		}
		if t, ok := keys.ParseTime(b[keyValue]); ok && t.After(now.Add(futureSlack)) && fullTable != nil && fullTable(d.Name) {
			st.ignored = append(st.ignored, fmt.Sprintf("%s.%s: %s is in the future (the clock says %s); the stream is read as a full table this run, which does not use it: kept as it is", field, keyValue, jsonText(b[keyValue]), now.UTC().Format(time.RFC3339)))
		} else if ok && t.After(now.Add(futureSlack)) {
			return fmt.Errorf("%s.%s: %s is in the future (the clock says %s): a run from it reads nothing until then, and never what is written meanwhile; remove or fix the bookmark", field, keyValue, jsonText(b[keyValue]), now.UTC().Format(time.RFC3339))
		}
		if wm, ok := b[keyWindow].(map[string]any); ok {
			start, _ := time.Parse(time.RFC3339, fmt.Sprint(wm["start"]))
			end, _ := time.Parse(time.RFC3339, fmt.Sprint(wm["end"]))
			if end.Before(start) {
				return fmt.Errorf("%s.%s: ends (%s) before it starts (%s): the rows between would never be asked for; remove the window to read from the bookmark", field, keyWindow, wm["end"], wm["start"])
			}
		}
	}
	return nil
}

func (st *State) checkLocked(cfg *settings.Config) error {
	var base *url.URL // nil for embedded://demo: its address changes every run
	if cfg.BaseURL != settings.DemoURL {
		base, _ = url.Parse(cfg.BaseURL) // checked with the config
	}
	for i := range cfg.Streams {
		d := &cfg.Streams[i]
		b := st.bm(d.Name)
		if b == nil {
			continue
		}
		field := "bookmarks." + d.Name
		if err := checkResume(field, b, base); err != nil {
			return err
		}
		if d.Feed != nil {
			if err := checkSeq(field, b); err != nil {
				return err
			}
		}
		if d.ReplicationKey == "" {
			continue
		}
		if v, ok := b[keyValue]; ok && v != nil {
			switch settings.StreamKeyKind(d, cfg.Schemas[d.Name]) {
			case "time":
				if _, ok := keys.ParseTime(v); !ok {
					return fmt.Errorf("%s.%s: expected an RFC 3339 time (replication key %q is a date-time), got %s", field, keyValue, d.ReplicationKey, jsonText(v))
				}
			case "number":
				if _, ok := v.(json.Number); !ok {
					return fmt.Errorf("%s.%s: expected a number (replication key %q is numeric), got %s", field, keyValue, d.ReplicationKey, jsonText(v))
				}
			}
		}
		if err := checkPartitions(field, b, settings.StreamKeyKind(d, cfg.Schemas[d.Name])); err != nil {
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
				if _, isTime := keys.ParseTime(h); !isTime {
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

func checkResume(field string, b map[string]any, base *url.URL) error {
	raw, ok := b[keyResume]
	if !ok {
		return nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("%s.%s: expected an object {\"request\", \"filter\", ...}", field, keyResume)
	}
	r, err := pages.ResumeFromTree(m)
	if err == nil {
		err = r.CheckOrigin(base)
	}
	if err != nil {
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
			if _, ok := keys.ParseTime(v); !ok {
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

func jsonText(v any) string {
	b, _ := codec.Marshal(v)
	if len(b) > 60 {
		b = append(b[:57], "..."...)
	}
	return string(b)
}
