package core

import (
	"hash/maphash"
	"strings"
	"sync/atomic"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/storage"
)

// resourceKind is what a path under /registries/ addresses.
type resourceKind int

const (
	KindLatest     resourceKind = iota + 1 // @ns/<seg>…
	KindVersions                           // @ns/<seg>…/versions
	KindVersioned                          // @ns/<seg>…/<semver>
	kindFile                               // @ns/<seg>…/<semver>/files/<p>
	KindDigests                            // @ns/<seg>…/<semver>/digests
	KindSignatures                         // @ns/<seg>…/<semver>/signatures
)

// Resource is a parsed path under /registries/.
type Resource struct {
	Kind      resourceKind
	Namespace string // "@main"
	Path      string // "runtimes/node"
	Version   string // for kindVersioned and kindFile
	File      string // for kindFile: relative, validated

	// The storage keys of the resource, set by [resourceCache.parse] so
	// that a repeated path costs no key building: the registry's
	// versions.json, the version's registry.json (for a version, its
	// files and digests) and the file's (kindFile). "" when not set.
	versionsKey, manifestKey, fileKey string
}

// withKeys returns r with its storage keys set.
func (r Resource) withKeys() Resource {
	r.versionsKey = layout.Versions(r.Namespace, r.Path)
	if r.Version != "" {
		r.manifestKey = layout.Manifest(r.Namespace, r.Path, r.Version)
	}
	if r.Kind == kindFile {
		r.fileKey = layout.File(r.Namespace, r.Path, r.Version, r.File)
	}
	return r
}

// VersionsFile is the storage key of the registry's versions.json.
func (r Resource) VersionsFile() string {
	if r.versionsKey != "" {
		return r.versionsKey
	}
	return layout.Versions(r.Namespace, r.Path)
}

// ManifestFile is the storage key of the registry.json of the version
// the resource names.
func (r Resource) ManifestFile() string {
	if r.manifestKey != "" {
		return r.manifestKey
	}
	return layout.Manifest(r.Namespace, r.Path, r.Version)
}

// dir is the storage folder of the registry, "@ns/<seg>…", without its
// trailing slash.
func (r Resource) dir() string {
	return strings.TrimSuffix(layout.RegistryDir(r.Namespace, r.Path), "/")
}

// key is the storage key of the object the resource names. For kindLatest
// it needs the latest version, which the caller looks up first.
func (r Resource) key(version string) string {
	switch r.Kind {
	case KindVersions:
		return r.VersionsFile()
	case kindFile:
		if r.fileKey != "" {
			return r.fileKey
		}
		return layout.File(r.Namespace, r.Path, r.Version, r.File)
	case KindVersioned:
		return r.ManifestFile()
	}
	return layout.Manifest(r.Namespace, r.Path, version)
}

// parseResource parses the part of a URL path after "/registries/"
// (already percent-decoded) by the grammar of DESIGN.md section 3:
//
//   - part 0 is the namespace;
//   - the version is the first later part that is a full SemVer version;
//   - with no version, a last part "versions" after at least one segment
//     is the versions list, otherwise every part is a segment (latest);
//   - with a version, at least one segment comes before it, and after it
//     comes nothing (the manifest), "digests" (jig's digest index; the
//     reference answers 400 here), or "files" and a file path whose
//     segments match [A-Za-z0-9._@+-]+ and are not "." or "..".
//
// Empty parts (a doubled, leading or trailing slash) are left out, as the
// reference does. A path whose storage key would break the key limits
// every backend shares (a part over [storage.MaxSegmentLength] bytes, a
// key over [storage.MaxKeyLength]) is invalid. It reports false for
// anything else.
func parseResource(p string) (Resource, bool) {
	var parts []string
	for s := range strings.SplitSeq(p, "/") {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return Resource{}, false
	}
	r := Resource{Namespace: parts[0]}
	if !registry.ValidNamespace(r.Namespace) {
		return Resource{}, false
	}
	vi := -1
	for i := 1; i < len(parts); i++ {
		if registry.ValidVersion(parts[i]) {
			vi = i
			break
		}
	}
	var segs []string
	switch {
	case vi < 0 && len(parts) > 2 && parts[len(parts)-1] == "versions":
		r.Kind, segs = KindVersions, parts[1:len(parts)-1]
	case vi < 0:
		r.Kind, segs = KindLatest, parts[1:]
	default:
		segs, r.Version = parts[1:vi], parts[vi]
		rest := parts[vi+1:]
		switch {
		case len(rest) == 0:
			r.Kind = KindVersioned
		case len(rest) == 1 && rest[0] == "digests":
			r.Kind = KindDigests
		case len(rest) == 1 && rest[0] == "signatures":
			r.Kind = KindSignatures
		case rest[0] == "files" && len(rest) > 1:
			r.Kind, r.File = kindFile, strings.Join(rest[1:], "/")
			if strings.HasPrefix(r.File, "./") || !registry.ValidFilePath(r.File) {
				return Resource{}, false
			}
		default:
			return Resource{}, false
		}
	}
	if len(segs) == 0 {
		return Resource{}, false
	}
	for _, s := range segs {
		if !registry.ValidSegment(s) {
			return Resource{}, false
		}
	}
	r.Path = strings.Join(segs, "/")
	// The longest key the resource reads.
	key := layout.Versions(r.Namespace, r.Path)
	switch r.Kind {
	case kindFile:
		key = r.key("")
	case KindVersioned, KindDigests:
		key = layout.DigestIndex(r.Namespace, r.Path, r.Version)
	case KindSignatures:
		key = layout.Signatures(r.Namespace, r.Path, r.Version)
	}
	if !storage.ValidKey(key) {
		return Resource{}, false
	}
	return r, true
}

// Resources remembers recent results of [parseResource]: parsing is a
// pure function, so one table serves every handler.
var Resources = &resourceCache{seed: maphash.MakeSeed()}

// resourceCacheSlots is the size of the table: more than the paths a
// registry server's hot set spans.
const resourceCacheSlots = 1024

// resourceCache remembers the parses of valid resource paths, so that a
// path read again skips the grammar's regular expressions. It is a fixed
// table of slots picked by a seeded hash of the path: bounded whatever
// paths clients send, free of locks, and a path whose slot another path
// took is parsed again.
type resourceCache struct {
	seed  maphash.Seed
	slots [resourceCacheSlots]atomic.Pointer[parsedResource]
}

type parsedResource struct {
	p   string
	res Resource
}

// Parse is [parseResource], from the table when p was parsed recently.
func (c *resourceCache) Parse(p string) (Resource, bool) {
	slot := &c.slots[maphash.String(c.seed, p)%resourceCacheSlots]
	if e := slot.Load(); e != nil && e.p == p {
		return e.res, true
	}
	// p may share its memory with the whole request line (a long query
	// included): keep a copy, which the resource's fields then point into.
	p = strings.Clone(p)
	res, ok := parseResource(p)
	if ok {
		res = res.withKeys()
		slot.Store(&parsedResource{p: p, res: res})
	}
	return res, ok
}
