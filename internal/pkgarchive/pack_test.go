package pkgarchive_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/internal/pkgarchive"
	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
)

// readBack reads an archive back with Walk: its regular files in archive
// order, with their content.
func readBack(t *testing.T, data []byte) ([]string, map[string]string) {
	t.Helper()
	var names []string
	content := map[string]string{}
	err := pkgarchive.Walk(bytes.NewReader(data), pkgarchive.Limits{}, func(string) bool { return true },
		func(name string, _ int64, body io.Reader) error {
			b, err := io.ReadAll(body)
			names = append(names, name)
			content[name] = string(b)
			return err
		})
	if err != nil {
		t.Fatal(err)
	}
	return names, content
}

func TestPack(t *testing.T) {
	t.Parallel()
	dir := pt.WriteRegistry(t, "1.0.0")
	var a, b bytes.Buffer
	m, files, err := pkgarchive.Pack(&a, dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "ui-kit" || m.Namespace != "@acme" {
		t.Errorf("got manifest %s %s, want ui-kit @acme", m.Name, m.Namespace)
	}
	want := []string{"registry.json", "templates/button.ts", "templates/gitignore"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("packed files (-want +got):\n%s", diff)
	}
	names, content := readBack(t, a.Bytes())
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("archive entries (-want +got):\n%s", diff)
	}
	if content["templates/gitignore"] != "dist\n" {
		t.Errorf("templates/gitignore = %q", content["templates/gitignore"])
	}
	// What Pack writes passes every check of an upload.
	if _, _, err := pkgarchive.Inspect(a.Bytes(), pkgarchive.Limits{}); err != nil {
		t.Errorf("Inspect of a packed registry: %v", err)
	}
	// Touch the files: the archive must not change.
	for _, f := range want {
		p := filepath.Join(dir, f)
		data, _ := os.ReadFile(p)
		_ = os.Remove(p)
		_ = os.WriteFile(p, data, 0o600)
	}
	if _, _, err := pkgarchive.Pack(&b, dir); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("packing the same directory twice gave different bytes")
	}
	// PackBytes packs the same bytes into memory.
	data, m2, files2, err := pkgarchive.PackBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), data) || m2.Name != m.Name || !slices.Equal(files, files2) {
		t.Errorf("PackBytes gave %d bytes and files %v; Pack %d bytes and %v", len(data), files2, a.Len(), files)
	}
	if _, _, _, err := pkgarchive.PackBytes(filepath.Join(dir, "missing")); !errors.Is(err, pkgarchive.ErrInvalidPackage) {
		t.Errorf("PackBytes of a missing folder: got %v, want ErrInvalidPackage", err)
	}
}

// TestPackBytesIncompressible: content gzip cannot shrink still packs
// whole into the buffer PackBytes sizes from the files.
func TestPackBytesIncompressible(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var decl []string
	files := map[string][]byte{}
	for i := range 20 {
		p := fmt.Sprintf("bin/b%02d", i)
		b := make([]byte, 70<<10+i)
		_, _ = rand.Read(b)
		files[p] = b
		testenv.WriteFiles(t, dir, map[string]string{p: string(b)})
		decl = append(decl, fmt.Sprintf(`{"target":%q,"type":"registry:asset","path":%q}`, p, p))
	}
	manifest := `{"name":"ui-kit","namespace":"@acme","type":"registry:feature","version":"1.0.0","priority":4,"files":[` + strings.Join(decl, ",") + `]}`
	testenv.WriteFiles(t, dir, map[string]string{"registry.json": manifest})
	data, _, _, err := pkgarchive.PackBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := pkgarchive.PackFiles(&want, []byte(manifest), files); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want.Bytes(), data) {
		t.Errorf("PackBytes gave %d bytes, PackFiles %d", len(data), want.Len())
	}
}

// TestPackFilesMatchesPack: a version held in memory packs to the bytes
// Pack writes from a folder holding the same files (mode 0644), whatever
// order the map gives, and the result passes every check of an upload.
func TestPackFilesMatchesPack(t *testing.T) {
	t.Parallel()
	dir := pt.WriteRegistry(t, "1.0.0")
	var fromDir bytes.Buffer
	if _, _, err := pkgarchive.Pack(&fromDir, dir); err != nil {
		t.Fatal(err)
	}
	names, content := readBack(t, fromDir.Bytes())
	files := map[string][]byte{}
	for _, n := range names[1:] {
		files[n] = []byte(content[n])
	}
	for range 5 {
		var fromMemory bytes.Buffer
		if err := pkgarchive.PackFiles(&fromMemory, []byte(content["registry.json"]), files); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fromDir.Bytes(), fromMemory.Bytes()) {
			t.Fatal("PackFiles and Pack wrote different bytes for the same files")
		}
	}
	// A registry.json in the map is not written twice.
	files["registry.json"] = []byte("{}")
	var again bytes.Buffer
	if err := pkgarchive.PackFiles(&again, []byte(content["registry.json"]), files); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fromDir.Bytes(), again.Bytes()) {
		t.Error("a registry.json among the files changed the archive")
	}
}

func TestPackRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		errHas string
	}{
		{"missing declared file", func(t *testing.T, dir string) { _ = os.Remove(filepath.Join(dir, "templates/button.ts")) }, "does not exist"},
		{"symlink", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "templates/button.ts")
			_ = os.Remove(p)
			if err := os.Symlink("/etc/hostname", p); err != nil {
				t.Skip(err)
			}
		}, "not a regular file"},
		// The folder of a declared file, not the file, is what is wrong.
		{"folder missing", func(t *testing.T, dir string) { _ = os.RemoveAll(filepath.Join(dir, "templates")) }, "declares templates/button.ts, which does not exist"},
		{"folder is a file", func(t *testing.T, dir string) {
			_ = os.RemoveAll(filepath.Join(dir, "templates"))
			_ = os.WriteFile(filepath.Join(dir, "templates"), []byte("x"), 0o644)
		}, "templates/button.ts: statat templates/button.ts: not a directory"},
		{"folder is a symlink out of the package", func(t *testing.T, dir string) {
			out := t.TempDir()
			_ = os.WriteFile(filepath.Join(out, "button.ts"), []byte("secret"), 0o644)
			_ = os.WriteFile(filepath.Join(out, "gitignore"), []byte("secret"), 0o644)
			_ = os.RemoveAll(filepath.Join(dir, "templates"))
			if err := os.Symlink(out, filepath.Join(dir, "templates")); err != nil {
				t.Skip(err)
			}
		}, "templates/button.ts: statat templates/button.ts: path escapes from parent"},
		{"schema", func(t *testing.T, dir string) {
			_ = os.WriteFile(filepath.Join(dir, "registry.json"), []byte(`{"name":"ui-kit","namespace":"@acme","type":"registry:feature","version":"1.0"}`), 0o644)
		}, "/version"},
		{"not json", func(t *testing.T, dir string) {
			_ = os.WriteFile(filepath.Join(dir, "registry.json"), []byte(`{`), 0o644)
		}, "JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := pt.WriteRegistry(t, "1.0.0")
			tt.change(t, dir)
			_, _, err := pkgarchive.Pack(io.Discard, dir)
			if !errors.Is(err, pkgarchive.ErrInvalidPackage) || !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("got %v, want ErrInvalidPackage mentioning %q", err, tt.errHas)
			}
		})
	}
}

// TestPackFolders: files in many folders, more than Pack keeps open at
// once and in an order that goes back to folders it left, pack to the
// bytes PackFiles writes for the same files; a folder that is a symbolic
// link to another folder of the package is followed, as any path inside
// the package root is.
func TestPackFolders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string][]byte{}
	var decl []string
	for i := range 40 {
		for _, p := range []string{fmt.Sprintf("t/%02d/a.txt", i), fmt.Sprintf("t/%02d.txt", i), fmt.Sprintf("t/%02d/b/c.txt", i)} {
			files[p] = []byte(p + "\n")
			decl = append(decl, fmt.Sprintf(`{"target":%q,"type":"registry:docs","path":%q}`, "x/"+p, p))
		}
	}
	files["linked/a.txt"] = []byte("t/00/a.txt\n")
	decl = append(decl, `{"target":"linked.txt","type":"registry:docs","path":"linked/a.txt"}`)
	manifest := `{"name":"ui-kit","namespace":"@acme","type":"registry:feature","version":"1.0.0","priority":4,"files":[` + strings.Join(decl, ",") + `]}`
	for p, b := range files {
		if p == "linked/a.txt" {
			continue
		}
		testenv.WriteFiles(t, dir, map[string]string{p: string(b)})
	}
	testenv.WriteFiles(t, dir, map[string]string{"registry.json": manifest})
	if err := os.Symlink("t/00", filepath.Join(dir, "linked")); err != nil {
		t.Skip(err)
	}
	var fromDir, fromMemory bytes.Buffer
	if _, _, err := pkgarchive.Pack(&fromDir, dir); err != nil {
		t.Fatal(err)
	}
	if err := pkgarchive.PackFiles(&fromMemory, []byte(manifest), files); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fromDir.Bytes(), fromMemory.Bytes()) {
		names, _ := readBack(t, fromDir.Bytes())
		t.Fatalf("Pack of %d files in %d folders differs from PackFiles; packed %v", len(files), 2*40+2, names)
	}
}

