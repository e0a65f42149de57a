package layout

import (
	"strings"

	"github.com/jigkit/jig/internal/ident"
)

// File names and top-level folders of the layout.
const (
	// VersionsFile is the name of a registry's version list.
	VersionsFile = "versions.json"
	// ManifestFile is the name of a version's manifest, in the storage and
	// in a package directory.
	ManifestFile = "registry.json"
	// DigestIndexFile is the name of a version's digest index, stored next
	// to its manifest. A registry may not declare a file with this name.
	DigestIndexFile = ".jig-digests.json"
	// SignaturesFile is the name of a version's signatures document
	// (registry/wire.Signatures), stored next to its manifest. A registry
	// may not declare a file with this name.
	SignaturesFile = ".jig-signatures.json"
	// PublisherFile is the name of the record of the OIDC identity that
	// published a version (trusted publishing), stored next to its
	// manifest. A registry may not declare a file with this name.
	PublisherFile = ".jig-publisher.json"
	// LogProofFile is the name of a version's offline transparency-log
	// proof (a C2SP tlog-proof, registry/translog.Proof) in a bundle: the
	// exporting server's proof that the version is in its namespace's
	// log. A registry may not declare a file with this name.
	LogProofFile = ".jig-log-proof"
	// PresetFile is the name of a preset document, in the storage and in a
	// package directory.
	PresetFile = "preset.json"
	// PresetsDir is the top-level folder of the presets, with its slash.
	PresetsDir = "presets/"
	// SchemasDir is the top-level folder of a storage's own JSON Schemas,
	// with its slash: the reference's default SCHEMA_DIR
	// (<STORAGE_ROOT>/schema), and its Worker's R2 "schema/" prefix.
	SchemasDir = "schema/"
	// ClaimsDir is the top-level folder of publish claims, with its slash.
	ClaimsDir = ".publish/"
	// CensusDir is the top-level folder of the census reports, with its
	// slash.
	CensusDir = ".census/"
	// UpstreamsDir is the top-level folder of the markers a mirror writes
	// for the namespaces it fills from an upstream, with its slash.
	UpstreamsDir = ".upstreams/"
	// HealthKey is the key the /health probe writes and reads.
	HealthKey = ".healthcheck"
	// IndexDir is the top-level folder of the catalog index's state (its
	// snapshot and change log), with its slash.
	IndexDir = ".index/"
	// IndexSnapshot is the key of the catalog index's snapshot: the
	// search entry of every registry and preset, as of a point in the
	// change log.
	IndexSnapshot = IndexDir + "snapshot.json"
	// IndexChangesDir is the folder of the catalog's change log: one
	// object per committed change, in one folder per hour.
	IndexChangesDir = IndexDir + "changes/"

	// LogDir is the top-level folder of the transparency logs, one per
	// namespace, with its slash.
	LogDir      = ".tlog/"
	claimSuffix = ".lock"
)

// IndexChangeBucket returns the folder of the change log's records of one
// hour ("2026120619", UTC), with its slash.
func IndexChangeBucket(hour string) string { return IndexChangesDir + hour + "/" }

// NamespaceDir returns "@ns/", the folder of a namespace.
func NamespaceDir(namespace string) string { return namespace + "/" }

// RegistryDir returns "@ns/<path>/", the folder of the registry at path
// ("runtimes/node") in namespace ("@main").
func RegistryDir(namespace, path string) string { return namespace + "/" + path + "/" }

// Versions returns "@ns/<path>/versions.json", the key of a registry's
// version list.
func Versions(namespace, path string) string { return RegistryDir(namespace, path) + VersionsFile }

// VersionDir returns "@ns/<path>/<version>/", the folder of one published
// version: its manifest and files.
func VersionDir(namespace, path, version string) string {
	return RegistryDir(namespace, path) + version + "/"
}

