package reconcile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Keys are a stream's keys over one run: the keys file as the last run
// left it, and what this run emitted and deleted. A Keys is used by one
// goroutine at a time.
type Keys struct {
	stream string
	path   string
	kind   Kind
	// runs counts the runs since the last reconcile, as the file says;
	// existed says the file was there when the run began.
	runs    int
	existed bool
	adds    *Sorter
	dels    *Sorter
	buffer  int
}

// Open reads the header of stream's keys file at path (a file that is not
// there is an empty one); kind is what the stream's schema says its key is.
// buffer bounds each sort's memory (<= 0: DefaultSortBuffer).
func Open(stream, path string, kind Kind, buffer int) (*Keys, error) {
	k := &Keys{stream: stream, path: path, kind: kind, buffer: buffer}
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	if f != nil {
		defer f.Close()
		if f.h.kind != kind {
			return nil, fmt.Errorf("stream %q: keys file %s holds %s keys, but the stream's primary key is %s now: remove the file to start it afresh", stream, path, f.h.kind, kind)
		}
		k.runs, k.existed = f.h.runs, true
	}
	// A run killed in a sort or a rewrite left its files beside the keys
	// file; one run at a time uses a keys file, so they are this one's
	// to remove.
	for _, pat := range []string{filepath.Join(filepath.Dir(path), sortPrefix(path)+"*"), path + ".tmp-*"} {
		stale, _ := filepath.Glob(pat)
		for _, f := range stale {
			os.Remove(f)
		}
	}
	dir := filepath.Dir(path)
	k.adds, k.dels = NewSorter(kind, dir, sortPrefix(path), buffer), NewSorter(kind, dir, sortPrefix(path), buffer)
	return k, nil
}

// sortPrefix names the files, beside path, that the sorts of its keys
// spill.
func sortPrefix(path string) string { return filepath.Base(path) + ".sort-" }

// Kind is the kind of the stream's keys.
func (k *Keys) Kind() Kind { return k.kind }

// Emitted notes the primary-key value of a record written as a live row.
func (k *Keys) Emitted(v any) error { return k.note(k.adds, v) }

// Deleted notes the primary-key value of a row written as deleted.
func (k *Keys) Deleted(v any) error { return k.note(k.dels, v) }

func (k *Keys) note(s *Sorter, v any) error {
	key, err := KeyOf(k.kind, v)
	if err != nil {
		return fmt.Errorf("stream %q: %w", k.stream, err)
	}
	return s.Add(key)
}

// Due reports whether this run reconciles: asked to (forced), or every
// runs since the last one (every 0: only when asked).
func (k *Keys) Due(every int, forced bool) bool {
	return forced || every > 0 && k.runs+1 >= every
}

// Close removes what the run's sorts spilled.
func (k *Keys) Close() error { return errors.Join(k.adds.Close(), k.dels.Close()) }

// Save writes the keys file as this run leaves it: the last run's keys
// with the ones this run emitted, less the ones it deleted (a key both
// emitted and deleted in one run is deleted), one more run since the
// last reconcile.
func (k *Keys) Save() error {
	defer k.Close()
	return k.rewrite(k.runs+1, nil)
}

// rewrite replaces the keys file with (file ∪ adds) − dels, and, when
// drop is set, less the keys drop is true for.
func (k *Keys) rewrite(runs int, drop func(Key) bool) error {
	old, err := openFile(k.path)
	if err != nil {
		return err
	}
	var from Iter
	if old != nil {
		defer old.Close()
		from = old
	}
	adds, err := k.adds.Sorted()
	if err != nil {
		return err
	}
	dels, err := k.dels.Sorted()
	if err != nil {
		return err
	}
	w, err := createFile(k.path, header{kind: k.kind, runs: runs})
	if err != nil {
		return err
	}
	it := Minus(Union(from, adds), dels)
	for {
		key, ok, err := it.Next()
		if err != nil {
			w.abort()
			return err
		}
		if !ok {
			break
		}
		if drop != nil && drop(key) {
			continue
		}
		if err := w.add(key); err != nil {
			w.abort()
			return err
		}
	}
	k.runs = runs
	return w.commit()
}

// Run is what a reconcile does with what it finds.
type Run struct {
	// List walks the source's keys, calling add with each record's
	// primary-key value. An error (a failed or cut-short walk) ends the
	// reconcile before anything is deleted.
	List func(ctx context.Context, add func(v any) error) error
	// Delete writes the deletion record of a key the source no longer
	// lists.
	Delete func(Key) error
	// Fetch reads a key the source lists that the tap never emitted (a
	// row the cursor missed) and writes it; live says it was written as
	// a live row. Nil: there is no by_id, and Missed reports the key.
	Fetch  func(ctx context.Context, k Key) (live bool, err error)
	Missed func(Key)
	// MaxDeleteFraction is the largest share of the known keys a
	// reconcile deletes; a listing missing more deletes nothing and
	// fails.
	MaxDeleteFraction float64
	// Adopt takes the listing as the known keys, deleting and fetching
	// nothing: the keys file is new and the run did not read the whole
	// stream, so it does not know what the tap emitted before.
	Adopt bool
}

