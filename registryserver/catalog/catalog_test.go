package catalog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/catalog"
)

const (
	manifestSchemaURL = "https://jig.dev/schemas/registry-item.json"
	presetSchemaURL   = "https://jig.dev/schemas/preset.json"
)

// suggestedPriority is the priority each type gets in the catalog: 1 to 6
// in the order the schema lists the types.
var suggestedPriority = map[registry.Type]int{
	registry.TypeRuntime:   1,
	registry.TypeFramework: 2,
	registry.TypeBuild:     3,
	registry.TypeFeature:   4,
	registry.TypeTesting:   5,
	registry.TypeQuality:   6,
}

var fileTypes = map[registry.FileType]bool{
	registry.FileEntry: true, registry.FileConfig: true, registry.FileLib: true, registry.FileTest: true,
	registry.FileDocs: true, registry.FileScript: true, registry.FileAsset: true,
}

// strictDecode decodes data into v refusing unknown fields at every level,
// as the schemas' additionalProperties: false does.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON document")
	}
	return nil
}

// loadManifest reads and checks the latest manifest of registry key.
func loadManifest(t *testing.T, fsys fs.FS, key string) (*registry.Manifest, string) {
	t.Helper()
	vb, err := fs.ReadFile(fsys, key+"/versions.json")
	if err != nil {
		t.Fatalf("read versions.json of %s: %v", key, err)
	}
	vl, err := registry.ParseVersionList(vb)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	if vl.Latest() == "" {
		t.Fatalf("%s/versions.json lists no version", key)
	}
	mb, err := fs.ReadFile(fsys, key+"/"+vl.Latest()+"/registry.json")
	if err != nil {
		t.Fatalf("read manifest of %s: %v", key, err)
	}
	m, err := registry.ParseManifest(mb)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return m, vl.Latest()
}

func TestRegistries(t *testing.T) {
	t.Parallel()
	want := []string{
		"@main/build/library",
		"@main/build/typescript",
		"@main/features/github-actions",
		"@main/quality/editorconfig",
		"@main/quality/eslint",
		"@main/quality/prettier",
		"@main/runtimes/node",
		"@main/runtimes/typescript",
		"@main/services/go-service",
		"@main/services/python-service",
		"@main/testing/vitest",
	}
	if diff := cmp.Diff(want, catalog.Registries()); diff != "" {
		t.Errorf("Registries() mismatch (-want +got):\n%s", diff)
	}
	if got, want := catalog.Presets(), []string{"go-service", "node", "node-library", "python-service"}; !slices.Equal(got, want) {
		t.Errorf("Presets() = %v, want %v", got, want)
	}
}

func TestManifests(t *testing.T) {
	t.Parallel()
	fsys := catalog.FS()
	known := map[string]bool{}
	for _, k := range catalog.Registries() {
		known[k] = true
	}
	for _, key := range catalog.Registries() {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			vb, err := fs.ReadFile(fsys, key+"/versions.json")
			if err != nil {
				t.Fatal(err)
			}
			vl, err := registry.ParseVersionList(vb)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := vl.Versions, []string{"1.0.0"}; !slices.Equal(got, want) {
				t.Errorf("versions.json lists %v, want %v", got, want)
			}
			want, _ := (&registry.VersionList{Versions: []string{"1.0.0"}}).Marshal()
			if !bytes.Equal(vb, want) {
				t.Errorf("versions.json is\n%s\nwant the canonical form\n%s", vb, want)
			}
			for _, v := range vl.Versions {
				checkManifest(t, fsys, key, v, known)
			}
		})
	}
}

