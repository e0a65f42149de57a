package registryclient

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestNewSources(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		entries map[string]Entry
		want    string // substring of the error; "" for success
	}{
		{"empty", nil, ""},
		{"one", map[string]Entry{"@main": {URL: "https://registry.example.com/"}}, ""},
		{"token and headers", map[string]Entry{"@company": {URL: "http://127.0.0.1:8080", Token: "t", Headers: map[string]string{"X-Team": "web"}}}, ""},
		{"no at", map[string]Entry{"main": {URL: "https://r.example.com"}}, `registry "main"`},
		{"upper case", map[string]Entry{"@Main": {URL: "https://r.example.com"}}, `registry "@Main"`},
		{"no url", map[string]Entry{"@main": {}}, "registry @main has no url"},
		{"relative url", map[string]Entry{"@main": {URL: "r.example.com"}}, "registry @main: registry URL"},
		{"variable not expanded", map[string]Entry{"@main": {URL: "${REGISTRY_URL}"}}, "registry @main: registry URL"},
		{"query", map[string]Entry{"@main": {URL: "https://r.example.com/?a=1"}}, "must not have a query"},
		{"bad header", map[string]Entry{"@main": {URL: "https://r.example.com", Headers: map[string]string{"X Team": "web"}}}, `invalid header "X Team"`},
		{"token line break", map[string]Entry{"@main": {URL: "https://r.example.com", Token: "a\nb"}}, "token"},
		{"default namespace", map[string]Entry{"@presets": {URL: "https://r.example.com", DefaultNamespace: "@rack"}}, ""},
		{"default namespace presets", map[string]Entry{"@presets": {URL: "https://r.example.com", DefaultNamespace: "@presets"}}, `defaultNamespace "@presets"`},
		{"default namespace without at", map[string]Entry{"@presets": {URL: "https://r.example.com", DefaultNamespace: "rack"}}, `defaultNamespace "rack"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := NewSources(tc.entries)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("got %v (sources %v), want an ErrInvalidConfig containing %q", err, s, tc.want)
			}
			if strings.Contains(err.Error(), "registryclient:") || strings.Contains(err.Error(), "a\nb") {
				t.Errorf("error %q has a package prefix or the token", err)
			}
		})
	}
}

// TestNewSourcesOnlyGiven checks that sources from Go values have no
// built-in namespaces, do not read the environment and do not share the
// caller's header map.
func TestNewSourcesOnlyGiven(t *testing.T) {
	t.Setenv("JIG_REGISTRY_URL", "http://127.0.0.1:1")
	t.Setenv("JIG_TEST_TOKEN", "from-env")
	h := map[string]string{"X-Team": "web"}
	s, err := NewSources(map[string]Entry{"@company": {URL: "https://r.example.com", Token: "${JIG_TEST_TOKEN}", Headers: h}})
	if err != nil {
		t.Fatal(err)
	}
	h["X-Team"] = "changed"
	if got := s.r.List(); !slices.Equal(got, []string{"@company"}) {
		t.Errorf("namespaces %v, want [@company]", got)
	}
	for _, ns := range []string{"@main", "@presets"} {
		if _, err := s.Client(ns); !errors.Is(err, ErrNotConfigured) {
			t.Errorf("%s: got %v, want ErrNotConfigured", ns, err)
		}
	}
	e, err := s.r.Resolve("@company")
	if err != nil {
		t.Fatal(err)
	}
	if e.Token != "${JIG_TEST_TOKEN}" || e.Headers["X-Team"] != "web" {
		t.Errorf("entry %+v: want the token as given and the header as it was", e)
	}
}
