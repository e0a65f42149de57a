package catalog_test

// This file assembles catalog templates into a project directory the way
// jig applies them (DESIGN.md 4.3, REFERENCE.md 5.5 and 5.6), so the tests
// can check the result offline and, with JIG_TEST_NPM=1, run the real tools
// on it. Resolution and ordering are a small stand-in for the apply engine
// (breadth-first registryDependencies, language inheritance, dependency
// level then priority); merging uses the registry package's own rules.

import (
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
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

// project is an assembled project: file contents by target, plus modes.
type project struct {
	files map[string][]byte
	exec  map[string]bool
}

// assemble applies the registries in order to an empty project called
// name, merging files and package.json with the registry package's merge
// rules (merge.StrategyFor, merge.Merge, registry.CombineRanges,
// merge.UpdatePackageJSON).
func assemble(t *testing.T, fsys fs.FS, name string, regs []*resolved) *project {
	t.Helper()
	p := &project{files: map[string][]byte{}, exec: map[string]bool{}}
	reqs := map[string][]registry.RangeRequest{}
	runtime := map[string]bool{}
	var scripts []merge.Script
	addDeps := func(r *resolved, add map[string]string, isRuntime bool) {
		for _, pkg := range slices.Sorted(maps.Keys(add)) {
			reqs[pkg] = append(reqs[pkg], registry.RangeRequest{Range: add[pkg], Priority: r.m.Priority, From: r.key})
			runtime[pkg] = runtime[pkg] || isRuntime
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
			cur, exists := p.files[target]
			out, err := merge.Merge(merge.StrategyFor(f.Target, f.MergeStrategy), cur, exists, src)
			if err != nil {
				t.Fatalf("%s: %s: %v", r.key, target, err)
			}
			p.files[target] = out
			if f.Executable {
				p.exec[target] = true
			}
		}
		addDeps(r, r.m.Dependencies, true)
		addDeps(r, r.m.DevDependencies, false)
		for _, k := range slices.Sorted(maps.Keys(r.m.Scripts)) {
			scripts = append(scripts, merge.Script{Name: k, Command: r.m.Scripts[k]})
		}
	}
	u := merge.PackageUpdate{Name: name, Dependencies: map[string]string{}, DevDependencies: map[string]string{}, Scripts: scripts}
	for pkg, rs := range reqs {
		rng, _, conflict := registry.CombineRanges(rs...)
		if conflict {
			t.Errorf("registries disagree on %s (%v): the catalog should agree on ranges", pkg, rs)
		}
		if runtime[pkg] {
			u.Dependencies[pkg] = rng
		} else {
			u.DevDependencies[pkg] = rng
		}
	}
	cur, exists := p.files["package.json"]
	out, _, err := merge.UpdatePackageJSON(cur, exists, u)
	if err != nil {
		t.Fatal(err)
	}
	p.files["package.json"] = out
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
