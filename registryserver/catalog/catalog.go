package catalog

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/storage"
)

//go:embed all:data
var embedded embed.FS

// HealthMarker is the key of the marker file the reference server's
// /health checks for (REFERENCE.md 2.6). The catalog includes it, so a
// reference server pointed at a storage jig-server seeded reports healthy.
// jig-server's own /health probes the backend instead.
const HealthMarker = layout.HealthKey

// FS returns the catalog as a read-only file system laid out like the
// storage: its paths are storage keys.
func FS() fs.FS {
	sub, err := fs.Sub(embedded, "data")
	if err != nil {
		// fs.Sub fails only for an invalid directory name, and "data" is
		// a valid constant.
		panic(err)
	}
	return sub
}

// Registries returns the canonical keys of the catalog's registries
// ("@main/runtimes/node"), sorted.
func Registries() []string {
	var out []string
	for _, k := range keys() {
		if key := layout.Classify(k); key.Kind == layout.KindVersions {
			out = append(out, strings.TrimSuffix(layout.RegistryDir(key.Namespace, key.Path), "/"))
		}
	}
	sort.Strings(out)
	return out
}

// Presets returns the names of the catalog's presets, sorted.
func Presets() []string {
	var out []string
	for _, k := range keys() {
		if key := layout.Classify(k); key.Kind == layout.KindPreset {
			out = append(out, key.Preset)
		}
	}
	sort.Strings(out)
	return out
}

// Keys returns every file of the catalog, as storage keys, in the order
// [Seed] writes them: the registries' manifests and template files first,
// then each registry's versions.json, then the presets, and last the
// [HealthMarker]. A reader of a partly seeded storage therefore never finds
// a version list naming a manifest that is not there yet, nor a preset
// naming a missing registry, and a reference server reports healthy only
// once the seed is complete.
func Keys() []string {
	var files, versions, presets []string
	for _, k := range keys() {
		switch layout.Classify(k).Kind {
		case layout.KindHealth:
			continue
		case layout.KindPreset, layout.KindPresetVersion:
			presets = append(presets, k)
		case layout.KindVersions:
			versions = append(versions, k)
		default:
			files = append(files, k)
		}
	}
	return append(append(append(files, versions...), presets...), HealthMarker)
}

// keys lists every regular file of FS, sorted.
func keys() []string {
	var out []string
	err := fs.WalkDir(FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		// The embedded file system is fixed at build time; walking it
		// cannot fail.
		panic(err)
	}
	sort.Strings(out)
	return out
}

// Seed writes the catalog into st when st holds no keys at all, in the
// order of [Keys], and reports whether it did. It lists folders one level
// at a time and stops at the first key ([holdsAKey]), so its cost does not
// grow with what st holds. A storage that holds anything
// (even a single unrelated key) is left untouched, so an operator's content
// is never mixed with or overwritten by the catalog. Seed stops at the first
// failed write and returns its error; running it again after the failure is
// not a fresh start (the storage is no longer empty), so callers should
// report the error and let the operator clear the storage.
func Seed(ctx context.Context, st storage.Storage) (seeded bool, err error) {
	has, err := holdsAKey(ctx, st, "")
	if err != nil {
		return false, fmt.Errorf("catalog: list the storage to see whether it is empty: %w", err)
	}
	if has {
		return false, nil
	}
	fsys := FS()
	for _, k := range Keys() {
		b, err := fs.ReadFile(fsys, k)
		if err != nil {
			return false, fmt.Errorf("catalog: read embedded %s: %w", k, err)
		}
		if err := st.Put(ctx, k, bytes.NewReader(b), int64(len(b))); err != nil {
			return false, fmt.Errorf("catalog: seed %s: %w", k, err)
		}
	}
	return true, nil
}

// holdsAKey reports whether the folder prefix of st holds a key, at any
// depth. It lists one folder at a time ([storage.ListDir]) and stops at the
// first key: for a storage with content that is a few listings down one
// path, whatever the catalog's size. Only folders without any key (an
// empty folder left on a disk, a volume's lost+found) are walked whole.
func holdsAKey(ctx context.Context, st storage.Storage, prefix string) (bool, error) {
	children, err := storage.ListDir(ctx, st, prefix)
	if err != nil {
		return false, err
	}
	for _, c := range children {
		if !strings.HasSuffix(c, "/") {
			return true, nil
		}
	}
	for _, c := range children {
		if has, err := holdsAKey(ctx, st, c); has || err != nil {
			return has, err
		}
	}
	return false, nil
}
