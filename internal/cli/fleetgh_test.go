//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// TestGhAuthToken: without GITHUB_TOKEN or GH_TOKEN, the token is the one
// gh prints for the forge's host (gh auth token --hostname HOST); a gh
// that fails, prints something that is not a token, or prints too much
// gives none (the rollout then goes as without a token), and so does a
// PATH without gh.
func TestGhAuthToken(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, script, want string
	}{
		{"logged in", `echo gho_fromGhCli123`, "gho_fromGhCli123"},
		{"logged in, with a blank line", `printf '\ngho_fromGhCli123\n\n'`, "gho_fromGhCli123"},
		{"not logged in", `echo "no oauth token found for ghe.example.com" >&2; exit 1`, ""},
		{"no token printed", `exit 0`, ""},
		{"not a token", `echo "two words"`, ""},
		{"too much", `head -c 100000 /dev/zero | tr '\0' a`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			log := filepath.Join(dir, "args")
			script := "#!/bin/sh\nprintf '%s ' \"$@\" > " + log + "\n" + c.script + "\n"
			if err := testenv.WriteExecutable(filepath.Join(dir, "gh"), []byte(script)); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"PATH": dir}
			app := newApp(strings.NewReader(""), &strings.Builder{}, &strings.Builder{}, func(k string) string { return env[k] })
			cmd := &FleetUpdateCmd{Forge: "auto"}
			got := cmd.forgeToken(t.Context(), app, "github", []string{"https://ghe.example.com/acme/app.git"})
			if got != c.want {
				t.Errorf("got %.40q (%d bytes), want %q", got, len(got), c.want)
			}
			args, err := os.ReadFile(log)
			if err != nil || string(args) != "auth token --hostname ghe.example.com " {
				t.Errorf("gh got %q (%v), want auth token --hostname ghe.example.com", args, err)
			}
		})
	}
	t.Run("environment first", func(t *testing.T) {
		t.Parallel()
		env := map[string]string{"GH_TOKEN": "ghp_env", "PATH": "/nonexistent"}
		app := newApp(strings.NewReader(""), &strings.Builder{}, &strings.Builder{}, func(k string) string { return env[k] })
		if got := (&FleetUpdateCmd{}).forgeToken(t.Context(), app, "github", []string{"git@github.com:acme/app.git"}); got != "ghp_env" {
			t.Errorf("got %q, want GH_TOKEN's", got)
		}
		if got := (&FleetUpdateCmd{}).forgeToken(t.Context(), app, "gitea", []string{"https://gitea.example.com/acme/app.git"}); got != "" {
			t.Errorf("gitea took %q, want no token", got)
		}
	})
}

// TestForgeHost: gh is asked for the token of the host the repositories
// share, else of --forge-url's; local repositories name none.
func TestForgeHost(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		repos    []string
		forgeURL string
		want     string
	}{
		{[]string{"git@github.com:acme/a.git", "https://github.com/acme/b"}, "", "github.com"},
		{[]string{"https://GHE.example.com/acme/a.git"}, "", "ghe.example.com"},
		{[]string{"https://ghe.example.com/acme/a.git", "https://other.example.com/acme/b.git"}, "", ""},
		{[]string{"/srv/git/a.git"}, "", ""},
		{[]string{"/srv/git/a.git"}, "https://api.github.com", "github.com"},
		{[]string{"https://github.test/acme/a.git"}, "http://127.0.0.1:9999", "github.test"},
	} {
		if got := (&FleetUpdateCmd{ForgeURL: c.forgeURL}).forgeHost(c.repos); got != c.want {
			t.Errorf("forgeHost(%q, --forge-url %q) = %q, want %q", c.repos, c.forgeURL, got, c.want)
		}
	}
}
