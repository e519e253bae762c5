package streams

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tap-dev/tap/streams/keys"
)

func incDef(mod func(*Definition)) *Definition {
	d := &Definition{Name: "orders", Path: "/v1/orders", ReplicationKey: "updated_at",
		Incremental: &Incremental{Param: "since", EndParam: "until", OverlapS: new(60)}}
	if mod != nil {
		mod(d)
	}
	return d
}

func TestNewPlanBounds(t *testing.T) {
	start := day(1)
	now := day(10)
	chunked := func(d *Definition) { d.Incremental.ChunkDays = 3 }
	tests := map[string]struct {
		def       *Definition
		b         Bounds
		wantLower any
		wantWin   []keys.Window
		wantErr   string
	}{
		"no bookmark: start_date":          {incDef(nil), Bounds{StartDate: start, Now: now}, start, nil, ""},
		"no bookmark, no start: no filter": {incDef(nil), Bounds{Now: now}, nil, nil, ""},
		"bookmark minus overlap": {incDef(nil), Bounds{Bookmark: "2026-01-05T00:01:00Z", StartDate: start, Now: now},
			time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), nil, ""},
		"numeric without bookmark ignores start_date": {incDef(nil), Bounds{StartDate: start, Now: now, Numeric: true}, nil, nil, ""},
		"numeric bookmark": {incDef(func(d *Definition) { d.Incremental.Overlap = "2" }),
			Bounds{Bookmark: json.Number("10"), Now: now, Numeric: true}, json.Number("8"), nil, ""},
		"full table ignores the bookmark":    {incDef(chunked), Bounds{Bookmark: "2026-01-05T00:00:00Z", StartDate: start, Now: now, FullTable: true}, nil, nil, ""},
		"no replication key is a full table": {incDef(func(d *Definition) { d.ReplicationKey = "" }), Bounds{StartDate: start, Now: now}, nil, nil, ""},
		"no incremental: no filter":          {incDef(func(d *Definition) { d.Incremental = nil }), Bounds{Bookmark: "2026-01-05T00:00:00Z", Now: now}, nil, nil, ""},
		"chunked from start_date": {incDef(chunked), Bounds{StartDate: start, Now: now}, start,
			[]keys.Window{{Start: day(1), End: day(4)}, {Start: day(4), End: day(7)}, {Start: day(7), End: day(10)}}, ""},
		"chunked resumes at the window in progress": {incDef(chunked), Bounds{Bookmark: "2026-01-02T00:00:00Z", WindowStart: day(4), StartDate: start, Now: now},
			time.Date(2026, 1, 1, 23, 59, 0, 0, time.UTC), []keys.Window{{Start: day(4), End: day(7)}, {Start: day(7), End: day(10)}}, ""},
		"a resumed last window keeps its recorded end": {incDef(chunked), Bounds{WindowStart: day(7), WindowEnd: day(9), StartDate: start, Now: now},
			start, []keys.Window{{Start: day(7), End: day(9)}, {Start: day(9), End: day(10)}}, ""},
		"a recorded end past the plan's changes nothing": {incDef(chunked), Bounds{WindowStart: day(7), WindowEnd: day(11), StartDate: start, Now: now},
			start, []keys.Window{{Start: day(7), End: day(10)}}, ""},
		"chunked, nothing left":      {incDef(chunked), Bounds{StartDate: now, Now: now}, now, []keys.Window{}, ""},
		"chunked numeric: no window": {incDef(chunked), Bounds{Now: now, Numeric: true}, nil, nil, ""},
		"chunked without a start":    {incDef(chunked), Bounds{Now: now}, nil, nil, "needs start_date"},
		"bad bookmark":               {incDef(nil), Bounds{Bookmark: true, Now: now}, nil, nil, "bookmark must be"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := NewPlan(tt.def, tt.b)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.wantLower, p.Lower()); d != "" {
				t.Errorf("Lower (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantWin, p.Windows()); d != "" {
				t.Errorf("Windows (-want +got):\n%s", d)
			}
			if (tt.wantWin == nil) != (p.Windows() == nil) {
				t.Errorf("Windows() == nil is %v, want %v", p.Windows() == nil, tt.wantWin == nil)
			}
		})
	}
}

func TestNewPlanErrorKinds(t *testing.T) {
	_, err := NewPlan(incDef(nil), Bounds{Bookmark: []any{}})
	var be *BookmarkError
	if !errors.As(err, &be) {
		t.Errorf("bad bookmark: err = %v, want a *BookmarkError", err)
	}
	_, err = NewPlan(incDef(func(d *Definition) { d.Incremental.ChunkDays = 1 }), Bounds{Now: day(2)})
	if !errors.Is(err, ErrNoWindowStart) {
		t.Errorf("chunked without start: err = %v, want ErrNoWindowStart", err)
	}
}

