package catalog_test

// This file assembles catalog templates into a project directory the way
// jig applies them (DESIGN.md 4.3, REFERENCE.md 5.5 and 5.6), so the tests
// can check the result offline and, with JIG_TEST_NPM=1, run the real tools
// on it. It is a test double of the apply engine, deliberately small: it
// implements only what the catalog uses.

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryserver/catalog"
)

// resolved is one registry to apply, with its language block merged in.
type resolved struct {
	key   string
	m     *registry.Manifest // after ForLanguage
	lang  registry.Language
	level int
}

// presetMembers returns the registries of a catalog preset.
func presetMembers(t *testing.T, name string) []string {
	t.Helper()
	b, err := fs.ReadFile(catalog.FS(), "presets/"+name+"/preset.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := registry.ParsePreset(b)
	if err != nil {
		t.Fatal(err)
	}
	return p.Registries
}

// resolve walks roots and their registryDependencies breadth first and
// returns them ordered by dependency level, then priority (stable).
func resolve(t *testing.T, fsys fs.FS, roots []string) []*resolved {
	t.Helper()
	type item struct {
		id   registry.ID
		lang registry.Language
	}
	var queue []item
	for _, r := range roots {
		id, err := registry.ParseID(r)
		if err != nil {
			t.Fatal(err)
		}
		queue = append(queue, item{id: id})
	}
	byKey := map[string]*resolved{}
	deps := map[string][]string{}
	var order []*resolved
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		key := it.id.Key()
		if byKey[key] != nil {
			continue
		}
		m, _ := loadManifest(t, fsys, key)
		lang := it.id.Language
		if lang == "" {
			lang = it.lang
		}
		if lang == "" {
			lang = m.DefaultLanguage
		}
		if lang == "" {
			lang = registry.LangTS
		}
		r := &resolved{key: key, m: m.ForLanguage(lang), lang: lang}
		byKey[key] = r
		order = append(order, r)
		for _, d := range m.RegistryDependencies {
			did := registry.MustParseID(d)
			deps[key] = append(deps[key], did.Key())
			queue = append(queue, item{id: did, lang: lang})
		}
	}
	var level func(k string, depth int) int
	level = func(k string, depth int) int {
		if depth > len(byKey) {
			t.Fatalf("circular registryDependencies through %s", k)
		}
		l := 0
		for _, d := range deps[k] {
			l = max(l, 1+level(d, depth+1))
		}
		return l
	}
	for _, r := range order {
		r.level = level(r.key, 0)
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].level != order[j].level {
			return order[i].level < order[j].level
		}
		return order[i].m.Priority < order[j].m.Priority
	})
	return order
}

// strategyFor picks the merge strategy as jig does: the explicit builtin
// strategy, else by the target's basename.
func strategyFor(t *testing.T, f registry.File) registry.Strategy {
	t.Helper()
	if f.MergeStrategy != nil {
		if f.MergeStrategy.Type != "builtin" {
			t.Fatalf("%s: the test assembler supports builtin strategies only", f.Target)
		}
		return f.MergeStrategy.Strategy
	}
	base := path.Base(f.Target)
	switch {
	case slices.Contains([]string{"package.json", "tsconfig.json", "tsconfig.app.json", "tsconfig.base.json", "jsconfig.json", "jig.json"}, base),
		strings.HasSuffix(base, ".schema.json"):
		return registry.StrategyJSON
	case slices.Contains([]string{".gitignore", ".npmignore", ".dockerignore", ".eslintignore", ".prettierignore"}, base):
		return registry.StrategyIgnore
	case strings.HasPrefix(base, ".env"):
		return registry.StrategyEnv
	}
	return registry.StrategyOverwrite
}

// marshalJSON writes v as two-space JSON with a trailing newline and without
// HTML escaping (">=20.19.0" stays readable, as JSON.stringify writes it).
func marshalJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// deepMerge merges src over dst: objects recursively, arrays unioned by deep
// equality (existing order first), scalars replaced.
func deepMerge(dst, src map[string]any) map[string]any {
	for k, sv := range src {
		dv, ok := dst[k]
		if !ok {
			dst[k] = sv
			continue
		}
		switch s := sv.(type) {
		case map[string]any:
			if d, ok := dv.(map[string]any); ok {
				dst[k] = deepMerge(d, s)
				continue
			}
		case []any:
			if d, ok := dv.([]any); ok {
				for _, e := range s {
					if !slices.ContainsFunc(d, func(x any) bool { return reflect.DeepEqual(x, e) }) {
						d = append(d, e)
					}
				}
				dst[k] = d
				continue
			}
		}
		dst[k] = sv
	}
	return dst
}

func decodeObject(t *testing.T, what string, b []byte) map[string]any {
	t.Helper()
	if len(b) == 0 {
		return map[string]any{}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s is not a JSON object: %v", what, err)
	}
	return m
}

