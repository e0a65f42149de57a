package forge

import (
	"strings"
	"testing"
)

func TestParseRemote(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want Repo
		err  string
	}{
		{in: "https://gitea.example.com/acme/api.git", want: Repo{Base: "https://gitea.example.com", Owner: "acme", Name: "api"}},
		{in: "http://127.0.0.1:3000/acme/api", want: Repo{Base: "http://127.0.0.1:3000", Owner: "acme", Name: "api"}},
		{in: "https://git.example.com/gitea/acme/api.git", want: Repo{Base: "https://git.example.com/gitea", Owner: "acme", Name: "api"}},
		{in: "ssh://git@gitea.example.com:2222/acme/api.git", want: Repo{Base: "https://gitea.example.com", Owner: "acme", Name: "api"}},
		{in: "git@codeberg.org:acme/api.git", want: Repo{Base: "https://codeberg.org", Owner: "acme", Name: "api"}},
		{in: "https://user:tok@gitea.example.com/acme/api.git", want: Repo{Base: "https://gitea.example.com", Owner: "acme", Name: "api"}},
		{in: "/srv/git/api.git", err: "local repository"},
		{in: "https://gitea.example.com/api.git", err: "no owner/repository"},
		{in: "https://gitea.example.com/acme/..", err: "not an owner or repository"},
		{in: "file:///srv/acme/api.git", err: "https or ssh"},
	} {
		got, err := ParseRemote(c.in)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseRemote(%q): got %+v, %v; want an error with %q", c.in, got, err, c.err)
			}
		case err != nil:
			t.Errorf("ParseRemote(%q): %v", c.in, err)
		case got != c.want:
			t.Errorf("ParseRemote(%q): got %+v, want %+v", c.in, got, c.want)
		}
	}
}

// FuzzParseRemote: a parsed repository has an owner and a name that are
// single path segments, never "." or "..", and a base with no user
// information (no credentials reach the API's address).
func FuzzParseRemote(f *testing.F) {
	for _, s := range []string{"https://gitea.example.com/acme/api.git", "git@h:a/b", "ssh://u@h:22/x/y/z.git", "https://u:p@h/a/b", "https://h/%2e%2e/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRemote(s)
		if err != nil {
			return
		}
		for _, p := range []string{r.Owner, r.Name} {
			if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "/\\?#%") {
				t.Fatalf("ParseRemote(%q) = %+v: owner/name %q is not one path segment", s, r, p)
			}
		}
		if strings.Contains(r.Base, "@") && !strings.Contains(s, "@") {
			t.Fatalf("ParseRemote(%q): base %q", s, r.Base)
		}
		if i := strings.Index(r.Base, "://"); i < 0 || strings.Contains(r.Base[i+3:strings.IndexByte(r.Base[i+3:]+"/", '/')+i+3], "@") {
			t.Fatalf("ParseRemote(%q): base %q has user information", s, r.Base)
		}
	})
}