func TestPlanRequest(t *testing.T) {
	child := func(d *Definition) {
		d.Path = "/v1/orders/{order_id}/items"
		d.Parent = &Parent{Stream: "orders", Key: "id", As: "order_id"}
	}
	gql := func(d *Definition) {
		d.Pagination.Type = PageGraphQL
		d.GraphQL = &GraphQL{Query: "q", ConnectionPath: "data.c"}
	}
	w := &keys.Window{Start: day(2), End: day(5)}
	tests := map[string]struct {
		def     *Definition
		b       Bounds
		parent  map[string]any
		w       *keys.Window
		wantURL string
		want    url.Values
		body    string
	}{
		"lower bound":      {incDef(nil), Bounds{StartDate: day(1)}, nil, nil, "/v1/orders", url.Values{"since": {"2026-01-01T00:00:00Z"}}, ""},
		"window":           {incDef(nil), Bounds{StartDate: day(1)}, nil, w, "/v1/orders", url.Values{"since": {"2026-01-02T00:00:00Z"}, "until": {"2026-01-05T00:00:00Z"}}, ""},
		"full table":       {incDef(nil), Bounds{StartDate: day(1), FullTable: true}, nil, nil, "/v1/orders", nil, ""},
		"no lower":         {incDef(nil), Bounds{}, nil, nil, "/v1/orders", nil, ""},
		"partition":        {incDef(child), Bounds{StartDate: day(1)}, map[string]any{"id": json.Number("7")}, nil, "/v1/orders/7/items", url.Values{"since": {"2026-01-01T00:00:00Z"}}, ""},
		"graphql variable": {incDef(gql), Bounds{StartDate: day(1)}, nil, nil, "/v1/orders", nil, `{"query":"q","variables":{"since":"2026-01-01T00:00:00Z"}}`},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := NewPlan(tt.def, tt.b)
			if err != nil {
				t.Fatal(err)
			}
			var part Partition
			if tt.parent != nil {
				if part, err = p.Partition(tt.parent); err != nil {
					t.Fatal(err)
				}
			}
			req, err := p.Request(part, tt.w)
			if err != nil {
				t.Fatal(err)
			}
			if req.URL != tt.wantURL {
				t.Errorf("URL = %q, want %q", req.URL, tt.wantURL)
			}
			if d := cmp.Diff(tt.want, req.Query); d != "" {
				t.Errorf("query (-want +got):\n%s", d)
			}
			if tt.body != "" && string(req.Body) != tt.body {
				t.Errorf("body = %s, want %s", req.Body, tt.body)
			}
		})
	}
}

func TestPlanPartition(t *testing.T) {
	d := incDef(func(d *Definition) {
		d.Path = "/v1/orders/{id}/items"
		d.Parent = &Parent{Stream: "orders", Key: "id", As: "order_id"}
	})
	p, err := NewPlan(d, Bounds{})
	if err != nil {
		t.Fatal(err)
	}
	part, err := p.Partition(map[string]any{"id": json.Number("3"), "x": 1})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]any{"order_id": json.Number("3")}, part.Context); d != "" {
		t.Errorf("Context (-want +got):\n%s", d)
	}
	if part.Key != json.Number("3") || part.ID() != "order_id=3" {
		t.Errorf("Key = %v, ID = %q", part.Key, part.ID())
	}
	if _, err := p.Partition(map[string]any{"x": 1}); err == nil || !strings.Contains(err.Error(), `has no "id"`) {
		t.Errorf("missing key: err = %v", err)
	}
}

// readStep is one event of a read: observe a key (in a partition), a page
// written, or a window closed; then, optionally, a checkpoint.
type readStep struct {
	op    string // "key", "page", "close"
	part  string // partition id for "key"; "" for a top-level stream
	key   any
	obs   Observation
	check bool // then Checkpoint, expecting bm and moved
	bm    any
	moved bool
	parts string // op "parts": the partitions' bookmarks, id:value
}

