package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry/wire"
)

// TestFleetFromCensusAsks: on a terminal, --from-census lists what it
// would clone and push to and asks; "no" stops before any clone. "yes"
// goes on. Without --yes and with CI set, it fails naming --yes even where
// a terminal could ask.
func TestFleetFromCensusAsks(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "app.git")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/census/@team/x" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(wire.CensusRegistry{Namespace: "@team", Path: "x", Latest: "1.1.0", Projects: []wire.CensusProjectRow{
			{Project: missing, Version: "1.0.0", State: "clean", Verified: true},
			{Project: "https://evil.example/app.git", Version: "1.0.0", State: "clean", Verified: true},
			{Project: "https://claimed.example/app.git", Version: "1.0.0", State: "clean"},
		}})
	}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		name     string
		prompt   *fakePrompter
		env      map[string]string
		wantCode int
		want     string
	}{
		{"declined", &fakePrompter{confirm: false}, nil, ExitAborted, "Operation cancelled"},
		{"confirmed", &fakePrompter{confirm: true}, nil, ExitError, "clone: "},
		{"CI", &fakePrompter{confirm: true}, map[string]string{"CI": "true"}, ExitUsage, "pass --yes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			if err := os.WriteFile(filepath.Join(home, ".jigrc"), []byte(`{"registries":{"@team":"`+srv.URL+`"}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"HOME": home, "JIG_CACHE_DIR": filepath.Join(home, "cache")}
			for k, v := range c.env {
				env[k] = v
			}
			var out, errb strings.Builder
			app := newApp(strings.NewReader(""), &out, &errb, func(k string) string { return env[k] })
			app.testPrompt = c.prompt
			code := run(t.Context(), []string{"fleet", "update", "@team/x@1.1.0", "--from-census", "--allow-local"}, app)
			all := out.String() + errb.String()
			if code != c.wantCode || !strings.Contains(all, c.want) {
				t.Fatalf("exit %d, want %d and %q:\n%s", code, c.wantCode, c.want, all)
			}
			if !strings.Contains(all, "1 project of the census reported without a verified identity") || strings.Contains(all, "  https://claimed.example") {
				t.Errorf("the unverified project is not left out with a warning:\n%s", all)
			}
			if !strings.Contains(all, "names 1 repository not on 1.1.0") || !strings.Contains(all, "\n  "+missing+"\n") || !strings.Contains(all, "left out https://evil.example/app.git") {
				t.Errorf("the list is not shown:\n%s", all)
			}
			asked := strings.Join(c.prompt.asked, "|")
			if want := "Roll @team/x 1.1.0 out to this repository?"; (c.name != "CI") != (asked == want) {
				t.Errorf("got questions %q", asked)
			}
			if _, err := os.Stat(filepath.Join(home, "cache", "fleet", "team-x-1.1.0", "state.json")); (err == nil) != (c.name == "confirmed") {
				t.Errorf("state file there: %v, want it only once confirmed", err == nil)
			}
		})
	}
}

// TestFleetForgeFlags: the flags of the forge's API say what is wrong and
// what to do, before anything is cloned; the token never shows.
func TestFleetForgeFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"gate without the API", []string{"--gate", "ci"}, nil, "--forge gitea needs an API token"},
		{"gate on an unknown forge", []string{"--gate", "ci"}, map[string]string{"REPOS": "https://git.example.com/a/b.git\n"}, "use --forge gitea, github or gitlab with its token set"},
		{"gitea without a token", []string{"--forge", "gitea"}, nil, "set GITEA_TOKEN"},
		{"min-green without a gate", []string{"--forge", "gitea", "--min-green", "3"}, map[string]string{"GITEA_TOKEN": "tok-s3cret-123"}, "use it with --gate ci"},
		{"bad window", []string{"--forge", "gitea", "--window", "9-5"}, map[string]string{"GITEA_TOKEN": "tok-s3cret-123"}, "write the hours as 09:00-17:00"},
		{"no budget", []string{"--forge", "gitea", "--max-requests-per-hour", "0"}, map[string]string{"GITEA_TOKEN": "tok-s3cret-123"}, "--max-requests-per-hour must be at least 1"},
		{"two forges", []string{"--forge", "gitea"}, map[string]string{"GITEA_TOKEN": "tok-s3cret-123", "REPOS": "https://gitea.example.com/a/b.git\nhttps://other.example/a/b.git\n"}, "roll out to one forge at a time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			repos := "https://gitea.example.com/a/b.git\n"
			if c.env["REPOS"] != "" {
				repos = c.env["REPOS"]
			}
			if err := os.WriteFile(filepath.Join(home, "repos.txt"), []byte(repos), 0o600); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"HOME": home, "JIG_CACHE_DIR": filepath.Join(home, "cache"), "JIG_CONFIG": filepath.Join(home, ".jigrc")}
			for k, v := range c.env {
				env[k] = v
			}
			var out, errb strings.Builder
			app := newApp(strings.NewReader(""), &out, &errb, func(k string) string { return env[k] })
			args := append([]string{"fleet", "update", "@team/x@1.1.0", "--repos", filepath.Join(home, "repos.txt")}, c.args...)
			code := run(t.Context(), args, app)
			all := out.String() + errb.String()
			if code == 0 || !strings.Contains(all, c.want) {
				t.Errorf("exit %d, want an error with %q:\n%s", code, c.want, all)
			}
			if strings.Contains(all, "tok-s3cret-123") {
				t.Errorf("the token shows:\n%s", all)
			}
			if _, err := os.Stat(filepath.Join(home, "cache", "fleet", "team-x-1.1.0", "repos")); err == nil {
				t.Error("a repository was cloned")
			}
		})
	}
}
