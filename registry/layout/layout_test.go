package layout_test

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry/layout"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key  string
		want layout.Key
	}{
		{"@main/runtimes/node/versions.json", layout.Key{Kind: layout.KindVersions, Namespace: "@main", Path: "runtimes/node"}},
		{"@main/a/versions.json", layout.Key{Kind: layout.KindVersions, Namespace: "@main", Path: "a"}},
		{"@main/a/1.0.0/registry.json", layout.Key{Kind: layout.KindManifest, Namespace: "@main", Path: "a", Version: "1.0.0"}},
		{"@main/a/b/1.0.0-rc.1+x/registry.json", layout.Key{Kind: layout.KindManifest, Namespace: "@main", Path: "a/b", Version: "1.0.0-rc.1+x"}},
		{"@main/a/1.0.0/x/registry.json", layout.Key{Kind: layout.KindFile, Namespace: "@main", Path: "a", Version: "1.0.0", File: "x/registry.json"}},
		{"@main/a/1.0.0/t/.env.example", layout.Key{Kind: layout.KindFile, Namespace: "@main", Path: "a", Version: "1.0.0", File: "t/.env.example"}},
		{"@main/a/1.0.0/versions.json", layout.Key{Kind: layout.KindFile, Namespace: "@main", Path: "a", Version: "1.0.0", File: "versions.json"}},
		{"presets/node/preset.json", layout.Key{Kind: layout.KindPreset, Preset: "node"}},
		{"presets/node/2.0.0/preset.json", layout.Key{Kind: layout.KindPresetVersion, Preset: "node", Version: "2.0.0"}},
		{".publish/@main/a/1.0.0.lock", layout.Key{Kind: layout.KindClaim}},
		{".healthcheck", layout.Key{Kind: layout.KindHealth}},
		{"@main/a/1.0.0/.jig-digests.json", layout.Key{Kind: layout.KindDigestIndex, Namespace: "@main", Path: "a", Version: "1.0.0"}},
		{"@main/a/1.0.0/x/.jig-digests.json", layout.Key{Kind: layout.KindFile, Namespace: "@main", Path: "a", Version: "1.0.0", File: "x/.jig-digests.json"}},
		{"@main/a/1.0.0/.jig-signatures.json", layout.Key{Kind: layout.KindSignatures, Namespace: "@main", Path: "a", Version: "1.0.0"}},

		// Outside the layout.
		{"", layout.Key{}},
		{"tokens.json", layout.Key{}},
		{"@main/versions.json", layout.Key{}},           // no path segment
		{"@main/1.0.0/registry.json", layout.Key{}},     // no path segment before the version
		{"@Main/a/versions.json", layout.Key{}},         // bad namespace
		{"main/a/versions.json", layout.Key{}},          // no "@"
		{"@main/A/versions.json", layout.Key{}},         // bad segment
		{"@main/a/versions.json/x", layout.Key{}},       // list is a leaf
		{"@main/a/1.0/registry.json", layout.Key{}},     // not a full version
		{"@main/a/1.0.0", layout.Key{}},                 // a version folder is not a key
		{"@main/a/1.0.0/", layout.Key{}},                // empty file path
		{"@main/a/1.0.0/x/../y", layout.Key{}},          // ".." in the file path
		{"@main/a/1.0.0/./y", layout.Key{}},             // "." in the file path
		{"@main/a/1.0.0/x//y", layout.Key{}},            // empty file segment
		{"@main/a/1.0.0/x y", layout.Key{}},             // illegal file character
		{"@main//a/versions.json", layout.Key{}},        // empty segment
		{"presets/node", layout.Key{}},                  // a folder
		{"presets/Node/preset.json", layout.Key{}},      // bad name
		{"presets/node/v1/preset.json", layout.Key{}},   // bad version
		{"presets/node/1.0.0/other.json", layout.Key{}}, // not a preset document
		{"presets/a/b/1.0.0/preset.json", layout.Key{}}, // preset names are one segment
		{".healthcheck/x", layout.Key{}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			t.Parallel()
			got := layout.Classify(tt.key)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Classify(%q) mismatch (-want +got):\n%s", tt.key, diff)
			}
			if s := got.String(); got.Kind != layout.KindOther && got.Kind != layout.KindClaim && s != tt.key {
				t.Errorf("Classify(%q).String() = %q, want the key back", tt.key, s)
			}
		})
	}
}

func TestBuildersClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key  string
		kind layout.Kind
	}{
		{layout.Versions("@main", "a/b"), layout.KindVersions},
		{layout.Manifest("@main", "a/b", "1.0.0"), layout.KindManifest},
		{layout.File("@main", "a/b", "1.0.0", "src/x.ts"), layout.KindFile},
		{layout.Preset("node"), layout.KindPreset},
		{layout.PresetVersion("node", "1.0.0"), layout.KindPresetVersion},
		{layout.Claim("@main", "a/b", "1.0.0"), layout.KindClaim},
		{layout.HealthKey, layout.KindHealth},
		{layout.DigestIndex("@main", "a/b", "1.0.0"), layout.KindDigestIndex},
	}
	for _, tt := range tests {
		if got := layout.Classify(tt.key).Kind; got != tt.kind {
			t.Errorf("Classify(%q).Kind = %v, want %v", tt.key, got, tt.kind)
		}
	}
	// Every key of a version lies under its folder, which lies under the
	// registry's folder, which lies under the namespace's folder.
	dir := layout.VersionDir("@main", "a/b", "1.0.0")
	for _, k := range []string{layout.Manifest("@main", "a/b", "1.0.0"), layout.File("@main", "a/b", "1.0.0", "x")} {
		if !strings.HasPrefix(k, dir) {
			t.Errorf("%q is not under %q", k, dir)
		}
	}
	if !strings.HasPrefix(dir, layout.RegistryDir("@main", "a/b")) || !strings.HasPrefix(layout.RegistryDir("@main", "a/b"), layout.NamespaceDir("@main")) {
		t.Errorf("folders do not nest: %q", dir)
	}
	if !strings.HasPrefix(layout.PresetVersion("n", "1.0.0"), layout.PresetVersionDir("n", "1.0.0")) ||
		!strings.HasPrefix(layout.Preset("n"), layout.PresetDir("n")) || !strings.HasPrefix(layout.PresetDir("n"), layout.PresetsDir) {
		t.Error("preset folders do not nest")
	}
}

func TestKindString(t *testing.T) {
	t.Parallel()
	for k, want := range map[layout.Kind]string{
		layout.KindOther: "other", layout.KindVersions: "versions", layout.KindManifest: "manifest",
		layout.KindFile: "file", layout.KindPreset: "preset", layout.KindPresetVersion: "preset-version",
		layout.KindClaim: "claim", layout.KindHealth: "health", layout.KindDigestIndex: "digest-index", layout.Kind(-1): "other", layout.Kind(99): "other",
	} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}

// FuzzClassify checks that a classified key is rebuilt exactly by its
// builder, and that a key outside the layout never yields parts.
func FuzzClassify(f *testing.F) {
	b, err := os.ReadFile("testdata/keys.txt")
	if err != nil {
		f.Fatal(err)
	}
	for _, key := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f.Add(key)
	}
	f.Fuzz(func(t *testing.T, key string) {
		k := layout.Classify(key)
		switch k.Kind {
		case layout.KindOther, layout.KindClaim:
			if k != (layout.Key{Kind: k.Kind}) {
				t.Fatalf("Classify(%q) = %+v: parts set for kind %v", key, k, k.Kind)
			}
			return
		case layout.KindFile:
			if strings.Contains("/"+k.File+"/", "/../") || strings.HasPrefix(k.File, "/") {
				t.Fatalf("Classify(%q): file %q escapes the version folder", key, k.File)
			}
		}
		if got := k.String(); got != key {
			t.Fatalf("Classify(%q).String() = %q", key, got)
		}
		if !k.Kind.Immutable() && !k.Kind.Mutable() && k.Kind != layout.KindHealth {
			t.Fatalf("kind %v is neither mutable nor immutable", k.Kind)
		}
	})
}

func TestParseClaim(t *testing.T) {
	t.Parallel()
	type parts struct{ Namespace, Path, Version string }
	tests := []struct {
		key  string
		want parts
		ok   bool
	}{
		{layout.Claim("@main", "runtimes/node", "1.2.0"), parts{"@main", "runtimes/node", "1.2.0"}, true},
		{layout.Claim("@main", "a", "1.0.0-rc.lock+b.1"), parts{"@main", "a", "1.0.0-rc.lock+b.1"}, true},
		{".publish/@main/a/1.0.0", parts{}, false},       // no suffix
		{".publish/@main/1.0.0.lock", parts{}, false},    // no path segment
		{".publish/@Main/a/1.0.0.lock", parts{}, false},  // bad namespace
		{".publish/@main/../1.0.0.lock", parts{}, false}, // bad segment
		{".publish/@main/a/1.0.lock", parts{}, false},    // not a full version
		{".publish/garbage.lock", parts{}, false},
		{"@main/a/1.0.0.lock", parts{}, false}, // not under .publish/
		{"", parts{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			t.Parallel()
			ns, p, v, ok := layout.ParseClaim(tt.key)
			if got := (parts{ns, p, v}); ok != tt.ok || got != tt.want {
				t.Errorf("ParseClaim(%q) = %+v, %v; want %+v, %v", tt.key, got, ok, tt.want, tt.ok)
			}
		})
	}
}
