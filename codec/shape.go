package codec

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
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
// Schema most record schemas use (type, properties of any number,
// required, items, additionalProperties, enum and const of strings and
// null, minLength, maxLength, pattern, minimum, maximum and their
// exclusive forms, format date-time, date, email, uuid and ipv4, an
// anyOf of a schema and {"type": "null"}). A
// keyword outside it is left to the schema library for that keyword
// only (a Library): the value at its node is decoded and checked against
// a schema of just those keywords. The Walker answers from it only
// "certainly valid" or "not sure"; a schema library stays the judge of
// every record it is not sure of.
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

// maxEnumList bounds the enums compared string by string.
const maxEnumList = 8

// maxProps bounds the properties of one object: its keys' hints and
// lookup table hold index+1 in 16 bits.
const maxProps = 1<<16 - 1

// A Library compiles, in one call, the sub-schemas a Shape leaves to the
// schema library. Each holds keywords of one node of the schema that the
// walker does not check itself, and is compiled where that node lies in
// the schema (so that a $ref resolves as it does there): pointer is the
// node's JSON pointer. The check returned for it is given the node's
// value as Decode reads it and reports whether the keywords hold; a nil
// check means they assert nothing.
type Library func(subs []Sub) ([]func(v any) bool, error)

// Sub is one sub-schema for the Library.
type Sub struct {
	Pointer  string
	Keywords map[string]any
}

type shapeNode struct {
	types kind
	props []shapeProp // sorted by name
	index map[string]int
	// table is an open-addressing table of props' index+1 by keyHash:
	// a lookup per key of every record, where a map's hashing showed.
	table    []uint16
	mask     uint32
	reqMask  uint64   // bits of the required properties among the first 64
	reqWide  []uint64 // required properties beyond the first 64: bit i-64
	required []string
	noExtra  bool
	extra    *shapeNode // additionalProperties as a schema: a key not listed; nil: any value
	items    *shapeNode
	format   format
	// enum holds the strings of enum or const (nil: neither); a value
	// the walker cannot compare as is is the library's to judge.
	enum           map[string]bool
	enumList       []string // enum's strings when they are few; nil: look up enum
	minLen, maxLen int      // in code points; -1: unset
	pattern        *pattern
	bounds         []bound
	// strChecks: a string value is checked beyond its type, so it takes
	// value's path; numChecks: a number value is.
	strChecks, numChecks bool
	// lib checks the node's keywords outside the subset on every value
	// (nil: none); fallback checks its string keywords with the library
	// when the walker is not sure of a string (nil: the record is not
	// sure then).
	lib, fallback func(any) bool
	capture       int // >= 0: the Captures slot of this top-level value
	id            int // a node with properties: its number in the Shape
	// multiple is multipleOf (nil: none); numFallback checks the
	// number keywords with the library when the walker is not sure of a
	// number.
	multiple    *multiple
	numFallback func(any) bool
	// nullOK: a null is valid whatever the other keywords say (the "X
	// or null" of an anyOf): lib is not asked of it.
	nullOK bool
	// rest, strRest and numRest are the sub-schemas lib, fallback and
	// numFallback come from, until the Library compiles them.
	rest, strRest, numRest map[string]any
	pointer                string
}

