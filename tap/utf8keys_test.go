package tap

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Property names whose invalid UTF-8 makes them one once replaced by
// U+FFFD lost a value silently; on the tree path and the splice path
// alike the record is now refused under the stream's policy (here a dead
// letter naming the property), and the others are written.
func TestCollidingPropertyNamesAreDeadLetters(t *testing.T) {
	page := "{\"events\":[" + strings.Join([]string{
		`{"id":1,"type":"a"}`,
		"{\"id\":2,\"type\xff\":\"x\",\"type\xfe\":\"y\"}",
		"{\"id\":3,\"payload\":{\"k\xff\":1,\"k\uFFFD\":2}}",
		"{\"id\":4,\"type\xff\":\"one is not a collision\"}",
	}, ",") + "]}"
	for _, tree := range []bool{true, false} {
		r := syncEventsPage(t, page, tree, nil)
		if r.err != "" {
			t.Fatalf("tree %v: %s", tree, r.err)
		}
		var ids []any
		for _, m := range r.msgs {
			if m.Type == "RECORD" {
				ids = append(ids, m.Record["id"])
			}
		}
		if d := cmp.Diff([]any{1.0, 4.0}, ids); d != "" {
			t.Errorf("tree %v: records written (-want +got):\n%s", tree, d)
		}
		var got []string
		for _, l := range r.dead {
			rec, _ := l["record"].(map[string]any)
			for k := range rec {
				if strings.Contains(k, "keys collided") {
					t.Errorf("tree %v: the dead letter's record keeps the decoder's mark: %v", tree, rec)
				}
			}
			for _, e := range l["errors"].([]any) {
				e := e.(map[string]any)
				got = append(got, e["pointer"].(string)+": "+e["message"].(string))
			}
		}
		const msg = ": property names collide once their invalid UTF-8 is replaced by U+FFFD: one of their values is lost"
		if d := cmp.Diff([]string{"/type\uFFFD" + msg, "/payload/k\uFFFD" + msg}, got); d != "" {
			t.Errorf("tree %v: dead letters (-want +got):\n%s", tree, d)
		}
	}
}
