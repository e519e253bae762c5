package codec

import (
	"fmt"
	"sort"
)

// kind is a set of JSON types.
type kind uint8

const (
	kNull kind = 1 << iota
	kBool
	kInt // a number written without fraction or exponent
	kNum
	kStr
	kArr
	kObj
	kAny kind = 0xff
)

// A Shape is a record schema compiled for the Walker: the subset of JSON
// Schema most record schemas use (type, properties, required, items,
// additionalProperties, format date-time). The Walker answers from it
// only "certainly valid" or "not sure"; a schema library stays the judge
// of every record it is not sure of.
type Shape struct {
	root *shapeNode
	// captures are the top-level properties whose raw values a walk
	// reports, in Record.Captures' order.
	captures []string
}

// MaxCaptures bounds the properties a Shape captures: the primary key's
// and the replication key's, which the tap needs without a tree.
const MaxCaptures = 4

type shapeNode struct {
	types    kind
	props    []shapeProp // sorted by name
	index    map[string]int
	reqMask  uint64 // bits of the required properties
	required []string
	noExtra  bool
	items    *shapeNode
	dateTime bool
	capture  int // >= 0: the Captures slot of this top-level value
}

type shapeProp struct {
	name string
	node *shapeNode
	bit  uint64
}

var anyShape = &shapeNode{types: kAny, capture: -1}

// annotations never affect validity.
var annotations = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true, "$comment": true,
	"$schema": true, "readOnly": true, "writeOnly": true, "deprecated": true,
}

// CompileShape compiles a decoded schema. It fails for any keyword
// outside the subset (such a stream keeps the tree path) and for objects
// of more than 64 properties. capture names up to MaxCaptures top-level
// properties whose raw values each walk reports.
func CompileShape(schema map[string]any, capture ...string) (*Shape, error) {
	if len(capture) > MaxCaptures {
		return nil, fmt.Errorf("%d properties to capture, at most %d", len(capture), MaxCaptures)
	}
	root, err := compileShape(schema)
	if err != nil {
		return nil, err
	}
	for slot, name := range capture {
		i, ok := root.index[name]
		if !ok {
			root.props = append(root.props, shapeProp{name: name, node: anyShape})
			if err := root.finish(); err != nil {
				return nil, err
			}
			i = root.index[name]
		}
		cp := *root.props[i].node
		cp.capture = slot
		root.props[i].node = &cp
	}
	return &Shape{root: root, captures: capture}, nil
}

func compileShape(v any) (*shapeNode, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a schema is a JSON %T, not an object", v)
	}
	n := &shapeNode{types: kAny, capture: -1}
	for k, val := range m {
		switch {
		case annotations[k]:
		case k == "type":
			var list []any
			switch t := val.(type) {
			case string:
				list = []any{t}
			case []any:
				list = t
			default:
				return nil, fmt.Errorf("type is not a string or a list")
			}
			n.types = 0
			for _, e := range list {
				switch e {
				case "null":
					n.types |= kNull
				case "boolean":
					n.types |= kBool
				case "integer":
					n.types |= kInt
				case "number":
					n.types |= kNum | kInt
				case "string":
					n.types |= kStr
				case "array":
					n.types |= kArr
				case "object":
					n.types |= kObj
				default:
					return nil, fmt.Errorf("type %v", e)
				}
			}
		case k == "properties":
			props, ok := val.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("properties is not an object")
			}
			for name, p := range props {
				sub, err := compileShape(p)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
				n.props = append(n.props, shapeProp{name: name, node: sub})
			}
		case k == "required":
			list, ok := val.([]any)
			if !ok {
				return nil, fmt.Errorf("required is not a list")
			}
			for _, e := range list {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("required holds a non-string")
				}
				n.required = append(n.required, s)
			}
		case k == "items":
			sub, err := compileShape(val)
			if err != nil {
				return nil, fmt.Errorf("items: %w", err)
			}
			n.items = sub
		case k == "additionalProperties":
			b, ok := val.(bool)
			if !ok {
				return nil, fmt.Errorf("additionalProperties is not a boolean")
			}
			n.noExtra = !b
		case k == "format":
			if val != "date-time" {
				return nil, fmt.Errorf("format %v", val)
			}
			n.dateTime = true
		default:
			return nil, fmt.Errorf("keyword %q", k)
		}
	}
	for _, r := range n.required {
		if !n.has(r) {
			n.props = append(n.props, shapeProp{name: r, node: anyShape})
		}
	}
	return n, n.finish()
}

func (n *shapeNode) has(name string) bool {
	for _, p := range n.props {
		if p.name == name {
			return true
		}
	}
	return false
}

// finish numbers the properties; a bit per property lets a walk check
// required and duplicate keys without a map.
func (n *shapeNode) finish() error {
	if len(n.props) > 64 {
		return fmt.Errorf("an object of %d properties (at most 64)", len(n.props))
	}
	sort.Slice(n.props, func(i, j int) bool { return n.props[i].name < n.props[j].name })
	n.index = make(map[string]int, len(n.props))
	for i := range n.props {
		n.props[i].bit = 1 << uint(i)
		n.index[n.props[i].name] = i
	}
	n.reqMask = 0
	for _, r := range n.required {
		n.reqMask |= n.props[n.index[r]].bit
	}
	return nil
}

// find looks a key up; string(key) in a map index does not allocate.
func (n *shapeNode) find(key []byte) (*shapeProp, bool) {
	i, ok := n.index[string(key)]
	if !ok {
		return nil, false
	}
	return &n.props[i], true
}
