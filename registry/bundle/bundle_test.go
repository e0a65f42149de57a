package bundle_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registry/layout"
)

// version returns the storage entries of one version with files.
func version(ns, path, v string, files map[string]string) map[string][]byte {
	man := []byte(`{"name":"` + path + `","version":"` + v + `"}`)
	x := &registry.DigestIndex{Namespace: ns, Path: path, Version: v, Manifest: registry.Digest(man), Files: map[string]string{}}
	out := map[string][]byte{layout.Manifest(ns, path, v): man}
	for f, c := range files {
		x.Files[f] = registry.Digest([]byte(c))
		out[layout.File(ns, path, v, f)] = []byte(c)
	}
	idx, err := x.Marshal()
	if err != nil {
		panic(err)
	}
	out[layout.DigestIndex(ns, path, v)] = idx
	return out
}

// build writes a bundle of entries with the package's Writer.
func build(t testing.TB, ns string, entries ...map[string][]byte) []byte {
	t.Helper()
	all := map[string][]byte{}
	for _, e := range entries {
		for k, v := range e {
			all[k] = v
		}
	}
	var buf bytes.Buffer
	w := bundle.NewWriter(&buf, ns)
	for _, k := range sortedKeys(all) {
		if err := w.Add(k, int64(len(all[k])), bytes.NewReader(all[k])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sortedKeys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return ks
}

func sample(t testing.TB) []byte {
	return build(t, "@acme",
		version("@acme", "runtimes/node", "1.0.0", map[string]string{"templates/a.txt": "hello\n", "b.json": "{}"}),
		version("@acme", "runtimes/node", "1.1.0", map[string]string{"templates/a.txt": "hello again\n"}),
		map[string][]byte{layout.Versions("@acme", "runtimes/node"): []byte("{\n  \"versions\": [\"1.1.0\", \"1.0.0\"]\n}\n")},
	)
}

func read(b []byte) (*bundle.Bundle, error) {
	return bundle.Read(bytes.NewReader(b), int64(len(b)), bundle.Limits{})
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	data := sample(t)
	if again := sample(t); !bytes.Equal(data, again) {
		t.Fatal("two writes of the same content differ")
	}
	b, err := read(data)
	if err != nil {
		t.Fatal(err)
	}
	if b.Namespace != "@acme" || len(b.Versions) != 2 || b.Lists["runtimes/node"] == nil {
		t.Fatalf("got namespace %s, %d versions, lists %v", b.Namespace, len(b.Versions), b.Lists)
	}
	v := b.Versions[0]
	if v.ID() != "@acme/runtimes/node@1.0.0" || strings.Join(v.Files, ",") != "b.json,templates/a.txt" {
		t.Fatalf("got %s with files %v", v.ID(), v.Files)
	}
	r, size, err := b.Open(v, "templates/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil || string(got) != "hello\n" || size != 6 {
		t.Fatalf("got %q (%d bytes), %v; want hello", got, size, err)
	}
}

// rewrite rebuilds a tar, letting edit change each header and content.
func rewrite(t *testing.T, data []byte, edit func(h *tar.Header, body []byte) (*tar.Header, []byte)) []byte {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(data))
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		h, body = edit(h, body)
		if h == nil {
			continue
		}
		h.Size = int64(len(body))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	tw.Close()
	return out.Bytes()
}

func TestRefused(t *testing.T) {
	t.Parallel()
	data := sample(t)
	tests := []struct {
		name string
		data func(t *testing.T) []byte
		want string
	}{
		{"one changed byte", func(t *testing.T) []byte {
			b := bytes.Clone(data)
			i := bytes.Index(b, []byte("hello again"))
			b[i] = 'j'
			return b
		}, "does not match jig-bundle.json"},
		{"no manifest", func(t *testing.T) []byte {
			return rewrite(t, data, func(h *tar.Header, b []byte) (*tar.Header, []byte) {
				if h.Name == bundle.ManifestName {
					return nil, nil
				}
				return h, b
			})
		}, "no jig-bundle.json"},
		{"symlink", func(t *testing.T) []byte {
			return rewrite(t, data, func(h *tar.Header, b []byte) (*tar.Header, []byte) {
				if strings.HasSuffix(h.Name, "b.json") {
					h.Typeflag, h.Linkname = tar.TypeSymlink, "/etc/passwd"
					return h, nil
				}
				return h, b
			})
		}, "symbolic link"},
		{"hard link", func(t *testing.T) []byte {
			return rewrite(t, data, func(h *tar.Header, b []byte) (*tar.Header, []byte) {
				if strings.HasSuffix(h.Name, "b.json") {
					h.Typeflag, h.Linkname = tar.TypeLink, "x"
					return h, nil
				}
				return h, b
			})
		}, "hard link"},
		{"dot dot", func(t *testing.T) []byte {
			return rewrite(t, data, func(h *tar.Header, b []byte) (*tar.Header, []byte) {
				h.Name = strings.Replace(h.Name, "templates/a.txt", "../../../a.txt", 1)
				return h, b
			})
		}, "storage layout"},
		{"absolute", func(t *testing.T) []byte {
			return rewrite(t, data, func(h *tar.Header, b []byte) (*tar.Header, []byte) {
				if h.Name != bundle.ManifestName {
					h.Name = "/" + h.Name
				}
				return h, b
			})
		}, "storage layout"},
		{"reserved name", func(t *testing.T) []byte {
			return rewrite(t, data, func(h *tar.Header, b []byte) (*tar.Header, []byte) {
				h.Name = strings.Replace(h.Name, "b.json", ".JIG-signatures.json", 1)
				return h, b
			})
		}, "reserved"},
		{"duplicate", func(t *testing.T) []byte {
			var out bytes.Buffer
			tw := tar.NewWriter(&out)
			for range 2 {
				tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "@acme/a/1.0.0/x", Size: 1, Mode: 0o644})
				tw.Write([]byte("x"))
			}
			tw.Close()
			return out.Bytes()
		}, "appears twice"},
		{"other namespace", func(t *testing.T) []byte {
			return rewrite(t, data, func(h *tar.Header, b []byte) (*tar.Header, []byte) {
				if strings.HasSuffix(h.Name, "versions.json") {
					h.Name = "@other/runtimes/node/versions.json"
				}
				return h, b
			})
		}, "not in namespace"},
		{"file not indexed", func(t *testing.T) []byte {
			return build(t, "@acme", version("@acme", "a", "1.0.0", nil), map[string][]byte{"@acme/a/1.0.0/extra": []byte("x")})
		}, "not in its digest index"},
		{"indexed file missing", func(t *testing.T) []byte {
			v := version("@acme", "a", "1.0.0", map[string]string{"f": "x"})
			delete(v, "@acme/a/1.0.0/f")
			return build(t, "@acme", v)
		}, "not in the bundle"},
		{"no index", func(t *testing.T) []byte {
			v := version("@acme", "a", "1.0.0", nil)
			delete(v, layout.DigestIndex("@acme", "a", "1.0.0"))
			return build(t, "@acme", v)
		}, "no digest index"},
		{"manifest changed consistently", func(t *testing.T) []byte {
			v := version("@acme", "a", "1.0.0", nil)
			v[layout.Manifest("@acme", "a", "1.0.0")] = []byte(`{"name":"a","version":"1.0.0","evil":true}`)
			return build(t, "@acme", v)
		}, "its digest index says"},
		{"manifest of another version", func(t *testing.T) []byte {
			man := []byte(`{"name":"a","namespace":"@acme","version":"9.9.9"}`)
			x, _ := (&registry.DigestIndex{Namespace: "@acme", Path: "a", Version: "1.0.0", Manifest: registry.Digest(man)}).Marshal()
			return build(t, "@acme", map[string][]byte{layout.Manifest("@acme", "a", "1.0.0"): man, layout.DigestIndex("@acme", "a", "1.0.0"): x})
		}, `its registry.json says @acme version "9.9.9"`},
		{"not tar", func(t *testing.T) []byte { return []byte("hello") }, "invalid bundle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := read(tt.data(t))
			if !errors.Is(err, bundle.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an invalid-bundle error containing %q", err, tt.want)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	data := sample(t)
	for _, tt := range []struct {
		lim  bundle.Limits
		want string
	}{
		{bundle.Limits{MaxEntries: 3}, "more than 3 entries"},
		{bundle.Limits{MaxEntrySize: 5}, "larger than 5 bytes"},
		{bundle.Limits{MaxTotal: 20}, "in total"},
		{bundle.Limits{MaxNameLen: 10}, "longer than 10 bytes"},
		{bundle.Limits{MaxDepth: 3}, "deeper than 3"},
	} {
		_, err := bundle.Read(bytes.NewReader(data), int64(len(data)), tt.lim)
		if !errors.Is(err, bundle.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want %q", tt.lim, err, tt.want)
		}
	}
}

// TestOpenRechecks: a file changed after Read is refused by Open's reader.
func TestOpenRechecks(t *testing.T) {
	t.Parallel()
	data := sample(t)
	b, err := read(data)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("hello again"))
	data[i] = 'j'
	r, _, err := b.Open(b.Versions[1], "templates/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(r); !errors.Is(err, bundle.ErrInvalid) {
		t.Fatalf("got %v, want ErrInvalid", err)
	}
}

func TestWriterRefusesDisorder(t *testing.T) {
	t.Parallel()
	w := bundle.NewWriter(io.Discard, "@acme")
	if err := w.Add("@acme/a/1.0.0/registry.json", 0, strings.NewReader("")); err != nil {
		t.Fatal(err)
	}
	if err := w.Add("@acme/a/1.0.0/.jig-digests.json", 0, strings.NewReader("")); err == nil {
		t.Fatal("an entry out of order was accepted")
	}
	if err := bundle.NewWriter(io.Discard, "@acme").Add("../x", 0, strings.NewReader("")); err == nil {
		t.Fatal("an entry outside the layout was accepted")
	}
}

// presetDoc is a preset.json document.
func presetDoc(name, version string) []byte {
	return []byte(`{"name":"` + name + `","version":"` + version + `","registries":["@main/runtimes/node"]}`)
}

func presetSample(t testing.TB) []byte {
	return build(t, registry.PresetNamespace, map[string][]byte{
		layout.Preset("node"):                    presetDoc("node", "1.1.0"),
		layout.PresetVersion("node", "1.0.0"):    presetDoc("node", "1.0.0"),
		layout.PresetVersion("node", "1.1.0"):    presetDoc("node", "1.1.0"),
		layout.Preset("node-library"):            presetDoc("node-library", "2.0.0"),
		layout.PresetVersion("web", "0.1.0-rc1"): presetDoc("web", "0.1.0-rc1"),
	})
}

// TestReadPresets: a bundle of @presets carries preset documents; each is
// checked against its key, and hostile names or documents are refused.
func TestReadPresets(t *testing.T) {
	t.Parallel()
	b, err := read(presetSample(t))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range b.Presets {
		got = append(got, p.ID())
	}
	want := "@presets/node@1.0.0 @presets/node@1.1.0 @presets/node-library@2.0.0 @presets/web@0.1.0-rc1"
	if strings.Join(got, " ") != want || len(b.Versions) != 0 || b.Namespace != registry.PresetNamespace {
		t.Fatalf("got %s (%d versions) of %s, want %s", got, len(b.Versions), b.Namespace, want)
	}

	for _, tc := range []struct {
		name    string
		entries map[string][]byte
		ns      string
		want    string
	}{
		{"name differs from its key", map[string][]byte{layout.Preset("node"): presetDoc("evil", "1.0.0")}, "", `names preset "evil"`},
		{"version differs from its key", map[string][]byte{layout.PresetVersion("node", "1.0.0"): presetDoc("node", "2.0.0")}, "", `says version "2.0.0"`},
		{"not a version", map[string][]byte{layout.Preset("node"): presetDoc("node", "latest")}, "", "not a semantic version"},
		{"not JSON", map[string][]byte{layout.Preset("node"): []byte("{")}, "", "not valid JSON"},
		{"nested preset", map[string][]byte{layout.Preset("node"): []byte(`{"name":"node","version":"1.0.0","registries":["@presets/x"]}`)}, "", "cannot nest"},
		{"latest and copy differ", map[string][]byte{
			layout.Preset("node"):                 presetDoc("node", "1.0.0"),
			layout.PresetVersion("node", "1.0.0"): []byte(`{"name":"node","version":"1.0.0","registries":["@main/x"]}`),
		}, "", "differ"},
		{"preset in a bundle of registries", map[string][]byte{layout.Preset("node"): presetDoc("node", "1.0.0")}, "@acme", "jig-bundle.json says @acme"},
		{"registry in a bundle of presets", version("@presets", "x", "1.0.0", nil), "", "names presets"},
		{"registry after a preset", map[string][]byte{layout.Preset("node"): presetDoc("node", "1.0.0"), "zz/x/1.0.0/registry.json": []byte("{}")}, "", "not a registry version's file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := tc.ns
			if ns == "" {
				ns = registry.PresetNamespace
			}
			data := rawBundle(t, ns, tc.entries)
			if _, err := read(data); err == nil || !errors.Is(err, bundle.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an invalid bundle saying %q", err, tc.want)
			}
		})
	}

	// Hostile names never reach a Preset.
	for _, name := range []string{"presets/../x/preset.json", "presets/Node/preset.json", "presets/nöde/preset.json",
		"presets//preset.json", "presets/node/1.0/preset.json", "presets/node/x/y/preset.json",
		"/presets/node/preset.json", `presets\node\preset.json`, "presets/node/other.json"} {
		data := rawBundle(t, registry.PresetNamespace, map[string][]byte{name: presetDoc("node", "1.0.0")})
		if _, err := read(data); !errors.Is(err, bundle.ErrInvalid) {
			t.Errorf("entry %q: got %v, want it refused", name, err)
		}
	}
}

// rawBundle writes entries as a bundle without the Writer's checks: a
// bundle a hostile tool could write.
func rawBundle(t testing.TB, ns string, entries map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	m := bundle.Manifest{Format: bundle.Format, Namespace: ns}
	for _, k := range sortedKeys(entries) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: k, Size: int64(len(entries[k])), Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
		tw.Write(entries[k])
		m.Entries = append(m.Entries, bundle.Entry{Name: k, Size: int64(len(entries[k])), Digest: registry.Digest(entries[k])})
	}
	doc, _ := json.Marshal(m)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: bundle.ManifestName, Size: int64(len(doc)), Mode: 0o644})
	tw.Write(doc)
	tw.Close()
	return buf.Bytes()
}
