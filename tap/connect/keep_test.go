package connect

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tap-dev/tap/settings"
)

const (
	literal = "{\n  \"base_url\": \"http://127.0.0.1:9\",\n  \"auth\": {\"type\": \"oauth2\", \"refresh_token\": \"rt-0\"}\n}\n"
	fromEnv = "{\n  \"auth\": {\"type\": \"oauth2\", \"refresh_token\": {\"env\": \"RT\"}}\n}\n"
	// A manifest's connector config: the token in a field of its own.
	connector = "{\"credentials\": {\"client_id\": \"c\", \"refresh_token\": \"rt-0\"}, \"tap\": {}}\n"
)

// sent records the configs a keeper sends.
type sent struct {
	configs []string
	err     error
}

func (s *sent) ConnectorConfig(config []byte) error {
	if s.err != nil {
		return s.err
	}
	s.configs = append(s.configs, string(config))
	return nil
}

// TestKeepers rotates the refresh token twice through each keeper and
// checks where the tokens went: the file, or the configs sent.
func TestKeepers(t *testing.T) {
	for _, c := range []struct {
		name     string
		file     string
		field    string // settings.Config.RefreshTokenField
		control  bool   // InControl, else InFile
		sendErr  error  // the sender's error
		wantFile string
		wantSent []string
		wantErr  string
		wantLog  string
	}{
		{name: "file", file: literal, wantFile: strings.Replace(literal, "rt-0", "rt-2", 1),
			wantLog: "level=INFO msg=\"the API rotated the refresh token; the config file holds the new one\""},
		{name: "file, from the environment", file: fromEnv, wantFile: fromEnv,
			wantLog: "level=WARN msg=\"the API rotated the refresh token, but auth.refresh_token is read from the environment"},
		{name: "control", file: literal, control: true, wantFile: literal,
			wantSent: []string{strings.Replace(literal, "rt-0", "rt-1", 1), strings.Replace(literal, "rt-0", "rt-2", 1)}},
		{name: "control, from the environment", file: fromEnv, control: true, wantFile: fromEnv,
			wantLog: "level=WARN msg=\"the API rotated the refresh token, but auth.refresh_token is read from the environment"},
		{name: "file, a connector config's own field", file: connector, field: "credentials.refresh_token",
			wantFile: strings.Replace(connector, "rt-0", "rt-2", 1),
			wantLog:  "level=INFO msg=\"the API rotated the refresh token; the config file holds the new one\""},
		{name: "control, a connector config's own field", file: connector, field: "credentials.refresh_token", control: true, wantFile: connector,
			wantSent: []string{strings.Replace(connector, "rt-0", "rt-1", 1), strings.Replace(connector, "rt-0", "rt-2", 1)}},
		{name: "control, not sent", file: literal, control: true, sendErr: errors.New("stdout closed"), wantFile: literal,
			wantErr: "sending the rotated refresh token: stdout closed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := &settings.Config{Path: path, RefreshTokenField: c.field}
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			to := &sent{err: c.sendErr}
			keep := InFile(cfg, log)
			if c.control {
				keep = InControl(cfg, to, log)
			}
			var err error
			for _, rt := range []string{"rt-1", "rt-2"} {
				if err = keep(context.Background(), rt); err != nil {
					break
				}
			}
			if got := errText(err); got != c.wantErr {
				t.Errorf("err = %q, want %q", got, c.wantErr)
			}
			if b, _ := os.ReadFile(path); string(b) != c.wantFile {
				t.Errorf("config file:\n%s\nwant:\n%s", b, c.wantFile)
			}
			if strings.Join(to.configs, "|") != strings.Join(c.wantSent, "|") {
				t.Errorf("sent %q, want %q", to.configs, c.wantSent)
			}
			if !strings.Contains(logs.String(), c.wantLog) {
				t.Errorf("log:\n%s\nwant a line with %s", logs.String(), c.wantLog)
			}
			if strings.Contains(logs.String(), "rt-") {
				t.Errorf("a refresh token in the log:\n%s", logs.String())
			}
		})
	}
}