type shapeProp struct {
	name string
	node *shapeNode
	bit  uint64 // 0 beyond the first 64: see shapeNode.reqWide
	i    uint16 // its index in props
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

var anyShape = &shapeNode{types: kAny, capture: -1, minLen: -1, maxLen: -1}

// libraryKeywords are the keywords the schema library evaluates
// (santhosh-tekuri/jsonschema/v5's compiler reads no others, and the tap
// registers no extension): a keyword outside the walker's subset and
// this list asserts nothing, as an annotation.
var libraryKeywords = map[string]bool{
	"type": true, "enum": true, "const": true, "minimum": true, "maximum": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minProperties": true, "maxProperties": true, "required": true, "minItems": true,
	"maxItems": true, "uniqueItems": true, "minLength": true, "maxLength": true,
	"pattern": true, "minContains": true, "maxContains": true, "dependentRequired": true,
	"not": true, "allOf": true, "anyOf": true, "oneOf": true, "properties": true,
	"regexProperties": true, "patternProperties": true, "additionalProperties": true,
	"dependencies": true, "propertyNames": true, "contains": true, "if": true, "then": true,
	"else": true, "dependentSchemas": true, "prefixItems": true, "items": true,
	"additionalItems": true, "unevaluatedProperties": true, "unevaluatedItems": true,
	"format": true, "contentEncoding": true, "contentMediaType": true, "contentSchema": true,
	"$ref": true,
}

// unplaceable keywords change what a sub-schema means where it is
// compiled alone (a base URI, an anchor, a dynamic scope): a schema
// using one below its root does not compile to a Shape.
var unplaceable = map[string]bool{
	"$id": true, "id": true, "$anchor": true, "$dynamicAnchor": true, "$dynamicRef": true,
	"$recursiveAnchor": true, "$recursiveRef": true, "$vocabulary": true,
}

// groups are keywords the library reads together: one of them left to
// it takes the others of the node along.
var groups = [][]string{
	{"if", "then", "else"},
	{"contains", "minContains", "maxContains"},
	{"contentEncoding", "contentMediaType", "contentSchema"},
	{"items", "additionalItems", "prefixItems"},
	{"properties", "patternProperties", "additionalProperties", "regexProperties"},
}

// CompileShape compiles a decoded schema without a Library: it fails for
// any keyword outside the subset (such a stream keeps the tree path).
// capture names up to MaxCaptures top-level properties whose raw values
// each walk reports.
func CompileShape(schema map[string]any, capture ...string) (*Shape, error) {
	return CompileShapeWith(schema, nil, capture...)
}

// CompileShapeWith compiles a decoded schema, leaving the keywords
// outside the subset to lib (nil: they fail the compile).
func CompileShapeWith(schema map[string]any, lib Library, capture ...string) (*Shape, error) {
	if len(capture) > MaxCaptures {
		return nil, fmt.Errorf("%d properties to capture, at most %d", len(capture), MaxCaptures)
	}
	c := &shapeCompiler{root: schema, refs: map[string]*shapeNode{}, active: map[string]bool{}}
	root, err := c.node(schema, "", true)
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
	if err := sh.library(lib); err != nil {
		return nil, err
	}
	return sh, nil
}

// walkNodes calls f on every node of n's tree once (a capture's copy
// too, a $ref's target once however often it is referred to).
func walkNodes(n *shapeNode, f func(*shapeNode)) {
	seen := map[*shapeNode]bool{}
	var walk func(n *shapeNode)
	walk = func(n *shapeNode) {
		if n == nil || n == anyShape || seen[n] {
			return
		}
		seen[n] = true
		f(n)
		for _, p := range n.props {
			walk(p.node)
		}
		walk(n.extra)
		walk(n.items)
	}
	walk(n)
}

// library compiles the sub-schemas left to the library, in one call.
func (s *Shape) library(lib Library) error {
	var subs []Sub
	var dest []*func(any) bool
	walkNodes(s.root, func(n *shapeNode) {
		if n.rest != nil {
			subs = append(subs, Sub{n.pointer, n.rest})
			dest = append(dest, &n.lib)
		}
		if n.strRest != nil && lib != nil { // without, a string it refuses is not sure
			subs = append(subs, Sub{n.pointer, n.strRest})
			dest = append(dest, &n.fallback)
		}
		if n.numRest != nil && lib != nil {
			subs = append(subs, Sub{n.pointer, n.numRest})
			dest = append(dest, &n.numFallback)
		}
	})
	if len(subs) == 0 {
		return nil
	}
	if lib == nil {
		return fmt.Errorf("keyword %s at %q outside the subset", firstKey(subs[0].Keywords), subs[0].Pointer)
	}
	checks, err := lib(subs)
	if err != nil {
		return err
	}
	if len(checks) != len(subs) {
		return fmt.Errorf("the library compiled %d of %d sub-schemas", len(checks), len(subs))
	}
	for i, c := range checks {
		*dest[i] = c
	}
	walkNodes(s.root, func(n *shapeNode) {
		if n.lib != nil {
			n.strChecks, n.numChecks = true, true
		}
	})
	return nil
}

func firstKey(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return ""
	}
	return strconv.Quote(keys[0])
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
	s.number(n.extra)
	s.number(n.items)
}

