package merge

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/jigkit/jig/registry"
)

var updateGolden = flag.Bool("update", false, "rewrite the want files of testdata/merge")

// TestMergeGolden runs every case of testdata/merge/<case>: target names the
// project file (its basename picks the strategy), current is the existing
// file (absent: the file does not exist), incoming the registry's content and
// want the expected result.
func TestMergeGolden(t *testing.T) {
	t.Parallel()
	eachGoldenCase(t, "merge", func(t *testing.T, dir, target string) {
		incoming := mustRead(t, filepath.Join(dir, "incoming"))
		current, err := os.ReadFile(filepath.Join(dir, "current"))
		exists := err == nil
		strategy := StrategyFor(target, nil)
		got, err := Merge(strategy, current, exists, incoming)
		if err != nil {
			t.Fatalf("Merge(%s): %v", strategy, err)
		}
		wantPath := filepath.Join(dir, "want")
		if *updateGolden {
			if err := os.WriteFile(wantPath, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want := mustRead(t, wantPath)
		if !bytes.Equal(got, want) {
			t.Errorf("Merge(%s, %s):\ngot:\n%q\nwant:\n%q", strategy, target, got, want)
		}
		again, err := Merge(strategy, got, true, incoming)
		if err != nil {
			t.Fatalf("second Merge: %v", err)
		}
		if !bytes.Equal(again, got) {
			t.Errorf("merging twice changed the result:\ngot:\n%q\nwant:\n%q", again, got)
		}
	})
}

// eachGoldenCase runs f in a parallel subtest for every case folder of
// testdata/<suite>, with the project file its "target" file names.
func eachGoldenCase(t *testing.T, suite string, f func(t *testing.T, dir, target string)) {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", suite, "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases in testdata/%s: %v", suite, err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			f(t, dir, string(mustRead(t, filepath.Join(dir, "target"))))
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestStrategyFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		target string
		ms     *registry.MergeStrategy
		want   registry.Strategy
	}{
		{"package.json", nil, registry.StrategyJSON},
		{"packages/a/package.json", nil, registry.StrategyJSON},
		{"tsconfig.json", nil, registry.StrategyJSON},
		{"tsconfig.app.json", nil, registry.StrategyJSON},
		{"tsconfig.base.json", nil, registry.StrategyJSON},
		// The reference's list: other JSON files are overwritten on add.
		{"tsconfig.build.json", nil, registry.StrategyOverwrite},
		{".prettierrc.json", nil, registry.StrategyOverwrite},
		{".eslintrc.json", nil, registry.StrategyOverwrite},
		{"rack.json", nil, registry.StrategyJSON},
		{"jsconfig.json", nil, registry.StrategyJSON},
		{"jig.json", nil, registry.StrategyJSON},
		{"schemas/item.schema.json", nil, registry.StrategyJSON},
		{"data.json", nil, registry.StrategyOverwrite},
		{".gitignore", nil, registry.StrategyIgnore},
		{"sub/.dockerignore", nil, registry.StrategyIgnore},
		{".npmignore", nil, registry.StrategyIgnore},
		{".eslintignore", nil, registry.StrategyIgnore},
		{".prettierignore", nil, registry.StrategyIgnore},
		{".env", nil, registry.StrategyEnv},
		{".env.local", nil, registry.StrategyEnv},
		{"src/index.ts", nil, registry.StrategyOverwrite},
		{"README.md", nil, registry.StrategyOverwrite},
		{"package.json", &registry.MergeStrategy{Type: "builtin", Strategy: registry.StrategyOverwrite}, registry.StrategyOverwrite},
		{"notes.txt", &registry.MergeStrategy{Type: "builtin", Strategy: registry.StrategyIgnore}, registry.StrategyIgnore},
		{"x.yaml", &registry.MergeStrategy{Type: "custom", Script: "merge.js"}, registry.StrategyCustom},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			t.Parallel()
			if got := StrategyFor(tt.target, tt.ms); got != tt.want {
				t.Errorf("StrategyFor(%q) = %q, want %q", tt.target, got, tt.want)
			}
		})
	}
}

func TestMergeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		strategy registry.Strategy
		current  string
		incoming string
	}{
		{"existing not JSON", registry.StrategyJSON, "{nope", `{"a":1}`},
		{"incoming not JSON", registry.StrategyJSON, `{}`, `{"a":`},
		{"existing is an array", registry.StrategyJSON, `[1]`, `{"a":1}`},
		{"incoming is a string", registry.StrategyJSON, `{}`, `"x"`},
		{"custom", registry.StrategyCustom, "", "x"},
		{"unknown", registry.Strategy("yaml"), "", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Merge(tt.strategy, []byte(tt.current), true, []byte(tt.incoming))
			if !errors.Is(err, ErrMerge) {
				t.Errorf("Merge error = %v, want one wrapping ErrMerge", err)
			}
		})
	}
}

func TestCombineRanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		reqs         []registry.RangeRequest
		want         string
		wantConflict bool
	}{
		{"single", []registry.RangeRequest{{Range: "^1.0.0"}}, "^1.0.0", false},
		{"identical", []registry.RangeRequest{{Range: "^5.4.0", Priority: 3}, {Range: "^5.4.0", Priority: 1}}, "^5.4.0", false},
		{"subset wins", []registry.RangeRequest{{Range: "^1.0.0"}, {Range: "^1.2.0"}}, "^1.2.0", false},
		{"tilde inside caret", []registry.RangeRequest{{Range: "~1.4.0"}, {Range: "^1.0.0"}}, "~1.4.0", false},
		{"intersection joined", []registry.RangeRequest{{Range: "^1.0.0"}, {Range: ">=1.5.0"}}, "^1.0.0 >=1.5.0", false},
		{"incompatible lowest priority", []registry.RangeRequest{{Range: "^1.0.0", Priority: 5}, {Range: "^2.0.0", Priority: 2}}, "^2.0.0", true},
		{"incompatible tie first", []registry.RangeRequest{{Range: "^1.0.0", Priority: 2}, {Range: "^2.0.0", Priority: 2}}, "^1.0.0", true},
		{"not a range", []registry.RangeRequest{{Range: "latest", Priority: 4}, {Range: "^2.0.0", Priority: 3}}, "^2.0.0", true},
		{"not-equal bounds nothing from below", []registry.RangeRequest{{Range: "^1.0.0"}, {Range: "!=1.5.0"}}, "^1.0.0 !=1.5.0", false},
		{"greater than a wildcard minor", []registry.RangeRequest{{Range: ">1.x"}, {Range: "^2.1.0"}}, "^2.1.0", false},
		{"greater than a wildcard patch", []registry.RangeRequest{{Range: ">1.2.x"}, {Range: "~1.2.5", Priority: 1}}, ">1.2.x", true},
		{"upper bound only", []registry.RangeRequest{{Range: "<3"}, {Range: "^2.0.0"}}, "^2.0.0", false},
		{"hyphen range", []registry.RangeRequest{{Range: "1.2.0 - 1.4.0"}, {Range: "~1.3.0"}}, "~1.3.0", false},
		{"build metadata is not a version", []registry.RangeRequest{{Range: "^1.0.0+20130313144700"}, {Range: "^1.2.0"}}, "^1.2.0", false},
		{"none", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _, conflict := registry.CombineRanges(tt.reqs...)
			if got != tt.want || conflict != tt.wantConflict {
				t.Errorf("CombineRanges(%v) = %q, conflict %v; want %q, conflict %v", tt.reqs, got, conflict, tt.want, tt.wantConflict)
			}
		})
	}
}

// FuzzMergeJSON checks the JSON strategy's contract (see Merge): the result
// is current itself or strict JSON; it parses as a JSON object (JSONC
// tolerated); it is strict JSON when current was; and merging the same
// incoming document again changes nothing.
func FuzzMergeJSON(f *testing.F) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "merge", "json-*"))
	for _, dir := range dirs {
		cur, _ := os.ReadFile(filepath.Join(dir, "current"))
		in, _ := os.ReadFile(filepath.Join(dir, "incoming"))
		f.Add(cur, in)
	}
	f.Add([]byte(`{"a":[{"b":1},{"b":1}]}`), []byte(`{"a":[{"b":1},{"c":null}],"d":{"e":[]}}`))
	f.Add([]byte(`{"a":{"b":1}}`), []byte(`{"a":[1,2]}`))
	f.Fuzz(func(t *testing.T, current, incoming []byte) {
		got, err := Merge(registry.StrategyJSON, current, true, incoming)
		if err != nil {
			if !errors.Is(err, ErrMerge) {
				t.Fatalf("error %v does not wrap ErrMerge", err)
			}
			return
		}
		unchanged := bytes.Equal(got, current)
		if !unchanged && !json.Valid(got) {
			t.Fatalf("changed result is not strict JSON: %q", got)
		}
		if jsonValidStrict(current) && !jsonValidStrict(got) {
			t.Fatalf("strict JSON %q became %q", current, got)
		}
		if v, err := parseOrderedJSON("result", got); err != nil {
			t.Fatalf("result does not parse: %v\n%q", err, got)
		} else if _, ok := v.(*jsonObject); !ok {
			t.Fatalf("result is not a JSON object: %q", got)
		}
		again, err := Merge(registry.StrategyJSON, got, true, incoming)
		if err != nil {
			t.Fatalf("merging the result again: %v", err)
		}
		if !bytes.Equal(again, got) {
			t.Fatalf("not idempotent:\nonce:  %q\ntwice: %q", got, again)
		}
	})
}