// TestInFileMissing: a config file gone when the token rotates is an
// error of the run, not a silent loss of the token.
func TestInFileMissing(t *testing.T) {
	cfg := &settings.Config{Path: filepath.Join(t.TempDir(), "gone.json")}
	err := InFile(cfg, slog.New(slog.DiscardHandler))(context.Background(), "rt-1")
	if !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "writing the rotated refresh token: ") {
		t.Errorf("err = %v, want the file's error, wrapped", err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestInFileCannotRewrite: the disk fills after the start check. The
// rotated token goes to the Pending file, the run stops with an error
// naming both files, and the next run's start check moves the token into
// the config before any token request. A config edited meanwhile keeps
// its own token; a Pending file that cannot be written either says the
// token is lost.
func TestInFileCannotRewrite(t *testing.T) {
	full := func(string, []byte) error { return syscall.ENOSPC }
	for _, c := range []struct {
		name       string
		edit       string // the config's token when the next run starts, if edited by hand
		sideIsDir  bool   // the Pending file cannot be written
		wantErr    string
		wantFile   string // after the next run's start check
		wantRT     string // cfg.Auth.RefreshToken after it
		wantLog    string
		wantNoSide bool
	}{
		{name: "kept beside", wantErr: "writing the rotated refresh token to CONFIG: no space left on device; the new token is kept in CONFIG.refresh_token.json, and the next run moves it into the config once the file can be rewritten",
			wantFile: strings.Replace(literal, "rt-0", "rt-1", 1), wantRT: "rt-1",
			wantLog: "level=INFO msg=\"the config file takes the rotated refresh token an earlier run kept beside it\""},
		{name: "edited since", edit: "rt-9", wantErr: "the new token is kept in",
			wantFile: strings.Replace(literal, "rt-0", "rt-9", 1), wantRT: "rt-9",
			wantLog: "level=WARN msg=\"the config's refresh token is not the one an earlier run found rotated"},
		{name: "lost", sideIsDir: true, wantErr: "the API rotated the refresh token, and it can be written neither to CONFIG (no space left on device) nor to CONFIG.refresh_token.json (",
			wantFile: literal, wantRT: "rt-0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(path, []byte(literal), 0o600); err != nil {
				t.Fatal(err)
			}
			if c.sideIsDir {
				if err := os.Mkdir(Pending(path), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			auth := settings.Auth{Type: "oauth2", GrantType: "refresh_token", RefreshToken: "rt-0"}
			cfg := &settings.Config{Path: path, Auth: auth}
			err := inFile(cfg, log, full)(context.Background(), "rt-1")
			if want := strings.ReplaceAll(c.wantErr, "CONFIG", path); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v, want %q", err, want)
			}
			if strings.Contains(err.Error(), "rt-") {
				t.Errorf("a refresh token in the error: %v", err)
			}
			if b, _ := os.ReadFile(path); string(b) != literal {
				t.Errorf("config file changed:\n%s", b)
			}
			if !c.sideIsDir {
				fi, err := os.Stat(Pending(path))
				if err != nil || fi.Mode().Perm() != 0o600 {
					t.Fatalf("pending file: %v %v, want mode 0600", fi, err)
				}
			}
			if c.edit != "" {
				if err := os.WriteFile(path, []byte(strings.Replace(literal, "rt-0", c.edit, 1)), 0o600); err != nil {
					t.Fatal(err)
				}
				auth.RefreshToken = c.edit
			}

			next := &settings.Config{Path: path, Auth: auth}
			err = CheckRewritable(next, log)
			if c.sideIsDir {
				if err == nil || !strings.Contains(err.Error(), "cannot read the rotated refresh token an earlier run kept") {
					t.Errorf("next run: err = %v, want the Pending path named", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("next run: %v", err)
			}
			if b, _ := os.ReadFile(path); string(b) != c.wantFile {
				t.Errorf("config file:\n%s\nwant:\n%s", b, c.wantFile)
			}
			if next.Auth.RefreshToken != c.wantRT {
				t.Errorf("refresh token %q, want %q", next.Auth.RefreshToken, c.wantRT)
			}
			if _, err := os.Stat(Pending(path)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("pending file left: %v", err)
			}
			if !strings.Contains(logs.String(), c.wantLog) || strings.Contains(logs.String(), "rt-") {
				t.Errorf("log:\n%s\nwant a line with %s and no token", logs.String(), c.wantLog)
			}
		})
	}
}
