package registryserver_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/registryserver/bundleio"

	"golang.org/x/crypto/ssh"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// signStored signs the stored @ns/path@version of st with s, as a publish
// with a signature would have stored it.
func signStored(t *testing.T, st storage.Storage, ns, path, version string, s ssh.Signer) {
	t.Helper()
	b := readBundle(t, export(t, st, bundleio.ExportOptions{Namespace: ns, Registries: []string{path}}))
	var idx []byte
	for _, v := range b.Versions {
		if v.Version == version {
			idx = v.IndexBytes
		}
	}
	sig, err := signing.ParseSignature(sign(t, s, idx))
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(wire.Signatures{Namespace: ns, Path: path, Version: version,
		Signatures: []wire.SignatureInfo{{Signature: string(sig.Armored), Key: signing.FormatPublicKey(sig.Key), Fingerprint: sig.Fingerprint}}})
	if err := st.Put(t.Context(), layout.Signatures(ns, path, version), bytes.NewReader(doc), int64(len(doc))); err != nil {
		t.Fatal(err)
	}
}

// TestBundleImportMarksNamespace (issue 36 item 14): a namespace filled by
// an import can later be served from an upstream; one that holds
// registries published here stays bound.
func TestBundleImportMarksNamespace(t *testing.T) {
	t.Parallel()
	b := readBundle(t, export(t, seeded(t), bundleio.ExportOptions{Namespace: "@main"}))
	cfg := upstreams(t, `{"upstreams":[{"url":"http://127.0.0.1:9","namespaces":{"@main":"@main"}}]}`, nil)
	check := func(st storage.Storage) error {
		h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithUpstreams(cfg))
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		return h.CheckUpstreams(t.Context())
	}

	filled := memory.New()
	if _, err := bundleio.Import(t.Context(), filled, b, bundleio.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := filled.Stat(t.Context(), layout.UpstreamMarker("@main")); err != nil {
		t.Errorf("the import wrote no marker: %v", err)
	}
	if err := check(filled); err != nil {
		t.Errorf("a namespace filled by an import, then served from upstream: got %v, want it to start", err)
	}

	// Published here first: the import adds to it, and it stays bound.
	local := memory.New()
	doc := []byte(`{"versions":["1.0.0"]}`)
	if err := local.Put(t.Context(), "@main/quality/local/versions.json", bytes.NewReader(doc), int64(len(doc))); err != nil {
		t.Fatal(err)
	}
	if _, err := bundleio.Import(t.Context(), local, b, bundleio.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := local.Stat(t.Context(), layout.UpstreamMarker("@main")); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("an import into a namespace published here wrote the marker (%v)", err)
	}
	if err := check(local); err == nil {
		t.Error("a namespace published here passed CheckUpstreams after an import")
	}
}

