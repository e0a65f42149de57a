package registryserver

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
	kindLatest     resourceKind = iota + 1 // @ns/<seg>…
	kindVersions                           // @ns/<seg>…/versions
	kindVersioned                          // @ns/<seg>…/<semver>
	kindFile                               // @ns/<seg>…/<semver>/files/<p>
	kindDigests                            // @ns/<seg>…/<semver>/digests
	kindSignatures                         // @ns/<seg>…/<semver>/signatures
)

// resource is a parsed path under /registries/.
type resource struct {
	kind      resourceKind
	namespace string // "@main"
	path      string // "runtimes/node"
	version   string // for kindVersioned and kindFile
	file      string // for kindFile: relative, validated

	// The storage keys of the resource, set by [resourceCache.parse] so
	// that a repeated path costs no key building: the registry's
	// versions.json, the version's registry.json (for a version, its
	// files and digests) and the file's (kindFile). "" when not set.
	versionsKey, manifestKey, fileKey string
}

// withKeys returns r with its storage keys set.
func (r resource) withKeys() resource {
	r.versionsKey = layout.Versions(r.namespace, r.path)
	if r.version != "" {
		r.manifestKey = layout.Manifest(r.namespace, r.path, r.version)
	}
	if r.kind == kindFile {
		r.fileKey = layout.File(r.namespace, r.path, r.version, r.file)
	}
	return r
}

// versionsFile is the storage key of the registry's versions.json.
func (r resource) versionsFile() string {
	if r.versionsKey != "" {
		return r.versionsKey
	}
	return layout.Versions(r.namespace, r.path)
}

// manifestFile is the storage key of the registry.json of the version
// the resource names.
func (r resource) manifestFile() string {
	if r.manifestKey != "" {
		return r.manifestKey
	}
	return layout.Manifest(r.namespace, r.path, r.version)
}

// dir is the storage folder of the registry, "@ns/<seg>…", without its
// trailing slash.
func (r resource) dir() string {
	return strings.TrimSuffix(layout.RegistryDir(r.namespace, r.path), "/")
}

// key is the storage key of the object the resource names. For kindLatest
// it needs the latest version, which the caller looks up first.
func (r resource) key(version string) string {
	switch r.kind {
	case kindVersions:
		return r.versionsFile()
	case kindFile:
		if r.fileKey != "" {
			return r.fileKey
		}
		return layout.File(r.namespace, r.path, r.version, r.file)
	case kindVersioned:
		return r.manifestFile()
	}
	return layout.Manifest(r.namespace, r.path, version)
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
func parseResource(p string) (resource, bool) {
	var parts []string
	for s := range strings.SplitSeq(p, "/") {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return resource{}, false
	}
	r := resource{namespace: parts[0]}
	if !registry.ValidNamespace(r.namespace) {
		return resource{}, false
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
		r.kind, segs = kindVersions, parts[1:len(parts)-1]
	case vi < 0:
		r.kind, segs = kindLatest, parts[1:]
	default:
		segs, r.version = parts[1:vi], parts[vi]
		rest := parts[vi+1:]
		switch {
		case len(rest) == 0:
			r.kind = kindVersioned
		case len(rest) == 1 && rest[0] == "digests":
			r.kind = kindDigests
		case len(rest) == 1 && rest[0] == "signatures":
			r.kind = kindSignatures
		case rest[0] == "files" && len(rest) > 1:
			r.kind, r.file = kindFile, strings.Join(rest[1:], "/")
			if strings.HasPrefix(r.file, "./") || !registry.ValidFilePath(r.file) {
				return resource{}, false
			}
		default:
			return resource{}, false
		}
	}
	if len(segs) == 0 {
		return resource{}, false
	}
	for _, s := range segs {
		if !registry.ValidSegment(s) {
			return resource{}, false
		}
	}
	r.path = strings.Join(segs, "/")
	// The longest key the resource reads.
	key := layout.Versions(r.namespace, r.path)
	switch r.kind {
	case kindFile:
		key = r.key("")
	case kindVersioned, kindDigests:
		key = layout.DigestIndex(r.namespace, r.path, r.version)
	case kindSignatures:
		key = layout.Signatures(r.namespace, r.path, r.version)
	}
	if !storage.ValidKey(key) {
		return resource{}, false
	}
	return r, true
}

// resources remembers recent results of [parseResource]: parsing is a
// pure function, so one table serves every handler.
var resources = &resourceCache{seed: maphash.MakeSeed()}

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
	res resource
}

// parse is [parseResource], from the table when p was parsed recently.
func (c *resourceCache) parse(p string) (resource, bool) {
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
