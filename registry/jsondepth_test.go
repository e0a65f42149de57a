package registry_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// nested returns an object nested depth levels deep around inner:
// {"a":{"a":…inner…}}.
func nested(depth int, inner string) string {
	return strings.Repeat(`{"a":`, depth-1) + "{" + inner + "}" + strings.Repeat("}", depth-1)
}

func TestCheckJSONDepth(t *testing.T) {
	t.Parallel()
	limit := registry.MaxJSONDepth
	tests := []struct {
		name string
		doc  string
		ok   bool
	}{
		{"empty", "", true},
		{"scalar", `"x"`, true},
		{"flat object", `{}`, true},
		{"at the limit", nested(limit, ""), true},
		{"one beyond", nested(limit+1, ""), false},
		{"arrays count", strings.Repeat("[", limit+1) + strings.Repeat("]", limit+1), false},
		{"arrays at the limit", strings.Repeat("[", limit) + strings.Repeat("]", limit), true},
		{"mixed", strings.Repeat(`[{"k":`, limit/2) + "1" + strings.Repeat("}]", limit/2), true},
		{"brackets in strings do not count", `{"a":"` + strings.Repeat("[{", 200) + `"}`, true},
		{"escaped quote keeps the string open", `{"a":"\"` + strings.Repeat("[", 200) + `"}`, true},
		{"escaped backslash closes the string", `["\\",` + strings.Repeat("[", limit) + strings.Repeat("]", limit) + `]`, false},
		{"line comment", "{// " + strings.Repeat("[", 200) + "\n}", true},
		{"block comment", "{/* " + strings.Repeat("{", 200) + " */}", true},
		{"siblings do not add up", strings.Repeat(nested(limit-1, "")+",", 100), true},
		{"8000 deep", nested(8000, ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := registry.CheckJSONDepth("doc.json", []byte(tt.doc))
			if tt.ok {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			var de *registry.JSONDepthError
			if !errors.As(err, &de) || !errors.Is(err, registry.ErrJSONTooDeep) {
				t.Fatalf("got %v, want a *JSONDepthError wrapping ErrJSONTooDeep", err)
			}
			if de.Name != "doc.json" || de.Limit != limit {
				t.Errorf("got name %q, limit %d; want doc.json, %d", de.Name, de.Limit, limit)
			}
			for _, want := range []string{"doc.json", "64 levels"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not contain %q", err, want)
				}
			}
		})
	}
}

// TestEveryParserCapsDepth: every parser of the registry and registry/merge
// packages refuses a document one level deeper than MaxJSONDepth, with an
// error that names the document and the limit.
func TestEveryParserCapsDepth(t *testing.T) {
	t.Parallel()
	deep := []byte(nested(registry.MaxJSONDepth+1, ""))
	deepIn := func(prefix, suffix string) []byte { return []byte(prefix + string(deep) + suffix) }
	tests := []struct {
		name  string
		parse func() error
		names string
	}{
		{"ParseManifest", func() error {
			_, err := registry.ParseManifest(deepIn(`{"name":"x","version":"1.0.0","type":"registry:lib","x":`, "}"))
			return err
		}, "registry.json"},
		{"ParsePreset", func() error {
			_, err := registry.ParsePreset(deepIn(`{"name":"x","registries":["a"],"x":`, "}"))
			return err
		}, "preset.json"},
		{"ParseProject", func() error { _, err := registry.ParseProject(deepIn(`{"name":"x","x":`, "}")); return err }, "jig.json"},
		{"ParseVersionList", func() error { _, err := registry.ParseVersionList(deepIn(`{"versions":[],"x":`, "}")); return err }, "versions.json"},
		{"ParseDigestIndex", func() error { _, err := registry.ParseDigestIndex(deepIn(`{"x":`, "}")); return err }, "digest index"},
		{"CheckPackageJSON", func() error { return merge.CheckPackageJSON(deepIn(`{"name":"x","x":`, "}")) }, "package.json"},
		{"UpdatePackageJSON", func() error {
			_, _, err := merge.UpdatePackageJSON(deepIn(`{"x":`, "}"), true, merge.PackageUpdate{Name: "x"})
			return err
		}, "package.json"},
		{"Merge existing", func() error { _, err := merge.Merge(registry.StrategyJSON, deep, true, []byte(`{}`)); return err }, "the existing file"},
		{"Merge incoming", func() error { _, err := merge.Merge(registry.StrategyJSON, []byte(`{}`), true, deep); return err }, "the registry's file"},
		{"Merge JSONC", func() error {
			_, err := merge.Merge(registry.StrategyJSON, []byte(`{}`), true, deepIn("// tsconfig\n{\"a\":", ",}"))
			return err
		}, "the registry's file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.parse()
			if !errors.Is(err, registry.ErrJSONTooDeep) {
				t.Fatalf("got %v, want an error wrapping ErrJSONTooDeep", err)
			}
			for _, want := range []string{tt.names, "64 levels"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestValidateCapsDepth(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"name":"x","x":` + nested(registry.MaxJSONDepth+1, "") + `}`)
	for name, validate := range map[string]func([]byte) error{
		"registry.json": registry.ValidateManifestJSON,
		"preset.json":   registry.ValidatePresetJSON,
		"jig.json":      registry.ValidateProjectJSON,
	} {
		var se *registry.SchemaError
		err := validate(doc)
		if !errors.As(err, &se) || len(se.Violations) != 1 || se.Violations[0].Pointer != "" {
			t.Fatalf("%s: got %v, want one violation at the root", name, err)
		}
		if !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "64 levels") {
			t.Errorf("%s: message %q does not name the document and the limit", name, err)
		}
	}
}

// FuzzCheckJSONDepth compares CheckJSONDepth with the depth encoding/json
// sees, for every document encoding/json accepts.
func FuzzCheckJSONDepth(f *testing.F) {
	for _, s := range []string{`{}`, `[[[]]]`, `{"a":"[[["}`, `["\\",[[]]]`, nested(registry.MaxJSONDepth, ""), nested(registry.MaxJSONDepth+1, "")} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := registry.CheckJSONDepth("fuzz", data)
		if err != nil && !errors.Is(err, registry.ErrJSONTooDeep) {
			t.Fatalf("error %v does not wrap ErrJSONTooDeep", err)
		}
		if !json.Valid(data) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		depth, deepest := 0, 0
		for {
			tok, terr := dec.Token()
			if terr == io.EOF {
				break
			}
			if terr != nil {
				t.Fatalf("json.Valid accepted %q but Token fails: %v", data, terr)
			}
			switch tok {
			case json.Delim('{'), json.Delim('['):
				depth++
				if depth > deepest {
					deepest = depth
				}
			case json.Delim('}'), json.Delim(']'):
				depth--
			}
		}
		if (deepest > registry.MaxJSONDepth) != (err != nil) {
			t.Fatalf("depth %d, CheckJSONDepth = %v (limit %d): %q", deepest, err, registry.MaxJSONDepth, data)
		}
	})
}
