package registry

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
	iv, okIV := parseVersion(installed)
	pre := okIV && iv.pre != nil
	var bestAll, bestRelease, bestWanted *semVersion
	var sAll, sRelease, sWanted string
	for _, s := range versions {
		v, ok := parseVersion(s)
		if !ok {
			continue
		}
		if bestAll == nil || v.compare(*bestAll) > 0 {
			bestAll, sAll = &v, s
		}
		if v.pre != nil && !pre {
			continue
		}
		if bestRelease == nil || v.compare(*bestRelease) > 0 {
			bestRelease, sRelease = &v, s
		}
		if okIV && caretCompatible(iv, v) && v.compare(iv) >= 0 && (bestWanted == nil || v.compare(*bestWanted) > 0) {
			bestWanted, sWanted = &v, s
		}
	}
	latest = sRelease
	if latest == "" {
		latest = sAll
	}
	wanted = sWanted
	if wanted == "" && okIV {
		wanted = installed
	}
	return wanted, latest
}

func caretCompatible(base, v semVersion) bool {
	switch {
	case !base.isZero(0):
		return v.nums[0] == base.nums[0]
	case !base.isZero(1):
		return v.isZero(0) && v.nums[1] == base.nums[1]
	}
	return v.isZero(0) && v.isZero(1) && v.nums[2] == base.nums[2]
}