// pointerTo extends a JSON pointer by one token.
func pointerTo(at string, tokens ...string) string {
	for _, t := range tokens {
		at += "/" + escapeToken(t)
	}
	return at
}

func escapeToken(t string) string {
	out := make([]byte, 0, len(t))
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, t[i])
		}
	}
	return string(out)
}

// A shapeCompiler compiles one schema document.
type shapeCompiler struct {
	root map[string]any
	// refs are the nodes compiled for a $ref, by the pointer it names;
	// active, those being compiled (a $ref to one is a cycle).
	refs   map[string]*shapeNode
	active map[string]bool
}

// node compiles the schema at pointer; root: the document's.
func (c *shapeCompiler) node(v any, pointer string, root bool) (*shapeNode, error) {
	n := &shapeNode{types: kAny, capture: -1, minLen: -1, maxLen: -1, pointer: pointer}
	switch v := v.(type) {
	case bool:
		if !v {
			n.types = 0 // false: no value is valid
		}
		return n, n.finish()
	case map[string]any:
		if target, ok := c.inline(v); ok {
			return target, nil
		}
		if !root {
			if alt, ok := c.nullable(v, pointer); ok {
				return alt, nil
			}
		}
		return n, n.compile(c, v, root)
	}
	return nil, fmt.Errorf("a schema is a JSON %T, not an object", v)
}

// inline is the node of the schema a {"$ref": "#/…"} names, when m has
// no other keyword the library reads and the reference is no cycle:
// the walker checks its target where it refers to it. Any other $ref
// is the library's.
func (c *shapeCompiler) inline(m map[string]any) (*shapeNode, bool) {
	ref, ok := m["$ref"].(string)
	if !ok || !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	for k := range m {
		if k != "$ref" && (libraryKeywords[k] || unplaceable[k]) {
			return nil, false
		}
	}
	pointer, err := url.PathUnescape(ref[1:])
	if err != nil || c.active[pointer] {
		return nil, false
	}
	if n, ok := c.refs[pointer]; ok {
		return n, true
	}
	target, ok := resolve(c.root, pointer)
	if !ok {
		return nil, false
	}
	c.active[pointer] = true
	n, err := c.node(target, pointer, false)
	delete(c.active, pointer)
	if err != nil {
		return nil, false
	}
	c.refs[pointer] = n
	return n, true
}

// nullable is the node of {"anyOf": [X, {"type": "null"}]} (in either
// order, with no other keyword the library reads), the way generated
// schemas say "X or null": X's node, but a null is valid whatever X
// says. oneOf too, when X's types exclude null (else a null would meet
// both, which oneOf refuses). Any other anyOf or oneOf, and one whose X
// does not compile to a node, is the library's.
func (c *shapeCompiler) nullable(m map[string]any, pointer string) (*shapeNode, bool) {
	key := ""
	for k := range m {
		switch {
		case (k == "anyOf" || k == "oneOf") && key == "":
			key = k
		case libraryKeywords[k] || unplaceable[k]:
			return nil, false
		}
	}
	list, ok := m[key].([]any)
	if !ok || len(list) != 2 {
		return nil, false
	}
	other := -1
	switch {
	case nullSchema(list[1]):
		other = 0
	case nullSchema(list[0]):
		other = 1
	default:
		return nil, false
	}
	x, err := c.node(list[other], pointerTo(pointer, key, strconv.Itoa(other)), false)
	if err != nil || key == "oneOf" && x.types&kNull != 0 {
		return nil, false
	}
	alt := *x // x may be a $ref's target, walked as it is elsewhere
	alt.types |= kNull
	alt.nullOK = true
	return &alt, true
}

