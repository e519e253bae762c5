package streams

import (
	"fmt"
	"strings"
)

// LanguageTable is the stream reference's tables of options, one per
// block, and the list of rules between options: docs/reference/streams.md
// holds it between its "options table" markers (go generate writes it; a
// test keeps it equal).
func LanguageTable() string {
	var b strings.Builder
	for _, blk := range Language() {
		name := "the definition"
		if blk.Name != "" {
			name = "`" + blk.Name + "`"
		}
		fmt.Fprintf(&b, "#### %s\n\n| option | type | required | default | allowed | description |\n|---|---|---|---|---|---|\n", name)
		for _, o := range blk.Options {
			if blk.Name == "" && o.Name == "pagination" {
				o.Doc += " See the pagination table."
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", o.Name, or(o.Type, "any"), yes(o.Required), cell(o.Default), cell(o.allowed()), cell(o.Doc))
		}
		b.WriteString("\n")
	}
	b.WriteString("#### Rules between options\n\n")
	for _, r := range allRules() {
		fmt.Fprintf(&b, "- `%s` %s", r.field, r.msg)
		if w := r.whenText(); w != "" {
			fmt.Fprintf(&b, " (when %s)", w)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// allowed is what o's tags allow of a value: its values or its bounds.
func (o Option) allowed() string {
	switch {
	case o.Enum != nil:
		return strings.Join(o.Enum, ", ")
	case o.Min != nil && o.Max != nil:
		return number(*o.Min) + " to " + number(*o.Max)
	case o.Min != nil:
		return ">= " + number(*o.Min)
	case o.Max != nil:
		return "<= " + number(*o.Max)
	}
	return ""
}

// whenText says when r applies, from its conditions' paths.
func (r rule) whenText() string {
	parts := make([]string, len(r.when))
	for i, c := range r.when {
		parts[i] = c.text
	}
	return strings.Join(parts, " and ")
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return ""
}

// cell escapes s for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
