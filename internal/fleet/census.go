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
// Projects whose report was not verified (sent with a static token, which
// anyone who may report could have sent in their name) are left out and
// returned in unverified, unless includeUnverified.
func CensusRepos(projects []wire.CensusProjectRow, version string, includeUnverified bool) (repos, unknown, unverified []string) {
	for _, p := range projects {
		if p.Version == version || slices.Contains(repos, p.Project) {
			continue
		}
		if !p.Verified && !includeUnverified {
			// Anyone who may report could have sent it in the project's
			// name.
			if !slices.Contains(unverified, p.Project) {
				unverified = append(unverified, p.Project)
			}
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
	return repos, unknown, unverified
}
