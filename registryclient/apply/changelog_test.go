package apply

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
)

// versionedSource serves many versions of one registry, each with a
// changelog, and lists them.
type versionedSource struct {
	logs map[string]string // version -> changelog; "fail" fails the fetch
}

func (s versionedSource) Manifest(_ context.Context, id registry.ID) (*registry.Manifest, error) {
	log, ok := s.logs[id.Version]
	if !ok || log == "fail" {
		return nil, fmt.Errorf("no manifest of %s", id)
	}
	return &registry.Manifest{Name: "x", Namespace: id.Namespace, Type: registry.TypeFeature, Version: id.Version, Changelog: log}, nil
}

func (versionedSource) File(context.Context, registry.ID, string) ([]byte, error) {
	return nil, fmt.Errorf("no files")
}

func (versionedSource) Preset(context.Context, string) (*registry.Preset, error) {
	return nil, fmt.Errorf("no presets")
}

func (s versionedSource) Versions(context.Context, registry.ID) ([]string, error) {
	var vs []string
	for v := range s.logs {
		vs = append(vs, v)
	}
	registry.SortVersions(vs)
	return vs, nil
}

func TestEngineChangelog(t *testing.T) {
	t.Parallel()
	src := versionedSource{logs: map[string]string{
		"1.0.0": "first", "1.1.0": "- added", "1.2.0": "", "1.3.0": "fail",
		"2.0.0": strings.Repeat("é", registry.MaxChangelog), "3.0.0": "later",
	}}
	eng, err := New(src)
	if err != nil {
		t.Fatal(err)
	}
	id := registry.ID{Namespace: "@main", Path: "features/x"}
	got, err := eng.Changelog(t.Context(), id, "1.0.0", "2.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Version != "2.0.0" || got[1] != (registry.ChangelogEntry{Version: "1.1.0", Text: "- added"}) {
		t.Fatalf("got %+v, want 2.0.0 then 1.1.0", got)
	}
	if len(got[0].Text) > registry.MaxChangelog || !strings.HasSuffix(got[0].Text, "…") {
		t.Errorf("got a %d-byte entry, want it cut to %d bytes", len(got[0].Text), registry.MaxChangelog)
	}

	many := versionedSource{logs: map[string]string{}}
	for i := range 50 {
		many.logs[fmt.Sprintf("1.0.%d", i)] = fmt.Sprintf("v%d", i)
	}
	eng, _ = New(many)
	got, err = eng.Changelog(t.Context(), id, "1.0.0", "1.0.49")
	if err != nil {
		t.Fatal(err)
	}
	var vs []string
	for _, e := range got {
		vs = append(vs, e.Version)
	}
	want := []string{}
	for i := 49; i > 49-registry.MaxChangelogEntries; i-- {
		want = append(want, fmt.Sprintf("1.0.%d", i))
	}
	if diff := cmp.Diff(want, vs); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
}
