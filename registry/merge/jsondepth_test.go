package merge_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
)

// TestEveryParserCapsDepth: every parser of the merge package refuses a
// document one level deeper than [registry.MaxJSONDepth], with an error
// that names the document and the limit.
func TestEveryParserCapsDepth(t *testing.T) {
	t.Parallel()
	deep := []byte(strings.Repeat(`{"a":`, registry.MaxJSONDepth) + "{}" + strings.Repeat("}", registry.MaxJSONDepth))
	deepIn := func(prefix, suffix string) []byte { return []byte(prefix + string(deep) + suffix) }
	tests := []struct {
		name  string
		parse func() error
		names string
	}{
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