func TestPlanBookmark(t *testing.T) {
	k := func(d int) string { return day(d).Format(time.RFC3339) }
	sorted := func(d *Definition) { d.IsSorted = true }
	demote := func(d *Definition) { d.IsSorted = true; d.OnUnsorted = UnsortedDemote }
	child := func(d *Definition) {
		d.IsSorted = true
		d.Parent = &Parent{Stream: "orders", Key: "id"}
	}
	tests := map[string]struct {
		def   *Definition
		b     Bounds
		steps []readStep
	}{
		"unsorted moves only at close": {incDef(nil), Bounds{Bookmark: k(1)}, []readStep{
			{op: "key", key: k(5)}, {op: "key", key: k(3)},
			{op: "page", check: true, bm: k(1)},
			{op: "close", check: true, bm: k(5), moved: true},
			{op: "close", check: true, bm: k(5)},
		}},
		"sorted moves at each page": {incDef(sorted), Bounds{}, []readStep{
			{op: "key", key: k(2)}, {op: "key", key: k(3)},
			{op: "page", check: true, bm: k(3), moved: true},
			{op: "key", key: k(3)}, {op: "key", key: k(4)},
			{op: "page", check: true, bm: k(4), moved: true},
		}},
		"never behind the state": {incDef(sorted), Bounds{Bookmark: k(9)}, []readStep{
			{op: "key", key: k(2)}, {op: "page", check: true, bm: k(9)},
			{op: "close", check: true, bm: k(9)},
		}},
		"sorted, out of order: fails and falls back": {incDef(sorted), Bounds{Bookmark: k(1)}, []readStep{
			{op: "key", key: k(10)}, {op: "key", key: k(11)},
			{op: "page", check: true, bm: k(11), moved: true},
			{op: "key", key: k(5), obs: Unsorted, check: true, bm: k(1), moved: true},
		}},
		"sorted, out of order below the state's bookmark: rolls back to the late key": {incDef(sorted), Bounds{Bookmark: k(11)}, []readStep{
			{op: "key", key: k(10)}, {op: "key", key: k(11)},
			{op: "page", check: true, bm: k(11)},
			{op: "key", key: k(5), obs: Unsorted, check: true, bm: k(5), moved: true},
		}},
		"child, out of order below its partition's bookmark or the floor: rolls back": {incDef(child),
			Bounds{Partitions: []PartitionBookmark{{Context: map[string]any{"id": "1"}, Value: k(11)}}, Floor: k(9)}, []readStep{
				{op: "key", part: "id=1", key: k(11)}, {op: "key", part: "id=1", key: k(5), obs: Unsorted},
				{op: "key", part: "id=2", key: k(10)}, {op: "key", part: "id=2", key: k(3), obs: Unsorted},
				{op: "parts", parts: "id=1:" + k(5) + " id=2:" + k(3)},
			}},
		"demoted: falls back, then moves only at close": {incDef(demote), Bounds{Bookmark: k(1)}, []readStep{
			{op: "key", key: k(10)}, {op: "key", key: k(11)},
			{op: "page", check: true, bm: k(11), moved: true},
			{op: "key", key: k(5), obs: Demoted, check: true, bm: k(1), moved: true},
			{op: "key", key: k(12)}, {op: "key", key: k(6)},
			{op: "page", check: true, bm: k(1)},
			{op: "close", check: true, bm: k(12), moved: true},
		}},
		"falls back to the last close, not the run's start": {incDef(sorted), Bounds{}, []readStep{
			{op: "key", key: k(2)}, {op: "close", check: true, bm: k(2), moved: true},
			{op: "key", key: k(4)}, {op: "page", check: true, bm: k(4), moved: true},
			{op: "key", key: k(3), obs: Unsorted, check: true, bm: k(2), moved: true},
		}},
		"fall back to no bookmark": {incDef(sorted), Bounds{}, []readStep{
			{op: "key", key: k(4)}, {op: "page", check: true, bm: k(4), moved: true},
			{op: "key", key: k(3), obs: Unsorted, check: true, bm: nil, moved: true},
		}},
		"null and uncomparable keys move nothing": {incDef(nil), Bounds{}, []readStep{
			{op: "key", key: nil, obs: NullKey}, {op: "key", key: k(3)},
			{op: "key", key: json.Number("5"), obs: Uncomparable},
			{op: "close", check: true, bm: k(3), moved: true},
		}},
		"child: order checked within a partition; no stream-wide bookmark": {incDef(child), Bounds{}, []readStep{
			{op: "key", part: "id=1", key: k(5)}, {op: "key", part: "id=1", key: k(6)},
			{op: "page", check: true, bm: nil},
			{op: "key", part: "id=2", key: k(2)}, {op: "key", part: "id=2", key: k(3)},
			{op: "key", part: "id=2", key: k(1), obs: Unsorted},
		}},
		"full table observes nothing": {incDef(sorted), Bounds{Bookmark: k(1), FullTable: true}, []readStep{
			{op: "key", key: k(5)}, {op: "key", key: k(3)},
			{op: "page"}, {op: "close", check: true, bm: nil},
		}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p, err := NewPlan(tt.def, tt.b)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tt.steps {
				switch s.op {
				case "key":
					part := Partition{id: s.part}
					if name, v, ok := strings.Cut(s.part, "="); ok {
						part.Context = map[string]any{name: v}
					}
					obs, err := p.Observe(part, s.key)
					if obs != s.obs {
						t.Fatalf("step %d: Observe(%v) = %v (%v), want %v", i, s.key, obs, err, s.obs)
					}
					if (err != nil) != (obs == Uncomparable || obs == Demoted || obs == Unsorted) {
						t.Errorf("step %d: err = %v with %v", i, err, obs)
					}
				case "page":
					if err := p.Page(); err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
				case "close":
					if err := p.Close(); err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
				case "parts":
					parts, _, _, moved := p.Partitions().Changes()
					var got []string
					for _, pb := range parts {
						got = append(got, keys.PartitionID(pb.Context)+":"+fmt.Sprint(pb.Value))
					}
					if strings.Join(got, " ") != s.parts || !moved {
						t.Errorf("step %d: Partitions() = %v, moved %v; want %s, moved", i, got, moved, s.parts)
					}
				}
				if s.check {
					bm, moved := p.Checkpoint()
					if bm != s.bm || moved != s.moved {
						t.Errorf("step %d: Checkpoint() = %v, %v; want %v, %v", i, bm, moved, s.bm, s.moved)
					}
				}
			}
		})
	}
}

