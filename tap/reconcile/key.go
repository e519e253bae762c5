// Package reconcile keeps the keys a stream has emitted and compares them
// with the keys the source lists: the keys file (compact, sorted, replaced
// atomically), a sort that spills to disk, and the merge of sorted streams
// of keys. Nothing here holds a stream's keys whole in memory: 10 million
// integer keys are compared in a few MiB beside the sort's 8 MiB buffer.
package reconcile

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is what a stream's keys are: integers, stored as deltas, or text.
type Kind uint8

const (
	Int Kind = iota + 1
	Text
)

func (k Kind) String() string {
	switch k {
	case Int:
		return "int"
	case Text:
		return "text"
	}
	return "unknown"
}

// Key is one primary-key value: an integer of an Int stream, or the text
// of a Text stream's key.
type Key struct {
	n int64
	s string
}

// IntKey and TextKey make keys.
func IntKey(n int64) Key   { return Key{n: n} }
func TextKey(s string) Key { return Key{s: s} }

// Int is the key of an Int stream.
func (k Key) Int() int64 { return k.n }

// String is the key as the API writes it in a path: the integer's digits
// or the text.
func (k Key) String() string {
	if k.s != "" {
		return k.s
	}
	return strconv.FormatInt(k.n, 10)
}

// Value is the key as a record carries it: a number for an Int stream, a
// string for a Text one.
func (k Key) Value(kind Kind) any {
	if kind == Int {
		return json.Number(strconv.FormatInt(k.n, 10))
	}
	return k.s
}

// compare orders keys of one kind: an Int stream's keys all have an empty
// text, a Text stream's a zero integer.
func compare(a, b Key) int {
	if c := cmp.Compare(a.n, b.n); c != 0 {
		return c
	}
	return strings.Compare(a.s, b.s)
}

// KeyOf is the key of kind that a record's primary-key value v holds.
func KeyOf(kind Kind, v any) (Key, error) {
	if kind == Int {
		switch v := v.(type) {
		case json.Number:
			if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				return IntKey(n), nil
			}
			if f, err := v.Float64(); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<63 {
				return IntKey(int64(f)), nil
			}
		case float64:
			if v == math.Trunc(v) && math.Abs(v) < 1<<63 {
				return IntKey(int64(v)), nil
			}
		case int64:
			return IntKey(v), nil
		case int:
			return IntKey(int64(v)), nil
		}
		return Key{}, fmt.Errorf("primary key %s is not an integer (the schema says it is)", describe(v))
	}
	switch v := v.(type) {
	case string:
		if v == "" {
			return Key{}, fmt.Errorf("primary key is an empty string")
		}
		return TextKey(v), nil
	case json.Number:
		return TextKey(string(v)), nil
	case float64:
		return TextKey(strconv.FormatFloat(v, 'f', -1, 64)), nil
	case bool:
		return TextKey(strconv.FormatBool(v)), nil
	}
	return Key{}, fmt.Errorf("primary key %s is not a string or a number", describe(v))
}

func describe(v any) string {
	b, _ := json.Marshal(v) // nil: null, a key missing from the record
	return string(b)
}
