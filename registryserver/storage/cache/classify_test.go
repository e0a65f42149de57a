package cache

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key  string
		want class
	}{
		{"@acme/ui/button/1.0.0/registry.json", immutable},
		{"@acme/ui/button/1.0.0/templates/a.txt", immutable},
		{"@main/runtimes/node/2.0.0-rc.1+build.5/templates/x/y.json", immutable},
		{"presets/web/1.2.0/preset.json", immutable},
		{"@acme/ui/button/versions.json", mutable},
		{"@acme/ui/versions.json", mutable},
		{"presets/web/preset.json", mutable},
		{"@acme/versions.json", uncached},       // no registry path
		{"@acme/1.0.0/registry.json", uncached}, // version without a path
		{"@acme/ui/button/1.0.0", uncached},     // the version folder itself
		{"@acme/ui/button/1.0.0/versions.json", immutable},
		{"@main/runtimes/node/2.0.0/templates/../x", uncached},
		{"@ACME/ui/1.0.0/registry.json", uncached},
		{"presets/web/1.2/preset.json", uncached},
		{"presets/Web/preset.json", uncached},
		{".publish/@acme/ui/button/1.0.0.lock", uncached},
		{".health", uncached},
		{"auth.json", uncached},
		{"", uncached},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			t.Parallel()
			if got := classify(tt.key); got != tt.want {
				t.Errorf("classify(%q) = %d, want %d", tt.key, got, tt.want)
			}
		})
	}
}

// FuzzClassify checks that only keys inside a published version (or a
// versioned preset) are ever treated as immutable, and only versions lists
// and latest presets as mutable.
func FuzzClassify(f *testing.F) {
	fh, err := os.Open("testdata/keys.txt")
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		f.Add(sc.Text())
	}
	fh.Close()
	f.Fuzz(func(t *testing.T, key string) {
		parts := strings.Split(key, "/")
		switch classify(key) {
		case immutable:
			if parts[0] == "presets" {
				if len(parts) != 4 || !registry.ValidVersion(parts[2]) || parts[3] != "preset.json" {
					t.Fatalf("classify(%q) = immutable, but it is not presets/<name>/<version>/preset.json", key)
				}
				return
			}
			if !registry.ValidNamespace(parts[0]) {
				t.Fatalf("classify(%q) = immutable without a namespace", key)
			}
			i := 1
			for i < len(parts) && registry.ValidSegment(parts[i]) {
				i++
			}
			if i < 2 || i >= len(parts)-1 || !registry.ValidVersion(parts[i]) || !registry.ValidFilePath(strings.Join(parts[i+1:], "/")) {
				t.Fatalf("classify(%q) = immutable, but it is not @ns/<path>/<version>/<file>", key)
			}
		case mutable:
			if key != "presets/"+parts[len(parts)-2]+"/preset.json" && !strings.HasSuffix(key, "/versions.json") {
				t.Fatalf("classify(%q) = mutable, but it is neither a versions list nor a latest preset", key)
			}
			for _, p := range parts {
				if registry.ValidVersion(p) {
					t.Fatalf("classify(%q) = mutable, but it is inside a version folder", key)
				}
			}
		}
	})
}
