package registryclient_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
)

func deepJSON(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1)
}

// TestJSONDepthCapped: every server answer the client decodes is refused beyond registry.MaxJSONDepth, naming what was read.
func TestJSONDepthCapped(t *testing.T) {
	t.Parallel()
	deep := deepJSON(registry.MaxJSONDepth + 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/namespaces":
			_, _ = w.Write([]byte(`{"namespaces":["@main"],"x":` + deep + `}`))
		case "/registries/@main/runtimes/node":
			_, _ = w.Write([]byte(`{"name":"node","namespace":"@main","type":"registry:runtime","version":"1.0.0","x":` + deep + `}`))
		case "/presets/node":
			_, _ = w.Write([]byte(`{"name":"node","version":"1.0.0","registries":["runtimes/node"],"x":` + deep + `}`))
		case "/health":
			_, _ = w.Write([]byte(`{"status":"ok","x":` + deep + `}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := registryclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	id, err := registry.ParseID("@main/runtimes/node")
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"namespaces": func() error { _, err := c.Namespaces(t.Context()); return err },
		"manifest":   func() error { _, err := c.Manifest(t.Context(), id); return err },
		"preset":     func() error { _, err := c.Preset(t.Context(), "node"); return err },
		"health":     func() error { _, err := c.Health(t.Context()); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := call()
			if !errors.Is(err, registry.ErrJSONTooDeep) {
				t.Fatalf("got %v, want an error wrapping ErrJSONTooDeep", err)
			}
			if !strings.Contains(err.Error(), "64 levels") {
				t.Errorf("message %q does not give the limit", err)
			}
		})
	}
}
