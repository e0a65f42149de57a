package doctor

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryclient/rcfile"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

func TestPackageManager(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		files      map[string]string
		want, from string
	}{
		{name: "default", want: "npm", from: "default"},
		{name: "packageManager field wins", files: map[string]string{"package.json": `{"packageManager":"yarn@4.1.0"}`, "pnpm-lock.yaml": ""}, want: "yarn", from: "package.json packageManager"},
		{name: "pnpm lockfile", files: map[string]string{"pnpm-lock.yaml": ""}, want: "pnpm", from: "pnpm-lock.yaml"},
		{name: "yarn lockfile", files: map[string]string{"yarn.lock": ""}, want: "yarn", from: "yarn.lock"},
		{name: "bun lockb", files: map[string]string{"bun.lockb": ""}, want: "bun", from: "bun.lockb"},
		{name: "bun lock", files: map[string]string{"bun.lock": ""}, want: "bun", from: "bun.lock"},
		{name: "npm lockfile", files: map[string]string{"package-lock.json": "{}"}, want: "npm", from: "package-lock.json"},
		{name: "unknown manager ignored", files: map[string]string{"package.json": `{"packageManager":"cargo@1"}`}, want: "npm", from: "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, body := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, from := PackageManager(dir)
			if got != tt.want || from != tt.from {
				t.Errorf("got %s from %s, want %s from %s", got, from, tt.want, tt.from)
			}
		})
	}
}