func TestUpdatePackageJSON(t *testing.T) {
	t.Parallel()
	upd := PackageUpdate{Name: "demo", DevDependencies: map[string]string{"eslint": "^9.0.0"}, Scripts: []Script{{"lint", "eslint ."}}}
	tests := []struct {
		name    string
		current string
		exists  bool
		u       PackageUpdate
		want    string
		wantErr bool
	}{
		{"created", "", false, upd, "{\n  \"name\": \"demo\",\n  \"version\": \"1.0.0\",\n  \"devDependencies\": {\n    \"eslint\": \"^9.0.0\"\n  },\n  \"scripts\": {\n    \"lint\": \"eslint .\"\n  }\n}\n", false},
		{"unchanged keeps bytes", "{\"name\":\"x\",\"version\":\"2.0.0\",\"devDependencies\":{\"eslint\":\"^9.0.0\"},\"scripts\":{\"lint\":\"eslint .\"}}", true, upd,
			"{\"name\":\"x\",\"version\":\"2.0.0\",\"devDependencies\":{\"eslint\":\"^9.0.0\"},\"scripts\":{\"lint\":\"eslint .\"}}", false},
		{"dev dep already runtime updates runtime", "{\"name\":\"x\",\"version\":\"1.0.0\",\"dependencies\":{\"eslint\":\"^8.0.0\"}}\n", true, PackageUpdate{DevDependencies: map[string]string{"eslint": "^9.0.0"}},
			"{\n  \"name\": \"x\",\n  \"version\": \"1.0.0\",\n  \"dependencies\": {\n    \"eslint\": \"^9.0.0\"\n  }\n}\n", false},
		// The reference writes package.json without a trailing newline;
		// a rewrite keeps that.
		{"no trailing newline kept", "{\n  \"name\": \"x\",\n  \"version\": \"1.0.0\"\n}", true, PackageUpdate{Scripts: []Script{{"a", "b"}}},
			"{\n  \"name\": \"x\",\n  \"version\": \"1.0.0\",\n  \"scripts\": {\n    \"a\": \"b\"\n  }\n}", false},
		{"crlf kept", "{\r\n  \"name\": \"x\",\r\n  \"version\": \"1.0.0\"\r\n}\r\n", true, PackageUpdate{Scripts: []Script{{"a", "b"}}},
			"{\r\n  \"name\": \"x\",\r\n  \"version\": \"1.0.0\",\r\n  \"scripts\": {\r\n    \"a\": \"b\"\r\n  }\r\n}\r\n", false},
		{"comments refused", "{// no\n}", true, upd, "", true},
		{"array refused", "[]", true, upd, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := UpdatePackageJSON([]byte(tt.current), tt.exists, tt.u)
			if tt.wantErr {
				if !errors.Is(err, ErrPackageJSON) {
					t.Fatalf("got error %v, want ErrPackageJSON", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

// FuzzUpdatePackageJSON checks that updating any package.json that parses
// gives valid JSON holding the requested ranges, and that applying the same
// update again changes nothing.
func FuzzUpdatePackageJSON(f *testing.F) {
	f.Add([]byte(`{"name":"x","devDependencies":{"a":"^1.0.0"}}`), "a", "^2.0.0", true)
	f.Add([]byte("{\r\n  \"dependencies\": {\"b\": \"1\"}\r\n}\r\n"), "b", "~1.2.3", false)
	f.Add([]byte(`{"scripts":[]}`), "c", "latest", true)
	f.Fuzz(func(t *testing.T, current []byte, pkg, rng string, dev bool) {
		if pkg == "" || !utf8.ValidString(pkg) || !utf8.ValidString(rng) {
			return // JSON text is UTF-8; invalid bytes become U+FFFD
		}
		u := PackageUpdate{Name: "fuzz", Scripts: []Script{{Name: "test", Command: rng}}}
		if dev {
			u.DevDependencies = map[string]string{pkg: rng}
		} else {
			u.Dependencies = map[string]string{pkg: rng}
		}
		out, _, err := UpdatePackageJSON(current, true, u)
		if err != nil {
			if !errors.Is(err, ErrPackageJSON) {
				t.Fatalf("error %v does not wrap ErrPackageJSON", err)
			}
			return
		}
		var doc struct {
			Dependencies, DevDependencies map[string]string
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("result is not valid JSON: %v\n%q", err, out)
		}
		if doc.Dependencies[pkg] != rng && doc.DevDependencies[pkg] != rng {
			t.Fatalf("%s@%s missing from the result %q", pkg, rng, out)
		}
		again, _, err := UpdatePackageJSON(out, true, u)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("second update changed the file (%v):\nonce:  %q\ntwice: %q", err, out, again)
		}
	})
}

func TestJSONKeys(t *testing.T) {
	t.Parallel()
	got, err := JSONKeys("x.json", []byte(`{
  // comment
  "a": {"b/c": 1, "d": [{"e": 1}]},
  "f": null,
}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/a", "/a/b~1c", "/a/d", "/f"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := JSONKeys("x.json", []byte(`{"a":`)); err == nil {
		t.Error("got no error for a truncated document")
	}
}
