package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tap-dev/tap/streams"
)

// completeDeletes readies what soft_delete, deletes and reconcile need of
// a checked definition: the schema gains _sdc_deleted_at (a nullable
// date-time, the Singer convention), and reconcile.keys_file is made
// absolute (relative to dir, the folder of the file that defines the
// stream, as its schema is) in a folder that exists and takes files.
func completeDeletes(d *streams.Definition, schema map[string]any, dir string) error {
	if d.SoftDelete == nil && d.Deletes == nil && d.Reconcile == nil {
		return nil
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		if _, has := props[streams.DeletedAt]; !has {
			props[streams.DeletedAt] = map[string]any{"type": []any{"null", "string"}, "format": "date-time"}
		}
	}
	r := d.Reconcile
	if r == nil {
		return nil
	}
	if !filepath.IsAbs(r.KeysFile) {
		r.KeysFile = filepath.Join(dir, r.KeysFile)
	}
	folder := filepath.Dir(r.KeysFile)
	fi, err := os.Stat(folder)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("stream %q: reconcile.keys_file: the folder %s does not exist (create it, or name a keys file in a folder that does)", d.Name, folder)
	case err != nil:
		return fmt.Errorf("stream %q: reconcile.keys_file: %v", d.Name, unwrapPathError(err))
	case !fi.IsDir():
		return fmt.Errorf("stream %q: reconcile.keys_file: %s is not a folder", d.Name, folder)
	}
	// The file is replaced by a rename: the folder must take new files.
	f, err := os.CreateTemp(folder, filepath.Base(r.KeysFile)+".probe-*")
	if err != nil {
		return fmt.Errorf("stream %q: reconcile.keys_file: cannot create files in %s: %v", d.Name, folder, unwrapPathError(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// CheckAirbyte refuses what Airbyte mode cannot do: reconcile keeps its
// keys in a file between runs, which an Airbyte source has not.
func CheckAirbyte(c *Config) error {
	for i := range c.Streams {
		if d := &c.Streams[i]; d.Reconcile != nil {
			return &InputError{File: c.StreamsPath, Err: fmt.Errorf("stream %q: reconcile: is Singer mode only (an Airbyte source keeps no file between runs); remove it for Airbyte, or run the tap as a Singer tap", d.Name)}
		}
	}
	return nil
}
