package rcfile_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jigkit/jig/registryclient/rcfile"
)

func ExampleConfig_Set() {
	cfg, err := rcfile.Parse("/home/me/.jigrc", []byte(`{"registries":{"@oss":"https://oss.example.com"}}`))
	if err != nil {
		panic(err)
	}
	token := "s3cret"
	url := "https://registry.example.com"
	if err := cfg.Set("@company", rcfile.Update{URL: &url, Token: &token, Headers: map[string]string{"X-Team": "web"}}); err != nil {
		panic(err)
	}
	fmt.Println(cfg.List())
	for _, h := range cfg.DisplayHeaders("@company") {
		fmt.Printf("%s -> %s\n", h.Name, h.Value)
	}
	out, _ := cfg.Marshal()
	fmt.Print(string(out))
	// Output:
	// [@company @main @oss @presets]
	// Authorization -> Bearer s3cret
	// X-Team -> web
	// {
	//   "registries": {
	//     "@company": {
	//       "url": "https://registry.example.com",
	//       "token": "s3cret",
	//       "headers": {
	//         "X-Team": "web"
	//       }
	//     },
	//     "@oss": "https://oss.example.com"
	//   }
	// }
}

// Edit changes the rc file under a lock, as `jig config set` does: other
// jig processes changing it at the same time keep their changes.
func ExampleEdit() {
	dir, err := os.MkdirTemp("", "jigrc")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, ".jigrc")
	url := "https://registry.example.com"
	cfg, err := rcfile.Edit(context.Background(), path, func(c *rcfile.Config) error {
		return c.Set("@company", rcfile.Update{URL: &url, DefaultNamespace: ptr("rack")})
	})
	if err != nil {
		panic(err)
	}
	e, _ := cfg.Get("@company")
	fmt.Println(e.URL, e.DefaultNamespace)
	data, _ := os.ReadFile(path)
	fmt.Print(string(data))
	// Output:
	// https://registry.example.com @rack
	// {
	//   "registries": {
	//     "@company": {
	//       "url": "https://registry.example.com",
	//       "headers": {},
	//       "defaultNamespace": "@rack"
	//     }
	//   }
	// }
}
