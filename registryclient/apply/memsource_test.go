package apply

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
)

// memSource is an in-memory [Source] for tests: manifests by key (one
// version each), package files by "key@version/path", presets by name.
type memSource struct {
	manifests map[string]*registry.Manifest
	files     map[string][]byte
	presets   map[string]*registry.Preset
	failFile  int64 // fail the Nth file request (1-based); 0: never
	fileCalls atomic.Int64
	mu        sync.Mutex
	requests  []string
}

func newMemSource() *memSource {
	return &memSource{manifests: map[string]*registry.Manifest{}, files: map[string][]byte{}, presets: map[string]*registry.Preset{}}
}

// add registers a manifest under @ns/path with its package files.
func (s *memSource) add(key string, m *registry.Manifest, files map[string]string) {
	s.manifests[key] = m
	for p, c := range files {
		s.files[key+"@"+m.Version+"/"+p] = []byte(c)
	}
}

func (s *memSource) log(r string) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.mu.Unlock()
}

func (s *memSource) Manifest(_ context.Context, id registry.ID) (*registry.Manifest, error) {
	s.log("manifest " + id.String())
	m, ok := s.manifests[id.Key()]
	if !ok || (id.Version != "" && id.Version != m.Version) {
		return nil, fmt.Errorf("registry not found: %s", id)
	}
	c := *m
	return &c, nil
}

func (s *memSource) File(_ context.Context, id registry.ID, path string) ([]byte, error) {
	n := s.fileCalls.Add(1)
	s.log("file " + id.String() + "/" + path)
	if s.failFile > 0 && n == s.failFile {
		return nil, fmt.Errorf("HTTP 500 for file %s", path)
	}
	b, ok := s.files[id.Key()+"@"+id.Version+"/"+path]
	if !ok {
		return nil, fmt.Errorf("template file not found: %s of %s", path, id)
	}
	return b, nil
}

func (s *memSource) Preset(_ context.Context, name string) (*registry.Preset, error) {
	s.log("preset " + name)
	p, ok := s.presets[name]
	if !ok {
		return nil, fmt.Errorf("preset not found: %s", name)
	}
	return p, nil
}

func strp(s string) *string { return &s }

func assertSame(t *testing.T, before, after map[string]string) {
	t.Helper()
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("project changed (-before +after):\n%s", diff)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func keys[M ~map[string]V, V any](m M) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