func checkManifest(t *testing.T, fsys fs.FS, key, version string, known map[string]bool) {
	t.Helper()
	dir := key + "/" + version
	mb, err := fs.ReadFile(fsys, dir+"/registry.json")
	if err != nil {
		t.Fatalf("read %s/registry.json: %v", dir, err)
	}
	m, err := registry.ParseManifest(mb)
	if err != nil {
		t.Fatal(err)
	}
	var strict registry.Manifest
	if err := strictDecode(mb, &strict); err != nil {
		t.Errorf("registry.json has a field the schema does not allow: %v", err)
	}
	id, err := m.ID()
	if err != nil {
		t.Fatal(err)
	}
	if got := id.Key(); got != key {
		t.Errorf("manifest identifies as %s, want %s (the directory it is stored in)", got, key)
	}
	if m.Version != version {
		t.Errorf("version = %q, want %q", m.Version, version)
	}
	if m.Schema != manifestSchemaURL {
		t.Errorf("$schema = %q, want %q", m.Schema, manifestSchemaURL)
	}
	want, ok := suggestedPriority[m.Type]
	if !ok {
		t.Fatalf("type %q is not a registry type", m.Type)
	}
	if m.Priority != want {
		t.Errorf("priority = %d, want %d for %s", m.Priority, want, m.Type)
	}
	if m.Description == "" || m.License == "" || m.Author == "" || len(m.Tags) == 0 {
		t.Errorf("description, author, license and tags should all be set")
	}
	switch m.DefaultLanguage {
	case "", registry.LangTS, registry.LangJS:
	default:
		t.Errorf("defaultLanguage = %q, want ts or js", m.DefaultLanguage)
	}
	for l := range m.Languages {
		if l != registry.LangTS && l != registry.LangJS {
			t.Errorf("languages has key %q, want only ts and js", l)
		}
	}
	for _, dep := range m.RegistryDependencies {
		if !strings.HasPrefix(dep, registry.DefaultNamespace+"/") {
			t.Errorf("registryDependencies entry %q must be a full identifier (@main/...)", dep)
		}
		did, err := registry.ParseID(dep)
		if err != nil {
			t.Errorf("registryDependencies: %v", err)
			continue
		}
		if did.Version != "" || did.Language != "" {
			t.Errorf("registryDependencies entry %q must not carry a version or language", dep)
		}
		if !known[did.Key()] {
			t.Errorf("registryDependencies entry %q is not in the catalog", dep)
		}
	}
	checkRanges := func(where string, deps map[string]string) {
		for name, r := range deps {
			if name == "" || r == "" {
				t.Errorf("%s: empty package name or range (%q: %q)", where, name, r)
			}
			if _, err := registry.ParseRange(r); err != nil {
				t.Errorf("%s: %s range %q: %v", where, name, r, err)
			}
		}
	}
	checkRanges("dependencies", m.Dependencies)
	checkRanges("devDependencies", m.DevDependencies)
	for name, s := range m.Scripts {
		if name == "" || s == "" {
			t.Errorf("scripts: empty name or command (%q: %q)", name, s)
		}
	}

	// Every file object, top level and per language.
	checkFiles := func(where string, files []registry.File) {
		targets := map[string]bool{}
		for _, f := range files {
			clean, err := registry.CleanTarget(f.Target)
			if err != nil {
				t.Errorf("%s: %v", where, err)
			} else if clean != f.Target {
				t.Errorf("%s: target %q is not in clean form %q", where, f.Target, clean)
			}
			if targets[f.Target] {
				t.Errorf("%s: target %q appears twice", where, f.Target)
			}
			targets[f.Target] = true
			if !fileTypes[f.Type] {
				t.Errorf("%s: %s: file type %q is not allowed", where, f.Target, f.Type)
			}
			if f.Path == "" && f.Content == nil {
				t.Errorf("%s: %s has neither path nor content", where, f.Target)
			}
			if f.Path != "" && f.Content != nil {
				t.Errorf("%s: %s has both path and content; content would win", where, f.Target)
			}
			if f.Content != nil && !strings.HasSuffix(*f.Content, "\n") {
				t.Errorf("%s: %s inline content should end with a newline", where, f.Target)
			}
			if ms := f.MergeStrategy; ms != nil {
				if ms.Type != "builtin" {
					t.Errorf("%s: %s: the catalog uses builtin merge strategies only, got %q", where, f.Target, ms.Type)
				}
				switch ms.Strategy {
				case registry.StrategyJSON, registry.StrategyIgnore, registry.StrategyEnv, registry.StrategyOverwrite:
				default:
					t.Errorf("%s: %s: unknown strategy %q", where, f.Target, ms.Strategy)
				}
			}
		}
	}
	checkFiles("files", m.Files)
	for l, blk := range m.Languages {
		checkFiles("languages."+string(l)+".files", blk.Files)
		checkRanges("languages."+string(l)+".devDependencies", blk.DevDependencies)
		checkRanges("languages."+string(l)+".dependencies", blk.Dependencies)
	}

	// Every referenced template exists, and every template is referenced.
	referenced := map[string]bool{"registry.json": true}
	for _, p := range m.FilePaths() {
		if !registry.ValidFilePath(p) {
			t.Errorf("files[].path %q is not a valid package file path", p)
			continue
		}
		referenced[p] = true
		if _, err := fs.Stat(fsys, dir+"/"+p); err != nil {
			t.Errorf("files[].path %q does not exist in the package: %v", p, err)
		}
	}
	err = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(p, dir+"/")
		if !referenced[rel] {
			t.Errorf("package file %s is not referenced by registry.json", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDependencyGraph checks that registryDependencies form no cycle, so the
// client can order every registry by dependency level.
func TestDependencyGraph(t *testing.T) {
	t.Parallel()
	fsys := catalog.FS()
	deps := map[string][]string{}
	for _, key := range catalog.Registries() {
		m, _ := loadManifest(t, fsys, key)
		for _, d := range m.RegistryDependencies {
			deps[key] = append(deps[key], registry.MustParseID(d).Key())
		}
	}
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var visit func(k string, trail []string)
	visit = func(k string, trail []string) {
		switch state[k] {
		case visiting:
			t.Fatalf("circular registryDependencies: %s -> %s", strings.Join(trail, " -> "), k)
		case done:
			return
		}
		state[k] = visiting
		for _, d := range deps[k] {
			visit(d, append(trail, k))
		}
		state[k] = done
	}
	for _, k := range catalog.Registries() {
		visit(k, nil)
	}
}

func TestPresets(t *testing.T) {
	t.Parallel()
	fsys := catalog.FS()
	known := map[string]bool{}
	for _, k := range catalog.Registries() {
		known[k] = true
	}
	tests := []struct {
		name    string
		members int
	}{
		{"node", 8},
		{"node-library", 9},
		{"go-service", 1},
		{"python-service", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := fs.ReadFile(fsys, "presets/"+tt.name+"/preset.json")
			if err != nil {
				t.Fatal(err)
			}
			p, err := registry.ParsePreset(b)
			if err != nil {
				t.Fatal(err)
			}
			var strict registry.Preset
			if err := strictDecode(b, &strict); err != nil {
				t.Errorf("preset.json has a field the schema does not allow: %v", err)
			}
			if p.Name != tt.name {
				t.Errorf("name = %q, want %q", p.Name, tt.name)
			}
			if !registry.ValidVersion(p.Version) {
				t.Errorf("version %q is not SemVer", p.Version)
			}
			if p.Schema != presetSchemaURL {
				t.Errorf("$schema = %q, want %q", p.Schema, presetSchemaURL)
			}
			if got := len(p.Registries); got != tt.members {
				t.Errorf("got %d registries, want %d", got, tt.members)
			}
			seen := map[string]bool{}
			for _, r := range p.Registries {
				if !strings.HasPrefix(r, registry.DefaultNamespace+"/") {
					t.Errorf("member %q must be a full identifier (@main/...)", r)
				}
				id, err := registry.ParseID(r)
				if err != nil {
					t.Errorf("member: %v", err)
					continue
				}
				if seen[id.Key()] {
					t.Errorf("member %s appears twice", id.Key())
				}
				seen[id.Key()] = true
				if !known[id.Key()] {
					t.Errorf("member %q is not in the catalog", r)
				}
			}
		})
	}
}

func TestKeysOrder(t *testing.T) {
	t.Parallel()
	keys := catalog.Keys()
	pos := map[string]int{}
	for i, k := range keys {
		if _, dup := pos[k]; dup {
			t.Fatalf("key %s listed twice", k)
		}
		pos[k] = i
	}
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, "presets/"):
			for _, reg := range catalog.Registries() {
				if pos[reg+"/versions.json"] > pos[k] {
					t.Errorf("preset %s comes before %s/versions.json", k, reg)
				}
			}
		case path.Base(k) == "versions.json":
		case k == catalog.HealthMarker:
			if pos[k] != len(keys)-1 {
				t.Errorf("%s is written at position %d, want last (%d)", k, pos[k], len(keys)-1)
			}
		default:
			reg := k[:strings.Index(k, "/1.0.0/")]
			if pos[reg+"/versions.json"] < pos[k] {
				t.Errorf("%s comes after %s/versions.json", k, reg)
			}
		}
	}
}

