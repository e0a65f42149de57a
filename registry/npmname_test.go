package registry_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

func TestNPMName(t *testing.T) {
	t.Parallel()
	tests := []struct{ project, want string }{
		{"my-app", "my-app"},
		{"MyApp", "myapp"},
		{"My App", "my-app"},
		{"my app!", "my-app"},
		{"my@app+v2", "my-app-v2"},
		{"_private", "private"},
		{".hidden", "hidden"},
		{"--x--", "--x--"},
		{"-X-", "x"},
		{"a.b_c", "a.b_c"},
		{"Ünïcödé", "n-c-d"},
		{"日本語", "my-project"},
		{"...", "my-project"},
		{"HTTP", "http-app"},
		{"node_modules", "node_modules-app"},
		{"Favicon.ico", "favicon.ico-app"},
		{strings.Repeat("A", 300), strings.Repeat("a", 214)},
		{strings.Repeat("a", 213) + "-b", strings.Repeat("a", 213)},
	}
	for _, tt := range tests {
		t.Run(tt.project, func(t *testing.T) {
			t.Parallel()
			got := registry.NPMName(tt.project)
			if got != tt.want {
				t.Errorf("NPMName(%q) = %q, want %q", tt.project, got, tt.want)
			}
			if !registry.ValidNPMName(got) {
				t.Errorf("NPMName(%q) = %q is not a valid npm name", tt.project, got)
			}
		})
	}
}

func TestValidNPMName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"my-app": true, "a": true, "a.b_c-d": true, "": false, "MyApp": false, "my app": false,
		".x": false, "_x": false, "fs": false, "node_modules": false, "a~b": false, "a(b)": false,
		"@scope/x": false, strings.Repeat("a", 214): true, strings.Repeat("a", 215): false,
	} {
		if got := registry.ValidNPMName(name); got != want {
			t.Errorf("ValidNPMName(%q) = %v, want %v", name, got, want)
		}
	}
}

// FuzzNPMName checks that every derived name is valid and that deriving
// again changes nothing.
func FuzzNPMName(f *testing.F) {
	for _, s := range []string{"MyApp", "my app", "_x", "http", "日本語", strings.Repeat("Z", 220)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, project string) {
		got := registry.NPMName(project)
		if !registry.ValidNPMName(got) {
			t.Fatalf("NPMName(%q) = %q is not valid", project, got)
		}
		if again := registry.NPMName(got); again != got {
			t.Fatalf("NPMName(%q) = %q, but NPMName(%q) = %q", project, got, got, again)
		}
	})
}

func ExampleNPMName() {
	fmt.Println(registry.NPMName("MyApp"))
	fmt.Println(registry.NPMName("My Cool App!"))
	fmt.Println(registry.NPMName("my-app"))
	// Output:
	// myapp
	// my-cool-app
	// my-app
}