// A CHANGELOG.md beside registry.json gives the packed registry.json the
// entry of its version, unless registry.json has its own; the file itself
// is not packed.
func TestPackChangelogFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	manifest := `{"name":"x","namespace":"@main","type":"registry:feature","version":"1.1.0","priority":4}`
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("registry.json", manifest)
	write("CHANGELOG.md", "# Changelog\n\n## [1.1.0] - 2026-11-26\n- \x1b[2J<b>renamed</b>\n\n## [1.0.0]\n- first\n")
	var buf bytes.Buffer
	m, _, err := pkgarchive.Pack(&buf, dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Changelog != "- \x1b[2J<b>renamed</b>" {
		t.Errorf("got changelog %q, want the 1.1.0 entry", m.Changelog)
	}
	names, content := readBack(t, buf.Bytes())
	if !cmp.Equal(names, []string{"registry.json"}) {
		t.Errorf("got files %v, want registry.json only", names)
	}
	if !strings.HasPrefix(content["registry.json"], manifest[:len(manifest)-1]) || !strings.Contains(content["registry.json"], `"changelog": "- \u001b[2J\u003cb\u003erenamed\u003c/b\u003e"`) {
		t.Errorf("got registry.json %s", content["registry.json"])
	}
	// registry.json's own changelog wins.
	write("registry.json", manifest[:len(manifest)-1]+`,"changelog":"own"}`)
	buf.Reset()
	if m, _, err = pkgarchive.Pack(&buf, dir); err != nil || m.Changelog != "own" {
		t.Errorf("got %q, %v, want registry.json's own changelog", m.Changelog, err)
	}
	// A CHANGELOG.md that links elsewhere is refused.
	write("registry.json", manifest)
	os.Remove(filepath.Join(dir, "CHANGELOG.md"))
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "CHANGELOG.md")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	if _, _, err := pkgarchive.Pack(io.Discard, dir); err == nil || !strings.Contains(err.Error(), "CHANGELOG.md") {
		t.Errorf("got %v, want an error naming CHANGELOG.md", err)
	}
}

// A catalog/README.md beside registry.json becomes the packed
// registry.json's "readme", unless registry.json has its own; the file
// itself is not packed. One over the limit, not UTF-8, or a link is
// refused with an error naming it.
func TestPackCatalogReadme(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	manifest := `{"name":"x","namespace":"@main","type":"registry:framework","version":"1.0.0","priority":2}`
	readme := filepath.Join(dir, "catalog", "README.md")
	if err := os.Mkdir(filepath.Dir(readme), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "registry.json"), manifest)
	write(readme, "# X\n\nFor the catalog.\n")
	var buf bytes.Buffer
	m, _, err := pkgarchive.Pack(&buf, dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Readme != "# X\n\nFor the catalog.\n" {
		t.Errorf("got readme %q, want catalog/README.md", m.Readme)
	}
	names, content := readBack(t, buf.Bytes())
	if !cmp.Equal(names, []string{"registry.json"}) || !strings.Contains(content["registry.json"], `"readme": "# X\n\nFor the catalog.\n"`) {
		t.Errorf("got files %v and registry.json %s, want registry.json alone, with the readme", names, content["registry.json"])
	}
	write(filepath.Join(dir, "registry.json"), manifest[:len(manifest)-1]+`,"readme":"own"}`)
	if m, _, err = pkgarchive.Pack(io.Discard, dir); err != nil || m.Readme != "own" {
		t.Errorf("got %q, %v, want registry.json's own readme", m.Readme, err)
	}
	write(filepath.Join(dir, "registry.json"), manifest)
	for _, bad := range []string{strings.Repeat("x", registry.MaxReadme+1), "\xff\xfe"} {
		write(readme, bad)
		if _, _, err := pkgarchive.Pack(io.Discard, dir); !errors.Is(err, pkgarchive.ErrInvalidPackage) || !strings.Contains(err.Error(), "catalog/README.md") {
			t.Errorf("%d bytes: got %v, want an invalid package naming catalog/README.md", len(bad), err)
		}
	}
	os.Remove(readme)
	if err := os.Symlink("/etc/passwd", readme); err != nil {
		t.Skip("no symbolic links:", err)
	}
	if _, _, err := pkgarchive.Pack(io.Discard, dir); err == nil || !strings.Contains(err.Error(), "catalog/README.md") {
		t.Errorf("got %v, want an error naming catalog/README.md", err)
	}
}
