package codec

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
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
// additionalProperties, format date-time, enum and const of strings,
// minLength, maxLength). A string the walker cannot compare as it lies
// (one with an escape) is the library's to judge. The Walker answers from it
// only "certainly valid" or "not sure"; a schema library stays the judge
// of every record it is not sure of.
type Shape struct {
	root *shapeNode
	// captures are the top-level properties whose raw values a walk
	// reports, in Record.Captures' order.
	captures []string
	objects  int // nodes with properties, numbered by shapeNode.id
}

// MaxCaptures bounds the properties a Shape captures: the primary key's
// and the replication key's, which the tap needs without a tree.
const MaxCaptures = 4

type shapeNode struct {
	types kind
	props []shapeProp // sorted by name
	index map[string]int
	// table is an open-addressing table of props' index+1 by keyHash:
	// a lookup per key of every record, where a map's hashing showed.
	table    []uint8
	mask     uint32
	reqMask  uint64 // bits of the required properties
	required []string
	noExtra  bool
	items    *shapeNode
	dateTime bool
	// enum holds the strings of enum or const (nil: neither); a value
	// the walker cannot compare as is is the library's to judge.
	enum           map[string]bool
	minLen, maxLen int // in code points; -1: unset
	// strChecks: a string value is checked beyond its type (format,
	// enum, length), so it takes value's path.
	strChecks bool
	capture   int // >= 0: the Captures slot of this top-level value
	id        int // a node with properties: its number in the Shape
}

type shapeProp struct {
	name string
	node *shapeNode
	bit  uint64
	i    uint8 // its index in props
	// plain: the name holds no quote, backslash or control character,
	// so bytes equal to it between quotes are the key, unescaped.
	plain bool
	// member is the key as a record most often spells it, from its
	// opening quote to the colon: "name":
	member string
	// word and mask hold a member of up to 16 bytes, little-endian, for
	// a compare of two loads.
	word, mask [2]uint64
}

// at reports whether b holds p.member at pos.
func (p *shapeProp) at(b []byte, pos int) bool {
	if len(p.member) <= 16 && pos+16 <= len(b) {
		x := binary.LittleEndian.Uint64(b[pos:])
		y := binary.LittleEndian.Uint64(b[pos+8:])
		return x&p.mask[0] == p.word[0] && y&p.mask[1] == p.word[1]
	}
	e := pos + len(p.member)
	return e <= len(b) && string(b[pos:e]) == p.member
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
	sh := &Shape{root: root, captures: capture}
	sh.number(root)
	return sh, nil
}

// number gives each node with properties its id.
func (s *Shape) number(n *shapeNode) {
	if n == nil {
		return
	}
	if len(n.props) > 0 {
		n.id = s.objects
		s.objects++
	}
	for _, p := range n.props {
		s.number(p.node)
	}
	s.number(n.items)
}

func compileShape(v any) (*shapeNode, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a schema is a JSON %T, not an object", v)
	}
	n := &shapeNode{types: kAny, capture: -1, minLen: -1, maxLen: -1}
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
		case k == "enum" || k == "const":
			list, ok := val.([]any)
			if k == "const" {
				list, ok = []any{val}, true
			}
			if !ok {
				return nil, fmt.Errorf("enum is not a list")
			}
			if n.enum == nil {
				n.enum = map[string]bool{}
			} else {
				return nil, fmt.Errorf("enum and const together") // their intersection: the library's
			}
			for _, e := range list {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("%s holds a non-string", k)
				}
				n.enum[s] = true
			}
		case k == "minLength" || k == "maxLength":
			l, ok := schemaCount(val)
			if !ok {
				return nil, fmt.Errorf("%s is not a count", k)
			}
			if k == "minLength" {
				n.minLen = l
			} else {
				n.maxLen = l
			}
		case k == "format":
			if val != "date-time" {
				return nil, fmt.Errorf("format %v", val)
			}
			n.dateTime = true
		default:
			return nil, fmt.Errorf("keyword %q", k)
		}
	}
	if n.enum != nil {
		n.types &= kStr // a value of another type is not in the enum
	}
	n.strChecks = n.dateTime || n.enum != nil || n.minLen >= 0 || n.maxLen >= 0
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
		p := &n.props[i]
		p.bit, p.i = 1<<uint(i), uint8(i)
		n.index[p.name] = i
		p.plain = true
		for j := 0; j < len(p.name); j++ {
			if c := p.name[j]; c < 0x20 || c == '"' || c == '\\' {
				p.plain = false
			}
		}
		p.member = `"` + p.name + `":`
		p.word, p.mask = [2]uint64{}, [2]uint64{}
		for j := 0; j < len(p.member) && j < 16; j++ {
			p.word[j/8] |= uint64(p.member[j]) << (8 * (j % 8))
			p.mask[j/8] |= 0xff << (8 * (j % 8))
		}
	}
	size := 8
	for size < 4*len(n.props) {
		size *= 2
	}
	n.table, n.mask = make([]uint8, size), uint32(size-1)
	for i := range n.props {
		if name := n.props[i].name; name != "" { // "" is found through the map
			h := keyHash(name) & n.mask
			for n.table[h] != 0 {
				h = (h + 1) & n.mask
			}
			n.table[h] = uint8(i + 1)
		}
	}
	n.reqMask = 0
	for _, r := range n.required {
		n.reqMask |= n.props[n.index[r]].bit
	}
	return nil
}

// keyHash is cheap: the length, the first and the last byte.
func keyHash[S string | []byte](k S) uint32 {
	return uint32(len(k))*0x9e + uint32(k[0])*3 + uint32(k[len(k)-1])*5
}

// find looks a key up: a cheap hash, then one comparison.
func (n *shapeNode) find(key []byte) (*shapeProp, bool) {
	if len(n.props) == 0 {
		return nil, false
	}
	if len(key) == 0 {
		i, ok := n.index[""]
		if !ok {
			return nil, false
		}
		return &n.props[i], true
	}
	for h := keyHash(key) & n.mask; ; h = (h + 1) & n.mask {
		e := n.table[h]
		if e == 0 {
			return nil, false
		}
		if p := &n.props[e-1]; p.name == string(key) {
			return p, true
		}
	}
}

// schemaCount reads a schema's non-negative whole number (minLength).
func schemaCount(v any) (int, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := strconv.Atoi(string(x))
		return n, err == nil && n >= 0
	case float64:
		return int(x), x >= 0 && x == float64(int(x)) && x < 1<<31
	}
	return 0, false
}
