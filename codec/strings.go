package codec

// MapStrings returns v, a decoded JSON value, with f applied to every
// string in it, object keys included. Only the containers are copied: v is
// left as it was.
func MapStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[f(k)] = MapStrings(e, f)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = MapStrings(e, f)
		}
		return out
	}
	return v
}
