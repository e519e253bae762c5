package tap

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/tap-dev/tap/internal/taptest"
	"github.com/tap-dev/tap/tap/inputs"
	"github.com/tap-dev/tap/tap/output"
	"github.com/tap-dev/tap/tap/splice"
)

// The fixtures this package shares with tap/command.
var (
	demoConfig  = taptest.DemoConfig
	writeConfig = taptest.WriteConfig
	abLines     = taptest.JSONLines
	newABServer = taptest.NewABServer
)

const abAllStreams = taptest.ABAllStreams

// syncTree is Sync, with every record read through the tree path when
// tree is set (decode, validate, encode; no stream splices): the splice
// path's reference.
func syncTree(ctx context.Context, o Options, tree bool) error {
	if !tree {
		return Sync(ctx, o)
	}
	e, every, err := openSync(o)
	if err != nil {
		return err
	}
	defer e.close()
	e.splice = func(splice.Stream) *splice.Reader { return nil }
	return e.sync(ctx, every)
}

func writeABFiles(t *testing.T, base, catalog, state string) inputs.Files {
	t.Helper()
	p := taptest.WriteABFiles(t, base, catalog, state)
	return inputs.Files{Config: p.Config, Catalog: p.Catalog, State: p.State}
}

// singerSync is the engine as `tap --config C` runs it: the Singer writer
// on stdout, the log on stderr.
func singerSync(ctx context.Context, f inputs.Files, stdout, stderr io.Writer) error {
	cfg, st, sel, err := f.Load()
	if err != nil {
		return err
	}
	return Sync(ctx, Options{Config: cfg, Selection: sel, State: st, Writer: output.NewSinger(stdout), Log: output.NewStderrLogger(stderr, f.Level(cfg), cfg.Redactor)})
}

// airbyteRead is the engine as `tap read` runs it: the Airbyte writer on
// stdout, the log in its LOG messages.
func airbyteRead(ctx context.Context, f inputs.Files, stdout io.Writer) error {
	cfg, err := f.LoadConfig()
	if err != nil {
		return err
	}
	st, sel, err := f.LoadRead(cfg)
	if err != nil {
		return err
	}
	aw := output.NewAirbyte(stdout)
	aw.SetRedactor(cfg.Redactor)
	err = Sync(ctx, Options{Config: cfg, Selection: sel, State: st, Writer: aw, Log: aw.Logger(f.Level(cfg))})
	return errors.Join(err, aw.Flush())
}
