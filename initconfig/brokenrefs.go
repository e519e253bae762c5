package initconfig

import (
	"fmt"
	"slices"
	"strings"
)

// pruneBrokenRefs takes out of the decoded document tree doc the
// operations that reach a local $ref ("#/...") the document does not
// hold, through their own schemas or the components those name, and
// makes every other such $ref an empty schema: a document with one bad
// $ref (an allOf deep in one response) still gives its hundreds of good
// operations, where the loader would refuse it whole. It returns one
// note per bad $ref, naming it and the operations left out; none when
// every $ref resolves.
func pruneBrokenRefs(doc map[string]any) []string {
	p := &pruner{doc: doc, reach: map[string]string{}}
	var notes []string
	left := map[string][]string{} // bad ref → operations left out
	paths, _ := doc["paths"].(map[string]any)
	for _, path := range sortedKeys(paths) {
		item, _ := paths[path].(map[string]any)
		for _, method := range []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"} {
			op, ok := item[method]
			if !ok {
				continue
			}
			bad := p.broken(op, map[string]bool{})
			if bad == "" {
				bad = p.broken(item["parameters"], map[string]bool{})
			}
			if bad != "" {
				delete(item, method)
				left[bad] = append(left[bad], strings.ToUpper(method)+" "+path)
			}
		}
	}
	p.blank(doc)
	for _, ref := range sortedKeys(left) {
		ops := left[ref]
		more := ""
		if len(ops) > 5 {
			more = fmt.Sprintf(" and %d more", len(ops)-5)
			ops = ops[:5]
		}
		notes = append(notes, fmt.Sprintf("$ref %q cannot be resolved: left out %s%s", ref, strings.Join(ops, ", "), more))
	}
	for _, ref := range p.sortedBad() {
		if _, noted := left[ref]; !noted {
			notes = append(notes, fmt.Sprintf("$ref %q cannot be resolved: read as any value (no list operation needs it)", ref))
		}
	}
	return notes
}

type pruner struct {
	doc map[string]any
	// reach is, for each local ref met, the first bad ref reachable
	// from its target ("" for none), once it is known.
	reach map[string]string
	bad   []string
}

// broken is the first bad local ref reachable from v; visiting holds the
// refs being walked (a schema that holds itself is no bad ref).
func (p *pruner) broken(v any, visiting map[string]bool) string {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok && strings.HasPrefix(ref, "#") {
			if r, known := p.reach[ref]; known {
				return r
			}
			if visiting[ref] {
				return ""
			}
			target, ok := p.resolve(ref)
			if !ok {
				p.reach[ref] = ref
				if !slices.Contains(p.bad, ref) {
					p.bad = append(p.bad, ref)
				}
				return ref
			}
			visiting[ref] = true
			r := p.broken(target, visiting)
			delete(visiting, ref)
			p.reach[ref] = r
			return r
		}
		for _, k := range sortedKeys(v) {
			if r := p.broken(v[k], visiting); r != "" {
				return r
			}
		}
	case []any:
		for _, e := range v {
			if r := p.broken(e, visiting); r != "" {
				return r
			}
		}
	}
	return ""
}

// resolve follows a local JSON pointer in the document.
func (p *pruner) resolve(ref string) (any, bool) {
	return pointer(p.doc, strings.TrimPrefix(ref, "#"))
}

// blank makes every bad local ref left in v an empty schema.
func (p *pruner) blank(v any) {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok && strings.HasPrefix(ref, "#") {
			if _, ok := p.resolve(ref); !ok {
				delete(v, "$ref")
				if !slices.Contains(p.bad, ref) {
					p.bad = append(p.bad, ref)
				}
			}
		}
		for _, e := range v {
			p.blank(e)
		}
	case []any:
		for _, e := range v {
			p.blank(e)
		}
	}
}

// sortedBad are the bad refs found, sorted.
func (p *pruner) sortedBad() []string {
	out := slices.Clone(p.bad)
	slices.Sort(out)
	return out
}

// itemLists replaces each "items": [schema, ...] of v (a tuple, which
// OpenAPI 3.0 and Swagger 2 do not allow, but Slack's and other
// documents write) by its first schema, and returns how many it replaced.
func itemLists(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		if list, ok := v["items"].([]any); ok {
			delete(v, "items")
			if len(list) > 0 {
				if first, ok := list[0].(map[string]any); ok {
					v["items"] = first
				}
			}
			n++
		}
		for _, e := range v {
			n += itemLists(e)
		}
	case []any:
		for _, e := range v {
			n += itemLists(e)
		}
	}
	return n
}
