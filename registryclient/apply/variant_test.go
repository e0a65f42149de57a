package apply

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// variantSource serves @team/svc 1.0.0 and 1.1.0, each with a default
// Dockerfile and the variants distroless (another Dockerfile) and grpc
// (a requirement and a proto file), plus the preset "svc".
type variantSource struct{ *verSource }

func (variantSource) Preset(_ context.Context, name string) (*registry.Preset, error) {
	if name != "svc" {
		return nil, errors.New("no such preset")
	}
	return &registry.Preset{Name: "svc", Version: "1.0.0", Ecosystem: registry.EcosystemGo, Registries: []string{"@team/svc"}}, nil
}

func newVariantSource() variantSource {
	s := newVerSource()
	for _, v := range []string{"1.0.0", "1.1.0"} {
		s.add("@team/svc", &registry.Manifest{
			Name: "svc", Namespace: "@team", Path: "svc", Type: registry.TypeFramework, Version: v, Priority: 2, Ecosystem: registry.EcosystemGo,
			Files: []registry.File{
				{Target: "main.go", Type: registry.FileEntry, Content: strp("package main // " + v + "\n")},
				{Target: "Dockerfile", Type: registry.FileConfig, Content: strp("FROM golang:1.23\n")},
			},
			Variants: map[string]registry.VariantBlock{
				"distroless": {Description: "distroless image", Files: []registry.File{{Target: "Dockerfile", Type: registry.FileConfig, Content: strp("FROM gcr.io/distroless/static-debian12 # " + v + "\n")}}},
				"grpc":       {Dependencies: map[string]string{"google.golang.org/grpc": "v1.66.0"}, Files: []registry.File{{Target: "api.proto", Type: registry.FileConfig, Content: strp("syntax = \"proto3\";\n")}}},
			},
		}, nil)
	}
	return variantSource{s}
}

// TestVariants: a named variant's files replace the top level's by
// target, its dependencies are added, jig.json records it and update
// keeps it; an unknown one is an error naming those there are, with
// nothing written.
func TestVariants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		template   string
		dockerfile string // "" when the init must fail
		wantErr    string
		variant    string
		files      []string // more files it must write
	}{
		{name: "no variant", template: "@team/svc@1.0.0", dockerfile: "FROM golang:1.23\n"},
		{name: "distroless", template: "@team/svc@1.0.0:distroless", dockerfile: "FROM gcr.io/distroless/static-debian12 # 1.0.0\n", variant: "distroless"},
		{name: "grpc", template: "@team/svc@1.0.0:grpc", dockerfile: "FROM golang:1.23\n", variant: "grpc", files: []string{"api.proto"}},
		{name: "the preset's variant", template: "@presets/svc:distroless", dockerfile: "FROM gcr.io/distroless/static-debian12 # 1.1.0\n", variant: "distroless"},
		{name: "unknown", template: "@team/svc@1.0.0:alpine", wantErr: `@team/svc@1.0.0 has no variant "alpine"; its variants are: distroless, grpc (as in @team/svc:distroless)`},
		{name: "unknown for the preset", template: "@presets/svc:alpine", wantErr: `@presets/svc has no variant "alpine"; its variants are: distroless, grpc (as in @presets/svc:distroless)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, newVariantSource())
			dir := filepath.Join(t.TempDir(), "app")
			_, err := e.Run(t.Context(), Request{Dir: dir, Mode: ModeInit, Template: tc.template, Name: "app"}, false)
			if tc.wantErr != "" {
				if !errors.Is(err, registry.ErrUnknownVariant) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want ErrUnknownVariant saying %q", err, tc.wantErr)
				}
				if readFileOrEmpty(t, filepath.Join(dir, registry.ProjectFile)) != "" {
					t.Error("a refused init wrote jig.json")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(dir, "Dockerfile")); got != tc.dockerfile {
				t.Errorf("Dockerfile: got %q, want %q", got, tc.dockerfile)
			}
			for _, f := range tc.files {
				readFile(t, filepath.Join(dir, f))
			}
			proj, err := ReadProject(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := proj.Installed["@team/svc"].Variant; got != tc.variant {
				t.Errorf("jig.json records variant %q, want %q", got, tc.variant)
			}
			if tc.variant == "grpc" && !strings.Contains(readFile(t, filepath.Join(dir, "go.mod")), "google.golang.org/grpc v1.66.0") {
				t.Error("the grpc variant's requirement is not in go.mod")
			}
		})
	}
}

// TestVariantUpdateKeepsIt: jig update renders both sides in the
// installed variant, so the distroless Dockerfile moves to the new
// version's distroless Dockerfile, not to the default one; jig remove
// takes the variant's files out.
func TestVariantUpdateKeepsIt(t *testing.T) {
	t.Parallel()
	e := newEngine(t, newVariantSource())
	dir := filepath.Join(t.TempDir(), "app")
	if _, err := e.Run(t.Context(), Request{Dir: dir, Mode: ModeInit, Template: "@team/svc@1.0.0:distroless", Name: "app"}, false); err != nil {
		t.Fatal(err)
	}
	plan, err := runUpdate(t, e, UpdateRequest{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Conflicts != 0 {
		t.Errorf("got %d conflicts, want none", plan.Conflicts)
	}
	if got, want := readFile(t, filepath.Join(dir, "Dockerfile")), "FROM gcr.io/distroless/static-debian12 # 1.1.0\n"; got != want {
		t.Errorf("Dockerfile after update: got %q, want %q", got, want)
	}
	proj, err := ReadProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	if in := proj.Installed["@team/svc"]; in.Version != "1.1.0" || in.Variant != "distroless" {
		t.Errorf("jig.json records %s variant %q, want 1.1.0 variant distroless", in.Version, in.Variant)
	}
	if len(proj.Items) != 1 || proj.Items[0] != "@team/svc@1.1.0:distroless" {
		t.Errorf("items: got %q, want [@team/svc@1.1.0:distroless]", proj.Items)
	}
	// Remove renders the installed variant too: its Dockerfile goes.
	runRemove(t, e, dir, "@team/svc")
	for _, f := range []string{"Dockerfile", "main.go"} {
		if readFileOrEmpty(t, filepath.Join(dir, f)) != "" {
			t.Errorf("%s is still there after remove", f)
		}
	}
}

// TestVariantFileEscapeRefused: a served manifest whose variant writes
// outside the project is refused before anything is written.
func TestVariantFileEscapeRefused(t *testing.T) {
	t.Parallel()
	s := newVerSource()
	s.add("@team/bad", &registry.Manifest{
		Name: "bad", Namespace: "@team", Path: "bad", Type: registry.TypeFeature, Version: "1.0.0", Priority: 4,
		Variants: map[string]registry.VariantBlock{"x": {Files: []registry.File{{Target: "../../etc/evil", Type: registry.FileConfig, Content: strp("x")}}}},
	}, nil)
	dir := filepath.Join(t.TempDir(), "app")
	_, err := newEngine(t, s).Run(t.Context(), Request{Dir: dir, Mode: ModeInit, Template: "@team/bad:x", Name: "app"}, false)
	if !errors.Is(err, ErrUnsafeTarget) {
		t.Fatalf("got %v, want ErrUnsafeTarget", err)
	}
}
