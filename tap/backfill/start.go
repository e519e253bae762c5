package backfill

import (
	"fmt"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap/catalog"
	"github.com/tap-dev/tap/tap/state"
)

// CheckStarts makes sure every chunked backfill sel selects knows where it
// begins — start_date, a bookmark or a window in progress in st — before
// any request is sent. A nil sel selects every stream; `check`, given no
// state, passes an empty one. The error is an *settings.InputError naming
// the config file (exit 2).
func CheckStarts(cfg *settings.Config, st *state.State, sel *catalog.Selection) error {
	for i := range cfg.Streams {
		d := &cfg.Streams[i]
		inc := d.Incremental
		if inc == nil || inc.ChunkDays == 0 || !cfg.Start.IsZero() || !sel.Selected(d.Name) ||
			settings.StreamKeyKind(d, cfg.Schemas[d.Name]) == "number" {
			continue
		}
		if _, _, inProgress := st.Window(d.Name); st.Value(d.Name) != nil || inProgress {
			continue
		}
		return &settings.InputError{File: cfg.Path, Err: fmt.Errorf("stream %q: incremental.chunk_days: needs start_date in the config (or a bookmark in the state) to know where the backfill begins", d.Name)}
	}
	return nil
}
