package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tap-dev/tap/initconfig"
	"github.com/tap-dev/tap/inputfile"
	"github.com/tap-dev/tap/tap"
)

// InitOptions are the flags of `tap init`.
type InitOptions struct {
	OpenAPI    string // the document to read
	Probe      string // or the URL to request
	AuthHeader string // "Name: value" sent with --probe; never written
	BaseURL    string
	Paths      string
	Out        string // the config file to write; "" writes it on stdout
}

// Init writes a first config from an OpenAPI document or one live
// response, and prints on stderr one line per guess it was unsure of.
// Bad input is one line and exit 2, with nothing written.
func Init(ctx context.Context, o InitOptions, stdout, stderr io.Writer) error {
	var res *initconfig.Result
	var err error
	switch {
	case (o.OpenAPI == "") == (o.Probe == ""):
		return &tap.UsageError{Msg: "init: give --openapi SPEC or --probe URL (see tap --help)"}
	case o.OpenAPI != "":
		if o.AuthHeader != "" {
			return &tap.UsageError{Msg: "init: --auth-header goes with --probe; --openapi reads the auth from the document's securitySchemes"}
		}
		var data []byte
		if data, err = inputfile.Read(o.OpenAPI, inputfile.MaxConfig); err != nil {
			return &tap.UsageError{Msg: fmt.Sprintf("init: --openapi %s: %v", o.OpenAPI, err)}
		}
		res, err = initconfig.FromOpenAPI(ctx, data, o.OpenAPI, initconfig.Options{BaseURL: o.BaseURL, Paths: o.Paths})
	default:
		if o.Paths != "" || o.BaseURL != "" {
			return &tap.UsageError{Msg: "init: --paths and --base-url go with --openapi; --probe takes both from its URL"}
		}
		res, err = initconfig.Probe(ctx, o.Probe, o.AuthHeader)
	}
	var ie *initconfig.InputError
	if errors.As(err, &ie) {
		return &tap.UsageError{Msg: "init: " + ie.Msg}
	}
	if err != nil {
		return err
	}
	out, err := res.Config.JSON()
	if err != nil {
		return err
	}
	if o.Out == "" {
		_, err = stdout.Write(out)
	} else {
		err = writeAtomic(o.Out, out)
	}
	if err != nil {
		return err
	}
	for _, n := range res.Notes {
		fmt.Fprintf(stderr, "tap init: %s\n", n)
	}
	where := "stdout"
	if o.Out != "" {
		where = o.Out
	}
	fmt.Fprintf(stderr, "tap init: wrote %d streams to %s; try it with: tap --config %s --test\n", len(res.Config.Streams), where, orConfig(o.Out))
	return nil
}

func orConfig(out string) string {
	if out == "" {
		return "CONFIG"
	}
	return out
}

// unwrapPath drops the "open" of an *fs.PathError, keeping the file and
// the reason.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

// writeAtomic writes data to path through a temporary file in the same
// directory renamed over it, so path is never half-written.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tap-init-*")
	if err != nil {
		return &tap.UsageError{Msg: fmt.Sprintf("init: --out: %v", unwrapPath(err))}
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("init: writing %s: %w", path, err)
	}
	return nil
}
