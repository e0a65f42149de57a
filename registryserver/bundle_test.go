package registryserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jigkit/jig/registryserver/bundleio"

	"golang.org/x/crypto/ssh"

	"github.com/jigkit/jig/internal/s3test"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/catalog"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// seeded returns a memory storage holding the starter catalog.
func seeded(t testing.TB) storage.Storage {
	t.Helper()
	st := memory.New()
	if _, err := catalog.Seed(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return st
}

func export(t testing.TB, st storage.Storage, sel bundleio.ExportOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := bundleio.Export(t.Context(), st, &buf, sel); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readBundle(t testing.TB, data []byte) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Read(bytes.NewReader(data), int64(len(data)), bundle.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// snapshot returns every key of st with its content.
func snapshot(t testing.TB, st storage.Storage) map[string]string {
	t.Helper()
	keys, err := st.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		rc, _, err := st.Get(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		out[k] = string(b)
	}
	return out
}

func sameSnapshot(t *testing.T, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("the storage went from %d to %d keys", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("%s changed", k)
		}
	}
}

func TestBundleRoundTrip(t *testing.T) {
	t.Parallel()
	src := seeded(t)
	data := export(t, src, bundleio.ExportOptions{Namespace: "main"})
	if again := export(t, src, bundleio.ExportOptions{Namespace: "@main"}); !bytes.Equal(data, again) {
		t.Fatal("two exports of one storage differ")
	}
	b := readBundle(t, data)
	dst := memory.New()
	sum, err := bundleio.Import(t.Context(), dst, b, bundleio.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Versions) != len(b.Versions) || len(sum.Versions) == 0 || len(sum.Skipped) != 0 {
		t.Fatalf("got %d imported, %d skipped; want all %d imported", len(sum.Versions), len(sum.Skipped), len(b.Versions))
	}
	// Every manifest and file is stored as in the source; each version is
	// listed and has its digest index.
	want := snapshot(t, src)
	got := snapshot(t, dst)
	for k, v := range want {
		c := layout.Classify(k)
		if c.Namespace != "@main" || (c.Kind != layout.KindManifest && c.Kind != layout.KindFile) {
			continue
		}
		if got[k] != v {
			t.Errorf("%s: imported content differs", k)
		}
		if c.Kind == layout.KindManifest {
			if _, ok := got[layout.DigestIndex(c.Namespace, c.Path, c.Version)]; !ok {
				t.Errorf("%s@%s has no digest index", c.Path, c.Version)
			}
			vl, err := registry.ParseVersionList([]byte(got[layout.Versions(c.Namespace, c.Path)]))
			if err != nil || !strings.Contains(strings.Join(vl.Versions, ","), c.Version) {
				t.Errorf("%s: versions.json does not list %s: %v", c.Path, c.Version, err)
			}
		}
	}
	// The imported storage exports the same bundle.
	if again := export(t, dst, bundleio.ExportOptions{Namespace: "@main"}); !bytes.Equal(data, again) {
		t.Error("the imported storage exports another bundle")
	}
	// A second import skips everything and writes nothing.
	before := snapshot(t, dst)
	sum, err = bundleio.Import(t.Context(), dst, b, bundleio.ImportOptions{})
	if err != nil || len(sum.Versions) != 0 || len(sum.Skipped) != len(b.Versions) {
		t.Fatalf("re-import: got %d imported, %d skipped, %v; want all skipped", len(sum.Versions), len(sum.Skipped), err)
	}
	sameSnapshot(t, before, snapshot(t, dst))
}

func TestBundleExportSelection(t *testing.T) {
	t.Parallel()
	src := seeded(t)
	b := readBundle(t, export(t, src, bundleio.ExportOptions{Namespace: "@main", Registries: []string{"runtimes/node", "@main/quality/eslint"}}))
	var ids []string
	for _, v := range b.Versions {
		ids = append(ids, v.ID())
	}
	if got, want := strings.Join(ids, " "), "@main/quality/eslint@1.0.0 @main/runtimes/node@1.0.0"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if len(b.Lists) != 2 || b.Lists["runtimes/node"] == nil {
		t.Errorf("got version lists %v, want those of the two registries", b.Lists)
	}
	all := readBundle(t, export(t, src, bundleio.ExportOptions{Namespace: "@main"}))
	since := readBundle(t, export(t, src, bundleio.ExportOptions{Namespace: "@main", Since: time.Now().Add(-time.Hour)}))
	if len(since.Versions) != len(all.Versions) {
		t.Errorf("--since an hour ago: got %d versions, want all %d", len(since.Versions), len(all.Versions))
	}
	for _, tt := range []struct {
		sel  bundleio.ExportOptions
		want string
	}{
		{bundleio.ExportOptions{Namespace: "@nothing"}, "@nothing has no published version to export"},
		{bundleio.ExportOptions{Namespace: "Main"}, "is not a namespace"},
		{bundleio.ExportOptions{Namespace: "@main", Registries: []string{"runtimes/none"}}, "@main/runtimes/none has no published version"},
		{bundleio.ExportOptions{Namespace: "@main", Registries: []string{"../x"}}, "is not a registry path"},
		{bundleio.ExportOptions{Namespace: "@main", Since: time.Now().Add(time.Hour)}, "@main has no version published on or after"},
	} {
		_, err := bundleio.Export(t.Context(), src, io.Discard, tt.sel)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want %q", tt.sel, err, tt.want)
		}
	}
}

// conflicting returns a bundle of @main/runtimes/node@1.0.0 with other
// content than the catalog's, and one more version.
func conflicting(t *testing.T) *bundle.Bundle {
	t.Helper()
	var buf bytes.Buffer
	w := bundle.NewWriter(&buf, "@main")
	add := func(path, version string) {
		man := []byte(`{"name":"x","version":"` + version + `"}`)
		x := &registry.DigestIndex{Namespace: "@main", Path: path, Version: version, Manifest: registry.Digest(man), Files: map[string]string{}}
		idx, _ := x.Marshal()
		for _, e := range [][2]string{{layout.DigestIndex("@main", path, version), string(idx)}, {layout.Manifest("@main", path, version), string(man)}} {
			if err := w.Add(e[0], int64(len(e[1])), strings.NewReader(e[1])); err != nil {
				t.Fatal(err)
			}
		}
	}
	add("a/fresh", "1.0.0")
	add("runtimes/node", "1.0.0")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return readBundle(t, buf.Bytes())
}

func TestBundleImportConflict(t *testing.T) {
	t.Parallel()
	dst := seeded(t)
	before := snapshot(t, dst)
	_, err := bundleio.Import(t.Context(), dst, conflicting(t), bundleio.ImportOptions{})
	var ie *bundleio.ImportError
	if !errors.As(err, &ie) || len(ie.Problems) != 1 || !strings.Contains(ie.Problems[0], "@main/runtimes/node@1.0.0 is already stored with other content") {
		t.Fatalf("got %v, want one conflict", err)
	}
	if !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("got %q, want it to say nothing was written", err)
	}
	sameSnapshot(t, before, snapshot(t, dst))
}

