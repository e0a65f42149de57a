package core

import (
	"strings"
	"testing"
)

func TestOwnsProject(t *testing.T) {
	gh := &Identity{Issuer: githubIssuer, Repository: "acme/templates"}
	gl := &Identity{Issuer: "https://gitlab.example.com", Repository: "platform/templates"}
	for _, tt := range []struct {
		id      *Identity
		project string
		want    bool
	}{
		{gh, "https://github.com/acme/templates.git", true},
		{gh, "https://github.com/acme/templates", true},
		{gh, "https://GitHub.com/ACME/Templates", true},
		{gh, "git@github.com:acme/templates.git", true},
		{gh, "ssh://git@github.com:22/acme/templates.git", true},
		{gh, "https://github.com/acme/templates-evil.git", false},
		{gh, "https://github.com/acme/templates/extra", false},
		{gh, "https://gitlab.example.com/acme/templates.git", false},
		{gh, "https://github.com.evil.example/acme/templates.git", false},
		{gh, "github.com/acme/templates", false},
		{gh, "", false},
		{gl, "https://gitlab.example.com/platform/templates.git", true},
		{gl, "git@gitlab.example.com:platform/templates.git", true},
		{gl, "https://github.com/platform/templates.git", false},
		{&Identity{Issuer: githubIssuer}, "https://github.com/acme/templates.git", false},
	} {
		if got := tt.id.OwnsProject(tt.project); got != tt.want {
			t.Errorf("%s %s: OwnsProject(%q) = %v, want %v", tt.id.Issuer, tt.id.Repository, tt.project, got, tt.want)
		}
	}
}

// FuzzOwnsProject: whatever the project address, an identity owns it
// only when the address's path is the identity's repository.
func FuzzOwnsProject(f *testing.F) {
	f.Add("https://github.com/acme/templates.git", "acme/templates", githubIssuer)
	f.Add("git@gitlab.example.com:platform/templates.git", "platform/templates", "https://gitlab.example.com")
	f.Add("ssh://git@[::1]:22/a/b", "a/b", "https://[::1]")
	f.Fuzz(func(t *testing.T, project, repo, issuer string) {
		id := &Identity{Issuer: issuer, Repository: repo}
		if !id.OwnsProject(project) {
			return
		}
		_, p, ok := splitRemote(project)
		if repo == "" || !ok || !strings.EqualFold(strings.TrimSuffix(p, ".git"), repo) {
			t.Errorf("OwnsProject(%q) is true for repository %q of %q", project, repo, issuer)
		}
	})
}