// TestRepoOf: GitLab's projects are named by their full path (nested
// groups), its API at the scheme and host, or at --forge-url for a
// GitLab under a sub-path; the other forges keep ParseRemote's owner/name
// and sub-path, with --forge-url in place of the base.
func TestRepoOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kind, remote, base string
		want               Repo
		project            string
		err                string
	}{
		{kind: KindGitLab, remote: "https://gitlab.com/acme/api.git", want: Repo{Base: "https://gitlab.com", Owner: "acme", Name: "api"}, project: "acme/api"},
		{kind: KindGitLab, remote: "https://gitlab.com/acme/platform/backend/api.git", want: Repo{Base: "https://gitlab.com", Owner: "acme/platform/backend", Name: "api"}, project: "acme/platform/backend/api"},
		{kind: KindGitLab, remote: "git@gitlab.example.com:acme/platform/api.git", want: Repo{Base: "https://gitlab.example.com", Owner: "acme/platform", Name: "api"}, project: "acme/platform/api"},
		{kind: KindGitLab, remote: "ssh://git@gitlab.example.com:2222/acme/platform/api.git", want: Repo{Base: "https://gitlab.example.com", Owner: "acme/platform", Name: "api"}, project: "acme/platform/api"},
		{kind: KindGitLab, remote: "http://127.0.0.1:8080/acme/sub/api", want: Repo{Base: "http://127.0.0.1:8080", Owner: "acme/sub", Name: "api"}, project: "acme/sub/api"},
		// a GitLab under a sub-path: --forge-url names it, the remote's
		// path loses it.
		{kind: KindGitLab, remote: "https://example.com/gitlab/acme/platform/api.git", base: "https://example.com/gitlab/", want: Repo{Base: "https://example.com/gitlab", Owner: "acme/platform", Name: "api"}, project: "acme/platform/api"},
		{kind: KindGitLab, remote: "git@example.com:acme/platform/api.git", base: "https://example.com/gitlab", want: Repo{Base: "https://example.com/gitlab", Owner: "acme/platform", Name: "api"}, project: "acme/platform/api"},
		// the API's address given for the web's.
		{kind: KindGitLab, remote: "https://gitlab.example.com/acme/api.git", base: "https://gitlab.example.com/api/v4/", want: Repo{Base: "https://gitlab.example.com", Owner: "acme", Name: "api"}, project: "acme/api"},
		// a group named like the sub-path keeps its name.
		{kind: KindGitLab, remote: "https://example.com/gitlab/api.git", base: "https://example.com/gitlab", want: Repo{Base: "https://example.com/gitlab", Owner: "gitlab", Name: "api"}, project: "gitlab/api"},
		// the API behind another address than the remotes'.
		{kind: KindGitLab, remote: "https://gitlab.example.com/acme/api.git", base: "https://gitlab-api.internal:8443", want: Repo{Base: "https://gitlab-api.internal:8443", Owner: "acme", Name: "api"}, project: "acme/api"},
		{kind: KindGitLab, remote: "https://gitlab.com/acme/../api.git", err: "not an owner or repository name"},
		{kind: KindGitLab, remote: "https://gitlab.com/acme//api.git", err: "not an owner or repository name"},
		{kind: KindGitLab, remote: "https://gitlab.com/api.git", err: "no owner/repository"},
		{kind: KindGitLab, remote: "/srv/git/api.git", err: "local repository"},
		{kind: KindGitea, remote: "https://git.example.com/gitea/acme/api.git", want: Repo{Base: "https://git.example.com/gitea", Owner: "acme", Name: "api"}, project: "acme/api"},
		{kind: KindGitea, remote: "https://git.example.com/acme/api.git", base: "https://git.example.com/gitea/", want: Repo{Base: "https://git.example.com/gitea", Owner: "acme", Name: "api"}, project: "acme/api"},
		{kind: KindGitHub, remote: "git@github.com:acme/api.git", want: Repo{Base: "https://github.com", Owner: "acme", Name: "api"}, project: "acme/api"},
	} {
		got, err := RepoOf(c.kind, c.remote, c.base)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("RepoOf(%s, %q, %q): got %+v, %v; want an error with %q", c.kind, c.remote, c.base, got, err, c.err)
			}
		case err != nil:
			t.Errorf("RepoOf(%s, %q, %q): %v", c.kind, c.remote, c.base, err)
		case got != c.want || got.String() != c.project:
			t.Errorf("RepoOf(%s, %q, %q): got %+v (%s), want %+v (%s)", c.kind, c.remote, c.base, got, got, c.want, c.project)
		}
	}
}

// FuzzRepoOf: a GitLab project's path is names separated by single
// slashes, never "." or "..", its base without user information.
func FuzzRepoOf(f *testing.F) {
	for _, s := range []string{"https://gitlab.com/a/b/c.git", "git@h:a/b/c", "ssh://u@h:22/x/y/z.git", "https://u:p@h/sub/a/b", "https://h/%2e%2e/b/c"} {
		f.Add(s, "")
		f.Add(s, "https://h/sub")
	}
	f.Fuzz(func(t *testing.T, remote, base string) {
		r, err := RepoOf(KindGitLab, remote, base)
		if err != nil {
			return
		}
		for _, p := range strings.Split(r.String(), "/") {
			if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "\\?#%") {
				t.Fatalf("RepoOf(%q, %q) = %+v: %q is not a name", remote, base, r, p)
			}
		}
		if base == "" && strings.Contains(r.Base, "@") {
			t.Fatalf("RepoOf(%q): base %q has user information", remote, r.Base)
		}
	})
}

func TestUndraft(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Draft: jig: update":   "jig: update",
		"draft:jig: update":    "jig: update",
		"[Draft] jig: update":  "jig: update",
		"(draft) jig: update":  "jig: update",
		"WIP: jig: update":     "jig: update",
		"jig: update":          "jig: update",
		"Drafting: the plan":   "Drafting: the plan",
		"jig: Draft: a prefix": "jig: Draft: a prefix",
	} {
		if got := Undraft(in); got != want {
			t.Errorf("Undraft(%q) = %q, want %q", in, got, want)
		}
	}
}
