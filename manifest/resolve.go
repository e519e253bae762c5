package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// resolver replaces the manifest's references by what they point at, as
// the CDK's ManifestReferenceResolver does: a string "#/a/b" anywhere is
// the value at a/b; an object with "$ref" is the referenced object with
// the object's own fields laid over it. A path is read as the CDK reads
// it: the whole rest as one key first ("a/b" may be a key), then one
// segment at a time (a number indexes a list).
type resolver struct {
	root  map[string]any
	done  map[string]any  // a reference's resolved value, shared by its uses
	doing map[string]bool // the references being resolved: a cycle
}

// resolveRefs returns the manifest with every reference resolved. The
// input is not changed.
func resolveRefs(root map[string]any) (map[string]any, error) {
	r := &resolver{root: root, done: map[string]any{}, doing: map[string]bool{}}
	v, err := r.eval(root, "")
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

func (r *resolver) eval(node any, path string) (any, error) {
	switch x := node.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			if k == "$ref" {
				continue
			}
			v, err := r.eval(x[k], join(path, k))
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		ref, ok := x["$ref"]
		if !ok {
			return out, nil
		}
		base, err := r.eval(ref, join(path, "$ref"))
		if err != nil {
			return nil, err
		}
		bm, ok := base.(map[string]any)
		if !ok {
			return base, nil // the CDK drops the object's own fields then
		}
		merged := make(map[string]any, len(bm)+len(out))
		for k, v := range bm {
			merged[k] = v
		}
		for k, v := range out {
			merged[k] = v
		}
		return merged, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			v, err := r.eval(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case string:
		if !strings.HasPrefix(x, "#/") {
			return x, nil
		}
		if v, ok := r.done[x]; ok {
			return v, nil
		}
		if r.doing[x] {
			return nil, &Problem{Path: path, Msg: fmt.Sprintf("reference %q refers to itself", x)}
		}
		target, ok := lookup(r.root, strings.TrimPrefix(x, "#/"))
		if !ok {
			return nil, &Problem{Path: path, Msg: fmt.Sprintf("reference %q points at nothing in the manifest", x)}
		}
		r.doing[x] = true
		v, err := r.eval(target, path)
		delete(r.doing, x)
		if err != nil {
			return nil, err
		}
		r.done[x] = v
		return v, nil
	}
	return node, nil
}

// lookup reads the value at a reference's path.
func lookup(node any, ref string) (any, bool) {
	for ref != "" {
		switch x := node.(type) {
		case map[string]any:
			if v, ok := x[ref]; ok {
				return v, true
			}
			head, rest, _ := strings.Cut(ref, "/")
			v, ok := x[head]
			if !ok {
				return nil, false
			}
			node, ref = v, rest
		case []any:
			head, rest, _ := strings.Cut(ref, "/")
			i, err := strconv.Atoi(head)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			node, ref = x[i], rest
		default:
			return nil, false
		}
	}
	return node, true
}
