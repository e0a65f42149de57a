package mcpserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/apply"
)

// write creates dir/name (and its parents) with content.
func write(t *testing.T, dir, name, content string) {
	t.Helper()
	testenv.WriteFiles(t, dir, map[string]string{name: content})
}

func TestFingerprintChanged(t *testing.T) {
	t.Parallel()
	targets := []string{"jig.json", "package.json", "src/index.ts", "new.txt"}
	tests := []struct {
		name   string
		change func(t *testing.T, dir, outside string)
		want   []string
	}{
		{name: "nothing", change: func(*testing.T, string, string) {}},
		{name: "same bytes rewritten", change: func(t *testing.T, dir, _ string) { write(t, dir, "jig.json", `{"items":[]}`) }},
		{name: "content", change: func(t *testing.T, dir, _ string) { write(t, dir, "src/index.ts", "start(1);\n") }, want: []string{"src/index.ts"}},
		{name: "one byte appended", change: func(t *testing.T, dir, _ string) { write(t, dir, "package.json", "{}\n\n") }, want: []string{"package.json"}},
		{name: "deleted", change: func(t *testing.T, dir, _ string) {
			if err := os.Remove(filepath.Join(dir, "jig.json")); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"jig.json"}},
		{name: "created where the plan creates", change: func(t *testing.T, dir, _ string) { write(t, dir, "new.txt", "") }, want: []string{"new.txt"}},
		{name: "made executable", change: func(t *testing.T, dir, _ string) {
			if err := os.Chmod(filepath.Join(dir, "src/index.ts"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"src/index.ts"}},
		{name: "replaced by a directory", change: func(t *testing.T, dir, _ string) {
			if err := os.Mkdir(filepath.Join(dir, "new.txt"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"new.txt"}},
		{name: "replaced by a link outside with the same bytes", change: func(t *testing.T, dir, outside string) {
			write(t, outside, "package.json", "{}\n")
			p := filepath.Join(dir, "package.json")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(outside, "package.json"), p); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"package.json"}},
		{name: "parent directory turned into a link outside", change: func(t *testing.T, dir, outside string) {
			write(t, outside, "src/index.ts", "start(0);\n")
			if err := os.RemoveAll(filepath.Join(dir, "src")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(outside, "src"), filepath.Join(dir, "src")); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"src/index.ts"}},
		{name: "several", change: func(t *testing.T, dir, _ string) {
			write(t, dir, "new.txt", "x")
			write(t, dir, "jig.json", "{}")
		}, want: []string{"jig.json", "new.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, outside := t.TempDir(), t.TempDir()
			write(t, dir, "jig.json", `{"items":[]}`)
			write(t, dir, "package.json", "{}\n")
			write(t, dir, "src/index.ts", "start(0);\n")
			before, err := readFingerprint(dir, targets)
			if err != nil {
				t.Fatal(err)
			}
			if before["new.txt"] != absent {
				t.Fatalf("new.txt = %q, want %q", before["new.txt"], absent)
			}
			tt.change(t, dir, outside)
			after, err := readFingerprint(dir, targets)
			if err != nil {
				t.Fatal(err)
			}
			if got := before.changed(after); !slices.Equal(got, tt.want) {
				t.Errorf("changed = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFingerprintMissingDir(t *testing.T) {
	t.Parallel()
	fp, err := readFingerprint(filepath.Join(t.TempDir(), "not-yet"), []string{"jig.json", "a/b.txt"})
	if err != nil {
		t.Fatal(err)
	}
	want := fingerprint{"jig.json": absent, "a/b.txt": absent}
	if len(fp) != len(want) || fp["jig.json"] != absent || fp["a/b.txt"] != absent {
		t.Errorf("fingerprint = %v, want %v", fp, want)
	}
	if got := want.changed(fingerprint{"jig.json": absent}); !slices.Equal(got, []string{"a/b.txt"}) {
		t.Errorf("a target missing from the new fingerprint: changed = %q, want [a/b.txt]", got)
	}
}

// oneRegistry is an [apply.Source] with one registry, @main/x@1.0.0.
type oneRegistry struct{}

func (oneRegistry) Manifest(_ context.Context, id registry.ID) (*registry.Manifest, error) {
	if id.Key() != "@main/x" {
		return nil, errors.New("not found")
	}
	content := "hello\n"
	return &registry.Manifest{Name: "x", Namespace: "@main", Version: "1.0.0", Type: registry.TypeFeature,
		Files:        []registry.File{{Target: "src/x.txt", Type: registry.FileConfig, Content: &content}},
		Dependencies: map[string]string{"left-pad": "^1.0.0"}}, nil
}

func (oneRegistry) File(context.Context, registry.ID, string) ([]byte, error) {
	return nil, errors.New("no files")
}

func (oneRegistry) Preset(context.Context, string) (*registry.Preset, error) {
	return nil, errors.New("no presets")
}

// The fingerprint of what the engine read equals the one read from disk
// right after, and stops matching when a file it read changes.
func TestFingerprintOfPlanInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "package.json", `{"name":"app"}`+"\n")
	if err := os.Chmod(filepath.Join(dir, "package.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	eng, err := apply.New(oneRegistry{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := eng.Plan(t.Context(), apply.Request{Dir: dir, Template: "@main/x"})
	if err != nil {
		t.Fatal(err)
	}
	planned := fingerprintOf(p.Inputs())
	if got, want := planned.targets(), []string{"jig.json", "package.json", "src/x.txt"}; !slices.Equal(got, want) {
		t.Fatalf("fingerprinted %q, want %q", got, want)
	}
	now, err := readFingerprint(dir, planned.targets())
	if err != nil {
		t.Fatal(err)
	}
	if got := planned.changed(now); len(got) != 0 {
		t.Fatalf("changed right after planning: %q\nplanned %v\nread    %v", got, planned, now)
	}
	write(t, dir, "src/x.txt", "hello\n")
	now, err = readFingerprint(dir, planned.targets())
	if err != nil {
		t.Fatal(err)
	}
	if got := planned.changed(now); !slices.Equal(got, []string{"src/x.txt"}) {
		t.Errorf("changed = %q, want [src/x.txt]", got)
	}
}
