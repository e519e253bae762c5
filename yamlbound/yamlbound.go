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
