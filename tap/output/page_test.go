package output

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestPageWriter(t *testing.T) {
	var b bytes.Buffer
	out := NewSinger(&b)
	var w PageWriter
	if !w.SchemaDue() || w.SchemaDue() || !w.Started() {
		t.Error("SchemaDue is true once, then the stream counts as started")
	}
	rec, err := w.Encode(map[string]any{"id": 1, "secret": "x", "b": true}, map[string]bool{"secret": true})
	if err != nil || string(rec) != `{"b":true,"id":1}` {
		t.Errorf("Encode = %s, %v; want the record without its dropped property, keys sorted", rec, err)
	}
	at := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	w.SetVersion(7)
	// Outside a page a record goes straight to the writer; inside one it
	// waits for the page's end.
	if err := w.Record(out, "s", []byte(`{"id":1}`), at); err != nil {
		t.Fatal(err)
	}
	if err := out.Flush(); err != nil {
		t.Fatal(err)
	}
	outside := b.Len()
	if outside == 0 || !strings.Contains(b.String(), `"version":7`) {
		t.Fatalf("a record outside a page: %q, want a RECORD line of version 7", b.String())
	}
	w.StartPage(out)
	if err := w.Record(out, "s", []byte(`{"id":2}`), at); err != nil {
		t.Fatal(err)
	}
	if b.Len() != outside {
		t.Errorf("a page's record left before the page's end: %q", b.String())
	}
	if err := w.EndPage(); err != nil {
		t.Fatal(err)
	}
	if err := out.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(b.String(), `"type":"RECORD"`); got != 2 {
		t.Errorf("%d RECORD lines after the page's end, want 2:\n%s", got, b.String())
	}
}
