package registryclient_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// withoutSearch makes a jig server look like the reference server, which
// has no GET /search and no GET /presets listing: they answer Fastify's
// 404.
func withoutSearch(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/search" || r.URL.Path == "/presets" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"Route GET:` + r.URL.Path + ` not found","error":"Not Found","statusCode":404}`))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func hitIDs(hits []search.Hit) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, h.ID()+"@"+h.Version+" "+string(h.Match))
	}
	return out
}

// TestSearchFallback: a server without /search is searched from listings
// and manifests with the same results as the server's own search.
func TestSearchFallback(t *testing.T) {
	t.Parallel()
	jig := newRegistry(t, nil)
	ref := newRegistry(t, withoutSearch)
	queries := []search.Query{
		{Text: "node"}, {Text: "lint"}, {Text: "runtime"}, {}, {Text: "no-such-thing"},
		{Namespace: "@team"}, {Text: "tools/"}, {Limit: 1}, {Type: "runtime", Limit: 2},
	}
	for _, token := range []string{"", teamToken, adminToken} {
		for _, q := range queries {
			c1, err := registryclient.New(jig.URL, registryclient.WithToken(token))
			if err != nil {
				t.Fatal(err)
			}
			c2, _ := registryclient.New(ref.URL, registryclient.WithToken(token))
			want, err := c1.Search(t.Context(), q)
			if err != nil {
				t.Fatalf("jig %+v: %v", q, err)
			}
			got, err := c2.Search(t.Context(), q)
			if err != nil {
				t.Fatalf("fallback %+v: %v", q, err)
			}
			if want.Fallback || !got.Fallback || got.Truncated {
				t.Errorf("%+v: got Fallback %v/%v Truncated %v", q, want.Fallback, got.Fallback, got.Truncated)
			}
			if diff := cmp.Diff(want.Page, got.Page); diff != "" {
				t.Errorf("token %q query %+v: fallback differs from /search (-server +fallback):\n%s", token, q, diff)
			}
		}
	}
	// The bound: one manifest at most, name matches first.
	c, _ := registryclient.New(ref.URL, registryclient.WithToken(adminToken), registryclient.WithSearchFallback(1, 1))
	res, err := c.Search(t.Context(), search.Query{Text: "lint"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated {
		t.Error("Truncated: got false, want true")
	}
	if diff := cmp.Diff([]string{"@team/tools/lint@2.0.0 exact"}, hitIDs(res.Results)); diff != "" {
		t.Errorf("bounded fallback (-want +got):\n%s", diff)
	}
}

func TestSearchErrors(t *testing.T) {
	t.Parallel()
	srv := newRegistry(t, nil)
	c, _ := registryclient.New(srv.URL)
	if _, err := c.Search(t.Context(), search.Query{Limit: 1000}); !errors.Is(err, search.ErrInvalidQuery) {
		t.Errorf("bad limit: got %v, want ErrInvalidQuery", err)
	}
	if _, err := registryclient.New(srv.URL, registryclient.WithSearchFallback(0, 1)); err == nil {
		t.Error("WithSearchFallback(0, 1): got nil error")
	}
}

func TestPresets(t *testing.T) {
	t.Parallel()
	c, _ := registryclient.New(newRegistry(t, nil).URL)
	got, err := c.Presets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []search.Preset{{Name: "node", Version: "1.0.0", Registries: []string{"@main/runtimes/node"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	ref, _ := registryclient.New(newRegistry(t, withoutSearch).URL)
	_, err = ref.Presets(t.Context())
	var ns *registryclient.NotSupportedError
	if !errors.Is(err, registryclient.ErrNotSupported) || !errors.As(err, &ns) || ns.Route != "/presets" || ns.URL != ref.BaseURL() {
		t.Errorf("reference: got %v, want a NotSupportedError for /presets", err)
	}
}

func TestInfo(t *testing.T) {
	t.Parallel()
	c, _ := registryclient.New(newRegistry(t, nil).URL, registryclient.WithToken(teamToken))
	tests := []struct {
		id               string
		version, latest  string
		ref              string
		versions         []string
		wantErrNotFound  bool
		wantErrForbidden bool
	}{
		{id: "@main/runtimes/node", version: "1.1.0", latest: "1.1.0", versions: []string{"1.1.0", "1.0.0"},
			ref: "@main/runtimes/node"},
		{id: "@main/runtimes/node@1.0.0", version: "1.0.0", latest: "1.1.0", versions: []string{"1.1.0", "1.0.0"},
			ref: "@main/runtimes/node@1.0.0"},
		{id: "@team/tools/lint", version: "2.0.0", latest: "2.0.0", versions: []string{"2.0.0"},
			ref: "@team/tools/lint"},
		{id: "@main/runtimes/nope", wantErrNotFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			id, err := registry.ParseID(tt.id)
			if err != nil {
				t.Fatal(err)
			}
			info, err := c.Info(t.Context(), id)
			if tt.wantErrNotFound {
				if !errors.Is(err, registryclient.ErrNotFound) {
					t.Fatalf("got %v, want ErrNotFound", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []string{info.Version, info.Latest, info.Ref(), info.Manifest.Version}
			want := []string{tt.version, tt.latest, tt.ref, tt.version}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.versions, info.Versions); diff != "" {
				t.Errorf("versions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSourcesSearch: every configured source is searched once, hits are
// kept from the source their namespace is configured to, and one failing
// source does not fail the search.
func TestSourcesSearch(t *testing.T) {
	t.Parallel()
	a := newRegistry(t, nil)
	b := newRegistry(t, withoutSearch)
	cfg, err := rcfile.Parse("rc", []byte(`{"registries":{
		"@main": "`+a.URL+`",
		"@presets": "`+a.URL+`",
		"@team": {"url": "`+b.URL+`", "token": "`+teamToken+`"},
		"@down": "http://127.0.0.1:1"
	}}`))
	if err != nil {
		t.Fatal(err)
	}
	src := cfg.Sources(registryclient.WithRetry(0, 0))
	res, err := src.Search(t.Context(), search.Query{Text: "lint node"})
	if err != nil {
		t.Fatal(err)
	}
	res2, err := src.Search(t.Context(), search.Query{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"@main/runtimes/node@1.1.0 all", "@team/tools/lint@2.0.0 all"}
	if diff := cmp.Diff(want, hitIDs(res2.Results)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(res.Results) != 0 {
		t.Errorf("two words that no single registry has: got %v", hitIDs(res.Results))
	}
	var failed, fallback int
	for _, s := range res2.Sources {
		if s.Err != nil {
			failed++
		}
		if s.Fallback {
			fallback++
		}
	}
	if len(res2.Sources) != 3 || failed != 1 || fallback != 1 {
		t.Errorf("sources: got %+v, want 3 with one failed and one fallback", res2.Sources)
	}
	if _, err := src.Search(t.Context(), search.Query{Namespace: "@down"}); err == nil {
		t.Error("only source down: got nil error")
	}
}