// Manifest returns "@ns/<path>/<version>/registry.json", the key of a
// version's manifest. A version exists once this key does.
func Manifest(namespace, path, version string) string {
	return VersionDir(namespace, path, version) + ManifestFile
}

// DigestIndex returns "@ns/<path>/<version>/.jig-digests.json", the key
// of a version's digest index.
func DigestIndex(namespace, path, version string) string {
	return VersionDir(namespace, path, version) + DigestIndexFile
}

// Signatures returns "@ns/<path>/<version>/.jig-signatures.json", the key
// of a version's signatures. It is written before the manifest, so a
// version that is not committed has none that anyone serves.
func Signatures(namespace, path, version string) string {
	return VersionDir(namespace, path, version) + SignaturesFile
}

// Publisher returns "@ns/<path>/<version>/.jig-publisher.json", the key
// of the record of the identity that published a version. Like the
// signatures, it is written before the manifest.
func Publisher(namespace, path, version string) string {
	return VersionDir(namespace, path, version) + PublisherFile
}

// LogProof returns "@ns/<path>/<version>/.jig-log-proof", the bundle
// entry of a version's log proof.
func LogProof(namespace, path, version string) string {
	return VersionDir(namespace, path, version) + LogProofFile
}

// Reserved reports whether file, a normalised file path of a version, is
// the name of the digest index, the signatures document, the publisher
// record or the log proof ([DigestIndexFile], [SignaturesFile],
// [PublisherFile], [LogProofFile]) in any letter case: a registry may not
// declare it.
// Letter case does not matter because storage on a case-insensitive file
// system (macOS, Windows) would take ".JIG-SIGNATURES.JSON" for the
// signatures document.
func Reserved(file string) bool {
	return strings.EqualFold(file, DigestIndexFile) || strings.EqualFold(file, SignaturesFile) || strings.EqualFold(file, PublisherFile) || strings.EqualFold(file, LogProofFile)
}

// File returns "@ns/<path>/<version>/<file>", the key of a package file;
// file is the normalised files[].path ("templates/a.txt", no leading "./").
func File(namespace, path, version, file string) string {
	return VersionDir(namespace, path, version) + file
}

// UpstreamMarker returns ".upstreams/@ns.json", the key a mirror writes
// before it stores the first version of namespace fetched from an
// upstream: a namespace holding registries but no marker was published
// to locally, and is never filled from an upstream.
func UpstreamMarker(namespace string) string { return UpstreamsDir + namespace + ".json" }

// Claim returns ".publish/@ns/<path>/<version>.lock", the key a publisher
// creates while it writes the version.
func Claim(namespace, path, version string) string {
	return ClaimsDir + namespace + "/" + path + "/" + version + claimSuffix
}

// ParseClaim takes a claim key (see [Claim]) apart. ok is false for any
// key that [Claim] cannot have built from a valid namespace, path and
// version, including keys under [ClaimsDir] that do not follow the layout.
func ParseClaim(key string) (namespace, path, version string, ok bool) {
	rest, found := strings.CutPrefix(key, ClaimsDir)
	if !found {
		return "", "", "", false
	}
	rest, found = strings.CutSuffix(rest, claimSuffix)
	if !found {
		return "", "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 3 || !ident.Namespace(parts[0]) || !ident.Version(parts[len(parts)-1]) {
		return "", "", "", false
	}
	for _, p := range parts[1 : len(parts)-1] {
		if !ident.Segment(p) {
			return "", "", "", false
		}
	}
	return parts[0], strings.Join(parts[1:len(parts)-1], "/"), parts[len(parts)-1], true
}

// CensusNamespaceDir returns ".census/@ns/", the folder of the census
// reports of a namespace.
func CensusNamespaceDir(namespace string) string { return CensusDir + namespace + "/" }

// CensusReport returns ".census/@ns/<project>.json", the key of one
// project's census report for namespace; project is the hex digest that
// stands for the project's identity (the identity itself may hold
// characters no key may).
func CensusReport(namespace, project string) string {
	return CensusNamespaceDir(namespace) + project + ".json"
}

