package registryclient_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/impact"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// impactManifest is the registry.json of TestImpactDownloadsChangedFiles'
// registry: files names its files[] entries.
func impactManifest(version, files string) string {
	return `{"name":"cmp","namespace":"@acme","type":"registry:feature","version":"` + version + `","priority":4,"files":[` + files + `]}`
}

// TestImpactDownloadsChangedFiles: Impact reads from the server only the
// files of the previous version that no file of the new package has the
// digest of, and reports what a comparison with every file downloaded
// reports. Without a digest index (a reference server) it downloads them
// all, as before.
func TestImpactDownloadsChangedFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		noIndex   bool
		wantFiles []string // the previous version's files downloaded
	}{
		// cfg.json changed; c.txt's content moved to d.txt (a rename,
		// which the hint pairs by content); m1 and m2 changed, though
		// the target they merge into did not.
		{name: "digest index", wantFiles: []string{"templates/cfg.json", "templates/m1.txt", "templates/m2.txt"}},
		{name: "no digest index", noIndex: true, wantFiles: []string{"templates/cfg.json", "templates/b.txt", "templates/c.txt", "templates/m1.txt", "templates/m2.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var fetched []string
			a, err := registryserver.ParseAuthConfig([]byte(`{"@acme":[{"token":"` + pubPublishTok + `","publish":true}]}`))
			if err != nil {
				t.Fatal(err)
			}
			h, err := registryserver.New(registryserver.WithStorage(memory.New()), registryserver.WithAuth(a))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.noIndex && strings.HasSuffix(r.URL.Path, "/digests") {
					http.NotFound(w, r)
					return
				}
				if _, file, ok := strings.Cut(r.URL.Path, "/1.0.0/files/"); ok {
					mu.Lock()
					fetched = append(fetched, file)
					mu.Unlock()
				}
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(func() { srv.Close(); _ = h.Close() })
			cl, err := registryclient.New(srv.URL, registryclient.WithToken(pubPublishTok))
			if err != nil {
				t.Fatal(err)
			}

			old := t.TempDir()
			testenv.WriteFiles(t, old, map[string]string{
				"registry.json": impactManifest("1.0.0", `{"target":"cfg.json","type":"registry:config","path":"templates/cfg.json"},
					{"target":"b.txt","type":"registry:docs","path":"templates/b.txt"},
					{"target":"c.txt","type":"registry:docs","path":"templates/c.txt"},
					{"target":"merged.txt","type":"registry:docs","path":"templates/m1.txt"},
					{"target":"merged.txt","type":"registry:docs","path":"templates/m2.txt"}`),
				"templates/cfg.json": `{"x":1,"y":2}`,
				"templates/b.txt":    "same\n",
				"templates/c.txt":    "moved\n",
				"templates/m1.txt":   "p\x00q",
				"templates/m2.txt":   "r",
			})
			if _, err := cl.Publish(t.Context(), old); err != nil {
				t.Fatal(err)
			}
			next := t.TempDir()
			testenv.WriteFiles(t, next, map[string]string{
				"registry.json": impactManifest("1.0.1", `{"target":"cfg.json","type":"registry:config","path":"templates/cfg.json"},
					{"target":"b.txt","type":"registry:docs","path":"templates/b.txt"},
					{"target":"d.txt","type":"registry:docs","path":"templates/d.txt"},
					{"target":"merged.txt","type":"registry:docs","path":"templates/m1.txt"},
					{"target":"merged.txt","type":"registry:docs","path":"templates/m2.txt"}`),
				"templates/cfg.json": `{"x":1,"y":3,"z":4}`,
				"templates/b.txt":    "same\n",
				"templates/d.txt":    "moved\n",
				"templates/m1.txt":   "p",
				"templates/m2.txt":   "q\x00r",
			})
			pkg, err := registryclient.OpenPackage(next)
			if err != nil {
				t.Fatal(err)
			}
			got, err := cl.Impact(t.Context(), pkg)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			if diff := cmp.Diff(tc.wantFiles, fetched); diff != "" {
				t.Errorf("files of 1.0.0 downloaded (-want +got):\n%s", diff)
			}
			mu.Unlock()

			// What a comparison with every file downloaded says.
			full, err := registryclient.New(srv.URL, registryclient.WithToken(pubPublishTok))
			if err != nil {
				t.Fatal(err)
			}
			oldRel, err := full.Release(t.Context(), registry.MustParseID("@acme/features/cmp@1.0.0"))
			if err != nil {
				t.Fatal(err)
			}
			nextRel, err := pkg.Release()
			if err != nil {
				t.Fatal(err)
			}
			want := impact.Compare(oldRel, nextRel)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("report (-full download +Impact):\n%s", diff)
			}
			// The changes this registry was built to show.
			if got.OK || got.Level != impact.Major || got.Migration == nil {
				t.Errorf("report %+v: want an under-bumped major change with a rename hint", got)
			} else if diff := cmp.Diff([]impact.RenameStep{{Type: "rename", From: "c.txt", To: "d.txt"}}, got.Migration.Steps); diff != "" {
				t.Errorf("rename hint (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPackageRelease: the release of a package OpenPackage read is what
// reading its archive again gives, and follows Data when it is replaced.
func TestPackageRelease(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{
		"registry.json": impactManifest("1.0.0", `{"target":"a.txt","type":"registry:docs","path":"templates/a.txt"},
			{"target":"b.txt","type":"registry:docs","path":"./templates/b.txt"}`),
		"templates/a.txt": "a\n",
		"templates/b.txt": "b\n",
	})
	pkg, err := registryclient.OpenPackage(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pkg.Release()
	if err != nil {
		t.Fatal(err)
	}
	// A Package built by hand has nothing read: its archive is read.
	want, err := (&registryclient.Package{Manifest: pkg.Manifest, Data: pkg.Data}).Release()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Files, got.Files); diff != "" || len(got.Files) != 2 {
		t.Errorf("release files (-read again +as opened):\n%s", diff)
	}
	if string(got.Raw) != string(want.Raw) || len(got.Raw) == 0 {
		t.Errorf("release registry.json %q, want %q", got.Raw, want.Raw)
	}
	if got.Manifest != pkg.Manifest {
		t.Errorf("release manifest is not the package's")
	}

	other := t.TempDir()
	testenv.WriteFiles(t, other, map[string]string{
		"registry.json":   impactManifest("1.0.0", `{"target":"a.txt","type":"registry:docs","path":"templates/a.txt"}`),
		"templates/a.txt": "other\n",
	})
	opkg, err := registryclient.OpenPackage(other)
	if err != nil {
		t.Fatal(err)
	}
	pkg.Data = opkg.Data
	got, err = pkg.Release()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]byte{"templates/a.txt": []byte("other\n")}, got.Files); diff != "" {
		t.Errorf("release after Data was replaced (-want +got):\n%s", diff)
	}
}
