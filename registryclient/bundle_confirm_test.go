package registryclient_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/cache"
	"github.com/jigkit/jig/registryserver"
)

// oneServer serves @main/tools/one@1.0.0 (one.txt holds "one\n", as in
// oneVersion) when publish is true, @main gated behind token when token
// is not "", and counts the digest index requests.
func oneServer(t *testing.T, publish bool, token string) (url string, digests *atomic.Int32) {
	t.Helper()
	objects := map[string]string{"@main/tools/other/versions.json": `{"versions":[]}`}
	if publish {
		objects = map[string]string{
			"@main/tools/one/versions.json":       `{"versions":["1.0.0"]}`,
			"@main/tools/one/1.0.0/registry.json": `{"name":"one","namespace":"@main","type":"registry:feature","version":"1.0.0","files":[{"target":"one.txt","type":"registry:file","path":"one.txt"}]}`,
			"@main/tools/one/1.0.0/one.txt":       "one\n",
		}
	}
	opts := []registryserver.Option{registryserver.WithStorage(testenv.MemoryStorage(t, objects))}
	if token != "" {
		auth, err := registryserver.ParseAuthConfig([]byte(`{"@main": [{"token": "` + token + `"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, registryserver.WithAuth(auth))
	}
	h, err := registryserver.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	digests = &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/digests") {
			digests.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, digests
}

// TestImportedBundleConfirmedOnline (issue 36, item 3): a version a bundle
// put in the cache is checked against the server's digest index before
// its first use online. A bundle whose file and digest index were changed
// together is refused (naming the bundle and 'jig cache clean') and stays
// usable offline; a version the server does not serve (absent, or gated
// without a token) is refused too; a confirmed version loses its mark, so
// later runs ask nothing.
func TestImportedBundleConfirmedOnline(t *testing.T) {
	t.Parallel()
	one := registry.MustParseID("@main/tools/one@1.0.0")
	tests := []struct {
		name        string
		content     string // of one.txt in the bundle
		publish     bool   // the server has @main/tools/one@1.0.0
		gated       bool   // @main needs a token the client lacks
		unreachable bool
		wantErr     string // "" when the online client uses it
		unpublished bool
	}{
		{name: "untampered", content: "one\n", publish: true},
		{name: "tampered", content: "evil\n", publish: true, wantErr: "its digest index differs from the one"},
		{name: "not on the server", content: "one\n", wantErr: "serves no digest index for it", unpublished: true},
		{name: "gated, no token", content: "one\n", publish: true, gated: true, wantErr: "[UNAUTHORIZED]"},
		{name: "unreachable", content: "one\n", publish: true, unreachable: true, wantErr: "nothing was used from the bundle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			token := ""
			if tt.gated {
				token = "team-tok-0123456789"
			}
			url, digests := oneServer(t, tt.publish, token)
			if tt.unreachable {
				url = "http://127.0.0.1:9"
			}
			ch, err := cache.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			offline, err := registryclient.New(url, registryclient.WithCache(ch), registryclient.WithMode(registryclient.Offline))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := offline.ImportBundle(t.Context(), readB(t, oneVersion(t, tt.content)), "/tmp/ci.jigbundle"); err != nil {
				t.Fatal(err)
			}
			online, err := registryclient.New(url, registryclient.WithCache(ch))
			if err != nil {
				t.Fatal(err)
			}
			got, err := online.File(t.Context(), one, "one.txt")
			if tt.wantErr == "" {
				if err != nil || string(got) != tt.content {
					t.Fatalf("online: got %q, %v; want %q", got, err, tt.content)
				}
				// Confirmed: a later client asks the server nothing more.
				n := digests.Load()
				later, _ := registryclient.New(url, registryclient.WithCache(ch))
				if _, err := later.File(t.Context(), one, "one.txt"); err != nil {
					t.Fatal(err)
				}
				if digests.Load() != n {
					t.Errorf("a confirmed version was checked again: %d digest requests, then %d", n, digests.Load())
				}
				return
			}
			var ie *registryclient.ImportedError
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "/tmp/ci.jigbundle") || !errors.As(err, &ie) || ie.Bundle != "/tmp/ci.jigbundle" {
				t.Fatalf("online: got %q, %v; want an ImportedError naming the bundle and %q", got, err, tt.wantErr)
			}
			var se *registryclient.StatusError
			switch {
			case tt.gated:
				if !errors.As(err, &se) || se.StatusCode != http.StatusUnauthorized {
					t.Errorf("got %#v, want the server's 401 kept (the CLI hints at the token)", err)
				}
			case !tt.unreachable && (!errors.As(err, &ie) || ie.Unpublished != tt.unpublished):
				t.Errorf("got %#v, want an ImportedError with Unpublished %v", err, tt.unpublished)
			}
			if _, err := online.Manifest(t.Context(), one); err == nil {
				t.Error("the refused version's manifest was served online")
			}
			// Offline, the bundle serves as it always did.
			if got, err := offline.File(t.Context(), one, "one.txt"); err != nil || string(got) != tt.content {
				t.Errorf("offline: got %q, %v; want %q", got, err, tt.content)
			}
		})
	}
}

// TestImportedMarkBeforeRef: the imported mark is written before the
// version's ref, so an import that cannot mark leaves no version behind
// (a stop at any point never leaves a bundle's version unmarked).
func TestImportedMarkBeforeRef(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ch, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The marks' folder cannot be made: every mark fails.
	if err := os.WriteFile(filepath.Join(dir, "imported"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := registryclient.New("http://127.0.0.1:9", registryclient.WithCache(ch), registryclient.WithMode(registryclient.Offline))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ImportBundle(t.Context(), readB(t, oneVersion(t, "one\n")), "x.bundle"); err == nil {
		t.Fatal("the import succeeded without its mark")
	}
	es, err := ch.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if strings.HasSuffix(e.Ref, "/@main/tools/one/1.0.0") {
			t.Errorf("the version's ref %s was written without its mark", e.Ref)
		}
	}
	if _, err := c.Manifest(t.Context(), registry.MustParseID("@main/tools/one@1.0.0")); err == nil {
		t.Error("the unmarked version is served")
	}
}
