package streammap

import (
	"bytes"
	"errors"
	"maps"
	"slices"

	"github.com/tap-dev/tap/codec"
	"github.com/tap-dev/tap/streammap/pyexpr"
	"github.com/tap-dev/tap/streammap/pyexpr/lang"
)

// A map applied to a record's bytes: a tap that splices records (writes
// them from the page's bytes, see codec.Walker) need not build a tree for
// a map that reads only named top-level properties. Those values are
// decoded alone, the expressions run on them as on a tree, and the
// record is written from its bytes without the members the map removes
// or overwrites, followed by the map's properties. A map that reads the
// record whole (record, _, record.get(…)) or flattens needs the tree.

// ErrNeedsTree is AppendSpliced's answer for a record whose bytes are not
// as the caller promised: the caller maps the record's tree instead.
var ErrNeedsTree = errors.New("stream map: the record needs its tree")

// spliceMap is an Output's map as AppendSpliced applies it.
type spliceMap struct {
	props []string // the top-level properties whose raw values it takes
	// members are, per props, its member's start as a compact record
	// writes it: "name":
	members [][]byte
	vars    []int    // per Output.vars, its index in props
	cut     []int    // props taken out of the record: removed, overwritten or dropped
	keep    []int    // without __else__: the key properties copied as they are
	add     []int    // the indexes in Output.props of the properties written after
	keys    [][]byte // per add, its key and colon, encoded once
	pass    bool     // the record is written as it is
}

// newSpliceMap is nil when o's map needs the record's tree; drop are
// properties left out of the records (Transformer.Without).
func newSpliceMap(o *Output, drop map[string]bool) *spliceMap {
	if o.flatDepth > 0 || o.filter != nil && o.filter.Record {
		return nil
	}
	written := map[string]bool{}
	for _, p := range o.props {
		if !p.remove {
			if p.expr.Record {
				return nil
			}
			written[p.name] = true
		}
	}
	sm := &spliceMap{pass: o.passthrough && len(drop) == 0}
	index := func(name string) int {
		i := slices.Index(sm.props, name)
		if i < 0 {
			i = len(sm.props)
			sm.props = append(sm.props, name)
			sm.members = append(sm.members, []byte(`"`+name+`":`))
		}
		return i
	}
	for _, v := range o.vars {
		sm.vars = append(sm.vars, index(v.prop))
	}
	for i, p := range o.props {
		if !p.remove && !drop[p.name] {
			sm.add = append(sm.add, i)
			sm.keys = append(sm.keys, append(codec.AppendString(nil, p.name), ':'))
		}
	}
	if o.includeAll {
		for _, p := range o.props {
			sm.cut = append(sm.cut, index(p.name))
		}
		for _, k := range slices.Sorted(maps.Keys(drop)) {
			if !slices.Contains(sm.cut, index(k)) {
				sm.cut = append(sm.cut, index(k))
			}
		}
	} else {
		for _, k := range o.keys {
			if !written[k] && !drop[k] {
				sm.keep = append(sm.keep, index(k))
			}
		}
	}
	return sm
}

// SpliceProps lists the top-level properties whose raw values
// AppendSpliced takes, in its order; ok is false when the map needs the
// record's tree (it reads the record whole, or flattens).
func (o *Output) SpliceProps() (props []string, ok bool) {
	if o.splice == nil {
		return nil, false
	}
	return o.splice.props, true
}

// span is a member of a record: its key's opening quote to its value's end.
type span struct{ start, end int }

// AppendSpliced appends to dst the record raw as the map makes it, as
// Transform would write it (values; key order may differ: the record's
// own members first, in their order, then the map's properties). raw is
// a JSON object a codec.Walker found splicable; vals[i] is the raw value
// of SpliceProps()[i] within raw (a subslice of it, as codec.Record's
// Capture is of its Raw), nil where the record has no such property.
// keep is false when the filter drops the record. ErrNeedsTree means the
// record is not as promised, or that an expression failed on it: the
// record's strings are read in place, and an error could hold one, so
// the tree path reports it.
func (t *Transformer) AppendSpliced(dst, raw []byte, vals [][]byte) (out []byte, keep bool, err error) {
	t.env.Scratch = true // the results are written before the next record
	out, keep, err = t.appendSpliced(dst, raw, vals)
	t.env.Scratch = false
	t.env.Reset()
	// The strings of the record are read in place (lang.StringBytes):
	// none may stay behind once the record is written.
	clear(t.results)
	for _, v := range t.o.vars {
		t.env.Vars[v.slot] = lang.NilValue
	}
	return out, keep, err
}

