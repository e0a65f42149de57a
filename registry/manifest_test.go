package registry_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
)

// TestManifestNames: names come in document order; a language block's new
// names follow the top level's.
func TestManifestNames(t *testing.T) {
	t.Parallel()
	m, err := registry.ParseManifest([]byte(`{"name":"x","version":"1.0.0","type":"registry:feature",
		"dependencies":{"zod":"1","alpha":"1"},
		"devDependencies":{"typescript":"1"},
		"scripts":{"lint":"eslint","build":"tsc"},
		"languages":{"ts":{"devDependencies":{"tsx":"1","typescript":"2","@types/node":"1"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"zod", "alpha"}, m.Names(registry.FieldDependencies)); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"lint", "build"}, m.Names(registry.FieldScripts)); diff != "" {
		t.Errorf("scripts (-want +got):\n%s", diff)
	}
	ts := m.ForLanguage(registry.LangTS)
	if diff := cmp.Diff([]string{"typescript", "tsx", "@types/node"}, ts.Names(registry.FieldDevDependencies)); diff != "" {
		t.Errorf("ts devDependencies (-want +got):\n%s", diff)
	}
	// A name written twice keeps its first place. Of a field written
	// twice the last gives the order; names only the first has (its
	// values stay, as json.Unmarshal merges the two) follow, sorted.
	dup, err := registry.ParseManifest([]byte(`{"name":"x","version":"1.0.0","type":"registry:feature",
		"dependencies":{"a":"1"},
		"dependencies":{"b":"1","c":"1","b":"2"},
		"languages":{"ts":{"dependencies":{"z":"1"}},"ts":{"dependencies":{"y":"1","b":"1"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b", "c", "a"}, dup.Names(registry.FieldDependencies)); diff != "" {
		t.Errorf("repeated keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b", "c", "y", "a"}, dup.ForLanguage(registry.LangTS).Names(registry.FieldDependencies)); diff != "" {
		t.Errorf("repeated language block (-want +got):\n%s", diff)
	}
	built := &registry.Manifest{Scripts: map[string]string{"b": "1", "a": "2"}}
	if diff := cmp.Diff([]string{"a", "b"}, built.Names(registry.FieldScripts)); diff != "" {
		t.Errorf("a manifest built in code (-want +got):\n%s", diff)
	}
}
