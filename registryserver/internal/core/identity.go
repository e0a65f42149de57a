package core

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"path"
	"strings"
)

// Identity is the verified OIDC identity of a caller (a CI job, a
// person): who published a version, who sent a census report. It holds
// the claims the records keep, never the token.
type Identity struct {
	Issuer  string `json:"issuer"`
	Subject string `json:"subject"`
	// Repository is the repository the token names: GitHub's
	// "repository", GitLab's "project_path"; "" when it names none.
	Repository string `json:"repository,omitempty"`
	// Workflow is the workflow (pipeline definition) that ran: GitHub's
	// "job_workflow_ref" or "workflow_ref", GitLab's "ci_config_ref_uri".
	Workflow string `json:"workflow,omitempty"`
	// Ref is the branch or tag: "ref" ("refs/heads/main", or GitLab's
	// "main").
	Ref string `json:"ref,omitempty"`
	// Commit is the commit built: "sha".
	Commit string `json:"commit,omitempty"`
	// Person is set for a person logged in with jig login --sso (a
	// session token the server issued): their verified e-mail, else
	// their name at the issuer, else their subject. "" for a CI job.
	Person string `json:"person,omitempty"`
	// Claims are all the token's claims, for the claim rules; not
	// recorded.
	Claims map[string]any `json:"-"`
}

// claimString returns the first of the named claims that is a non-empty
// string.
func claimString(claims map[string]any, names ...string) string {
	for _, n := range names {
		if s, ok := claims[n].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// IdentityOf reads the identity of verified claims.
func IdentityOf(claims map[string]any) *Identity {
	return &Identity{
		Issuer:     claimString(claims, "iss"),
		Subject:    claimString(claims, "sub"),
		Repository: claimString(claims, "repository", "project_path"),
		Workflow:   claimString(claims, "job_workflow_ref", "workflow_ref", "ci_config_ref_uri"),
		Ref:        claimString(claims, "ref"),
		Commit:     claimString(claims, "sha"),
		Claims:     claims,
	}
}

// ID is who the identity is to the census's per-reporter limit and the
// audit log: "oidc:" and 12 hex digits of the SHA-256 of its issuer and
// subject.
func (id *Identity) ID() string {
	sum := sha256.Sum256([]byte(id.Issuer + "\x00" + id.Subject))
	return "oidc:" + hex.EncodeToString(sum[:6])
}

// Summary says who the identity is for people: "acme/templates on main,
// workflow release.yml" for a CI job, its subject otherwise.
func (id *Identity) Summary() string {
	who := id.Repository
	if who == "" {
		who = cmp.Or(id.Person, id.Subject)
	}
	var parts []string
	if ref := shortRef(id.Ref); ref != "" {
		who += " on " + ref
	}
	parts = append(parts, who)
	if wf := workflowFile(id.Workflow); wf != "" {
		parts = append(parts, "workflow "+wf)
	}
	return strings.Join(parts, ", ")
}

// shortRef is "main" for "refs/heads/main", "v1.2.0" for
// "refs/tags/v1.2.0".
func shortRef(ref string) string {
	for _, p := range []string{"refs/heads/", "refs/tags/"} {
		if s, ok := strings.CutPrefix(ref, p); ok {
			return s
		}
	}
	return ref
}

// workflowFile is "release.yml" for
// "acme/templates/.github/workflows/release.yml@refs/heads/main" (and
// GitLab's "gitlab.com/acme/templates//.gitlab-ci.yml@refs/heads/main").
func workflowFile(ref string) string {
	file, _, _ := strings.Cut(ref, "@")
	if file == "" {
		return ""
	}
	return path.Base(file)
}

// Record says everything the records keep of the identity:
// "acme/templates on main, workflow release.yml, commit 0123abc (issuer
// https://token.actions.githubusercontent.com, subject
// repo:acme/templates:ref:refs/heads/main)".
func (id *Identity) Record() string {
	s := id.Summary()
	if id.Commit != "" {
		s += ", commit " + id.Commit
	}
	return s + " (issuer " + id.Issuer + ", subject " + id.Subject + ")"
}

// githubIssuer is the issuer of GitHub Actions' identity tokens, whose
// repositories live on github.com.
const githubIssuer = "https://token.actions.githubusercontent.com"

// OwnsProject reports whether project, a census report's project (its
// origin remote: https://host/owner/repo.git, ssh://git@host/owner/repo,
// git@host:owner/repo.git), is the identity's repository: the same path
// (letter case aside, without .git) on the issuer's host (github.com for
// GitHub Actions).
func (id *Identity) OwnsProject(project string) bool {
	if id.Repository == "" {
		return false
	}
	host, repoPath, ok := splitRemote(project)
	if !ok || !strings.EqualFold(strings.TrimSuffix(repoPath, ".git"), id.Repository) {
		return false
	}
	want := "github.com"
	if id.Issuer != githubIssuer {
		u, err := url.Parse(id.Issuer)
		if err != nil {
			return false
		}
		want = u.Hostname()
	}
	return strings.EqualFold(host, want)
}

// splitRemote returns the host (without port or user) and the path
// (without slashes around it) of a git remote address.
func splitRemote(remote string) (host, repoPath string, ok bool) {
	if strings.Contains(remote, "://") {
		u, err := url.Parse(remote)
		if err != nil || u.Host == "" {
			return "", "", false
		}
		return u.Hostname(), strings.Trim(u.Path, "/"), true
	}
	// scp-like: [user@]host:path
	hostPart, p, found := strings.Cut(remote, ":")
	if !found || strings.Contains(hostPart, "/") {
		return "", "", false
	}
	if _, h, at := strings.Cut(hostPart, "@"); at {
		hostPart = h
	}
	return hostPart, strings.Trim(p, "/"), hostPart != ""
}
