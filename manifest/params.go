package manifest

import (
	"strings"
	"time"

	"github.com/tap-dev/tap/manifest/interp"
	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/streams/keys"
)

// paramExpr is a request parameter whose expression reads what only a
// walk knows — the window's bounds (stream_interval, stream_slice's
// start_time and end_time), the partition's value, the clock — evaluated
// for each walk as the CDK evaluates it for each slice: a
// streams.RequestValue, so the engine computes it without knowing a
// manifest. A result that renders empty leaves the parameter out, as the
// CDK does.
type paramExpr struct {
	t    *interp.Template
	base interp.Vars // the config and the requester's $parameters
	// times is the stream's cursor's format of the window's bounds,
	// which the lowering learns after the requester (lowerer.cursor).
	times *string
	// part and cdkPart name the partition's value in the walk's path
	// values and in stream_partition ("": no partition).
	part, cdkPart string
	bounds        bool // it reads the window's bounds
}

// ReadsBounds reports whether the parameter asks for the window's records
// (streams.Definition.AsksChanges): the run then drops none itself.
func (p *paramExpr) ReadsBounds() bool { return p.bounds }

// paramReads is what a computed parameter may read.
const paramReads = atLoad | interp.StreamSlice | interp.StreamInterval | interp.StreamPartition | interp.Clock

func (p *paramExpr) Eval(w streams.WalkValues) (any, bool, error) {
	v := p.base
	slice := map[string]any{}
	if w.Lower != nil {
		slice["start_time"] = keys.Format(w.Lower, *p.times)
		end := any(time.Now().UTC())
		if w.Window != nil {
			end = w.Window.End
		}
		slice["end_time"] = keys.Format(end, *p.times)
	}
	if p.part != "" {
		if key, ok := w.Context[p.part]; ok {
			slice[p.cdkPart] = key // as the parent record holds it
		} else if key, ok := w.Vars[p.part]; ok {
			slice[p.cdkPart] = key
		}
	}
	v.StreamSlice = slice
	s, err := p.t.Render(&v)
	if err != nil || s == "" {
		return nil, false, err
	}
	return s, true, nil
}

// pathExpr is a path whose expression reads what only a walk knows (a
// paramExpr), joined to url_base's path as the CDK joins them: the
// compiled stream's ComputedPath.
type pathExpr struct {
	paramExpr
	base string // url_base's path, without a trailing /
}

func (p *pathExpr) Eval(w streams.WalkValues) (any, bool, error) {
	v, ok, err := p.paramExpr.Eval(w)
	if err != nil || !ok {
		return v, ok, err
	}
	s := v.(string)
	if strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") {
		return s, true, nil
	}
	return p.base + "/" + strings.TrimLeft(s, "/"), true, nil
}
