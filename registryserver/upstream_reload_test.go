package registryserver_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// TestSetUpstreams (issue 36 item 15): a running mirror takes another
// upstreams file as a whole, or keeps the one in force when the new one
// would serve a namespace published here.
func TestSetUpstreams(t *testing.T) {
	t.Parallel()
	up, _ := seededUpstream(t)
	st := memory.New()
	doc := []byte(`{"versions":["1.0.0"]}`)
	if err := st.Put(t.Context(), "@local/tools/x/versions.json", bytes.NewReader(doc), int64(len(doc))); err != nil {
		t.Fatal(err)
	}
	m := newMirror(t, st, up.URL, `{"@a":"@main"}`)
	cfg := func(namespaces string) *registryserver.UpstreamConfig {
		return upstreams(t, fmt.Sprintf(`{"upstreams":[{"url":%q,"namespaces":%s}]}`, up.URL, namespaces), nil)
	}
	const b = "/registries/@b/quality/editorconfig/1.0.0"
	if r := fetch(t, m, b, ""); r.status != 404 {
		t.Fatalf("before: GET %s: %d", b, r.status)
	}
	if err := m.SetUpstreams(t.Context(), cfg(`{"@a":"@main","@b":"@main"}`)); err != nil {
		t.Fatal(err)
	}
	if r := fetch(t, m, b, ""); r.status != 200 {
		t.Fatalf("after: GET %s: %d %s", b, r.status, r.body)
	}
	if r := fetch(t, m, "/namespaces", ""); !strings.Contains(string(r.body), `"@b"`) {
		t.Errorf("/namespaces after the reload: %s", r.body)
	}
	// A file serving @local is refused; the one in force stays.
	err := m.SetUpstreams(t.Context(), cfg(`{"@local":"@main"}`))
	if err == nil || !strings.Contains(err.Error(), "@local") {
		t.Fatalf("got %v, want @local refused", err)
	}
	if r := fetch(t, m, "/registries/@a/runtimes/node/1.0.0", ""); r.status != 200 {
		t.Errorf("@a after a refused reload: %d", r.status)
	}
	if r := fetch(t, m, "/registries/@local/quality/editorconfig/1.0.0", ""); r.status != 404 {
		t.Errorf("@local after a refused reload: %d, want 404", r.status)
	}
	if err := m.SetUpstreams(t.Context(), nil); err == nil {
		t.Error("SetUpstreams(nil) was accepted")
	}
	plain, err := registryserver.New(registryserver.WithStorage(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if err := plain.SetUpstreams(t.Context(), cfg(`{"@a":"@main"}`)); err == nil {
		t.Error("SetUpstreams on a handler without upstreams was accepted")
	}
}
