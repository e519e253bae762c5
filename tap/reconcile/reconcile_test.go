package reconcile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func collect(t *testing.T, it Iter) []string {
	t.Helper()
	var out []string
	for {
		k, ok, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, k.String())
	}
}

func keysOf(kind Kind, vals ...any) []Key {
	out := make([]Key, len(vals))
	for i, v := range vals {
		k, err := KeyOf(kind, v)
		if err != nil {
			panic(err)
		}
		out[i] = k
	}
	return out
}

func TestSorterSpillsAndMerges(t *testing.T) {
	tests := map[string]struct {
		kind  Kind
		limit int
		in    []any
		want  []string
	}{
		"ints in memory":  {Int, 0, []any{5, 3, 3, -7, 1 << 40}, []string{"-7", "3", "5", "1099511627776"}},
		"ints spilled":    {Int, 16, []any{9, 1, 8, 2, 7, 3, 6, 4, 5, 1, 9}, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}},
		"text spilled":    {Text, 40, []any{"b", "a\nnewline", `back\slash`, "a", "b", "c"}, []string{"a", "a\nnewline", "b", `back\slash`, "c"}},
		"text in memory":  {Text, 0, []any{"z", "y"}, []string{"y", "z"}},
		"nothing at all":  {Int, 0, nil, nil},
		"one spilled run": {Int, 8, []any{4}, []string{"4"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			s := NewSorter(tt.kind, t.TempDir(), "run-", tt.limit)
			defer s.Close()
			for _, k := range keysOf(tt.kind, tt.in...) {
				if err := s.Add(k); err != nil {
					t.Fatal(err)
				}
			}
			if tt.limit > 0 && len(tt.in) > 2 && len(s.runs) == 0 {
				t.Fatalf("nothing spilled with a %d-byte buffer", tt.limit)
			}
			it, err := s.Sorted()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, collect(t, it)); diff != "" {
				t.Errorf("sorted (-want +got):\n%s", diff)
			}
		})
	}
}

