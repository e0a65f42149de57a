package registryserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/storage"
)

// markUpstream decides whether namespace ns of st may hold versions that
// come from elsewhere (an upstream, a bundle): yes when it has the marker
// [layout.UpstreamMarker], or when it holds nothing yet, in which case
// markUpstream writes the marker with doc (what filled it, for people
// reading the storage) before anything else is stored there. A namespace
// that holds registries but no marker was published into on this server:
// bound is then true and nothing is written.
//
// A mirror calls it before it stores the first version of a namespace, and
// a bundle import before it imports one, so that a namespace filled by
// either can later be served from an upstream ([Handler.CheckUpstreams]).
func markUpstream(ctx context.Context, st storage.Storage, ns string, doc map[string]string) (bound bool, err error) {
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