// TestBundleSignedOnly (issue 36 item 25): --signed-only exports the
// signed versions and lists the others with the reason.
func TestBundleSignedOnly(t *testing.T) {
	t.Parallel()
	src := seeded(t)
	signStored(t, src, "@main", "runtimes/node", "1.0.0", newSigner(t))
	var buf bytes.Buffer
	sum, err := bundleio.Export(t.Context(), src, &buf, bundleio.ExportOptions{Namespace: "@main", SignedOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	b := readBundle(t, buf.Bytes())
	if len(b.Versions) != 1 || b.Versions[0].ID() != "@main/runtimes/node@1.0.0" || b.Versions[0].Signatures == nil {
		t.Fatalf("got %d versions, want the signed one only", len(b.Versions))
	}
	all := readBundle(t, export(t, src, bundleio.ExportOptions{Namespace: "@main"}))
	if len(sum.Refused) != len(all.Versions)-1 || len(sum.Versions) != 1 {
		t.Fatalf("got %d exported, %d left out; want 1 and %d", len(sum.Versions), len(sum.Refused), len(all.Versions)-1)
	}
	for _, r := range sum.Refused {
		if r.Reason != "it has no signature (--signed-only)" || r.Version == "@main/runtimes/node@1.0.0" {
			t.Errorf("left out %+v", r)
		}
	}
	// Nothing signed: an error, not an empty bundle.
	_, err = bundleio.Export(t.Context(), seeded(t), &bytes.Buffer{}, bundleio.ExportOptions{Namespace: "@main", SignedOnly: true})
	if err == nil || !strings.Contains(err.Error(), "no signed version") {
		t.Errorf("got %v, want no signed version", err)
	}
}

// TestBundleSkipRefused (issue 36 item 25): an import under a signing
// policy skips the versions it refuses, whole, and imports the rest.
func TestBundleSkipRefused(t *testing.T) {
	t.Parallel()
	alice := newSigner(t)
	src := seeded(t)
	signStored(t, src, "@main", "runtimes/node", "1.0.0", alice)
	b := readBundle(t, export(t, src, bundleio.ExportOptions{Namespace: "@main"}))
	signers, err := registryserver.LoadSigners(signersDir(t, map[string]string{"main.allowed_signers": "alice " + signing.FormatPublicKey(alice.PublicKey()) + "\n"}))
	if err != nil {
		t.Fatal(err)
	}

	// Without --skip-refused: nothing, and the error counts the refusals.
	dst := memory.New()
	_, err = bundleio.Import(t.Context(), dst, b, bundleio.ImportOptions{Signers: signers})
	var ie *bundleio.ImportError
	if !errors.As(err, &ie) || ie.Refused != len(b.Versions)-1 || len(ie.Problems) != ie.Refused {
		t.Fatalf("got %v, want %d refusals", err, len(b.Versions)-1)
	}
	if keys, _ := dst.List(t.Context(), ""); len(keys) != 0 {
		t.Fatalf("a refused import wrote %v", keys)
	}

	sum, err := bundleio.Import(t.Context(), dst, b, bundleio.ImportOptions{Signers: signers, SkipRefused: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(sum.Versions, " ") != "@main/runtimes/node@1.0.0" || len(sum.Refused) != len(b.Versions)-1 {
		t.Fatalf("got imported %v, refused %d; want node alone imported", sum.Versions, len(sum.Refused))
	}
	refused := map[string]bool{}
	for _, r := range sum.Refused {
		refused[r.Version] = true
		if !strings.Contains(r.Reason, "requires signed versions (SIGNERS_DIR), and this version has no signature") {
			t.Errorf("%s: reason %q", r.Version, r.Reason)
		}
	}
	// Nothing of a refused version is stored, not even in versions.json.
	keys, _ := dst.List(t.Context(), "")
	for _, k := range keys {
		c := layout.Classify(k)
		if c.Namespace != "" && (refused[c.Namespace+"/"+c.Path+"@"+c.Version] || (c.Kind == layout.KindVersions && c.Path != "runtimes/node")) {
			t.Errorf("a refused version left %s", k)
		}
	}
	vl, err := registry.ParseVersionList([]byte(snapshot(t, dst)[layout.Versions("@main", "runtimes/node")]))
	if err != nil || strings.Join(vl.Versions, ",") != "1.0.0" {
		t.Errorf("versions.json of node: %v, %v", vl, err)
	}

	// Refusals other than the policy's are never skipped.
	bad := readBundle(t, export(t, src, bundleio.ExportOptions{Namespace: "@main", Registries: []string{"runtimes/node"}}))
	bad.Versions[0].ParsedSignatures.Signatures[0].Signature = string(sign(t, alice, []byte("other")))
	if _, err := bundleio.Import(t.Context(), memory.New(), bad, bundleio.ImportOptions{Signers: signers, SkipRefused: true}); err == nil {
		t.Error("a signature over other content was skipped, want the bundle refused")
	}
}

// presetBundle returns a bundle of the given presets.
func presetBundle(t *testing.T, docs map[string]string) *bundle.Bundle {
	t.Helper()
	var buf bytes.Buffer
	w := bundle.NewWriter(&buf, registry.PresetNamespace)
	for _, k := range slices.Sorted(maps.Keys(docs)) {
		if err := w.Add(k, int64(len(docs[k])), strings.NewReader(docs[k])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return readBundle(t, buf.Bytes())
}

// TestBundlePresets (issue 36 item 13): presets travel in a bundle of
// @presets, are checked as a publish checks them, and are then served.
func TestBundlePresets(t *testing.T) {
	t.Parallel()
	src := seeded(t)
	node := `{"name":"node","version":"1.1.0","registries":["@main/runtimes/node"]}`
	if r := postBody(t, publishHandler(t, src), "/presets", pubAdmin, "application/json", strings.NewReader(node)); r.status != 201 {
		t.Fatalf("publish preset: %d %s", r.status, r.body)
	}
	var buf bytes.Buffer
	sum, err := bundleio.Export(t.Context(), src, &buf, bundleio.ExportOptions{Namespace: "presets"})
	if err != nil {
		t.Fatal(err)
	}
	b := readBundle(t, buf.Bytes())
	var ids []string
	for _, p := range b.Presets {
		ids = append(ids, p.ID())
	}
	if got := strings.Join(ids, " "); got != "@presets/go-service@1.0.0 @presets/node@1.1.0 @presets/node-library@1.0.0 @presets/python-service@1.0.0" || len(sum.Versions) != 4 {
		t.Fatalf("exported %s (summary %v)", got, sum.Versions)
	}
	dst := memory.New()
	got, err := bundleio.Import(t.Context(), dst, b, bundleio.ImportOptions{})
	if err != nil || len(got.Versions) != 4 {
		t.Fatalf("import: %+v, %v", got, err)
	}
	h, err := registryserver.New(registryserver.WithStorage(dst))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	if r := fetch(t, h, "/presets/node", ""); r.status != 200 || string(r.body) != node {
		t.Errorf("GET /presets/node: %d %s, want the newest", r.status, r.body)
	}
	// Again: all skipped, nothing written.
	before := snapshot(t, dst)
	if got, err := bundleio.Import(t.Context(), dst, b, bundleio.ImportOptions{}); err != nil || len(got.Skipped) != 4 || len(got.Versions) != 0 {
		t.Errorf("re-import: %+v, %v", got, err)
	}
	sameSnapshot(t, before, snapshot(t, dst))
	// Only some presets.
	one := readBundle(t, export(t, src, bundleio.ExportOptions{Namespace: "@presets", Registries: []string{"node-library"}}))
	if len(one.Presets) != 1 || one.Presets[0].Name != "node-library" {
		t.Errorf("--registry node-library exported %d presets", len(one.Presets))
	}

	for _, tc := range []struct {
		name string
		docs map[string]string
		want string
	}{
		{"schema", map[string]string{layout.Preset("evil"): `{"name":"evil","version":"1.0.0","registries":["@main/x"],"script":"rm -rf /"}`}, "fails the preset schema"},
		{"conflict", map[string]string{layout.Preset("node"): `{"name":"node","version":"1.1.0","registries":["@main/other"]}`}, "already stored with other content"},
		{"too large", map[string]string{layout.Preset("big"): `{"name":"big","version":"1.0.0","registries":["@main/x"],"description":"` + strings.Repeat("x", 1<<20) + `"}`}, "exceeds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, dst)
			_, err := bundleio.Import(t.Context(), dst, presetBundle(t, tc.docs), bundleio.ImportOptions{})
			if !errors.As(err, new(*bundleio.ImportError)) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
			sameSnapshot(t, before, snapshot(t, dst))
		})
	}
	for _, tt := range []struct {
		sel  bundleio.ExportOptions
		want string
	}{
		{bundleio.ExportOptions{Namespace: "@presets", Registries: []string{"none"}}, "no preset none is stored"},
		{bundleio.ExportOptions{Namespace: "@presets", Registries: []string{"../x"}}, "is not a preset name"},
		{bundleio.ExportOptions{Namespace: "@presets", SignedOnly: true}, "presets carry no signatures"},
		{bundleio.ExportOptions{Namespace: "@presets"}, "no preset is stored"},
	} {
		st := src
		if tt.want == "no preset is stored" {
			st = memory.New()
		}
		if _, err := bundleio.Export(t.Context(), st, &bytes.Buffer{}, tt.sel); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want %q", tt.sel, err, tt.want)
		}
	}
}