// TestDocListsCatalog keeps the package documentation's list of registries
// and presets in step with the embedded catalog.
func TestDocListsCatalog(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range catalog.Registries() {
		if !strings.Contains(string(doc), "//\t"+key+" ") {
			t.Errorf("doc.go does not list registry %s", key)
		}
	}
	for _, name := range catalog.Presets() {
		if !strings.Contains(string(doc), "//\t"+name+" ") {
			t.Errorf("doc.go does not list preset %s", name)
		}
	}
}

// TestKeysFollowLayout checks that every file of the catalog is a key of
// the storage layout: a seeded storage holds nothing the server would not
// find through registry/layout.
func TestKeysFollowLayout(t *testing.T) {
	t.Parallel()
	for _, k := range catalog.Keys() {
		if kind := layout.Classify(k).Kind; (kind == layout.KindOther || kind == layout.KindClaim || kind == layout.KindHealth) && k != catalog.HealthMarker {
			t.Errorf("catalog key %q is %v, want a registry or preset key", k, kind)
		}
	}
}

// TestSchemas validates every manifest and preset of the catalog against the
// embedded JSON Schemas, as the server's publish route would.
func TestSchemas(t *testing.T) {
	t.Parallel()
	fsys := catalog.FS()
	type doc struct {
		key      string
		validate func([]byte) error
	}
	var docs []doc
	for _, reg := range catalog.Registries() {
		_, v := loadManifest(t, fsys, reg)
		docs = append(docs, doc{reg + "/" + v + "/registry.json", registry.ValidateManifestJSON})
	}
	for _, name := range catalog.Presets() {
		docs = append(docs, doc{"presets/" + name + "/preset.json", registry.ValidatePresetJSON})
	}
	if len(docs) != len(catalog.Registries())+len(catalog.Presets()) {
		t.Fatalf("got %d documents, want %d", len(docs), len(catalog.Registries())+len(catalog.Presets()))
	}
	for _, d := range docs {
		t.Run(d.key, func(t *testing.T) {
			t.Parallel()
			b, err := fs.ReadFile(fsys, d.key)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.validate(b); err != nil {
				t.Errorf("%s does not match its schema: %v", d.key, err)
			}
		})
	}
}
