package regtest_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
	"github.com/jigkit/jig/registryclient/regtest"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/catalog"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// catalogSources starts a real jig-server over memory storage seeded with
// the starter catalog and returns sources that read @main and @presets
// from it.
func catalogSources(t *testing.T) *registryclient.Sources {
	t.Helper()
	st := memory.New()
	if _, err := catalog.Seed(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithRateLimit(1<<30, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		_ = h.Close()
	})
	doc := fmt.Sprintf(`{"registries":{"@main":%q,"@presets":%q}}`, srv.URL, srv.URL)
	cfg, err := rcfile.Parse(filepath.Join(t.TempDir(), "jigrc"), []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Sources()
}

// write lays out files (path -> content) under a new directory.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func statuses(rep *regtest.Report) string {
	var b strings.Builder
	for _, c := range rep.Checks {
		fmt.Fprintf(&b, "%s %s\n", c.Status, c.Name)
	}
	return b.String()
}

// Every registry of the starter catalog passes, in every language and
// inside every preset that lists it.
func TestCatalogPasses(t *testing.T) {
	t.Parallel()
	src := catalogSources(t)
	root, err := filepath.Abs("../../registryserver/catalog/data")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range catalog.Registries() {
		t.Run(key, func(t *testing.T) {
			dir := filepath.Join(root, filepath.FromSlash(key), "1.0.0")
			rep, err := regtest.Run(t.Context(), dir, regtest.Options{Sources: src, TempDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Failed() > 0 {
				t.Errorf("got failures %v", rep.Failures())
			}
			if !strings.Contains(statuses(rep), "pass render in @presets/") {
				t.Errorf("got checks\n%s\nwant a render inside a preset", statuses(rep))
			}
		})
	}
}

// A broken registry fails with one check per problem, each saying what
// is wrong.
func TestBrokenRegistryFails(t *testing.T) {
	t.Parallel()
	src := catalogSources(t)
	dir := write(t, map[string]string{
		// editorconfig 1.0.1 drops .editorconfig (a major change) and
		// depends on a registry that does not exist.
		"registry.json": `{"name":"editorconfig","namespace":"@main","type":"registry:quality","version":"1.0.1","priority":5,
 "registryDependencies":["@main/quality/nope"],
 "files":[{"target":"a.txt","type":"registry:docs","content":"a"}]}`,
	})
	rep, err := regtest.Run(t.Context(), dir, regtest.Options{Sources: src, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"render :ts":    "@main/quality/nope",
		"semver impact": "1.0.1 removes file .editorconfig (templates/editorconfig) (major change)",
	}
	for _, f := range rep.Failures() {
		if w, ok := want[f.Name]; ok {
			if !strings.Contains(f.Detail, w) {
				t.Errorf("check %s: got %q, want it to contain %q", f.Name, f.Detail, w)
			}
			delete(want, f.Name)
		}
	}
	for name := range want {
		t.Errorf("got no failure of %s; checks:\n%s", name, statuses(rep))
	}
}

// A directory whose declared file is a symbolic link out of it fails the
// package check, and nothing else runs.
func TestSymlinkOutOfDirectory(t *testing.T) {
	t.Parallel()
	outside := write(t, map[string]string{"secret.txt": "secret"})
	dir := write(t, map[string]string{
		"registry.json": `{"name":"s","namespace":"@main","type":"registry:feature","version":"1.0.0","priority":4,
 "files":[{"target":"s.txt","type":"registry:docs","path":"templates/s.txt"}]}`,
	})
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "templates", "s.txt")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	rep, err := regtest.Run(t.Context(), dir, regtest.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Checks) != 1 || rep.Checks[0].Status != regtest.Fail || !strings.Contains(rep.Checks[0].Detail, "templates/s.txt is not a regular file") {
		t.Errorf("got checks %v, want one failed package check naming templates/s.txt", rep.Checks)
	}
	// registry.json itself as a link out of the directory.
	dir2 := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "registry.json"), []byte(`{"name":"s","namespace":"@main","type":"registry:feature","version":"1.0.0","priority":4}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "registry.json"), filepath.Join(dir2, "registry.json")); err != nil {
		t.Fatal(err)
	}
	rep, err = regtest.Run(t.Context(), dir2, regtest.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() != 1 || rep.Checks[0].Name != "package" {
		t.Errorf("got checks %v, want a failed package check", rep.Checks)
	}
}

// Offline (no sources), a registry without dependencies still renders;
// the checks that need a server are skipped with a note, not passed.
func TestOffline(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"registry.json": `{"name":"x","namespace":"@main","type":"registry:feature","version":"1.0.0","priority":4,
 "test":["true"],
 "files":[{"target":"x.txt","type":"registry:docs","content":"x"}]}`,
	})
	rep, err := regtest.Run(t.Context(), dir, regtest.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	want := "pass package\npass render :ts\nskip presets\nskip update from the previous version\nskip test commands\n"
	if got := statuses(rep); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, c := range rep.Checks {
		if c.Status == regtest.Skip && !strings.Contains(c.Detail, "offline") && !strings.Contains(c.Detail, "--run") {
			t.Errorf("skipped %s without saying why: %q", c.Name, c.Detail)
		}
	}
}

// With Run, the test commands run in each project: a failing one fails
// with its output.
func TestRunCommands(t *testing.T) {
	t.Parallel()
	dir := write(t, map[string]string{
		"registry.json": `{"name":"x","namespace":"@main","type":"registry:feature","version":"1.0.0","priority":4,
 "defaultLanguage":"ts","languages":{"js":{"files":[{"target":"x.js","type":"registry:lib","content":"x"}]}},
 "test":["test -f x.txt","echo broken >&2; exit 3"],
 "files":[{"target":"x.txt","type":"registry:docs","content":"x"}]}`,
	})
	rep, err := regtest.Run(t.Context(), dir, regtest.Options{Run: true, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	want := "pass package\npass render :ts\npass test :ts: test -f x.txt\nfail test :ts: echo broken >&2; exit 3\n" +
		"pass render :js\npass test :js: test -f x.txt\nfail test :js: echo broken >&2; exit 3\n" +
		"skip presets\nskip update from the previous version\n"
	if got := statuses(rep); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, f := range rep.Failures() {
		if !strings.Contains(f.Detail, "exit status 3\nbroken") {
			t.Errorf("got %q, want the exit status and the output", f.Detail)
		}
	}
}
