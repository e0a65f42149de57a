package rcfile_test

import (
	"fmt"

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