func TestUnsortedErrorNamesBoth(t *testing.T) {
	p, _ := NewPlan(incDef(func(d *Definition) { d.IsSorted = true }), Bounds{})
	p.Observe(Partition{}, "2026-01-11T00:00:00Z")
	_, err := p.Observe(Partition{}, "2026-01-05T00:00:00Z")
	for _, want := range []string{`stream "orders"`, `"2026-01-11T00:00:00Z"`, `"2026-01-05T00:00:00Z"`, "on_unsorted"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to name %s", err, want)
		}
	}
}

func TestPlanPartitionBookmarks(t *testing.T) {
	d := incDef(func(d *Definition) {
		d.Parent = &Parent{Stream: "orders", Key: "id", As: "order_id"}
		d.Incremental.OverlapS = new(0)
	})
	// A Meltano SDK state, read as it is: number contexts stay numbers.
	b := Bounds{StartDate: day(1), Now: day(10), MaxPartitions: 2, Partitions: []PartitionBookmark{
		{Context: map[string]any{"order_id": json.Number("1")}, Value: "2026-01-08T00:00:00Z"},
		{Context: map[string]any{"order_id": json.Number("2")}, Value: "2026-01-06T00:00:00Z"},
	}}
	p, err := NewPlan(d, b)
	if err != nil {
		t.Fatal(err)
	}
	since := func(id any) string {
		t.Helper()
		part, err := p.Partition(map[string]any{"id": id})
		if err != nil {
			t.Fatal(err)
		}
		req, err := p.Request(part, nil)
		if err != nil {
			t.Fatal(err)
		}
		return req.Query.Get("since")
	}
	if got := since(json.Number("1")); got != "2026-01-08T00:00:00Z" {
		t.Errorf("parent 1: since = %s", got)
	}
	if got := since(json.Number("3")); got != "2026-01-01T00:00:00Z" {
		t.Errorf("a parent never seen: since = %s, want start_date", got)
	}
	// Parent 3's child: a third partition folds the smallest (parent 2,
	// day 6) into the floor.
	part3, _ := p.Partition(map[string]any{"id": json.Number("3")})
	if obs, err := p.Observe(part3, "2026-01-07T00:00:00Z"); obs != Observed || err != nil {
		t.Fatalf("observe: %v %v", obs, err)
	}
	if _, _, _, moved := p.Partitions().Changes(); moved {
		t.Error("moved before the partition closed")
	}
	if err := p.Partitions().Close(part3); err != nil {
		t.Fatal(err)
	}
	// Only what changed: parent 3's bookmark, and parent 2 folded.
	parts, folded, floor, moved := p.Partitions().Changes()
	want := []PartitionBookmark{
		{Context: map[string]any{"order_id": json.Number("3")}, Value: "2026-01-07T00:00:00Z", ID: "order_id=3"},
	}
	if diff := cmp.Diff(want, parts); diff != "" || floor != "2026-01-06T00:00:00Z" || !moved || fmt.Sprint(folded) != "[order_id=2]" {
		t.Errorf("partitions (-want +got):\n%s folded = %v floor = %v moved = %v", diff, folded, floor, moved)
	}
	if parts, folded, _, moved := p.Partitions().Changes(); parts != nil || folded != nil || moved {
		t.Errorf("changes again: %v %v %v", parts, folded, moved)
	}
	if got := since(json.Number("2")); got != "2026-01-06T00:00:00Z" {
		t.Errorf("a folded parent: since = %s, want the floor", got)
	}
}
