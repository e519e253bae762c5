package manifest

import (
	"github.com/tap-dev/tap/manifest/interp"
)

// recordStep is a stream's record filter and transformations run by the
// manifest's interpreter on each record, before it is written or its
// children walked (streams.RecordStep), in the CDK's order: the filter,
// then the transformations in turn (the reverse with
// transform_before_filtering). A stream gets one when the stream maps
// cannot state what it does: a parent stream's filter (the CDK walks no
// child of a record it drops), or a transformation with a macro, a
// nested field, a key or the cursor. Such a stream reads trees.
type recordStep struct {
	filter         *interp.Condition // nil: none
	filterBase     interp.Vars
	steps          []fieldStep
	transformFirst bool
	// part and cdkPart name the partition's value in the walk's
	// partition and in the CDK's stream_partition ("": no partition).
	part, cdkPart string
}

// fieldStep is one field an AddFields sets (value not nil) or a
// RemoveFields removes (value nil).
type fieldStep struct {
	path      []string
	value     *interp.Template
	valueType string            // AddedFieldDefinition.value_type
	when      *interp.Condition // AddFields.condition; nil: always
	base      interp.Vars       // the config and the transformation's $parameters
}

func (s *recordStep) Step(rec map[string]any, partition map[string]any) (map[string]any, bool, error) {
	var slice map[string]any
	if s.part != "" && partition != nil {
		slice = map[string]any{s.cdkPart: partition[s.part]}
	}
	keep := func() (bool, error) {
		if s.filter == nil {
			return true, nil
		}
		v := s.filterBase
		v.Record, v.StreamSlice = rec, slice
		return s.filter.Eval(&v)
	}
	if !s.transformFirst {
		if ok, err := keep(); err != nil || !ok {
			return nil, false, err
		}
	}
	for _, f := range s.steps {
		if f.value == nil {
			removeAt(rec, f.path)
			continue
		}
		v := f.base
		v.Record, v.StreamSlice = rec, slice
		if f.when != nil {
			if ok, err := f.when.Eval(&v); err != nil || !ok {
				if err != nil {
					return nil, false, err
				}
				continue
			}
		}
		var x any
		var err error
		if f.valueType == "string" {
			x, err = f.value.Render(&v) // the text, not a literal read from it
		} else {
			x, err = f.value.Eval(&v)
		}
		if err != nil {
			return nil, false, err
		}
		setAt(rec, f.path, x)
	}
	if s.transformFirst {
		if ok, err := keep(); err != nil || !ok {
			return nil, false, err
		}
	}
	return rec, true, nil
}

// setAt sets path in rec to x, making the objects on the way, as the
// CDK's dpath.new does.
func setAt(rec map[string]any, path []string, x any) {
	m := rec
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = x
}

// removeAt removes path from rec, if it is there.
func removeAt(rec map[string]any, path []string) {
	m := rec
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, path[len(path)-1])
}
