package apply_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/apply"
)

// twoVersions serves @team/greeting at 1.0.0 and 1.1.0 (its latest).
type twoVersions map[string]*registry.Manifest

func (s twoVersions) Manifest(_ context.Context, id registry.ID) (*registry.Manifest, error) {
	v := id.Version
	if v == "" {
		v = "1.1.0"
	}
	if m, ok := s[v]; ok && id.Key() == "@team/greeting" {
		return m, nil
	}
	return nil, errors.New("not found")
}

func (twoVersions) File(context.Context, registry.ID, string) ([]byte, error) {
	return nil, errors.New("no package files")
}

func (twoVersions) Preset(context.Context, string) (*registry.Preset, error) {
	return nil, errors.New("no presets")
}

// Updating a registry merges its new version into the project: the user's
// edit and the registry's change both land; check confirms the project
// matches what jig recorded.
func ExampleEngine_PlanUpdate() {
	greeting := func(v, text string) *registry.Manifest {
		return &registry.Manifest{
			Name: "greeting", Namespace: "@team", Type: registry.TypeFeature, Version: v,
			Files: []registry.File{{Target: "hello.txt", Type: registry.FileDocs, Content: &text}},
		}
	}
	src := twoVersions{
		"1.0.0": greeting("1.0.0", "Hello\n\nfrom the team\n"),
		"1.1.0": greeting("1.1.0", "Hello\n\nfrom the platform team\n"),
	}
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "jig-example-*")
	defer os.RemoveAll(dir)
	eng, _ := apply.New(src)
	if _, err := eng.Run(ctx, apply.Request{Dir: dir, Template: "@team/greeting@1.0.0", Mode: apply.ModeInit}, false); err != nil {
		fmt.Println(err)
		return
	}
	// The user edits the first line.
	_ = os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("Hello, world\n\nfrom the team\n"), 0o644)

	plan, err := eng.PlanUpdate(ctx, apply.UpdateRequest{Dir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, u := range plan.Updates {
		fmt.Println(u.Key, u.From, "->", u.To)
	}
	if err := eng.Apply(ctx, plan); err != nil {
		fmt.Println(err)
		return
	}
	b, _ := os.ReadFile(filepath.Join(dir, "hello.txt"))
	fmt.Print(string(b))
	rep, _ := eng.Check(ctx, dir)
	fmt.Println("conflicts:", plan.Conflicts, "drift:", rep.Drift)
	// Output:
	// @team/greeting 1.0.0 -> 1.1.0
	// Hello, world
	//
	// from the platform team
	// conflicts: 0 drift: false
}