// PresetDir returns "presets/<name>/", the folder of a preset.
func PresetDir(name string) string { return PresetsDir + name + "/" }

// Preset returns "presets/<name>/preset.json", the key of the latest
// version of a preset (what GET /presets/<name> serves).
func Preset(name string) string { return PresetDir(name) + PresetFile }

// PresetVersionDir returns "presets/<name>/<version>/", the folder of one
// published preset version.
func PresetVersionDir(name, version string) string { return PresetDir(name) + version + "/" }

// PresetVersion returns "presets/<name>/<version>/preset.json", the key of
// one published preset version.
func PresetVersion(name, version string) string { return PresetVersionDir(name, version) + PresetFile }

// LogNamespaceDir returns ".tlog/@ns/", the folder of a namespace's
// transparency log.
func LogNamespaceDir(namespace string) string { return LogDir + namespace + "/" }

// LogCheckpoint returns ".tlog/@ns/checkpoint", the key of the log's
// latest signed checkpoint: the log's commit point.
func LogCheckpoint(namespace string) string { return LogNamespaceDir(namespace) + "checkpoint" }

// LogCosignatures returns ".tlog/@ns/cosignatures", the key of the
// witness cosignatures the log keeps: the newest of each witness.
func LogCosignatures(namespace string) string { return LogNamespaceDir(namespace) + "cosignatures" }

// LogLock returns ".tlog/@ns/lock", the key of the log's append lock.
func LogLock(namespace string) string { return LogNamespaceDir(namespace) + "lock" }

// LogTile returns ".tlog/@ns/<tile>", the key of one tile of the log;
// tile is a tile path as golang.org/x/mod/sumdb/tlog spells it
// ("tile/8/0/000", "tile/8/data/000.p/5").
func LogTile(namespace, tile string) string { return LogNamespaceDir(namespace) + tile }

// LogEntry returns ".tlog/@ns/entry/<path>/<version>", the key naming
// the log index of one version's record.
func LogEntry(namespace, path, version string) string {
	return LogNamespaceDir(namespace) + "entry/" + path + "/" + version
}

// Schema returns "schema/<name>", the key of a schema file a storage
// serves instead of the built-in one (GET /schemas/<name>).
func Schema(name string) string { return SchemasDir + name }

// Kind is what a storage key holds. The zero value, [KindOther], is any key
// outside the layout.
type Kind int

// The kinds [Classify] tells apart.
const (
	KindOther         Kind = iota // not part of the layout (auth files, stray keys)
	KindVersions                  // @ns/<seg>…/versions.json
	KindManifest                  // @ns/<seg>…/<version>/registry.json
	KindFile                      // @ns/<seg>…/<version>/<file>…
	KindPreset                    // presets/<name>/preset.json
	KindPresetVersion             // presets/<name>/<version>/preset.json
	KindClaim                     // .publish/…
	KindHealth                    // .healthcheck
	KindDigestIndex               // @ns/<seg>…/<version>/.jig-digests.json
	KindSignatures                // @ns/<seg>…/<version>/.jig-signatures.json
	KindLogProof                  // @ns/<seg>…/<version>/.jig-log-proof (bundles only)
)

var kindNames = [...]string{"other", "versions", "manifest", "file", "preset", "preset-version", "claim", "health", "digest-index", "signatures", "log-proof"}

// String returns the kind's name: "other", "versions", "manifest", "file",
// "preset", "preset-version", "claim", "health", "digest-index",
// "signatures" or "log-proof".
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "other"
	}
	return kindNames[k]
}

// Immutable reports whether a key of kind k never changes once written:
// the manifest, digest index, signatures and files of a published version
// and a published preset version (publishing them is create-only).
func (k Kind) Immutable() bool {
	return k == KindManifest || k == KindDigestIndex || k == KindSignatures || k == KindFile || k == KindPresetVersion
}

