// Package storage defines the key/value store jig-server keeps registries
// in, and the errors every backend returns.
//
// Keys are slash-separated relative paths laid out as on the reference's
// disk storage; package [github.com/jigkit/jig/registry/layout] builds and
// classifies them:
//
//	@ns/<seg>…/versions.json
//	@ns/<seg>…/<version>/registry.json
//	@ns/<seg>…/<version>/<files[].path>
//	presets/<name>/preset.json
//
// Backends live in sub-packages (memory, disk, s3); storagetest.Run is the
// conformance suite every backend passes.
//
// Beyond the required [Storage] methods a backend may implement optional
// capabilities, found by type assertion: [ConditionalPutter] (atomic
// create-only and compare-and-swap writes, used by publishing),
// [DirLister] (cheap listing of a folder's immediate children, used for
// namespace discovery), [BatchPutter] (many writes flushed together, used
// by publishing) and [Pinger] (a liveness probe for /health). The helpers
// [ListDir] and [NewBatch] use [DirLister] and [BatchPutter] when present
// and fall back to [Storage.List] and [Storage.Put].
package storage
