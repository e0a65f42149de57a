package cli

import (
	"context"
	"os"
	"strings"
)

// Example_configSet runs "jig config set" against a throw-away HOME.
func Example_configSet() {
	home, _ := os.MkdirTemp("", "jig-example")
	defer os.RemoveAll(home)
	env := map[string]string{"HOME": home}
	app := newApp(strings.NewReader(""), os.Stdout, os.Stdout, func(k string) string { return env[k] })
	code := run(context.Background(), []string{"config", "set", "@company",
		"--url", "https://registry.example.com", "--token", "s3cret", "--header", "X-Team: web"}, app)
	_ = run(context.Background(), []string{"config", "rm", "@main"}, app)
	println := func(a ...any) { app.Out.Println(a...) }
	println("exit", code)
	// Output:
	// Registry @company configured successfully
	//   URL:     https://registry.example.com
	//   Headers:
	//     Authorization -> Bearer s3cret
	//     X-Team -> web
	// Error: @main is built in and has no override to remove; it already uses the default http://localhost:8080
	// exit 0
}