func TestNodeCheck(t *testing.T) {
	t.Parallel()
	script := func(t *testing.T, version string) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), "node")
		// Not os.WriteFile: the subtests run in parallel and fork, and a
		// file written that way can be "text file busy" when run.
		if err := testenv.WriteExecutable(p, []byte("#!/bin/sh\necho "+version+"\n")); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name      string
		node      string // "" = not installed
		engines   string
		wantLevel string
		wantMsg   string
	}{
		{name: "ok without engines", node: "v20.1.0", wantLevel: Info, wantMsg: "Node.js version OK (20.1.0)"},
		{name: "ok with engines", node: "v22.11.0", engines: ">=22.10.0", wantLevel: Info, wantMsg: "Node.js version OK (22.11.0)"},
		{name: "too old", node: "v20.1.0", engines: ">=22.10.0", wantLevel: Error, wantMsg: "Node.js >=22.10.0 is required (detected v20.1.0)"},
		{name: "caret range", node: "v18.0.0", engines: "^18 || ^20", wantLevel: Info, wantMsg: "Node.js version OK (18.0.0)"},
		{name: "bad range", node: "v18.0.0", engines: "not a range", wantLevel: Warning},
		{name: "missing without engines", wantLevel: Warning, wantMsg: "node was not found in PATH"},
		{name: "missing with engines", engines: ">=18", wantLevel: Error, wantMsg: "node was not found in PATH (package.json requires node >=18)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.engines != "" {
				if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"engines":{"node":"`+tt.engines+`"}}`), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			nodePath := ""
			if tt.node != "" {
				nodePath = script(t, tt.node)
			}
			look := func(name string) (string, error) {
				if name == "node" && nodePath != "" {
					return nodePath, nil
				}
				return "", errors.New("not found")
			}
			r := nodeCheck(t.Context(), Options{Dir: dir, LookPath: look})
			if r.Level != tt.wantLevel || (tt.wantMsg != "" && r.Message != tt.wantMsg) {
				t.Errorf("got %s %q, want %s %q", r.Level, r.Message, tt.wantLevel, tt.wantMsg)
			}
		})
	}
}

func TestProjectChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		jig    string // "" = no file
		rack   bool   // the reference's rack.json is there
		want   []string
		errors bool
	}{
		{name: "missing is not an error outside a project", want: []string{"info project.jig-json"}},
		{name: "a project rk made offers jig adopt", rack: true, want: []string{"warning project.jig-json"}},
		{name: "invalid JSON", jig: `{`, want: []string{"error project.jig-json"}, errors: true},
		{name: "no items", jig: `{"name":"x"}`, want: []string{"info project.jig-json", "warning project.registries"}},
		{name: "items", jig: `{"name":"x","items":["@main/a@1.0.0","@main/b@1.0.0"]}`, want: []string{"info project.jig-json", "info project.registries"}},
		{name: "schema rejects", jig: `{"name":"x","bogus":1}`, want: []string{"error project.jig-json"}, errors: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.jig != "" {
				if err := os.WriteFile(filepath.Join(dir, "jig.json"), []byte(tt.jig), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.rack {
				if err := os.WriteFile(filepath.Join(dir, "rack.json"), []byte(`{"name":"x"}`), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			validate := func(b []byte) error {
				if string(b) == `{"name":"x","bogus":1}` {
					return errors.New("additional property bogus")
				}
				return nil
			}
			rs := project(Options{Dir: dir, ValidateProject: validate})
			if tt.rack && !strings.Contains(rs[0].Suggestion, "jig adopt") {
				t.Errorf("suggestion %q does not offer jig adopt", rs[0].Suggestion)
			}
			var got []string
			for _, r := range rs {
				got = append(got, r.Level+" "+r.ID)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// TestRemoteChecks runs the remote checks against a real jig-server:
// /health needs no token, so a wrong or missing token must be caught on an
// authenticated route.
func TestRemoteChecks(t *testing.T) {
	t.Parallel()
	st := memory.New()
	for k, v := range map[string]string{
		"@team/tools/x/versions.json":       `{"versions":["1.0.0"]}`,
		"@team/tools/x/1.0.0/registry.json": `{"name":"x","namespace":"@team","version":"1.0.0","type":"registry:feature","priority":4}`,
		"@other/tools/y/versions.json":      `{"versions":["1.0.0"]}`,
	} {
		if err := st.Put(t.Context(), k, strings.NewReader(v), int64(len(v))); err != nil {
			t.Fatal(err)
		}
	}
	auth, err := registryserver.ParseAuthConfig([]byte(`{"@main": [], "@team": [{"token": "team-token-0123456789"}], "@other": [{"token": "other-token-0123456789"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h, err := registryserver.New(registryserver.WithStorage(st), registryserver.WithAuth(auth))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	rc := fmt.Sprintf(`{"registries": {
		"@main": %[1]q, "@presets": %[1]q,
		"@team": {"url": %[1]q, "token": "team-token-0123456789"},
		"@other": {"url": %[1]q, "token": "wrong-token-0123456789"},
		"@team2": {"url": %[1]q}
	}}`, srv.URL)
	cfg, err := rcfile.Parse("rc", []byte(rc))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range remoteChecks(t.Context(), Options{Config: cfg}) {
		got[r.ID] = r.Level + " " + r.Message
	}
	want := map[string]string{
		"remote.@main":    "info Registry @main healthy (ok) and readable",
		"remote.@presets": "info Registry @presets healthy (ok)",
		"remote.@team":    "info Registry @team healthy (ok) and readable",
		"remote.@other":   "error Registry @other is healthy but rejected the configured token (401 INVALID_TOKEN)",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: got %q, want %q", id, got[id], w)
		}
	}
	// @team2 is not declared on the server: refused without a token. The
	// exact status depends on the server's existence-oracle rules; it must
	// be an error either way.
	if !strings.HasPrefix(got["remote.@team2"], "error ") {
		t.Errorf("remote.@team2: got %q, want an error", got["remote.@team2"])
	}
}

// TestBadConfigIsOneFinding: an unreadable rc file does not stop the other
// checks; it is one error result.
func TestBadConfigIsOneFinding(t *testing.T) {
	t.Parallel()
	rep := Run(t.Context(), Options{
		Dir:       t.TempDir(),
		ConfigErr: errors.New("invalid registry configuration: /home/u/.jigrc: not valid JSON"),
		LookPath:  func(string) (string, error) { return "", errors.New("not found") },
	})
	var ids []string
	for _, r := range rep.Results {
		ids = append(ids, r.Level+" "+r.ID)
	}
	want := []string{"error env.config", "warning env.node-version", "warning env.package-manager", "warning env.git", "info project.jig-json"}
	if strings.Join(ids, ",") != strings.Join(want, ",") || !rep.HasErrors {
		t.Errorf("got %v (hasErrors %v), want %v and hasErrors", ids, rep.HasErrors, want)
	}
}
