package settings

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSetString(t *testing.T) {
	tests := []struct {
		name, raw, want string
		err             error
	}{
		{"spacing and order kept",
			"{\n  \"z\": [1, {\"refresh_token\": \"no\"}],\n  \"auth\" :  {\"type\": \"oauth2\", \"refresh_token\"\t:\t\"old\", \"x\": {}},\n  \"a\": \"refresh_token\"\n}\n",
			"{\n  \"z\": [1, {\"refresh_token\": \"no\"}],\n  \"auth\" :  {\"type\": \"oauth2\", \"refresh_token\"\t:\t\"n\\\"e<w\", \"x\": {}},\n  \"a\": \"refresh_token\"\n}\n", nil},
		{"escaped old value", `{"auth":{"refresh_token":"a\"b\u00e9"},"b":1}`, `{"auth":{"refresh_token":"n\"e<w"},"b":1}`, nil},
		{"nested deeper first", `{"x":{"auth":{"refresh_token":"no"}},"auth":{"scopes":[[],{}],"refresh_token":"old"}}`, `{"x":{"auth":{"refresh_token":"no"}},"auth":{"scopes":[[],{}],"refresh_token":"n\"e<w"}}`, nil},
		{"a key twice", `{"auth":{"refresh_token":"a","refresh_token":"b"}}`, `{"auth":{"refresh_token":"n\"e<w","refresh_token":"n\"e<w"}}`, nil},
		{"not an object", `[1,2]`, "", nil},
		{"env reference", `{"auth":{"refresh_token":{"env":"RT"}}}`, "", ErrNotLiteral},
		{"absent", `{"auth":{"type":"oauth2"},"refresh_token":"x"}`, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SetString([]byte(tt.raw), "auth.refresh_token", `n"e<w`)
			if tt.want == "" {
				if err == nil || (tt.err != nil && !errors.Is(err, tt.err)) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestWriteFileAtomicKeepsMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	if l, err := os.Lstat(link); err != nil || l.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("files left behind: %v", entries)
	}
}
