package apply

import (
	"slices"
	"strings"

	"github.com/jigkit/jig/registry/wire"
)

// CensusState is the census state ([wire.CensusClean] and the others) of
// one checked registry and its drifted targets, sorted: a target that
// still has conflict markers makes it conflicted, else a changed file or
// package.json entry, or a file resolved without the version's changes
// ([FileNotTaken]), modified, else a deleted file missing. Drifted
// package.json entries count as the target "package.json". No file
// content is read or returned.
func CensusState(r RegistryCheck) (state string, drifted []string) {
	conflict, modified, missing := false, false, false
	for _, f := range r.Files {
		switch f.Status {
		case FileConflict:
			conflict = true
		case FileModified, FileNotTaken:
			modified = true
		case FileMissing:
			missing = true
		default:
			continue
		}
		drifted = append(drifted, f.Target)
	}
	if len(r.Packages) > 0 {
		modified = true
		drifted = append(drifted, "package.json")
	}
	slices.Sort(drifted)
	drifted = slices.Compact(drifted)
	switch {
	case conflict:
		return wire.CensusConflicted, drifted
	case modified:
		return wire.CensusModified, drifted
	case missing:
		return wire.CensusMissing, drifted
	}
	return wire.CensusClean, nil
}

// CensusReports turns a check report into one census report per namespace
// of the installed registries, for "jig check --report": base carries the
// project's identity (project, branch, commit, jig version), each report
// its namespace's registries in jig.json order, each with at most
// [wire.MaxCensusDrifted] drifted targets (the first, sorted).
func CensusReports(rep *CheckReport, base wire.CensusReport) map[string]*wire.CensusReport {
	out := map[string]*wire.CensusReport{}
	for _, r := range rep.Registries {
		ns, path, ok := strings.Cut(r.Key, "/")
		if !ok {
			continue
		}
		cr := out[ns]
		if cr == nil {
			c := base
			c.Registries = []wire.CensusEntry{}
			cr = &c
			out[ns] = cr
		}
		state, drifted := CensusState(r)
		drifted = drifted[:min(len(drifted), wire.MaxCensusDrifted)]
		e := wire.CensusEntry{Path: path, Version: r.Version, State: state, Drifted: drifted}
		for _, f := range r.Files {
			if f.Resolution != nil && slices.Contains(drifted, f.Target) {
				e.NotTaken = append(e.NotTaken, wire.CensusNotTaken{Target: f.Target, Side: f.Resolution.Side, Changes: f.Resolution.NotTaken})
			}
		}
		cr.Registries = append(cr.Registries, e)
	}
	return out
}