// nullSchema reports whether v is {"type": "null"} (or ["null"]), with
// no other keyword the library reads.
func nullSchema(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, val := range m {
		switch {
		case k == "type":
			if types, ok := typeSet(val); !ok || types != kNull {
				return false
			}
		case libraryKeywords[k] || unplaceable[k]:
			return false
		}
	}
	_, typed := m["type"]
	return typed
}

// resolve follows a JSON pointer from the document's root (not to the
// root itself: a cycle, the library's).
func resolve(doc any, pointer string) (any, bool) {
	if pointer == "" {
		return nil, false
	}
	return Pointer(doc, pointer)
}

func (n *shapeNode) compile(c *shapeCompiler, m map[string]any, root bool) error {
	rest := map[string]any{}
	left := func(k string) { rest[k] = m[k] }
	for k := range m {
		switch {
		case unplaceable[k] && !(root && (k == "$id" || k == "id")):
			return fmt.Errorf("keyword %q below the schema's root", k)
		case !libraryKeywords[k]:
			// an annotation: the library reads it not
		case k == "unevaluatedProperties" || k == "unevaluatedItems":
			// It reads every other keyword of the node: they all go,
			// and the walker checks what it knows besides.
			rest = maps.Clone(m)
		}
	}
	// A group the walker does not know whole goes to the library whole.
	for _, g := range groups {
		if g[0] == "properties" {
			continue
		}
		if _, isTuple := m["items"].([]any); g[0] == "items" && m["prefixItems"] == nil && !isTuple {
			continue // items as one schema: the walker's
		}
		for _, k := range g {
			if _, ok := m[k]; ok {
				left(k)
			}
		}
	}
	if m["patternProperties"] != nil || m["regexProperties"] != nil {
		// additionalProperties depends on which keys the patterns
		// match: the library has the object's keys, the property
		// schemas stay the walker's.
		names := map[string]any{}
		if props, ok := m["properties"].(map[string]any); ok {
			for name := range props {
				names[name] = true
			}
		}
		rest["properties"] = names
		for _, k := range []string{"patternProperties", "additionalProperties", "regexProperties"} {
			if _, ok := m[k]; ok {
				left(k)
			}
		}
	}
	var strRest map[string]any
	enumTypes := kAny
	str := func(k string) {
		if strRest == nil {
			strRest = map[string]any{}
		}
		strRest[k] = m[k]
	}
	for k, val := range m {
		if !libraryKeywords[k] {
			continue
		}
		if _, gone := rest[k]; gone {
			if k != "properties" {
				continue
			}
		}
		switch k {
		case "type":
			types, ok := typeSet(val)
			if !ok {
				return fmt.Errorf("type %v", val)
			}
			n.types = types
		case "properties":
			props, ok := val.(map[string]any)
			if !ok {
				return fmt.Errorf("properties is not an object")
			}
			for name, p := range props {
				sub, err := c.node(p, pointerTo(n.pointer, "properties", name), false)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				n.props = append(n.props, shapeProp{name: name, node: sub})
			}
		case "required":
			list, ok := val.([]any)
			if !ok {
				return fmt.Errorf("required is not a list")
			}
			for _, e := range list {
				s, ok := e.(string)
				if !ok {
					return fmt.Errorf("required holds a non-string")
				}
				n.required = append(n.required, s)
			}
		case "items":
			sub, err := c.node(val, pointerTo(n.pointer, "items"), false)
			if err != nil {
				return fmt.Errorf("items: %w", err)
			}
			n.items = sub
		case "additionalProperties":
			if b, ok := val.(bool); ok {
				n.noExtra = !b
				break
			}
			sub, err := c.node(val, pointerTo(n.pointer, "additionalProperties"), false)
			if err != nil {
				return fmt.Errorf("additionalProperties: %w", err)
			}
			n.extra = sub
		case "enum", "const":
			list, ok := val.([]any)
			if k == "const" {
				list, ok = []any{val}, true
			}
			set, types, known := enumSet(list)
			if !ok || !known || n.enum != nil {
				left(k) // and with both, their intersection: the library's
				break
			}
			n.enum, enumTypes = set, types
			if len(set) <= maxEnumList {
				n.enumList = slices.Sorted(maps.Keys(set))
			}
			str(k)
		case "minLength", "maxLength":
			l, ok := schemaCount(val)
			if !ok {
				left(k)
				break
			}
			if k == "minLength" {
				n.minLen = l
			} else {
				n.maxLen = l
			}
			str(k)
		case "pattern":
			p, ok := val.(string)
			re, err := compilePattern(p)
			if !ok || err != nil {
				left(k)
				break
			}
			n.pattern = re
			str(k)
		case "format":
			name, _ := val.(string)
			f, ok := formats[name]
			if !ok {
				left(k)
				break
			}
			n.format = f
			str(k)
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			// below: the boolean exclusives of draft 4 modify the others
		case "multipleOf":
			mu, ok := schemaMultiple(val)
			if !ok {
				left(k)
				break
			}
			n.multiple = mu
		default:
			left(k)
		}
	}
	for _, k := range n.compileBounds(m) {
		left(k)
	}
	// The number keywords the walker checks, for the library to judge a
	// number the walker is not sure of.
	for _, k := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} {
		if _, gone := rest[k]; !gone && m[k] != nil {
			if n.numRest == nil {
				n.numRest = map[string]any{}
			}
			n.numRest[k] = m[k]
		}
	}
	if n.enum != nil {
		n.types &= enumTypes // a value of another type is not in the enum
	}
	if len(rest) > 0 {
		n.rest = rest
	}
	n.strRest = strRest
	n.strChecks = n.format != 0 || n.enum != nil || n.minLen >= 0 || n.maxLen >= 0 || n.pattern != nil
	n.numChecks = len(n.bounds) > 0 || n.multiple != nil
	for _, r := range n.required {
		if !n.has(r) {
			n.props = append(n.props, shapeProp{name: r, node: anyShape})
		}
	}
	return n.finish()
}

