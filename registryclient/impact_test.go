package registryclient_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryclient"
)

// impactManifest is the registry.json of TestImpactDownloadsChangedFiles'
// registry: files names its files[] entries.
func impactManifest(version, files string) string {
	return `{"name":"cmp","namespace":"@acme","type":"registry:feature","version":"` + version + `","priority":4,"files":[` + files + `]}`
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
