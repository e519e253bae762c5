package state

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
)

// TestUseCDK: a stream compiled from a manifest reads the CDK's state
// shapes into its bookmarks and writes them back beside its own keys; the
// tap's own keys win when a state has both.
func TestUseCDK(t *testing.T) {
	shapes := map[string]settings.CDKCursor{
		"days":   {Field: "updated_at", Format: "date"},
		"layout": {Field: "updated_at", Format: "2006-01-02T15:04:05.000000Z"},
		"epoch":  {Field: "ts", Format: "unix"},
		"child":  {Field: "updated_at", Format: "rfc3339", Partition: "parent_id"},
		"own":    {Field: "updated_at", Format: "date"},
		// A ListPartitionRouter's partitions, whose value the tap's
		// records carry as ticker: no parent_slice, the CDK's own name.
		"list": {Field: "date", Format: "date", Partition: "ticker", CDKPartition: "symb", List: true},
	}
	for _, tt := range []struct {
		stream, state string
		value         any    // the bookmark read
		parts         string // the partitions read, as JSON
		out           string // StreamJSON after the read
	}{
		{stream: "days", state: `{"updated_at": "2024-05-01"}`, value: "2024-05-01T00:00:00Z",
			out: `{"replication_key":"updated_at","replication_key_value":"2024-05-01T00:00:00Z","updated_at":"2024-05-01"}`},
		{stream: "layout", state: `{"updated_at": "2024-05-01T10:11:12.123456Z"}`, value: "2024-05-01T10:11:12.123456Z",
			out: `{"replication_key":"updated_at","replication_key_value":"2024-05-01T10:11:12.123456Z","updated_at":"2024-05-01T10:11:12.123456Z"}`},
		{stream: "epoch", state: `{"ts": "1714557600"}`, value: "2024-05-01T10:00:00Z",
			out: `{"replication_key":"ts","replication_key_value":"2024-05-01T10:00:00Z","ts":"1714557600"}`},
		{stream: "child", state: `{"states": [{"partition": {"parent_id": "1", "parent_slice": {}}, "cursor": {"updated_at": "2024-05-01T00:00:00Z"}}, {"partition": {"parent_id": 2}, "cursor": {"updated_at": "2024-06-01T00:00:00Z"}}], "use_global_cursor": false}`,
			parts: `[{"Context":{"parent_id":"1"},"Value":"2024-05-01T00:00:00Z"},{"Context":{"parent_id":2},"Value":"2024-06-01T00:00:00Z"}]`,
			out:   `{"partitions":[{"context":{"parent_id":"1"},"replication_key":"updated_at","replication_key_value":"2024-05-01T00:00:00Z"},{"context":{"parent_id":2},"replication_key":"updated_at","replication_key_value":"2024-06-01T00:00:00Z"}],"states":[{"cursor":{"updated_at":"2024-05-01T00:00:00Z"},"partition":{"parent_id":"1","parent_slice":{}}},{"cursor":{"updated_at":"2024-06-01T00:00:00Z"},"partition":{"parent_id":2,"parent_slice":{}}}],"use_global_cursor":false}`},
		{stream: "list", state: `{"states": [{"partition": {"symb": "AAPL"}, "cursor": {"date": "2025-03-05"}}]}`,
			parts: `[{"Context":{"ticker":"AAPL"},"Value":"2025-03-05T00:00:00Z"}]`,
			out:   `{"partitions":[{"context":{"ticker":"AAPL"},"replication_key":"date","replication_key_value":"2025-03-05T00:00:00Z"}],"states":[{"cursor":{"date":"2025-03-05"},"partition":{"symb":"AAPL"}}]}`},
		{stream: "own", state: `{"replication_key": "updated_at", "replication_key_value": "2024-07-01T00:00:00Z", "updated_at": "2024-05-01"}`, value: "2024-07-01T00:00:00Z",
			out: `{"replication_key":"updated_at","replication_key_value":"2024-07-01T00:00:00Z","updated_at":"2024-07-01"}`},
	} {
		t.Run(tt.stream, func(t *testing.T) {
			var tree any
			if err := json.Unmarshal([]byte(`[{"type": "STREAM", "stream": {"stream_descriptor": {"name": "`+tt.stream+`"}, "stream_state": `+tt.state+`}}]`), &tree); err != nil {
				t.Fatal(err)
			}
			st, err := fromTree(tree)
			if err != nil {
				t.Fatal(err)
			}
			st.UseCDK(shapes)
			if tt.parts != "" {
				parts, _ := st.Partitions(tt.stream)
				var want []streams.PartitionBookmark
				if err := json.Unmarshal([]byte(tt.parts), &want); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, parts); diff != "" {
					t.Errorf("partitions (-want +got):\n%s", diff)
				}
			} else if got := st.Value(tt.stream); got != tt.value {
				t.Errorf("bookmark %#v, want %#v", got, tt.value)
			}
			out, err := st.StreamJSON(tt.stream)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.out {
				t.Errorf("stream state\n got %s\nwant %s", out, tt.out)
			}
		})
	}
}
