package splice

import (
	"maps"
	"slices"

	"github.com/tap-dev/tap/codec"
)

// A child stream's records gain their parent's key under parent.as
// (streams.Parent). On the tree path the key is set in the decoded record,
// which is validated and encoded with sorted keys; here a spliced record
// is written as it came with the member "<as>":<key> added before its
// closing brace — the same record by value, with the parent's key last
// rather than in sorted order.
//
// The record's own bytes are walked against the schema without parent.as
// (a record that has the property itself is one the schema does not list
// then, and takes the tree path, which overwrites it), and the key is
// checked once per page against the schema of parent.as alone: a key the
// walker is not sure of sends the page's records to the tree path, whose
// validator judges them as it always did. The key's text is the tree
// path's encoding of it (codec.Append), so the member is byte for byte
// what the tree path writes.

// injection is how a child's records gain the parent key.
type injection struct {
	name   string
	member []byte       // "<name>":
	shape  *codec.Shape // {"<name>": <the schema of name>}
}

// injected splits s's schema for a child with parent.as: the schema its
// records' bytes are walked against, and the injection; inj is nil for a
// stream that injects nothing. ok is false when the child cannot splice:
// stream maps (they read the record's bytes, which lack the key), or a
// schema that does not declare parent.as, or declares it outside the
// walker's subset.
func injected(s Stream) (schema map[string]any, inj *injection, ok bool) {
	par := s.Def.Parent
	if par == nil || par.As == "" {
		return s.Schema, nil, true
	}
	if s.Maps != nil {
		return nil, nil, false
	}
	props, _ := s.Schema["properties"].(map[string]any)
	sub, declared := props[par.As]
	if !declared {
		return nil, nil, false
	}
	shape, err := codec.CompileShapeWith(map[string]any{"type": "object", "properties": map[string]any{par.As: sub}}, s.Library)
	if err != nil {
		return nil, nil, false
	}
	schema = maps.Clone(s.Schema)
	props = maps.Clone(props)
	delete(props, par.As)
	schema["properties"] = props
	switch req := schema["required"].(type) {
	case []any:
		schema["required"] = slices.DeleteFunc(slices.Clone(req), func(v any) bool { return v == par.As })
	case []string:
		schema["required"] = slices.DeleteFunc(slices.Clone(req), func(v string) bool { return v == par.As })
	}
	member := append(codec.AppendString(nil, par.As), ':')
	return schema, &injection{name: par.As, member: member, shape: shape}, true
}

// parentKey is the parent key a child's page injects.
type parentKey struct {
	text   string // the key's JSON text; "": not given, or not sure
	obj    []byte // {"<as>":<key>}, walked against the injection's shape
	out    []byte // the last record Raw returned, with the key
	walker codec.Walker
}

func (k *parentKey) clear() { k.text = "" }

// Inject gives a child's page the key of the parent record its walk is
// for (streams.Partition.Key): Raw then writes the page's spliced records
// with it, and their captured keys include it. Until it is given, or
// when the walker is not sure of it against the schema, the page's
// records take the tree path. A stream with no parent.as ignores it.
func (p *Page) Inject(key any) {
	inj := p.of.inject
	p.parent.clear()
	if inj == nil || key == nil {
		return
	}
	k := &p.parent
	obj, err := codec.Append(append(append(k.obj[:0], '{'), inj.member...), key)
	if err != nil {
		return
	}
	k.obj = append(obj, '}')
	if _, sure, _, err := k.walker.Walk(k.obj, 0, inj.shape); err != nil || !sure {
		return
	}
	k.text = string(k.obj[1+len(inj.member) : len(k.obj)-1])
}

// append returns raw, a spliced record, with the parent key's member
// before its closing brace; the bytes are valid until the next call.
func (k *parentKey) append(raw []byte) []byte {
	end := len(raw) - 1 // the closing brace
	empty := true
	for j := end - 1; j >= 0; j-- {
		if c := raw[j]; c != ' ' && c != '\t' {
			empty = c == '{'
			break
		}
	}
	out := append(k.out[:0], raw[:end]...)
	if !empty {
		out = append(out, ',')
	}
	out = append(out, k.obj[1:]...) // "<as>":<key>}
	k.out = out
	return out
}