func TestBundleImportSignatures(t *testing.T) {
	t.Parallel()
	alice, mallory := newSigner(t), newSigner(t)
	src := seeded(t)
	// Sign @main/runtimes/node@1.0.0 as a publish would store it.
	index := func(st storage.Storage) []byte {
		b := readBundle(t, export(t, st, bundleio.ExportOptions{Namespace: "@main", Registries: []string{"runtimes/node"}}))
		return b.Versions[0].IndexBytes
	}
	signWith := func(st storage.Storage, s ssh.Signer) {
		idx := index(st)
		sig, err := signing.ParseSignature(sign(t, s, idx))
		if err != nil {
			t.Fatal(err)
		}
		doc, _ := json.Marshal(wire.Signatures{Namespace: "@main", Path: "runtimes/node", Version: "1.0.0",
			Signatures: []wire.SignatureInfo{{Signature: string(sig.Armored), Key: signing.FormatPublicKey(sig.Key), Fingerprint: sig.Fingerprint}}})
		if err := st.Put(t.Context(), layout.Signatures("@main", "runtimes/node", "1.0.0"), bytes.NewReader(doc), int64(len(doc))); err != nil {
			t.Fatal(err)
		}
	}
	signWith(src, alice)
	dir := signersDir(t, map[string]string{"main.allowed_signers": "alice " + signing.FormatPublicKey(alice.PublicKey()) + "\n"})
	signers, err := registryserver.LoadSigners(dir)
	if err != nil {
		t.Fatal(err)
	}
	opt := bundleio.ImportOptions{Signers: signers}

	// All of @main: the other versions are unsigned, so nothing goes in.
	dst := memory.New()
	_, err = bundleio.Import(t.Context(), dst, readBundle(t, export(t, src, bundleio.ExportOptions{Namespace: "@main"})), opt)
	if err == nil || !strings.Contains(err.Error(), "@main/quality/eslint@1.0.0: namespace @main requires signed versions (SIGNERS_DIR), and this version has no signature") {
		t.Fatalf("got %v, want unsigned versions refused", err)
	}
	if keys, _ := dst.List(t.Context(), ""); len(keys) != 0 {
		t.Fatalf("a refused import wrote %v", keys)
	}
	// The signed version alone goes in, its signatures byte for byte.
	one := readBundle(t, export(t, src, bundleio.ExportOptions{Namespace: "@main", Registries: []string{"runtimes/node"}}))
	if _, err := bundleio.Import(t.Context(), dst, one, opt); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(t, dst)[layout.Signatures("@main", "runtimes/node", "1.0.0")]; got != string(one.Versions[0].Signatures) {
		t.Errorf("stored signatures %q, want the bundle's", got)
	}
	// Signed by a key the signer file does not list: refused.
	other := seeded(t)
	signWith(other, mallory)
	_, err = bundleio.Import(t.Context(), memory.New(), readBundle(t, export(t, other, bundleio.ExportOptions{Namespace: "@main", Registries: []string{"runtimes/node"}})), opt)
	if err == nil || !strings.Contains(err.Error(), "is by a key the namespace's signer file allows") {
		t.Fatalf("got %v, want an untrusted signature refused", err)
	}
	// A signature over other content is refused even where none is required.
	bad := readBundle(t, export(t, other, bundleio.ExportOptions{Namespace: "@main", Registries: []string{"runtimes/node"}}))
	bad.Versions[0].ParsedSignatures.Signatures[0].Signature = string(sign(t, mallory, []byte("other")))
	_, err = bundleio.Import(t.Context(), memory.New(), bad, bundleio.ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), "is invalid") {
		t.Fatalf("got %v, want a signature over other content refused", err)
	}
}

