package storage_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func ExampleListDir() {
	ctx := context.Background()
	st := memory.New()
	for _, key := range []string{
		"@main/runtimes/node/versions.json",
		"@main/quality/eslint/versions.json",
		"@acme/internal/tool/versions.json",
		"presets/node/preset.json",
	} {
		_ = st.Put(ctx, key, strings.NewReader("{}"), 2)
	}
	top, _ := storage.ListDir(ctx, st, "")
	fmt.Println(top)
	inMain, _ := storage.ListDir(ctx, st, "@main/")
	fmt.Println(inMain)
	// Output:
	// [@acme/ @main/ presets/]
	// [@main/quality/ @main/runtimes/]
}

func ExampleValidKey() {
	fmt.Println(storage.ValidKey("@main/runtimes/node/1.0.0/templates/.gitignore"))
	fmt.Println(storage.ValidKey("@main/../../etc/passwd"))
	// Output:
	// true
	// false
}
