package fleet

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/jigkit/jig/registry/wire"
)

// CensusRepos returns the repositories of a registry's census (the
// projects [wire.CensusRegistry] lists) that are not on version: each
// project's name is its origin remote, so a git URL, an scp-like address
// or an absolute path is a repository to move. The projects named only by
// a directory (no origin remote when they reported), and names no
// repository list could hold (see [ParseRepos]), are returned in unknown.
func CensusRepos(projects []wire.CensusProjectRow, version string) (repos, unknown []string) {
	for _, p := range projects {
		if p.Version == version || slices.Contains(repos, p.Project) {
			continue
		}
		if !plausibleRepo(p.Project) {
			// Whoever may read the namespace may report: a name that is
			// an option or holds blanks or control characters is no
			// repository to clone.
			if !slices.Contains(unknown, p.Project) {
				unknown = append(unknown, p.Project)
			}
			continue
		}
		if strings.Contains(p.Project, "://") || host(p.Project) != "" || filepath.IsAbs(p.Project) {
			repos = append(repos, p.Project)
		} else if !slices.Contains(unknown, p.Project) {
			unknown = append(unknown, p.Project)
		}
	}
	return repos, unknown
}
