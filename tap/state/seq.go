package state

import (
	"encoding/json"
	"fmt"
)

// keySeq is the bookmark field of a feed stream: the last sequence number
// written.
const keySeq = "seq"

// Seq returns the last seq a feed stream wrote, as its STATE says.
func (st *State) Seq(stream string) (int64, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch v := st.bm(stream)[keySeq].(type) {
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case int64:
		return v, true
	}
	return 0, false
}

// SetSeq records the last seq a feed stream wrote.
func (st *State) SetSeq(stream string, seq int64) {
	st.update(stream, func(b map[string]any) { b[keySeq] = seq })
}

// checkSeq holds a feed's bookmark to an integer >= 0.
func checkSeq(field string, b map[string]any) error {
	v, ok := b[keySeq]
	if !ok {
		return nil
	}
	if n, isNum := v.(json.Number); isNum {
		if i, err := n.Int64(); err == nil && i >= 0 {
			return nil
		}
	}
	return fmt.Errorf("%s.%s: expected the last sequence number written, an integer >= 0, got %s", field, keySeq, jsonText(v))
}