// typeSet reads type: a name or a list of names.
func typeSet(val any) (kind, bool) {
	var list []any
	switch t := val.(type) {
	case string:
		list = []any{t}
	case []any:
		list = t
	default:
		return 0, false
	}
	var types kind
	for _, e := range list {
		switch e {
		case "null":
			types |= kNull
		case "boolean":
			types |= kBool
		case "integer":
			types |= kInt
		case "number":
			types |= kNum | kInt
		case "string":
			types |= kStr
		case "array":
			types |= kArr
		case "object":
			types |= kObj
		default:
			return 0, false
		}
	}
	return types, true
}

// enumSet reads an enum of strings and null; known is false for any
// other value.
func enumSet(list []any) (set map[string]bool, types kind, known bool) {
	set = map[string]bool{}
	for _, e := range list {
		switch e := e.(type) {
		case string:
			set[e] = true
			types |= kStr
		case nil:
			types |= kNull
		default:
			return nil, 0, false
		}
	}
	return set, types, true
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
	if len(n.props) > maxProps {
		return fmt.Errorf("an object of %d properties (at most %d)", len(n.props), maxProps)
	}
	sort.Slice(n.props, func(i, j int) bool { return n.props[i].name < n.props[j].name })
	n.index = make(map[string]int, len(n.props))
	for i := range n.props {
		p := &n.props[i]
		p.bit, p.i = 0, uint16(i)
		if i < 64 {
			p.bit = 1 << uint(i)
		}
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
	n.table, n.mask = make([]uint16, size), uint32(size-1)
	for i := range n.props {
		if name := n.props[i].name; name != "" { // "" is found through the map
			h := keyHash(name) & n.mask
			for n.table[h] != 0 {
				h = (h + 1) & n.mask
			}
			n.table[h] = uint16(i + 1)
		}
	}
	n.reqMask, n.reqWide = 0, nil
	if len(n.props) > 64 {
		n.reqWide = make([]uint64, wideWords(len(n.props)))
	}
	for _, r := range n.required {
		i := n.index[r]
		if i < 64 {
			n.reqMask |= n.props[i].bit
		} else {
			n.reqWide[(i-64)/64] |= 1 << uint((i-64)%64)
		}
	}
	return nil
}

// wideWords is how many words hold a bit per property beyond the 64th.
func wideWords(props int) int { return (props - 64 + 63) / 64 }

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