// mergeIgnore appends the incoming lines not present yet, collapsing runs of
// blank lines and ending with a newline.
func mergeIgnore(cur, inc []byte) []byte {
	var lines []string
	present := map[string]bool{}
	if s := strings.TrimRight(string(cur), "\n"); s != "" {
		for _, l := range strings.Split(s, "\n") {
			lines = append(lines, l)
			present[strings.TrimSpace(l)] = true
		}
	}
	if len(lines) > 0 {
		lines = append(lines, "")
	}
	for _, l := range strings.Split(string(inc), "\n") {
		tl := strings.TrimSpace(l)
		if tl != "" && present[tl] {
			continue
		}
		present[tl] = tl != ""
		lines = append(lines, l)
	}
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) == "" && (len(out) == 0 || strings.TrimSpace(out[len(out)-1]) == "") {
			continue
		}
		out = append(out, l)
	}
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	return []byte(strings.Join(out, "\n") + "\n")
}

// project is an assembled project: file contents by target, plus modes.
type project struct {
	files map[string][]byte
	exec  map[string]bool
}

// assemble applies the registries in order to an empty project called name.
func assemble(t *testing.T, fsys fs.FS, name string, regs []*resolved) *project {
	t.Helper()
	p := &project{files: map[string][]byte{}, exec: map[string]bool{}}
	type pinned struct {
		rng      string
		priority int
		from     string
	}
	deps, devDeps := map[string]pinned{}, map[string]pinned{}
	scripts := map[string]any{}
	addDeps := func(into map[string]pinned, r *resolved, add map[string]string) {
		for pkg, rng := range add {
			if old, ok := into[pkg]; ok && old.rng != rng {
				t.Errorf("%s wants %s %s but %s wants %s: the catalog should agree on ranges", r.key, pkg, rng, old.from, old.rng)
				continue
			}
			into[pkg] = pinned{rng, r.m.Priority, r.key}
		}
	}
	for _, r := range regs {
		for _, f := range r.m.Files {
			target, err := registry.CleanTarget(f.Target)
			if err != nil {
				t.Fatal(err)
			}
			var src []byte
			if f.Content != nil {
				src = []byte(*f.Content)
			} else {
				src, err = fs.ReadFile(fsys, r.key+"/"+r.m.Version+"/"+registry.NormalizeFilePath(f.Path))
				if err != nil {
					t.Fatalf("%s: %v", r.key, err)
				}
			}
			cur := p.files[target]
			switch s := strategyFor(t, f); s {
			case registry.StrategyJSON:
				merged := deepMerge(decodeObject(t, target, cur), decodeObject(t, r.key+" "+target, src))
				p.files[target] = marshalJSON(t, merged)
			case registry.StrategyIgnore:
				p.files[target] = mergeIgnore(cur, src)
			case registry.StrategyOverwrite:
				if !bytes.HasSuffix(src, []byte("\n")) {
					src = append(src, '\n')
				}
				p.files[target] = src
			default:
				t.Fatalf("%s: %s: the test assembler does not implement strategy %q", r.key, target, s)
			}
			if f.Executable {
				p.exec[target] = true
			}
		}
		addDeps(deps, r, r.m.Dependencies)
		addDeps(devDeps, r, r.m.DevDependencies)
		for k, v := range r.m.Scripts {
			scripts[k] = v
		}
	}
	pkg := decodeObject(t, "package.json", p.files["package.json"])
	if _, ok := pkg["name"]; !ok {
		pkg["name"] = name
	}
	if _, ok := pkg["version"]; !ok {
		pkg["version"] = "1.0.0"
	}
	toMap := func(in map[string]pinned, skip map[string]pinned) map[string]any {
		out := map[string]any{}
		for k, v := range in {
			if _, ok := skip[k]; !ok {
				out[k] = v.rng
			}
		}
		return out
	}
	if len(deps) > 0 {
		pkg["dependencies"] = deepMerge(asObject(pkg["dependencies"]), toMap(deps, nil))
	}
	if dd := toMap(devDeps, deps); len(dd) > 0 {
		pkg["devDependencies"] = deepMerge(asObject(pkg["devDependencies"]), dd)
	}
	if len(scripts) > 0 {
		pkg["scripts"] = deepMerge(asObject(pkg["scripts"]), scripts)
	}
	p.files["package.json"] = marshalJSON(t, pkg)
	return p
}

func asObject(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// write puts the project on disk under dir.
func (p *project) write(t *testing.T, dir string) {
	t.Helper()
	for target, b := range p.files {
		full := filepath.Join(dir, filepath.FromSlash(target))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if p.exec[target] {
			mode = 0o755
		}
		if err := os.WriteFile(full, b, mode); err != nil {
			t.Fatal(err)
		}
	}
}

func (p *project) targets() []string {
	var out []string
	for k := range p.files {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// packageJSON decodes the assembled package.json.
func (p *project) packageJSON(t *testing.T) map[string]any {
	t.Helper()
	return decodeObject(t, "package.json", p.files["package.json"])
}
