package apply_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient/apply"
)

// Adopting a project the reference made: jig.json records rack.json's
// registries with the digests rk never records, the edited file is named,
// and nothing else is written.
func ExampleEngine_Adopt() {
	text := "Hello\n"
	src := twoVersions{"1.0.0": &registry.Manifest{
		Name: "greeting", Namespace: "@team", Type: registry.TypeFeature, Version: "1.0.0",
		Files: []registry.File{{Target: "hello.txt", Type: registry.FileDocs, Content: &text}},
	}}
	dir, _ := os.MkdirTemp("", "jig-example-*")
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(dir, "rack.json"), []byte(`{"name": "app", "items": ["@team/greeting@1.0.0"]}`), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("Hello, world\n"), 0o644)

	eng, _ := apply.New(src)
	rep, err := eng.Adopt(context.Background(), dir, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("recorded:", rep.Registries)
	fmt.Println("changed since rk wrote them:", rep.Changed)
	proj, _ := os.ReadFile(filepath.Join(dir, "jig.json"))
	p, _ := registry.ParseProject(proj)
	fmt.Println("hello.txt recorded as written:", p.Installed["@team/greeting"].Files["hello.txt"] == registry.Digest([]byte(text)))
	// Output:
	// recorded: [@team/greeting@1.0.0]
	// changed since rk wrote them: [hello.txt]
	// hello.txt recorded as written: true
}
