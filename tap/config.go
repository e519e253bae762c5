package tap

import "github.com/tap-dev/tap/settings"

// Config is the loaded config (see package settings); the alias keeps the
// signatures of a run short.
type Config = settings.Config
