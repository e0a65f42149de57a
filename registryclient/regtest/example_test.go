package regtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jigkit/jig/registryclient/regtest"
)

func ExampleRun() {
	dir, _ := os.MkdirTemp("", "example-registry-")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "registry.json"), []byte(`{
  "name": "hello", "namespace": "@main", "type": "registry:feature", "version": "1.0.0", "priority": 4,
  "files": [{"target": "hello.txt", "type": "registry:docs", "content": "hello\n"}]
}`), 0o644)

	// No Sources: offline. The checks that need a server are skipped.
	rep, err := regtest.Run(context.Background(), dir, regtest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range rep.Checks {
		fmt.Println(c.Status, c.Name)
	}
	fmt.Println("failed:", rep.Failed())
	// Output:
	// pass package
	// pass render :ts
	// skip presets
	// skip update from the previous version
	// failed: 0
}
