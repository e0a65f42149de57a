package apply

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
)

// nsSource is a memSource whose sources say what shorthand means, by the
// namespace that served the content; it records who asked.
type nsSource struct {
	*memSource
	defaults map[string]string // from -> default namespace; missing: @main
	err      error

	askMu sync.Mutex
	asked map[string]int
}

func (s *nsSource) DefaultNamespace(_ context.Context, from string) (string, error) {
	s.askMu.Lock()
	s.asked[from]++
	s.askMu.Unlock()
	if s.err != nil {
		return "", s.err
	}
	if ns, ok := s.defaults[from]; ok {
		return ns, nil
	}
	return registry.DefaultNamespace, nil
}

func (s *nsSource) askedFrom() []string {
	s.askMu.Lock()
	defer s.askMu.Unlock()
	var out []string
	for k := range s.asked {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// rackFixture is a storage written for the reference: @rack registries
// whose presets, registryDependencies and conflicts are shorthand.
func rackFixture() *memSource {
	s := newMemSource()
	s.add("@rack/runtimes/node", &registry.Manifest{
		Name: "node", Namespace: "@rack", Type: registry.TypeRuntime, Version: "1.0.0", Priority: 1,
		Files: []registry.File{{Target: ".gitignore", Type: registry.FileConfig, Path: "./templates/.gitignore"}},
	}, map[string]string{"templates/.gitignore": "node_modules/\n"})
	s.add("@rack/runtimes/typescript", &registry.Manifest{
		Name: "typescript", Namespace: "@rack", Type: registry.TypeRuntime, Version: "1.0.0", Priority: 2,
		RegistryDependencies: []string{"runtimes/node", "build/typescript"},
		DevDependencies:      map[string]string{"tsx": "^4.0.0"},
		Files:                []registry.File{{Target: "src/index.ts", Type: registry.FileEntry, Content: strp("export {};\n")}},
	}, nil)
	s.add("@rack/build/typescript", &registry.Manifest{
		Name: "typescript", Namespace: "@rack", Type: registry.TypeBuild, Version: "1.0.0", Priority: 3,
		Conflicts: []string{"build/swc"},
		Files:     []registry.File{{Target: "tsconfig.json", Type: registry.FileConfig, Content: strp("{}\n")}},
	}, nil)
	s.add("@rack/build/swc", &registry.Manifest{
		Name: "swc", Namespace: "@rack", Type: registry.TypeBuild, Version: "1.0.0", Priority: 3,
		Files: []registry.File{{Target: ".swcrc", Type: registry.FileConfig, Content: strp("{}\n")}},
	}, nil)
	s.presets["node"] = &registry.Preset{Name: "node", Version: "1.0.0", Registries: []string{"runtimes/typescript"}}
	s.presets["clash"] = &registry.Preset{Name: "clash", Version: "1.0.0", Registries: []string{"build/typescript", "build/swc"}}
	s.presets["full"] = &registry.Preset{Name: "full", Version: "1.0.0", Registries: []string{"@rack/runtimes/typescript"}}
	return s
}

func installedItems(t *testing.T, dir string) []string {
	t.Helper()
	p, err := registry.ParseProject([]byte(readFile(t, filepath.Join(dir, registry.ProjectFile))))
	if err != nil {
		t.Fatal(err)
	}
	return p.Items
}

// TestShorthandResolution: shorthand in presets, registryDependencies,
// conflicts and typed identifiers takes the namespace the serving source
// says it means; jig.json records the fully qualified identifiers.
func TestShorthandResolution(t *testing.T) {
	t.Parallel()
	rack := map[string]string{registry.PresetNamespace: "@rack", "@rack": "@rack", registry.DefaultNamespace: "@rack"}

	t.Run("preset and dependencies", func(t *testing.T) {
		t.Parallel()
		src := &nsSource{memSource: rackFixture(), defaults: rack, asked: map[string]int{}}
		dir := filepath.Join(t.TempDir(), "app")
		if _, err := newEngine(t, src).Run(t.Context(), Request{Dir: dir, Template: "@presets/node", Mode: ModeInit}, false); err != nil {
			t.Fatal(err)
		}
		want := []string{"@rack/runtimes/node@1.0.0", "@rack/build/typescript@1.0.0", "@rack/runtimes/typescript@1.0.0"}
		if diff := cmp.Diff(want, installedItems(t, dir)); diff != "" {
			t.Errorf("jig.json items (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"@presets", "@rack"}, src.askedFrom()); diff != "" {
			t.Errorf("asked for the default namespace of (-want +got):\n%s", diff)
		}
		// Typed shorthand means what @main's source says: here @rack.
		p, err := newEngine(t, src).Run(t.Context(), Request{Dir: dir, Template: "build/swc", Mode: ModeAdd}, true)
		var ce *ConflictError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "@rack/build/typescript conflicts with @rack/build/swc") {
			t.Errorf("adding build/swc: plan %v, error %v; want the shorthand conflict of @rack/build/typescript", p, err)
		}
	})

	t.Run("conflicts in shorthand", func(t *testing.T) {
		t.Parallel()
		src := &nsSource{memSource: rackFixture(), defaults: rack, asked: map[string]int{}}
		_, err := newEngine(t, src).Plan(t.Context(), Request{Dir: filepath.Join(t.TempDir(), "app"), Template: "@presets/clash", Mode: ModeInit})
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Pairs[0] != [2]string{"@rack/build/typescript", "@rack/build/swc"} {
			t.Errorf("error %v, want a conflict between @rack/build/typescript and @rack/build/swc", err)
		}
	})

	t.Run("full identifiers never ask", func(t *testing.T) {
		t.Parallel()
		m := rackFixture()
		m.manifests["@rack/runtimes/typescript"].RegistryDependencies = []string{"@rack/runtimes/node", "@rack/build/typescript"}
		m.manifests["@rack/build/typescript"].Conflicts = nil
		src := &nsSource{memSource: m, defaults: rack, asked: map[string]int{}}
		if _, err := newEngine(t, src).Plan(t.Context(), Request{Dir: filepath.Join(t.TempDir(), "app"), Template: "@presets/full", Mode: ModeInit}); err != nil {
			t.Fatal(err)
		}
		if got := src.askedFrom(); len(got) != 0 {
			t.Errorf("asked for the default namespace of %v, want no one (no shorthand)", got)
		}
	})

	t.Run("plain source means @main", func(t *testing.T) {
		t.Parallel()
		_, err := newEngine(t, rackFixture()).Plan(t.Context(), Request{Dir: filepath.Join(t.TempDir(), "app"), Template: "@presets/node", Mode: ModeInit})
		var se *ShorthandError
		if !errors.As(err, &se) {
			t.Fatalf("error %v, want a *ShorthandError", err)
		}
		if se.Written != "runtimes/typescript" || se.ID.Key() != "@main/runtimes/typescript" || se.From != registry.PresetNamespace {
			t.Errorf("ShorthandError = {%q, %s, %s}, want {runtimes/typescript, @main/runtimes/typescript, @presets}", se.Written, se.ID.Key(), se.From)
		}
	})

	t.Run("dependency not found", func(t *testing.T) {
		t.Parallel()
		src := &nsSource{memSource: rackFixture(), defaults: map[string]string{registry.PresetNamespace: "@rack"}, asked: map[string]int{}}
		dir := filepath.Join(t.TempDir(), "app")
		before := testenv.Snapshot(t, filepath.Dir(dir))
		_, err := newEngine(t, src).Run(t.Context(), Request{Dir: dir, Template: "@presets/node", Mode: ModeInit}, false)
		var se *ShorthandError
		if !errors.As(err, &se) || se.From != "@rack" || se.ID.Namespace != registry.DefaultNamespace {
			t.Fatalf("error %v, want a *ShorthandError for a dependency of @rack read as @main", err)
		}
		assertSame(t, before, testenv.Snapshot(t, filepath.Dir(dir)))
	})

	t.Run("look-up fails", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("boom")
		src := &nsSource{memSource: rackFixture(), err: boom, asked: map[string]int{}}
		_, err := newEngine(t, src).Plan(t.Context(), Request{Dir: filepath.Join(t.TempDir(), "app"), Template: "@presets/node", Mode: ModeInit})
		if !errors.Is(err, boom) {
			t.Errorf("error %v, want it to wrap the look-up's", err)
		}
	})

	t.Run("typed shorthand in remove", func(t *testing.T) {
		t.Parallel()
		src := &nsSource{memSource: rackFixture(), defaults: rack, asked: map[string]int{}}
		dir := filepath.Join(t.TempDir(), "app")
		e := newEngine(t, src)
		if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "build/swc", Mode: ModeInit}, false); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, filepath.Join(dir, registry.ProjectFile)); !strings.Contains(got, `"template": "@rack/build/swc"`) {
			t.Errorf("jig.json records the typed shorthand template as %s, want @rack/build/swc", got)
		}
		p, err := e.PlanRemove(t.Context(), RemoveRequest{Dir: dir, Registry: "build/swc"})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Updates) != 1 || p.Updates[0].Key != "@rack/build/swc" {
			t.Errorf("remove plan updates %+v, want @rack/build/swc removed", p.Updates)
		}
	})
}