// writeKeys writes a keys file of kind holding vals.
func writeKeys(t *testing.T, path string, kind Kind, runs int, vals ...any) {
	t.Helper()
	w, err := createFile(path, header{kind: kind, runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keysOf(kind, vals...) {
		if err := w.add(k); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.commit(); err != nil {
		t.Fatal(err)
	}
}

func readKeys(t *testing.T, path string) (header, []string) {
	t.Helper()
	f, err := openFile(path)
	if err != nil || f == nil {
		t.Fatalf("open %s: %v (missing: %v)", path, err, f == nil)
	}
	defer f.Close()
	return f.h, collect(t, f)
}

func TestKeysFileIsCompact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.keys")
	vals := make([]any, 100_000)
	for i := range vals {
		vals[i] = 1_000_000 + 3*i
	}
	writeKeys(t, path, Int, 2, vals...)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// One byte a key for ids 3 apart, plus the header and the first key.
	if fi.Size() > int64(len(vals))+40 {
		t.Errorf("100000 dense ids take %d bytes; want about one a key", fi.Size())
	}
	h, got := readKeys(t, path)
	if h.runs != 2 || h.kind != Int || len(got) != len(vals) || got[len(got)-1] != "1299997" {
		t.Errorf("read back %v, %d keys, last %s", h, len(got), got[len(got)-1])
	}
}

func TestKeysFileErrors(t *testing.T) {
	dir := t.TempDir()
	for name, tt := range map[string]struct{ body, want string }{
		"not a keys file": {"id\n1\n", "not a keys file"},
		"unknown kind":    {"tap-keys 1 uuid runs=0\n", `unknown key kind "uuid"`},
		"no header":       {"", "no header line"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(path, []byte(tt.body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Open("s", path, Int, 0); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: Open error %v; want it to name %s and say %q", name, err, path, tt.want)
		}
	}
	// Not a regular file: a device would grow without end, a FIFO's open
	// would wait for a writer.
	fifo := filepath.Join(dir, "fifo.keys")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, "/dev/zero", dir} {
		if _, err := Open("s", path, Int, 0); err == nil || !strings.Contains(err.Error(), "keys file "+path+": not a regular file") {
			t.Errorf("keys file %s: Open error %v; want it to name the file and say it is not a regular file", path, err)
		}
	}
	path := filepath.Join(dir, "text.keys")
	writeKeys(t, path, Text, 0, "a")
	if _, err := Open("s", path, Int, 0); err == nil || !strings.Contains(err.Error(), "holds text keys, but the stream's primary key is int") {
		t.Errorf("a text file opened for int keys: %v", err)
	}
}

func TestSaveMergesTheRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.keys")
	writeKeys(t, path, Int, 1, 1, 2, 3, 5)
	k, err := Open("s", path, Int, 16) // spills every two keys
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{8, 4, 2, 9} {
		if err := k.Emitted(v); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []any{3, 9, 77} {
		if err := k.Deleted(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Save(); err != nil {
		t.Fatal(err)
	}
	h, got := readKeys(t, path)
	if diff := cmp.Diff([]string{"1", "2", "4", "5", "8"}, got); diff != "" || h.runs != 2 {
		t.Errorf("runs=%d, keys (-want +got):\n%s", h.runs, diff)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
	if len(left) != 1 {
		t.Errorf("files left beside the keys file: %v", left)
	}
}

func list(vals ...any) func(context.Context, func(any) error) error {
	return func(_ context.Context, add func(any) error) error {
		for _, v := range vals {
			if err := add(v); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestReconcile(t *testing.T) {
	errList := errors.New("503 after 6 attempts")
	tests := map[string]struct {
		known    []any
		list     func(context.Context, func(any) error) error
		byID     bool
		adopt    bool
		fraction float64
		want     Summary
		deleted  []string
		fetched  []string
		missed   []string
		file     []string // the keys file after it
		wantErr  string
	}{
		"gone and missed, fetched": {
			known: []any{1, 2, 3, 4, 5, 6}, list: list(6, 5, 3, 2, 1, 7, 4, 8), byID: true, fraction: 0.5,
			want: Summary{Listed: 8, Known: 6, Missed: 2, Fetched: 1}, fetched: []string{"7", "8"},
			file: []string{"1", "2", "3", "4", "5", "6", "7"}, // 8 was gone when fetched
		},
		"deleted": {
			known: []any{1, 2, 3, 4}, list: list(4, 1, 2), fraction: 0.5,
			want: Summary{Listed: 3, Known: 4, Deleted: 1}, deleted: []string{"3"}, file: []string{"1", "2", "4"},
		},
		"missed without by_id are reported": {
			known: []any{1}, list: list(1, 2, 3), fraction: 0.5,
			want: Summary{Listed: 3, Known: 1, Missed: 2}, missed: []string{"2", "3"}, file: []string{"1"},
		},
		"a listing failed halfway deletes nothing": {
			known: []any{1, 2, 3}, fraction: 0.5,
			list: func(_ context.Context, add func(any) error) error {
				if err := add(1); err != nil {
					return err
				}
				return errList
			},
			want: Summary{Listed: 1}, file: []string{"1", "2", "3"},
			wantErr: `stream "s": reconcile: the key listing did not end (503 after 6 attempts); nothing was deleted`,
		},
		"a listing under half the known keys deletes nothing": {
			known: []any{1, 2, 3, 4, 5}, list: list(1, 2), fraction: 0.5,
			want: Summary{Listed: 2, Known: 5}, file: []string{"1", "2", "3", "4", "5"},
			wantErr: `stream "s": reconcile listed 2 keys, and 3 of the 5 known keys (60%) are not among them: the listing misses more of the known keys than reconcile.max_delete_fraction allows (0.5); nothing was deleted — check the listing, or raise max_delete_fraction if the source did lose that many rows`,
		},
		"max_delete_fraction allows it": {
			known: []any{1, 2, 3, 4, 5}, list: list(1, 2), fraction: 0.6,
			want: Summary{Listed: 2, Known: 5, Deleted: 3}, deleted: []string{"3", "4", "5"}, file: []string{"1", "2"},
		},
		"an empty listing of a known stream deletes nothing": {
			known: []any{1}, list: list(), fraction: 0.5,
			want: Summary{Known: 1}, file: []string{"1"},
			wantErr: "nothing was deleted",
		},
		"adopted": {
			list: list(3, 1), adopt: true, fraction: 0.5, byID: true,
			want: Summary{Listed: 2, Adopted: true}, file: []string{"1", "3"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.keys")
			writeKeys(t, path, Int, 6, tt.known...)
			k, err := Open("s", path, Int, 16)
			if err != nil {
				t.Fatal(err)
			}
			var deleted, fetched, missed []string
			r := Run{List: tt.list, MaxDeleteFraction: tt.fraction, Adopt: tt.adopt,
				Delete: func(k Key) error { deleted = append(deleted, k.String()); return nil },
				Missed: func(k Key) { missed = append(missed, k.String()) }}
			if tt.byID {
				r.Fetch = func(_ context.Context, k Key) (bool, error) {
					fetched = append(fetched, k.String())
					return k.Int() != 8, nil
				}
			}
			sum, err := k.Reconcile(context.Background(), r)
			if gotErr := ""; err != nil || tt.wantErr != "" {
				if err != nil {
					gotErr = err.Error()
				}
				if tt.wantErr == "" || !strings.Contains(gotErr, tt.wantErr) {
					t.Fatalf("error %q, want %q", gotErr, tt.wantErr)
				}
			}
			if diff := cmp.Diff(tt.want, sum); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			for _, c := range []struct {
				what      string
				want, got []string
			}{{"deleted", tt.deleted, deleted}, {"fetched", tt.fetched, fetched}, {"reported", tt.missed, missed}} {
				if diff := cmp.Diff(c.want, c.got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", c.what, diff)
				}
			}
			h, file := readKeys(t, path)
			if diff := cmp.Diff(tt.file, file); diff != "" {
				t.Errorf("keys file after it (-want +got):\n%s", diff)
			}
			if wantRuns := map[bool]int{true: 6, false: 0}[tt.wantErr != ""]; h.runs != wantRuns {
				t.Errorf("runs = %d, want %d", h.runs, wantRuns)
			}
		})
	}
}

func TestOpenRemovesWhatAKilledRunLeft(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.keys")
	writeKeys(t, path, Int, 0, 1, 2)
	left := []string{path + ".sort-123", path + ".tmp-456"}
	other := filepath.Join(dir, "other.keys.sort-789") // another stream's
	for _, f := range append(left, other) {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k, err := Open("s", path, Int, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	for _, f := range left {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s is still there", f)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another stream's file went: %v", err)
	}
}

func TestDue(t *testing.T) {
	for _, tt := range []struct {
		runs, every int
		forced      bool
		want        bool
	}{{0, 0, false, false}, {0, 0, true, true}, {5, 7, false, false}, {6, 7, false, true}, {9, 7, false, true}, {0, 1, false, true}} {
		k := &Keys{runs: tt.runs}
		if got := k.Due(tt.every, tt.forced); got != tt.want {
			t.Errorf("runs=%d every=%d forced=%v: Due = %v, want %v", tt.runs, tt.every, tt.forced, got, tt.want)
		}
	}
}

// TestKeysFileThroughALink: a keys file that is a symbolic link (to a
// volume) is rewritten where it points; the link stays a link, and no
// regular file takes its place beside the stale target.
func TestKeysFileThroughALink(t *testing.T) {
	dir := t.TempDir()
	volume := filepath.Join(dir, "volume")
	if err := os.Mkdir(volume, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(volume, "orders.keys")
	writeKeys(t, target, Int, 1, 1, 2)
	link := filepath.Join(dir, "orders.keys")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	writeKeys(t, link, Int, 2, 1, 2, 3)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if h, got := readKeys(t, target); h.runs != 2 || len(got) != 3 {
		t.Errorf("the link's target holds %v %v, want the new keys", h, got)
	}
}
