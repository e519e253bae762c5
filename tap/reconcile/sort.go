package reconcile

import (
	"bufio"
	"container/heap"
	"errors"
	"fmt"
	"os"
	"slices"
)

// Iter is a stream of keys in ascending order, each once.
type Iter interface {
	// Next returns the next key; false at the end.
	Next() (Key, bool, error)
}

// DefaultSortBuffer is the memory a Sorter fills before it spills a
// sorted run to disk: 1 Mi integer keys (8 MiB), or as many bytes of
// text keys. Sorting 10 M keys spills 10 runs, merged 64 KiB each.
const DefaultSortBuffer = 8 << 20

// Sorter takes keys in any order, with repeats, and gives them back as an
// Iter: sorted runs of its buffer's size spilled to files in dir, merged.
// Its memory is the buffer and 64 KiB per spilled run.
type Sorter struct {
	kind   Kind
	dir    string
	prefix string // of the spilled runs' names
	limit  int
	ints   []int64
	texts  []string
	bytes  int
	runs   []string
	open   []*os.File
}

// NewSorter sorts keys of kind, spilling to files named prefix* in dir
// past limit bytes (<= 0: DefaultSortBuffer).
func NewSorter(kind Kind, dir, prefix string, limit int) *Sorter {
	if limit <= 0 {
		limit = DefaultSortBuffer
	}
	return &Sorter{kind: kind, dir: dir, prefix: prefix, limit: limit}
}

// Add takes one key.
func (s *Sorter) Add(k Key) error {
	if s.kind == Int {
		if s.ints == nil {
			// The whole buffer at once: grown by appends, its old
			// copies would wait for the collector beside it.
			s.ints = make([]int64, 0, s.limit/8)
		}
		s.ints = append(s.ints, k.n)
		s.bytes += 8
	} else {
		s.texts = append(s.texts, k.s)
		s.bytes += len(k.s) + 16
	}
	if s.bytes >= s.limit {
		return s.spill()
	}
	return nil
}

func (s *Sorter) sortBuffer() {
	if s.kind == Int {
		slices.Sort(s.ints)
		s.ints = slices.Compact(s.ints)
	} else {
		slices.Sort(s.texts)
		s.texts = slices.Compact(s.texts)
	}
}

// spill writes the buffer as a sorted run and empties it, keeping its
// memory for the next run.
func (s *Sorter) spill() error {
	s.sortBuffer()
	f, err := os.CreateTemp(s.dir, s.prefix+"*")
	if err != nil {
		return fmt.Errorf("sorting keys: %w", err)
	}
	s.runs = append(s.runs, f.Name())
	enc := newEncoder(f, s.kind)
	for it := s.buffered(); ; {
		k, ok, _ := it.Next()
		if !ok {
			break
		}
		if err = enc.add(k); err != nil {
			break
		}
	}
	if err == nil {
		err = enc.w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sorting keys: %w", err)
	}
	s.ints, s.texts, s.bytes = s.ints[:0], s.texts[:0], 0
	return nil
}

// bufIter walks the sorted buffer.
type bufIter struct {
	s *Sorter
	i int
}

func (s *Sorter) buffered() *bufIter { return &bufIter{s: s} }

func (b *bufIter) Next() (Key, bool, error) {
	if b.s.kind == Int {
		if b.i >= len(b.s.ints) {
			return Key{}, false, nil
		}
		b.i++
		return IntKey(b.s.ints[b.i-1]), true, nil
	}
	if b.i >= len(b.s.texts) {
		return Key{}, false, nil
	}
	b.i++
	return TextKey(b.s.texts[b.i-1]), true, nil
}

// Sorted is every key added, ascending, each once. The Sorter takes no
// more keys after it; Close removes its files.
func (s *Sorter) Sorted() (Iter, error) {
	s.sortBuffer()
	its := []Iter{s.buffered()}
	for _, name := range s.runs {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("sorting keys: %w", err)
		}
		s.open = append(s.open, f)
		its = append(its, &decoder{r: bufio.NewReaderSize(f, 64<<10), kind: s.kind, name: "sorted run " + name})
	}
	return Union(its...), nil
}

// Close removes the spilled runs.
func (s *Sorter) Close() error {
	var err error
	for _, f := range s.open {
		err = errors.Join(err, f.Close())
	}
	for _, name := range s.runs {
		err = errors.Join(err, os.Remove(name))
	}
	s.open, s.runs, s.ints, s.texts = nil, nil, nil, nil
	return err
}

// Union merges sorted streams into one, each key once.
func Union(its ...Iter) Iter {
	u := &union{}
	for _, it := range its {
		if it != nil {
			u.h = append(u.h, head{it: it})
		}
	}
	return u
}

type head struct {
	it Iter
	k  Key
}

type heads []head

func (h heads) Len() int           { return len(h) }
func (h heads) Less(i, j int) bool { return compare(h[i].k, h[j].k) < 0 }
func (h heads) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *heads) Push(x any)        { *h = append(*h, x.(head)) }
func (h *heads) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type union struct {
	h       heads
	started bool
	last    Key
	any     bool
}

func (u *union) Next() (Key, bool, error) {
	if !u.started {
		u.started = true
		live := u.h[:0]
		for _, hd := range u.h {
			k, ok, err := hd.it.Next()
			if err != nil {
				return Key{}, false, err
			}
			if ok {
				live = append(live, head{it: hd.it, k: k})
			}
		}
		u.h = live
		heap.Init(&u.h)
	}
	for len(u.h) > 0 {
		top := &u.h[0]
		k := top.k
		next, ok, err := top.it.Next()
		if err != nil {
			return Key{}, false, err
		}
		if ok {
			top.k = next
			heap.Fix(&u.h, 0)
		} else {
			heap.Pop(&u.h)
		}
		if u.any && compare(k, u.last) == 0 {
			continue
		}
		u.last, u.any = k, true
		return k, true, nil
	}
	return Key{}, false, nil
}

// Minus is the keys of a that are not in b.
func Minus(a, b Iter) Iter { return &minus{a: a, b: b} }

type minus struct {
	a, b  Iter
	bk    Key
	bOK   bool
	bRead bool
}

func (m *minus) Next() (Key, bool, error) {
	for {
		k, ok, err := m.a.Next()
		if err != nil || !ok {
			return Key{}, false, err
		}
		for {
			if !m.bRead || (m.bOK && compare(m.bk, k) < 0) {
				m.bRead = true
				if m.bk, m.bOK, err = m.b.Next(); err != nil {
					return Key{}, false, err
				}
				continue
			}
			break
		}
		if m.bOK && compare(m.bk, k) == 0 {
			continue
		}
		return k, true, nil
	}
}

// Diff walks two sorted streams together, calling f for every key of
// either, with whether each has it.
func Diff(known, listed Iter, f func(k Key, inKnown, inListed bool) error) error {
	a, aok, err := known.Next()
	if err != nil {
		return err
	}
	b, bok, err := listed.Next()
	if err != nil {
		return err
	}
	for aok || bok {
		var c int
		switch {
		case !bok:
			c = -1
		case !aok:
			c = 1
		default:
			c = compare(a, b)
		}
		switch {
		case c < 0:
			err = f(a, true, false)
		case c > 0:
			err = f(b, false, true)
		default:
			err = f(a, true, true)
		}
		if err != nil {
			return err
		}
		if c <= 0 {
			if a, aok, err = known.Next(); err != nil {
				return err
			}
		}
		if c >= 0 {
			if b, bok, err = listed.Next(); err != nil {
				return err
			}
		}
	}
	return nil
}