func (t *Transformer) appendSpliced(dst, raw []byte, vals [][]byte) (out []byte, keep bool, err error) {
	o, sm := t.o, t.splice
	if sm == nil || len(vals) != len(sm.props) || len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return dst, false, ErrNeedsTree
	}
	if sm.pass {
		return append(dst, raw...), true, nil
	}
	t.env.Vars[pyexpr.SlotRecord] = lang.NilValue // no expression reads it; keep no tree alive
	for i, v := range o.vars {
		x := lang.NilValue
		if b := vals[sm.vars[i]]; b != nil {
			if x, err = value(b); err != nil {
				return dst, false, ErrNeedsTree
			}
		}
		t.env.Vars[v.slot] = x
	}
	keep, err = t.evaluate()
	switch {
	case err != nil:
		// The error might hold one of them: the tree path's reports it.
		return dst, false, ErrNeedsTree
	case !keep:
		return dst, false, nil
	}
	out = append(dst, '{')
	wrote := false // a member is written
	if o.includeAll {
		spans := t.spans[:0]
		for _, i := range sm.cut {
			if v := vals[i]; v != nil {
				start, end, ok := member(raw, v, sm.members[i])
				if !ok {
					return dst, false, ErrNeedsTree
				}
				spans = append(spans, span{start, end})
			}
		}
		t.spans = spans
		for k := 1; k < len(spans); k++ { // a few spans: an insertion sort
			for j := k; j > 0 && spans[j].start < spans[j-1].start; j-- {
				spans[j], spans[j-1] = spans[j-1], spans[j]
			}
		}
		from := 1
		for _, s := range spans {
			out, wrote = appendMembers(out, raw[from:s.start], wrote)
			from = s.end
		}
		out, wrote = appendMembers(out, raw[from:len(raw)-1], wrote)
	} else {
		for _, i := range sm.keep {
			if v := vals[i]; v != nil {
				if wrote {
					out = append(out, ',')
				}
				out = append(codec.AppendString(out, sm.props[i]), ':')
				out, wrote = append(out, v...), true
			}
		}
	}
	for k, i := range sm.add {
		if wrote {
			out = append(out, ',')
		}
		out = append(out, sm.keys[k]...)
		if out, err = appendValue(out, t.results[i]); err != nil {
			return dst, false, err
		}
		wrote = true
	}
	return append(out, '}'), true, nil
}

// appendValue appends v, a result as Transformer.evaluate leaves it, as
// codec.Append writes it once boxed (an int as pyexpr.Value writes it).
func appendValue(out []byte, v lang.Value) ([]byte, error) {
	switch v.Kind() {
	case lang.Int:
		return appendInt(out, v.Int()), nil
	case lang.String:
		return codec.AppendString(out, v.Str()), nil
	}
	return codec.Append(out, v.Any())
}

// appendInt is strconv.AppendInt in base 10, without its generality.
func appendInt(out []byte, n int) []byte {
	u := uint64(n)
	if n < 0 {
		out, u = append(out, '-'), -u
	}
	var digits [20]byte
	i := len(digits)
	for u >= 10 {
		q := u / 10
		i--
		digits[i] = byte('0' + u - 10*q)
		u = q
	}
	i--
	digits[i] = byte('0' + u)
	return append(out, digits[i:]...)
}

// member finds the member of raw whose value is v, a subslice of raw,
// under the key of key, its start as a compact record writes it
// ("name":): the key's opening quote and the value's end. ok is false
// when v is not within raw (its first byte is not raw's at its offset)
// or not preceded by the key and a colon.
func member(raw, v, key []byte) (start, end int, ok bool) {
	// v's offset in raw: both slices end where their array ends.
	off := cap(raw) - cap(v)
	end = off + len(v)
	if len(v) == 0 || off < 1 || end > len(raw) || &raw[off] != &v[0] {
		return 0, 0, false
	}
	if start = off - len(key); start >= 1 && bytes.Equal(raw[start:off], key) {
		return start, end, true
	}
	i := skipBack(raw, off-1)
	if i < 0 || raw[i] != ':' {
		return 0, 0, false
	}
	i = skipBack(raw, i-1)
	name := key[1 : len(key)-2]
	start = i - len(name) - 1
	if start < 1 || raw[i] != '"' || raw[start] != '"' || !bytes.Equal(raw[start+1:i], name) {
		return 0, 0, false
	}
	return start, end, true
}

