package feed

// verdict is what the sequencer makes of a message's seq.
type verdict int

const (
	write verdict = iota // the next seq: written
	dupe                 // at or below the last written: dropped
	gap                  // past the next: seqs are missing before it
)

// sequencer keeps the last seq written. Records are written once and in
// order: a seq at or below it is a duplicate (a reconnect replays), one
// past the next is a gap, never written past.
type sequencer struct {
	last int64
}

// judge says what a message numbered seq is; on a gap, the missing seqs
// are [s.last+1, seq-1].
func (s *sequencer) judge(seq int64) verdict {
	switch {
	case seq <= s.last:
		return dupe
	case seq == s.last+1:
		return write
	}
	return gap
}

// wrote moves the sequencer past seq, which judge found to be the next.
func (s *sequencer) wrote(seq int64) { s.last = seq }

// next is the first seq not yet written: what a reconnect asks for.
func (s *sequencer) next() int64 { return s.last + 1 }