// Mutable reports whether a key of kind k is part of the published content
// but may change: a version list, or the latest version of a preset.
func (k Kind) Mutable() bool { return k == KindVersions || k == KindPreset }

// Key is a storage key taken apart by [Classify]. Only the fields that the
// kind has are set.
type Key struct {
	Kind      Kind
	Namespace string // "@main": versions, manifest, digest-index, signatures, file
	Path      string // "runtimes/node": versions, manifest, digest-index, signatures, file
	Version   string // manifest, digest-index, signatures, file, preset-version
	File      string // the package file path: file
	Preset    string // the preset name: preset, preset-version
}

// String rebuilds the storage key of k. For [KindOther] and [KindClaim]
// (whose parts Classify does not keep) it returns "".
func (k Key) String() string {
	switch k.Kind {
	case KindVersions:
		return Versions(k.Namespace, k.Path)
	case KindManifest:
		return Manifest(k.Namespace, k.Path, k.Version)
	case KindDigestIndex:
		return DigestIndex(k.Namespace, k.Path, k.Version)
	case KindSignatures:
		return Signatures(k.Namespace, k.Path, k.Version)
	case KindLogProof:
		return LogProof(k.Namespace, k.Path, k.Version)
	case KindFile:
		return File(k.Namespace, k.Path, k.Version, k.File)
	case KindPreset:
		return Preset(k.Preset)
	case KindPresetVersion:
		return PresetVersion(k.Preset, k.Version)
	case KindHealth:
		return HealthKey
	}
	return ""
}

// Classify takes a storage key apart. Keys that do not follow the layout
// exactly, including keys whose identifiers break the grammar ("@Main/x/
// versions.json", "presets/a/v1/preset.json") or whose file path is not a
// legal package path, are [KindOther].
func Classify(key string) Key {
	switch {
	case key == HealthKey:
		return Key{Kind: KindHealth}
	case strings.HasPrefix(key, ClaimsDir):
		return Key{Kind: KindClaim}
	}
	parts := strings.Split(key, "/")
	if parts[0]+"/" == PresetsDir {
		switch {
		case len(parts) == 3 && ident.Segment(parts[1]) && parts[2] == PresetFile:
			return Key{Kind: KindPreset, Preset: parts[1]}
		case len(parts) == 4 && ident.Segment(parts[1]) && ident.Version(parts[2]) && parts[3] == PresetFile:
			return Key{Kind: KindPresetVersion, Preset: parts[1], Version: parts[2]}
		}
		return Key{}
	}
	if len(parts) < 3 || !ident.Namespace(parts[0]) {
		return Key{}
	}
	for i := 1; i < len(parts); i++ {
		p := parts[i]
		if ident.Segment(p) {
			continue
		}
		if i < 2 {
			return Key{} // no path segment before the version or list
		}
		k := Key{Namespace: parts[0], Path: strings.Join(parts[1:i], "/")}
		rest := strings.Join(parts[i+1:], "/")
		switch {
		case i == len(parts)-1 && p == VersionsFile:
			k.Kind = KindVersions
		case i < len(parts)-1 && ident.Version(p) && rest == ManifestFile:
			k.Kind, k.Version = KindManifest, p
		case i < len(parts)-1 && ident.Version(p) && rest == DigestIndexFile:
			k.Kind, k.Version = KindDigestIndex, p
		case i < len(parts)-1 && ident.Version(p) && rest == SignaturesFile:
			k.Kind, k.Version = KindSignatures, p
		case i < len(parts)-1 && ident.Version(p) && rest == LogProofFile:
			k.Kind, k.Version = KindLogProof, p
		case i < len(parts)-1 && ident.Version(p) && ident.FilePath(rest) && !strings.HasPrefix(rest, "./"):
			k.Kind, k.Version, k.File = KindFile, p, rest
		default:
			return Key{}
		}
		return k
	}
	return Key{}
}