// skipBack moves back from i over spaces and tabs (a walked record has no
// line break).
func skipBack(b []byte, i int) int {
	for i >= 0 && (b[i] == ' ' || b[i] == '\t') {
		i--
	}
	return i
}

// value is a raw value as the tree's expressions see it (codec.Decode,
// then pyexpr.Normalize), without the decoder for the common ones.
func value(b []byte) (lang.Value, error) {
	switch c := b[0]; {
	case c == '"' && bytes.IndexByte(b, '\\') < 0:
		return lang.StringBytes(b[1 : len(b)-1]), nil // the walker checked its UTF-8
	case c == '-' || c >= '0' && c <= '9':
		if n, ok := smallInt(b); ok {
			return lang.IntValue(n), nil
		}
	case c == 'n':
		return lang.NilValue, nil
	}
	v, err := codec.Decode(b)
	return lang.Of(pyexpr.Normalize(v)), err
}

// smallInt is b as an integer of at most 18 digits, as JSON writes it
// (no leading zero); ok is false for anything else, strconv's to judge.
func smallInt(b []byte) (n int, ok bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 || len(b) > 1 && b[0] == '0' {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// appendMembers appends the members of seg, a stretch of an object
// between members taken out (commas and spaces at its ends are the taken
// members'), after a comma when a member precedes.
func appendMembers(out, seg []byte, wrote bool) ([]byte, bool) {
	i, j := 0, len(seg)
	space := func(c byte) bool { return c == ' ' || c == '\t' }
	for i < j && space(seg[i]) {
		i++
	}
	if i < j && seg[i] == ',' {
		for i++; i < j && space(seg[i]); i++ {
		}
	}
	for i < j && space(seg[j-1]) {
		j--
	}
	if i < j && seg[j-1] == ',' {
		for j--; i < j && space(seg[j-1]); j-- {
		}
	}
	if seg = seg[i:j]; len(seg) == 0 {
		return out, wrote
	}
	if wrote {
		out = append(out, ',')
	}
	return append(out, seg...), true
}

// A Splicer maps a source stream's splicable records from their bytes
// into each of its selected outputs.
type Splicer struct {
	outs []spliceOut
	err  error // a map's error on the last record
}

type spliceOut struct {
	tr *Transformer
	// slots are the walker's capture slots of the properties the map
	// reads, in SpliceProps' order; -1 for a property the schema does
	// not list, which no splicable record holds (the walker is not sure
	// of a record with one).
	slots []int
	vals  [][]byte
	buf   []byte
	keep  bool // the filter keeps the record in buf
}

// NewSplicer prepares trs for the records of a stream of schema whose
// walker captures capture (a codec.Shape's first slots): all is capture
// with the properties the maps read appended, the Shape's captures. ok is
// false when a map needs the record's tree.
func NewSplicer(trs []*Transformer, schema map[string]any, capture []string) (s *Splicer, all []string, ok bool) {
	all = slices.Clone(capture)
	props, _ := schema["properties"].(map[string]any)
	s = &Splicer{}
	for _, tr := range trs {
		if tr.splice == nil {
			return nil, nil, false
		}
		names := tr.splice.props
		so := spliceOut{tr: tr, slots: make([]int, len(names)), vals: make([][]byte, len(names))}
		for i, name := range names {
			slot := slices.Index(all, name)
			if slot < 0 && props[name] != nil {
				slot = len(all)
				all = append(all, name)
			}
			so.slots[i] = slot
		}
		s.outs = append(s.outs, so)
	}
	return s, all, true
}

// Map maps a splicable record into each output. sure is false when the
// record must take the tree path. A map's error is kept for Err, as the
// caller reports it where the tree path would (after dedupe and the
// bookmark).
func (s *Splicer) Map(r *codec.Record) (sure bool) {
	s.err = nil
	for i := range s.outs {
		so := &s.outs[i]
		for j, slot := range so.slots {
			var v []byte
			if slot >= 0 {
				v = r.Capture(slot)
			}
			so.vals[j] = v
		}
		var err error
		so.buf, so.keep, err = so.tr.AppendSpliced(so.buf[:0], r.Raw, so.vals)
		if errors.Is(err, ErrNeedsTree) {
			return false
		}
		if err != nil {
			s.err = err
			return true
		}
	}
	return true
}

// Err is a map's error on the record of the last Map.
func (s *Splicer) Err() error { return s.err }

// Record is output i's record of the last Map; keep is false when its
// filter drops the record.
func (s *Splicer) Record(i int) (rec []byte, keep bool) { return s.outs[i].buf, s.outs[i].keep }
