// Command generate writes what the repository states twice from the one
// statement of it: the stream language's tables (streams.LanguageTable,
// streams.PaginationTable) into docs/reference/streams.md and
// docs/guides/pagination.md, the settings table (the registry) into
// docs/reference/config.md, and the Meltano plugin definition into
// meltano/tap-declarative.yml. Run it from the repository root:
//
//	go generate ./...
//
// Tests keep each file equal to what this writes.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/streams"
)

func main() {
	if err := generate(); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func generate() error {
	for _, s := range []struct{ file, marker, text string }{
		{"docs/reference/streams.md", "options table", streams.LanguageTable()},
		{"docs/reference/streams.md", "pagination table", streams.PaginationTable()},
		{"docs/guides/pagination.md", "pagination table", streams.PaginationTable()},
		{"docs/reference/config.md", "settings table", settings.SettingsTable()},
	} {
		if err := between(s.file, s.marker, s.text); err != nil {
			return err
		}
	}
	return os.WriteFile("meltano/tap-declarative.yml", []byte(settings.AboutInfo().Meltano()), 0o644)
}

// between replaces what file holds between its "<!-- marker: begin -->"
// and "<!-- marker: end -->" lines with text.
func between(file, marker, text string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	begin, end := "<!-- "+marker+": begin -->", "<!-- "+marker+": end -->"
	head, rest, ok := strings.Cut(string(b), begin)
	_, tail, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		return fmt.Errorf("%s: no %q and %q markers", file, begin, end)
	}
	out := head + begin + "\n" + strings.TrimSpace(text) + "\n" + end + tail
	return os.WriteFile(file, []byte(out), 0o644)
}
