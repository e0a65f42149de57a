package publish_test

import (
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// The signatures document is stored with the version; an expected digest
// index that the stored files do not match commits nothing.
func TestPublishSignaturesAndIndex(t *testing.T) {
	t.Parallel()
	mem := memory.New()
	s := publish.New(mem)
	v := version("1.0.0", "x")
	v.Index = &registry.DigestIndex{Namespace: "@acme", Path: "features/ui-kit", Version: "1.0.0", Manifest: registry.Digest(v.Manifest),
		Files: map[string]string{"templates/a.txt": registry.Digest([]byte("templates/a.txt:x")), "b.json": registry.Digest([]byte("b.json:x"))}}
	v.Signatures = []byte(`{"signatures":[]}`)
	if err := s.Publish(t.Context(), v, files("x")); err != nil {
		t.Fatal(err)
	}
	if got := get(t, mem, layout.Signatures("@acme", "features/ui-kit", "1.0.0")); got != string(v.Signatures) {
		t.Errorf("stored signatures %q, want %q", got, v.Signatures)
	}

	w := version("2.0.0", "y")
	w.Index = &registry.DigestIndex{Namespace: "@acme", Path: "features/ui-kit", Version: "2.0.0", Manifest: registry.Digest(w.Manifest),
		Files: map[string]string{"templates/a.txt": registry.Digest([]byte("other")), "b.json": registry.Digest([]byte("b.json:y"))}}
	w.Signatures = []byte(`{"signatures":[]}`)
	if err := s.Publish(t.Context(), w, files("y")); err == nil {
		t.Fatal("a publish whose files differ from its digest index succeeded")
	}
	keys, err := mem.List(t.Context(), layout.VersionDir("@acme", "features/ui-kit", "2.0.0"))
	if err != nil || len(keys) != 0 {
		t.Errorf("after the refused publish: %q, %v; want nothing", keys, err)
	}
}
