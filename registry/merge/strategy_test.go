package merge

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// TestStrategyTable checks that the table of built-in merge strategies,
// the enums of the embedded JSON Schemas, the error for an unknown
// strategy and the list of merge strategies name the same
// strategies.
func TestStrategyTable(t *testing.T) {
	t.Parallel()
	names := Strategies()
	want := make([]string, len(names))
	for i, s := range names {
		want[i] = string(s)
	}
	if !slices.Contains(names, registry.StrategyJSON) || slices.Contains(names, registry.StrategyCustom) {
		t.Fatalf("Strategies() = %q, want the built-in ones without custom", names)
	}

	// Every "strategy" enum in the schemas: the registry item's builtin
	// strategy, and the lifecycle plan's strategy used (which adds custom).
	found := 0
	files, err := os.ReadDir("../schemas")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := f.Name()
		b, err := os.ReadFile("../schemas/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for _, enum := range strategyEnums(doc) {
			found++
			if got := slices.DeleteFunc(slices.Clone(enum), func(s string) bool { return s == string(registry.StrategyCustom) }); !slices.Equal(got, want) {
				t.Errorf("%s: strategy enum %q, want the table's %q (and custom where the script strategy is allowed)", name, enum, want)
			}
		}
	}
	if found < 2 {
		t.Errorf("found %d strategy enums in the schemas, want those of registry-item.json and lifecycle-plan.json", found)
	}

	_, err = Merge("nope", nil, false, []byte("x"))
	if !errors.Is(err, ErrMerge) || !strings.Contains(err.Error(), "use json, ignore, env or overwrite") {
		t.Errorf("Merge(unknown) error = %v, want ErrMerge naming the built-in strategies", err)
	}
	for _, s := range want {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Merge(unknown) error %q does not name %q", err, s)
		}
	}

	readme, err := os.ReadFile("../../docs/using.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	if i := strings.Index(section, "**Merge strategies**"); i >= 0 {
		section = section[i:]
		section = section[:strings.Index(section, "\n\n")]
	} else {
		t.Fatal("docs/using.md has no **Merge strategies** section")
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^- `([a-z]+)`").FindAllStringSubmatch(section, -1) {
		documented = append(documented, m[1])
	}
	if !slices.Equal(documented, want) {
		t.Errorf("docs/using.md lists the merge strategies %q, want the table's %q", documented, want)
	}
}

// strategyEnums returns the enum of every schema property named
// "strategy".
func strategyEnums(v any) [][]string {
	var out [][]string
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if prop, ok := child.(map[string]any); ok && k == "strategy" {
				if enum, ok := prop["enum"].([]any); ok {
					var names []string
					for _, e := range enum {
						s, _ := e.(string)
						names = append(names, s)
					}
					out = append(out, names)
				}
			}
			out = append(out, strategyEnums(child)...)
		}
	case []any:
		for _, child := range v {
			out = append(out, strategyEnums(child)...)
		}
	}
	return out
}

// TestStrategiesMerge checks that every strategy of the table merges, both
// ways, and keeps CRLF line endings.
func TestStrategiesMerge(t *testing.T) {
	t.Parallel()
	for _, s := range Strategies() {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel()
			cur, in := []byte("A=1\r\n"), []byte("B=2\n")
			if s == registry.StrategyJSON {
				cur, in = []byte("{\r\n  \"a\": 1\r\n}\r\n"), []byte(`{"b":2}`)
			}
			out, err := Merge(s, cur, true, in)
			if err != nil {
				t.Fatalf("Merge(%s): %v", s, err)
			}
			if !strings.Contains(string(out), "\r\n") || strings.Contains(strings.ReplaceAll(string(out), "\r\n", ""), "\n") {
				t.Errorf("Merge(%s) = %q, want CRLF line endings kept", s, out)
			}
			res, err := Merge3(s, in, cur, out, "@x/y@1.0.0")
			if err != nil {
				t.Fatalf("Merge3(%s): %v", s, err)
			}
			if len(res.Content) == 0 {
				t.Errorf("Merge3(%s) = empty content", s)
			}
		})
	}
	for _, merge := range []func() error{
		func() error { _, err := Merge(registry.StrategyCustom, nil, false, nil); return err },
		func() error { _, err := Merge3(registry.StrategyCustom, nil, []byte("a"), []byte("b"), ""); return err },
	} {
		if err := merge(); !errors.Is(err, ErrMerge) || !strings.Contains(err.Error(), "custom strategy runs a script") {
			t.Errorf("custom strategy: error = %v, want ErrMerge saying it runs a script", err)
		}
	}
}
