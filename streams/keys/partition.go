package keys

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// PartitionID names a child stream's partition by its context (the parent
// key it was read for): the context's keys in order, each as name=value.
// A partition from state and one the run makes for a parent record get
// the same ID.
func PartitionID(ctx map[string]any) string {
	names := slices.Sorted(maps.Keys(ctx))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + fmt.Sprint(ctx[n])
	}
	return strings.Join(parts, "&")
}

// Same reports whether two key values (nil for none) are equal.
func Same(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	c, err := Compare(a, b)
	return err == nil && c == 0
}
