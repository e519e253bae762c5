package tap

import (
	"fmt"
	"time"

	"github.com/tap-dev/tap/streams"
	"github.com/tap-dev/tap/tap/deletes"
)

// A record leaves the engine one way, whichever step made it: a page or a
// feed message, a replayed dead letter, a deletion record, a row read by
// id. Each origin skips the steps that do not apply to it, and only
// those; the rest — the record masking of a configured secret, stream
// maps, the SCHEMA sent once, the count, the page writer — is the same
// for all.

// origin is where a record comes from, and so which of the write's steps
// apply to it.
type origin int

const (
	// fromWalk is a record of a page or a feed message: filtered by an
	// earlier run's bookmark, validated, shown to the plan, marked as
	// soft-deleted and its key noted for the keys file.
	fromWalk origin = iota
	// fromReplay is a dead letter's record (tap replay): validated
	// against today's schema; the replay holds every bookmark.
	fromReplay
	// fromFetch is a row read by id (reconcile.by_id): validated and
	// marked, but neither noted (the reconcile writes the keys file) nor
	// shown to the plan, whose bookmark is written.
	fromFetch
	// fromDeletion is a deletion record: the primary key and
	// _sdc_deleted_at only, not held to the schema, whose required
	// properties do not apply.
	fromDeletion
)

// write takes record m of n, made by from, through the steps that apply to it
// and out. A record set aside (dead-lettered, or below an earlier run's
// bookmark) is not written, and is not an error.
func (o *sink) write(m map[string]any, extracted time.Time, part streams.Partition, from origin) error {
	n := o.n
	d := n.def
	rk := d.ReplicationKey
	if from == fromWalk && rk != "" && n.below.Below(part, m[rk]) {
		return nil // client-side incremental: an earlier run wrote it
	}
	if from != fromDeletion {
		check := n.model.check
		if check == nil { // a stream not walked: a replayed letter's
			var err error
			if check, err = n.model.checker(); err != nil {
				return err
			}
		}
		ok, err := check.Check(m, extracted)
		if err != nil || !ok {
			if err == nil { // not failed: dead-lettered
				n.counts.DeadLetters.Add(1)
			}
			return err
		}
	}
	switch from {
	case fromWalk:
		if rk != "" {
			if err := o.observe(part, m[rk]); err != nil {
				return err
			}
		}
		if err := o.deletions.Note(m, deletes.Mark(d, m, extracted)); err != nil {
			return err
		}
	case fromFetch:
		deletes.Mark(d, m, extracted)
	}
	if o.outs != nil {
		if err := o.schema(); err != nil {
			return err
		}
		if err := o.outs.Map(m, len(n.children) > 0); err != nil {
			return err
		}
		return o.put(nil, nil, extracted)
	}
	b, err := n.out.encode(m)
	if err != nil {
		return fmt.Errorf("stream %q: %w", d.Name, err)
	}
	return o.put(b, nil, extracted)
}

// put writes a record that is ready: rec, its bytes as n's own stream, or
// with stream maps (rec nil) each selected stream as s (a spliced
// record's maps) or the last Map made it. It sends the SCHEMA first when
// due and counts the record.
func (o *sink) put(rec []byte, s streams.Mapped, extracted time.Time) error {
	n := o.n
	if err := o.schema(); err != nil {
		return err
	}
	if rec == nil && o.outs != nil {
		wrote, err := o.outs.Write(s, func(stream string, b []byte) error { return o.record(stream, b, extracted) })
		if wrote && err == nil {
			n.counts.Records.Add(1)
		}
		return err
	}
	if err := o.record(n.def.Name, rec, extracted); err != nil {
		return err
	}
	n.counts.Records.Add(1)
	return nil
}

// record writes one record of n as stream (its own, or a mapped one):
// into the lines of its page when they are gathered.
func (o *sink) record(stream string, rec []byte, extracted time.Time) error {
	n := o.n
	e := n.e
	// An API may echo a credential into a record (a field the schema
	// does not declare, say): it never reaches stdout.
	if masked, fields := e.cfg.Redactor.Record(rec); fields != nil {
		rec = masked
		for _, f := range fields {
			if n.counts.Secret(stream, f) {
				e.log.Warn("a configured secret appeared in a record; it is replaced by REDACTED (counted as secrets_masked)", "stream", stream, "field", f)
			}
		}
	}
	return o.writer.Record(e.out, stream, rec, extracted)
}