// Summary is what a reconcile found.
type Summary struct {
	Listed, Known, Deleted, Missed, Fetched int64
	Adopted                                 bool
}

// ErrTooManyGone is a listing that misses more of the known keys than
// max_delete_fraction allows.
var ErrTooManyGone = errors.New("the listing misses more of the known keys than reconcile.max_delete_fraction allows")

// Reconcile lists the source's keys and compares them, as sorted
// streams, with the keys file (Save has written it): a key only the file
// has is deleted, a key only the listing has is fetched. Nothing is
// deleted before the listing has ended well; then the keys file is
// rewritten to the keys the source lists, the run count reset. The keys
// file is left as it was when the reconcile fails.
func (k *Keys) Reconcile(ctx context.Context, r Run) (Summary, error) {
	var sum Summary
	listed := NewSorter(k.kind, filepath.Dir(k.path), sortPrefix(k.path), k.buffer)
	defer listed.Close()
	err := r.List(ctx, func(v any) error {
		key, err := KeyOf(k.kind, v)
		if err != nil {
			return fmt.Errorf("stream %q: reconcile listing: %w", k.stream, err)
		}
		sum.Listed++
		return listed.Add(key)
	})
	if err != nil {
		return sum, fmt.Errorf("stream %q: reconcile: the key listing did not end (%w); nothing was deleted", k.stream, err)
	}
	if err := ctx.Err(); err != nil {
		return sum, fmt.Errorf("stream %q: reconcile: %w; nothing was deleted", k.stream, err)
	}
	// First count, so that a listing that lost most of the stream
	// deletes nothing.
	var gone, missed int64
	if err := k.diff(listed, func(_ Key, known, inListed bool) error {
		if known {
			sum.Known++
		}
		switch {
		case known && !inListed:
			gone++
		case inListed && !known:
			missed++
		}
		return nil
	}); err != nil {
		return sum, err
	}
	if r.Adopt {
		sum.Adopted = true
		return sum, k.writeListing(ctx, listed, func(Key, bool, bool) (bool, error) { return true, nil })
	}
	if sum.Known > 0 && float64(gone) > r.MaxDeleteFraction*float64(sum.Known) {
		return sum, fmt.Errorf("stream %q: reconcile listed %d keys, and %d of the %d known keys (%.0f%%) are not among them: %w (%v); nothing was deleted — check the listing, or raise max_delete_fraction if the source did lose that many rows",
			k.stream, sum.Listed, gone, sum.Known, 100*float64(gone)/float64(sum.Known), ErrTooManyGone, r.MaxDeleteFraction)
	}
	err = k.writeListing(ctx, listed, func(key Key, known, inListed bool) (bool, error) {
		switch {
		case known && !inListed:
			sum.Deleted++
			return false, r.Delete(key)
		case inListed && !known:
			sum.Missed++
			if r.Fetch == nil {
				if r.Missed != nil {
					r.Missed(key)
				}
				return false, nil
			}
			live, err := r.Fetch(ctx, key)
			if err == nil && live {
				sum.Fetched++
			}
			return live, err
		}
		return true, nil
	})
	return sum, err
}

// diff compares the keys file with the sorted listing.
func (k *Keys) diff(listed *Sorter, f func(k Key, known, inListed bool) error) error {
	file, err := openFile(k.path)
	if err != nil {
		return err
	}
	var known Iter = Union()
	if file != nil {
		defer file.Close()
		known = file
	}
	it, err := listed.Sorted()
	if err != nil {
		return err
	}
	return Diff(known, it, f)
}

// writeListing walks the diff once more, acting on each key through
// act, which says whether the key stays in the new keys file.
func (k *Keys) writeListing(ctx context.Context, listed *Sorter, act func(k Key, known, inListed bool) (bool, error)) error {
	w, err := createFile(k.path, header{kind: k.kind, runs: 0})
	if err != nil {
		return err
	}
	err = k.diff(listed, func(key Key, known, inListed bool) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		keep, err := act(key, known, inListed)
		if err != nil || !keep {
			return err
		}
		return w.add(key)
	})
	if err != nil {
		w.abort()
		return err
	}
	k.runs = 0
	return w.commit()
}

// Existed reports whether the keys file was there when the run began.
func (k *Keys) Existed() bool { return k.existed }
