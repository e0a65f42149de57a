package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jigkit/jig/internal/pkgarchive"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/storage"
)

// CheckPresetDoc checks a preset document as a publish (POST /presets)
// does: its size, the preset schema, a preset named by a valid name with a
// valid version, and storage keys the backends can hold. It is the check
// of every preset this server stores that it did not get from a publish:
// one fetched from an upstream, one imported from a bundle.
func CheckPresetDoc(data []byte) (*registry.Preset, error) {
	if len(data) > pkgarchive.MaxPresetSize {
		return nil, pkgarchive.PresetTooLarge()
	}
	if err := registry.ValidatePresetJSON(data); err != nil {
		return nil, fmt.Errorf("it fails the preset schema: %w", err)
	}
	p, err := registry.ParsePreset(data)
	if err != nil {
		return nil, err
	}
	if !registry.ValidVersion(p.Version) {
		return nil, fmt.Errorf("its version %q is not a semantic version such as 1.0.0", p.Version)
	}
	if !storage.ValidKey(layout.PresetVersion(p.Name, p.Version)) {
		return nil, fmt.Errorf("preset %s@%s has a name or version too long to store", p.Name, p.Version)
	}
	return p, nil
}

// MarkUpstream decides whether namespace ns of st may hold versions that
// come from elsewhere (an upstream, a bundle): yes when it has the marker
// [layout.UpstreamMarker], or when it holds nothing yet, in which case
// MarkUpstream writes the marker with doc (what filled it, for people
// reading the storage) before anything else is stored there. A namespace
// that holds registries but no marker was published into on this server:
// bound is then true and nothing is written.
//
// A mirror calls it before it stores the first version of a namespace, and
// a bundle import before it imports one, so that a namespace filled by
// either can later be served from an upstream ([Handler.CheckUpstreams]).
func MarkUpstream(ctx context.Context, st storage.Storage, ns string, doc map[string]string) (bound bool, err error) {
	marker := layout.UpstreamMarker(ns)
	_, err = st.Stat(ctx, marker)
	if err == nil {
		return false, nil
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return false, err
	}
	children, err := storage.ListDir(ctx, st, layout.NamespaceDir(ns))
	if err != nil {
		return false, err
	}
	if len(children) > 0 {
		return true, nil
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return false, err
	}
	return false, st.Put(ctx, marker, bytes.NewReader(data), int64(len(data)))
}
