package limit

import (
	"bytes"
	"encoding/json"
	"strings"
)

// jsonNumberAt reads the number at a dotted path ("extensions.cost.actualQueryCost")
// of a JSON body; ok is false when the body is not JSON or the path holds
// no number.
func jsonNumberAt(body []byte, path string) (float64, bool) {
	if len(body) == 0 || path == "" {
		return 0, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return 0, false
	}
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return 0, false
		}
		v = m[k]
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}