// TestBundleImportConcurrent imports one bundle twice at once into one
// storage, as two replicas would: each version is stored once, whole.
func TestBundleImportConcurrent(t *testing.T) {
	t.Parallel()
	for name, newStorage := range map[string]func(t *testing.T) storage.Storage{
		"memory": func(*testing.T) storage.Storage { return memory.New() },
		"s3":     func(t *testing.T) storage.Storage { return s3test.New(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := readBundle(t, export(t, seeded(t), bundleio.ExportOptions{Namespace: "@main"}))
			dst := newStorage(t)
			var wg sync.WaitGroup
			sums := make([]bundleio.Summary, 3)
			errs := make([]error, len(sums))
			for i := range sums {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sums[i], errs[i] = bundleio.Import(t.Context(), dst, b, bundleio.ImportOptions{})
				}()
			}
			wg.Wait()
			imported := map[string]int{}
			for i, s := range sums {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				if len(s.Versions)+len(s.Skipped) != len(b.Versions) {
					t.Errorf("import %d: %d imported + %d skipped, want %d", i, len(s.Versions), len(s.Skipped), len(b.Versions))
				}
				for _, v := range s.Versions {
					imported[v]++
				}
			}
			for _, v := range b.Versions {
				if imported[v.ID()] != 1 {
					t.Errorf("%s imported %d times, want once", v.ID(), imported[v.ID()])
				}
			}
			if again := export(t, dst, bundleio.ExportOptions{Namespace: "@main"}); !bytes.Equal(again, export(t, seeded(t), bundleio.ExportOptions{Namespace: "@main"})) {
				t.Error("the storage imported into concurrently exports another bundle")
			}
		})
	}
}

// cancelAfter is a storage whose context is cancelled after n puts.
type cancelAfter struct {
	storage.Storage
	mu     sync.Mutex
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	c.mu.Lock()
	c.n--
	if c.n == 0 {
		c.cancel()
	}
	c.mu.Unlock()
	return c.Storage.Put(ctx, key, r, size)
}

// TestBundleImportInterrupted: an import cancelled midway leaves every
// version whole or absent, and a second import completes it.
func TestBundleImportInterrupted(t *testing.T) {
	t.Parallel()
	b := readBundle(t, export(t, seeded(t), bundleio.ExportOptions{Namespace: "@main"}))
	for _, n := range []int{1, 3, 7, 12} {
		ctx, cancel := context.WithCancel(t.Context())
		dst := memory.New()
		st := &cancelAfter{Storage: dst, n: n, cancel: cancel}
		_, err := bundleio.Import(ctx, st, b, bundleio.ImportOptions{})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("after %d puts: got %v, want context.Canceled", n, err)
		}
		got := snapshot(t, dst)
		for _, v := range b.Versions {
			_, committed := got[layout.Manifest(v.Namespace, v.Path, v.Version)]
			for _, f := range v.Files {
				if _, ok := got[layout.File(v.Namespace, v.Path, v.Version, f)]; ok != committed {
					t.Errorf("after %d puts: %s is half written (%s stored: %v, committed: %v)", n, v.ID(), f, ok, committed)
				}
			}
		}
		if _, err := bundleio.Import(t.Context(), dst, b, bundleio.ImportOptions{}); err != nil {
			t.Fatalf("after %d puts: the next import: %v", n, err)
		}
	}
}
