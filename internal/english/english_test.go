package english_test

import (
	"fmt"
	"testing"

	"github.com/jigkit/jig/internal/english"
)

func TestCount(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		n    int
		want string
	}{{0, "0 files"}, {1, "1 file"}, {2, "2 files"}, {-1, "-1 files"}} {
		if got := english.Count(tt.n, "file", "files"); got != tt.want {
			t.Errorf("Count(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func ExampleCount() {
	fmt.Println(english.Count(1, "registry", "registries"))
	fmt.Println(english.Count(3, "registry", "registries"))
	// Output:
	// 1 registry
	// 3 registries
}
