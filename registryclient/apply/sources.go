package apply

import (
	"context"

	"github.com/jigkit/jig/registry"
)

// Source fetches registries, their files and presets. *registryclient.Sources
// satisfies it; tests and build tools may provide their own.
type Source interface {
	// Manifest returns the manifest of id; an id without a version means
	// the latest one.
	Manifest(ctx context.Context, id registry.ID) (*registry.Manifest, error)
	// File returns the bytes of a file of the version-pinned registry id.
	File(ctx context.Context, id registry.ID, path string) ([]byte, error)
	// Preset returns the preset with the given name (no "@presets/").
	Preset(ctx context.Context, name string) (*registry.Preset, error)
}

// DigestSource is a [Source] that also reports the sha-256 digest of the
// manifest bytes it returns and whether they were verified against the
// server's digest index. *registryclient.Sources satisfies it. The engine
// records the digest in jig.json and reports the verification state in
// the plan.
type DigestSource interface {
	Source
	// ManifestDigest is Manifest plus the manifest's digest
	// ("sha256:<hex>") and whether it was verified.
	ManifestDigest(ctx context.Context, id registry.ID) (m *registry.Manifest, digest string, verified bool, err error)
}

// OfflineSource is a [Source] that can say it makes no network request
// (*registryclient.Sources with --offline): the engine's progress then
// says it reads from the cache rather than fetching or downloading.
type OfflineSource interface {
	Source
	Offline() bool
}

// offline reports whether e's source reads only its cache.
func (e *Engine) offline() bool {
	o, ok := e.src.(OfflineSource)
	return ok && o.Offline()
}

// AheadSource is a [DigestSource] that can download a registry's files
// while it checks the manifest's digest, so that a scaffold costs one
// round trip less. *registryclient.Sources satisfies it.
type AheadSource interface {
	DigestSource
	// ManifestDigestAhead is ManifestDigest that, once the manifest is in
	// and before it is checked, may call files with it and start
	// downloading the paths it returns (of the manifest's version), for
	// the File calls that follow. What it returns is verified exactly as
	// ManifestDigest's result is.
	ManifestDigestAhead(ctx context.Context, id registry.ID, files func(*registry.Manifest) []string) (m *registry.Manifest, digest string, verified bool, err error)
}

// NamespaceSource is a [Source] that knows which namespace shorthand
// identifiers ("runtimes/node") mean in what it serves: a storage written
// for the reference names its registries in shorthand meaning "@rack".
// *registryclient.Sources satisfies it (an rc-file setting, else what the
// server advertises). With a plain [Source], shorthand means
// [registry.DefaultNamespace].
type NamespaceSource interface {
	Source
	// DefaultNamespace returns the namespace shorthand means in content
	// from namespace from's source: preset members (from is
	// [registry.PresetNamespace]), a registry's registryDependencies and
	// conflicts (from is its namespace), and identifiers the user typed
	// (from is [registry.DefaultNamespace]). It is called only when a
	// shorthand identifier appears.
	DefaultNamespace(ctx context.Context, from string) (string, error)
}

// VersionLister is implemented by sources that can list a registry's
// published versions (*registryclient.Sources does).
type VersionLister interface {
	// Versions lists id's versions, newest first.
	Versions(ctx context.Context, id registry.ID) ([]string, error)
}

// MergeBaseSource is a [DigestSource] that can read a version the project
// has installed for use only as the merge base of an update or remove: the
// ancestor that decides what counts as the project's change, none of whose
// content is written. *registryclient.Sources satisfies it: under a trust
// policy that requires signatures, an installed version without a trusted
// signature is read this way (trusted false), so a project can move from
// an unsigned version to a signed one.
type MergeBaseSource interface {
	DigestSource
	// MergeBase is ManifestDigest for an installed version read only as
	// a merge base; trusted is false when the version was let through
	// only as such.
	MergeBase(ctx context.Context, id registry.ID) (m *registry.Manifest, digest string, trusted bool, err error)
	// MergeBaseFile is File for a version MergeBase returned.
	MergeBaseFile(ctx context.Context, id registry.ID, path string) ([]byte, error)
}

// LogSource is a [Source] that checks the versions it serves against
// their namespaces' transparency logs. *registryclient.Sources satisfies
// it. The engine gathers the log checks of a resolution with BatchLog, so
// that a preset's registries cost one log request, not one each, and
// records each registry's log index in jig.json.
type LogSource interface {
	Source
	// BatchLog returns the context for the reads of one resolution and
	// the function that makes their log checks; the engine calls it, and
	// stops on its error, before it uses anything read.
	BatchLog(ctx context.Context) (context.Context, func(context.Context) error)
	// LogIndex returns the index of id@version in its namespace's log,
	// once verified; false when the namespace has no trusted log key.
	LogIndex(id registry.ID, version string) (int64, bool)
}

// logPosition returns where id@version is in its namespace's log when the
// source verified it there; nil otherwise.
func (e *Engine) logPosition(id registry.ID, version string) *registry.LogPosition {
	ls, ok := e.src.(LogSource)
	if !ok {
		return nil
	}
	i, ok := ls.LogIndex(id, version)
	if !ok || i < 0 {
		return nil
	}
	return &registry.LogPosition{Index: i}
}
