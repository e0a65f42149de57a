package registry

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/Masterminds/semver/v3"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registry/wire"
)

// VersionList is the document stored as versions.json and served at
// .../versions: every published version, newest first.
type VersionList wire.VersionList

// ParseVersionList decodes a versions.json document and checks every entry
// is a full SemVer version.
func ParseVersionList(data []byte) (*VersionList, error) {
	if err := CheckJSONDepth(layout.VersionsFile, data); err != nil {
		return nil, err
	}
	var vl VersionList
	if err := json.Unmarshal(data, &vl); err != nil {
		return nil, fmt.Errorf("versions.json is not valid JSON: %w", err)
	}
	for _, v := range vl.Versions {
		if !ValidVersion(v) {
			return nil, fmt.Errorf("versions.json: %q is not a SemVer version", v)
		}
	}
	return &vl, nil
}

// Latest returns the first (newest) version, or "" when there is none.
func (vl *VersionList) Latest() string {
	if vl == nil || len(vl.Versions) == 0 {
		return ""
	}
	return vl.Versions[0]
}

// Add inserts v (if absent) and sorts the list newest first by SemVer
// precedence. It reports whether v was added.
func (vl *VersionList) Add(v string) bool {
	for _, x := range vl.Versions {
		if x == v {
			return false
		}
	}
	vl.Versions = append(vl.Versions, v)
	SortVersions(vl.Versions)
	return true
}

// Marshal encodes the list as the reference does: two-space indentation and
// a trailing newline.
func (vl *VersionList) Marshal() ([]byte, error) {
	if vl.Versions == nil {
		vl.Versions = []string{}
	}
	b, err := json.MarshalIndent(vl, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// SortVersions sorts SemVer strings newest first. Strings that do not parse
// sort last, in their original order.
func SortVersions(vs []string) {
	parsed := make(map[string]*semver.Version, len(vs))
	for _, v := range vs {
		if sv, err := semver.StrictNewVersion(v); err == nil {
			parsed[v] = sv
		}
	}
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := parsed[vs[i]], parsed[vs[j]]
		switch {
		case a == nil:
			return false
		case b == nil:
			return true
		}
		return a.GreaterThan(b)
	})
}
