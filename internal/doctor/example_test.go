package doctor_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jigkit/jig/internal/doctor"
)

func ExampleRun() {
	dir, _ := os.MkdirTemp("", "doctor-example")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "jig.json"), []byte(`{"name":"demo","items":["@main/runtimes/node@1.0.0"]}`), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "yarn.lock"), nil, 0o644)

	rep := doctor.Run(context.Background(), doctor.Options{
		Dir:      dir,
		LookPath: func(string) (string, error) { return "", errors.New("not found") }, // no tools installed
	})
	for _, r := range rep.Results {
		fmt.Printf("%s %s: %s\n", r.Level, r.ID, strings.ReplaceAll(r.Message, dir, "DIR"))
	}
	fmt.Println("hasErrors:", rep.HasErrors)
	// Output:
	// warning env.node-version: node was not found in PATH
	// warning env.package-manager: yarn was not found in PATH (the project's package manager, from yarn.lock)
	// warning env.git: git was not found in PATH
	// info project.jig-json: jig.json is valid (DIR/jig.json)
	// info project.registries: jig.json lists 1 registry
	// hasErrors: false
}
