package settings

import (
	"reflect"
	"strings"
)

// didYouMean is ` (did you mean "x"?)` for the known name closest to
// name, when one is close enough to be a typo (an edit distance of at
// most a third of the name's length, and at most 3); "" otherwise.
func didYouMean(name string, known []string) string {
	best, bestDist := "", min(3, max(1, len(name)/3))+1
	for _, k := range known {
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return ` (did you mean "` + best + `"?)`
}

// editDistance is the Damerau–Levenshtein distance (optimal string
// alignment) of a and b: a swap of two letters, the commonest typo
// ("kye" for "key"), counts one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// jsonFieldNames are the JSON names of the fields of t's struct type and
// of the structs it holds, at any depth: the names encoding/json would
// accept somewhere in a value of t. An unknown-field error does not say
// in which object it was, so a suggestion is drawn from all of them.
func jsonFieldNames(t reflect.Type) []string {
	var names []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if f.Anonymous && name == "" {
				walk(f.Type)
				continue
			}
			if name == "" {
				name = f.Name
			}
			names = append(names, name)
			walk(f.Type)
		}
	}
	walk(t)
	return names
}
