package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tap-dev/tap/manifest/interp"
	"github.com/tap-dev/tap/streams"
)

// cursorExpr is a CursorPagination the tap's cursor paginator cannot read
// as a path of the page: its cursor_value and stop_condition, evaluated
// on each page as the CDK's CursorPaginationStrategy evaluates them — the
// stop condition first, then the value, whose falsy result (None, "", 0,
// an undefined value) ends the walk. It is the cursor's
// streams.NextCursor, so the engine runs it without knowing a manifest.
type cursorExpr struct {
	value *interp.Template
	stop  *interp.Condition // nil: none
	base  interp.Vars       // the config and the paginator's $parameters
	// under, for a cursor that is the next page's URL (a RequestPath),
	// is url_base's path and a "/": a value that is no absolute URL is
	// a path under url_base, as the CDK joins it, not a URL relative to
	// the page's.
	under string
}

// cursorReads is what a computed cursor may read: what a page gives, and
// what the load knows.
const cursorReads = atLoad | interp.Response | interp.Headers | interp.LastRecord | interp.LastPageSize

func (c *cursorExpr) Next(resp *streams.Page) (string, bool, error) {
	v := c.base
	v.Response, _ = resp.Body()
	v.Headers = interp.ResponseHeaders(resp.Header)
	v.LastPageSize = len(resp.Records)
	if n := len(resp.Records); n > 0 {
		v.LastRecord, _ = resp.Records[n-1].(map[string]any)
	}
	if c.stop != nil {
		stop, err := c.stop.Eval(&v)
		if err != nil || stop {
			return "", false, err
		}
	}
	x, err := c.value.Eval(&v)
	if errors.Is(err, interp.ErrUndefined) {
		return "", false, nil // Jinja's undefined: no token
	}
	if err != nil {
		return "", false, err
	}
	token, more, err := tokenText(x)
	if more && c.under != "" && !strings.HasPrefix(token, "http://") && !strings.HasPrefix(token, "https://") {
		token = c.under + strings.TrimLeft(token, "/")
	}
	return token, more, err
}

// tokenText is a cursor's value as the CDK sends it (str of the typed
// result); more is false for a falsy one.
func tokenText(x any) (token string, more bool, err error) {
	switch t := x.(type) {
	case nil:
	case string:
		token = t
	case bool:
		if t {
			token = "True"
		}
	case int64:
		if t != 0 {
			token = strconv.FormatInt(t, 10)
		}
	case float64:
		if t != 0 {
			token = strconv.FormatFloat(t, 'g', -1, 64)
		}
	case json.Number:
		if t != "0" {
			token = t.String()
		}
	default:
		return "", false, fmt.Errorf("cursor_value gave a %T, not a token to send", x)
	}
	return token, token != "", nil
}
