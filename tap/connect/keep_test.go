package connect

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tap-dev/tap/settings"
)

const (
	literal = "{\n  \"base_url\": \"http://127.0.0.1:9\",\n  \"auth\": {\"type\": \"oauth2\", \"refresh_token\": \"rt-0\"}\n}\n"
	fromEnv = "{\n  \"auth\": {\"type\": \"oauth2\", \"refresh_token\": {\"env\": \"RT\"}}\n}\n"
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
		control  bool  // InControl, else InFile
		sendErr  error // the sender's error
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
		{name: "control, not sent", file: literal, control: true, sendErr: errors.New("stdout closed"), wantFile: literal,
			wantErr: "sending the rotated refresh token: stdout closed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := &settings.Config{Path: path}
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
