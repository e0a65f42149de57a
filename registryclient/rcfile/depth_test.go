package rcfile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// TestJSONDepthCapped: an rc file nested beyond registry.MaxJSONDepth is
// refused, naming the file and the limit.
func TestJSONDepthCapped(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"a":`, registry.MaxJSONDepth) + "{}" + strings.Repeat("}", registry.MaxJSONDepth)
	_, err := rcfile.Parse("/home/u/.jigrc", []byte(`{"registries":{},"x":`+deep+`}`))
	if !errors.Is(err, registry.ErrJSONTooDeep) || !errors.Is(err, registryclient.ErrInvalidConfig) {
		t.Fatalf("got %v, want ErrInvalidConfig wrapping ErrJSONTooDeep", err)
	}
	for _, want := range []string{"/home/u/.jigrc", "64 levels"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not contain %q", err, want)
		}
	}
}
