// Package yamlbound refuses a YAML document whose aliases expand it past a
// bound, before anything decodes it whole.
//
// Why: an alias is a pointer, and a document whose aliases double at each
// level (a: [x, x], b: [*a, *a], c: [*b, *b], ...) is a few KB that
// decodes into gigabytes. YAML libraries refuse the classic "billion
// laughs" by the ratio of aliases to nodes, which this shape passes.
// Check reads the document as a node tree (aliases stay pointers: linear
// in its size) and counts the nodes it would decode to, each anchor's
// count worked out once.
package yamlbound

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v4"
)

// MaxNodes is the bound used by the tap: far above any real OpenAPI
// document or manifest (Stripe's 4 MB document is about 500,000 nodes),
// far below what would strain memory.
const MaxNodes = 20_000_000

// Check returns an error when data is not YAML, or when its aliases
// expand it to more than maxNodes nodes.
func Check(data []byte, maxNodes int) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return err
	}
	memo := map[*yaml.Node]int{}
	if n := count(&root, memo, maxNodes, 0); n > maxNodes {
		return fmt.Errorf("its aliases expand it to more than %d nodes: refused (an alias bomb?)", maxNodes)
	}
	return nil
}

// count is the number of nodes n decodes to, or a number past limit as
// soon as it is known to pass it.
func count(n *yaml.Node, memo map[*yaml.Node]int, limit, depth int) int {
	if n == nil {
		return 0
	}
	if c, ok := memo[n]; ok {
		return c
	}
	if depth > 10_000 { // an alias cycle, or nesting no decoder takes
		return limit + 1
	}
	memo[n] = limit + 1 // an alias back to an ancestor: a cycle
	c := 1
	if n.Kind == yaml.AliasNode {
		c = count(n.Alias, memo, limit, depth+1)
	}
	for _, ch := range n.Content {
		c += count(ch, memo, limit, depth+1)
		if c > limit {
			break
		}
	}
	memo[n] = c
	return c
}

// Decode checks data as Check does, then decodes it into the values
// encoding/json would give for the same document, but for numbers (an
// integer stays an int): maps with string keys (YAML's 200: is "200"),
// and a timestamp as the text it was written as (an unquoted 2021-01-01
// meant the date, not a time.Time). A key given twice keeps its last
// value, as Python's YAML loaders do.
func Decode(data []byte, maxNodes int) (any, error) {
	if err := Check(data, maxNodes); err != nil {
		return nil, err
	}
	var tree any
	if err := yaml.Load(data, &tree, yaml.WithUniqueKeys(false)); err != nil {
		return nil, err
	}
	return jsonShaped(tree), nil
}

// jsonShaped makes v's maps map[string]any and its timestamps text, in
// place where it can.
func jsonShaped(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonShaped(e)
		}
		return x
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonShaped(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = jsonShaped(e)
		}
		return x
	case time.Time:
		if x.Location() == time.UTC && x.Equal(x.Truncate(24*time.Hour)) {
			return x.Format(time.DateOnly)
		}
		return x.Format(time.RFC3339Nano)
	}
	return v
}
