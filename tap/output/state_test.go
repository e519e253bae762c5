package output

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// bigState is a State of a given size that can say its bookmark moved
// back.
type bigState struct {
	size      int
	back      bool
	marshaled int
}

func (s *bigState) AppendJSON(b []byte) ([]byte, error) {
	s.marshaled++
	s.back = false
	return fmt.Appendf(b, `{"n":%d,"pad":"%s"}`, s.marshaled, strings.Repeat("x", s.size-20)), nil
}

func (s *bigState) StreamJSON(string) ([]byte, error) { return s.AppendJSON(nil) }

func (s *bigState) MovedBack(string) bool { return s.back }

// TestStateHeldWhileLargerThanTheRecordsSince: a STATE past stateSlack
// is written again only once the lines since the last one outweigh it;
// one that moves a bookmark back is never held; Flush writes the one
// held back, so the last line is always a STATE.
func TestStateHeldWhileLargerThanTheRecordsSince(t *testing.T) {
	for name, newWriter := range map[string]func(*bytes.Buffer) Writer{
		"singer":  func(b *bytes.Buffer) Writer { return NewSinger(b) },
		"airbyte": func(b *bytes.Buffer) Writer { return NewAirbyte(b) },
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			w := newWriter(&out)
			st := &bigState{size: 100 << 10}
			rec := []byte(`{"id":1,"pad":"` + strings.Repeat("y", 1000) + `"}`)
			states := func() int { return bytes.Count(out.Bytes(), []byte(`"type":"STATE"`)) }
			write := func(records int) {
				t.Helper()
				for range records {
					if err := w.Record("s", rec, time.Unix(0, 0), 0); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.State("s", st, 1); err != nil {
					t.Fatal(err)
				}
			}
			write(1) // the first: written
			for range 50 {
				write(1) // 50 KB of records: held
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := states(); got != 2 {
				t.Fatalf("%d STATE after 51 checkpoints with 51 KB of records and a Flush, want 2 (the first, then the one held at Flush)", got)
			}
			if !bytes.HasSuffix(bytes.TrimSpace(out.Bytes()), []byte("}}")) || !bytes.Contains(out.Bytes()[bytes.LastIndexByte(bytes.TrimSpace(out.Bytes()), '\n')+1:], []byte(`"STATE"`)) {
				t.Error("the last line is not a STATE")
			}
			write(110) // more records than the STATE: written
			if got := states(); got != 3 {
				t.Errorf("%d STATE once the records since outweigh it, want 3", got)
			}
			st.back = true
			write(0)
			if got := states(); got != 4 {
				t.Errorf("%d STATE after one that moves a bookmark back, want 4", got)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := states(); got != 4 {
				t.Errorf("Flush wrote %d STATE with none held", got-4)
			}
			if st.marshaled != 4 {
				t.Errorf("the state was encoded %d times, want only for the 4 written", st.marshaled)
			}
		})
	}
}
