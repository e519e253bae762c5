package command

import (
	"fmt"
	"io"
	"os"

	"github.com/tap-dev/tap/inputfile"
	"github.com/tap-dev/tap/manifest"
	"github.com/tap-dev/tap/settings"
	"github.com/tap-dev/tap/tap"
	"github.com/tap-dev/tap/tap/inputs"
	"github.com/tap-dev/tap/tap/output"
)

// ImageManifestPath is where Airbyte's source-declarative-manifest image
// reads its manifest from; the tap's image does too, so that it can
// stand in for that image.
const ImageManifestPath = "/airbyte/integration_code/source_declarative_manifest/manifest.yaml"

// FindManifest is f with the manifest a command runs on, and whether
// there is one: --manifest, else the one injected in the config, else the
// file at ImageManifestPath when there is one.
func FindManifest(f inputs.Files) (inputs.Files, bool) {
	if f.Manifest != "" || HasInjectedManifest(f.Config) {
		return f, true
	}
	if fi, err := os.Stat(ImageManifestPath); err == nil && fi.Mode().IsRegular() {
		f.Manifest = ImageManifestPath
		return f, true
	}
	return f, false
}

// HasInjectedManifest reports whether the config at path carries a
// manifest, as Airbyte's platform passes one to its
// source-declarative-manifest image. A config that cannot be read carries
// none here: the command that reads it reports why.
func HasInjectedManifest(path string) bool {
	if path == "" {
		return false
	}
	v, err := settings.ReadJSONFile(path, "the config", inputfile.MaxConfig)
	if err != nil {
		return false
	}
	m, _ := v.(map[string]any)
	_, ok := m[manifest.InjectedKey]
	return ok
}

// Manifest prepares a command on an Airbyte declarative manifest
// (--manifest, or one injected in the config): cmd is spec, check,
// discover, read, or "" for a Singer run. spec prints the manifest's spec
// and is done. The others check the config against the manifest's spec
// and compile the manifest's streams into the tap's own (manifest.Lower),
// which f.Compiled then carries to the command as its config: the command
// runs as it runs a config's streams. An error of an Airbyte command is
// reported here, as a TRACE message on stdout.
func Manifest(cmd string, f inputs.Files, stdout io.Writer) (_ inputs.Files, done bool, _ error) {
	var aw *output.Airbyte
	if cmd != "" {
		aw = output.NewAirbyte(stdout)
	}
	f, done, err := compileManifest(cmd, f, aw)
	if aw != nil {
		if err != nil {
			_ = reportError(aw, err)
		}
		if ferr := aw.Flush(); ferr != nil && err == nil {
			err = ferr
		}
	}
	return f, done || err != nil, err
}

func compileManifest(cmd string, f inputs.Files, aw *output.Airbyte) (inputs.Files, bool, error) {
	var m *manifest.Manifest
	if f.Manifest != "" {
		loaded, err := manifest.Load(f.Manifest)
		if err != nil {
			return f, true, badManifest(err)
		}
		m = loaded
	}
	var config map[string]any
	if f.Config != "" {
		v, err := settings.ReadJSONFile(f.Config, "the config", inputfile.MaxConfig)
		if err != nil {
			return f, true, err
		}
		c, ok := v.(map[string]any)
		if !ok {
			return f, true, &tap.InputError{File: f.Config, Err: fmt.Errorf("expected a JSON object")}
		}
		config = c
		injected, ok, err := manifest.FromConfig(f.Config, config)
		switch {
		case ok && m != nil:
			return f, true, &tap.UsageError{Msg: fmt.Sprintf("--manifest %s: the config %s carries a manifest too (%s): give one", f.Manifest, f.Config, manifest.InjectedKey)}
		case err != nil:
			return f, true, badManifest(err)
		case ok:
			m = injected
		}
	}
	if m == nil {
		return f, true, &tap.UsageError{Msg: "--manifest is required"}
	}
	if cmd == "spec" {
		return f, true, aw.Spec(manifestSpec(m))
	}
	if config == nil {
		return f, true, &tap.UsageError{Msg: "--config is required"}
	}
	checked, err := m.CheckConfig(f.Config, config)
	if err != nil {
		return f, true, badManifest(err)
	}
	cfg, err := m.Compile(f.Config, checked)
	if err != nil {
		return f, true, badManifest(err)
	}
	f.Compiled = cfg
	return f, false, nil
}

// manifestSpec is the ConnectorSpecification of a manifest, as the CDK
// writes it from the manifest's spec block.
func manifestSpec(m *manifest.Manifest) map[string]any {
	spec := map[string]any{"connectionSpecification": map[string]any{}}
	if m.Spec == nil {
		return spec
	}
	spec["connectionSpecification"] = m.Spec.ConnectionSpecification
	if m.Spec.DocumentationURL != "" {
		spec["documentationUrl"] = m.Spec.DocumentationURL
	}
	if m.Spec.AdvancedAuth != nil {
		spec["advanced_auth"] = m.Spec.AdvancedAuth
	}
	return spec
}

// badManifest makes a manifest's error (one line per problem or refused
// component) bad input: exit 2, each line printed as it is.
func badManifest(err error) error {
	me, ok := err.(*manifest.Error)
	if !ok {
		return err
	}
	return &manifestInputError{me}
}

type manifestInputError struct{ err *manifest.Error }

func (e *manifestInputError) Error() string   { return e.err.Error() }
func (e *manifestInputError) Lines() []string { return e.err.Lines() }
func (e *manifestInputError) Unwrap() []error {
	return []error{e.err, &tap.InputError{File: e.err.File, Err: e.err}}
}
