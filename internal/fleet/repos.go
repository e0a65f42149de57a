package fleet

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/jigkit/jig/registry"
)

// ParseRepos reads a repository list: one git URL or local path per line
// (a path may hold spaces, a URL may not); blank lines and lines starting
// with "#" are ignored, and a repeated repository counts once.
func ParseRepos(r io.Reader) ([]string, error) {
	var repos []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !plausibleRepo(line) {
			return nil, fmt.Errorf("line %d: %q is not a git URL or a path (one repository per line)", n, Redact(line))
		}
		if !seen[line] {
			seen[line] = true
			repos = append(repos, line)
		}
	}
	return repos, sc.Err()
}

// plausibleRepo reports whether s may be a repository address: not an
// option ("-..."), no control or bidirectional characters
// ([registry.DeceptiveRune]), and no spaces but in a local
// path ("/home/me/My Repos/app"; a URL or scp-like address followed by
// more words is two things on one line).
func plausibleRepo(s string) bool {
	if s == "" || strings.HasPrefix(s, "-") {
		return false
	}
	local := !strings.Contains(s, "://") && host(s) == ""
	for _, r := range s {
		if registry.DeceptiveRune(r) || (r == ' ' && !local) {
			return false
		}
	}
	return true
}

// lazyRegexp compiles expr on first use rather than when any jig command
// starts: every command links this package, few use it.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
