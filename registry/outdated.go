package registry

import "github.com/Masterminds/semver/v3"

// UpdateCandidates picks, from a registry's published versions, the ones
// "jig outdated" reports for an installed version:
//
//   - latest: the newest version, pre-releases excluded unless the
//     installed version is one (or no release exists);
//   - wanted: the newest such version compatible with the installed one
//     as npm's caret sees it (same major; same minor below 1.0.0; same
//     patch below 0.1.0), never older than the installed version.
//
// Versions that do not parse are ignored. Both are "" when versions is
// empty; wanted is installed itself when nothing newer is compatible.
func UpdateCandidates(installed string, versions []string) (wanted, latest string) {
	iv, _ := semver.StrictNewVersion(installed)
	pre := iv != nil && iv.Prerelease() != ""
	var bestAll, bestRelease, bestWanted *semver.Version
	var sAll, sRelease, sWanted string
	for _, s := range versions {
		v, err := semver.StrictNewVersion(s)
		if err != nil {
			continue
		}
		if bestAll == nil || v.GreaterThan(bestAll) {
			bestAll, sAll = v, s
		}
		if v.Prerelease() != "" && !pre {
			continue
		}
		if bestRelease == nil || v.GreaterThan(bestRelease) {
			bestRelease, sRelease = v, s
		}
		if iv != nil && caretCompatible(iv, v) && !v.LessThan(iv) && (bestWanted == nil || v.GreaterThan(bestWanted)) {
			bestWanted, sWanted = v, s
		}
	}
	latest = sRelease
	if latest == "" {
		latest = sAll
	}
	wanted = sWanted
	if wanted == "" && iv != nil {
		wanted = installed
	}
	return wanted, latest
}

func caretCompatible(base, v *semver.Version) bool {
	switch {
	case base.Major() > 0:
		return v.Major() == base.Major()
	case base.Minor() > 0:
		return v.Major() == 0 && v.Minor() == base.Minor()
	}
	return v.Major() == 0 && v.Minor() == 0 && v.Patch() == base.Patch()
}
