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

// oneRegistry is a minimal [apply.Source] serving a single registry. Real
// programs pass *registryclient.Sources.
type oneRegistry struct{ m *registry.Manifest }

func (s oneRegistry) Manifest(_ context.Context, id registry.ID) (*registry.Manifest, error) {
	if id.Key() != "@main/quality/editorconfig" {
		return nil, errors.New("not found")
	}
	return s.m, nil
}

func (oneRegistry) File(context.Context, registry.ID, string) ([]byte, error) {
	return nil, errors.New("no package files")
}

func (oneRegistry) Preset(context.Context, string) (*registry.Preset, error) {
	return nil, errors.New("no presets")
}

func Example() {
	content := "root = true\n"
	src := oneRegistry{&registry.Manifest{
		Name: "editorconfig", Namespace: "@main", Type: registry.TypeQuality, Version: "1.0.0",
		Files: []registry.File{{Target: ".editorconfig", Type: registry.FileConfig, Content: &content}},
	}}
	dir, _ := os.MkdirTemp("", "jig-example-*")
	defer os.RemoveAll(dir)

	eng, err := apply.New(src)
	if err != nil {
		panic(err)
	}
	plan, err := eng.Run(context.Background(), apply.Request{Dir: dir, Template: "quality/editorconfig"}, false)
	if err != nil {
		panic(err)
	}
	for _, f := range plan.Files {
		fmt.Println(f.Action, f.Target)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".editorconfig"))
	fmt.Print(string(b))

	// Adding it again changes nothing.
	again, _ := eng.Run(context.Background(), apply.Request{Dir: dir, Template: "quality/editorconfig"}, false)
	fmt.Println("already installed:", again.AlreadyInstalled)
	// Output:
	// create .editorconfig
	// create jig.json
	// root = true
	// already installed: @main/quality/editorconfig@1.0.0
}

func ExampleDetectPackageManager() {
	dir, _ := os.MkdirTemp("", "jig-example-*")
	defer os.RemoveAll(dir)
	fmt.Println(apply.DetectPackageManager(dir))
	_ = os.WriteFile(filepath.Join(dir, "pnpm-lock.yaml"), nil, 0o644)
	fmt.Println(apply.DetectPackageManager(dir))
	// Output:
	// npm
	// pnpm
}

// A new project in one call: plan, write, install and git. The registry
// here sets a "prepare" script, which "npm install" would run; scripts are
// not allowed ([apply.WithAllowScripts]), so the install is skipped and
// says why.
func ExampleEngine_Run_init() {
	content := "root = true\n"
	src := oneRegistry{&registry.Manifest{
		Name: "editorconfig", Namespace: "@main", Type: registry.TypeQuality, Version: "1.0.0",
		DevDependencies: map[string]string{"husky": "^9.0.0"},
		Scripts:         map[string]string{"prepare": "husky"},
		Files:           []registry.File{{Target: ".editorconfig", Type: registry.FileConfig, Content: &content}},
	}}
	base, _ := os.MkdirTemp("", "jig-example-*")
	defer os.RemoveAll(base)

	eng, err := apply.New(src, apply.WithInstall(true), apply.WithGitInit(true))
	if err != nil {
		panic(err)
	}
	plan, err := eng.Run(context.Background(), apply.Request{
		Dir: filepath.Join(base, "demo"), Template: "quality/editorconfig", Mode: apply.ModeInit,
	}, false)
	if err != nil {
		panic(err)
	}
	fmt.Println(plan.Name, len(plan.Files), "files")
	fmt.Println(plan.Install.Command, plan.Install.Status+":", plan.Install.Error)
	// plan.Git.Status is "ok", "skipped" when the directory already was
	// in a git repository, or "failed" with plan.Git.Err.
	fmt.Println(plan.Git.Command)
	// Output:
	// demo 3 files
	// npm install skipped: package.json now has prepare from a registry, which 'npm install' would run
	// git init
}
