package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLookup(t *testing.T) {
	t.Parallel()
	names := []string{"JIG_TEST_A", "JIG_TEST_B"}
	tests := []struct {
		name     string
		env      map[string]string
		want     []string
		wantSkip bool
		wantErr  []string // substrings of the error
	}{
		{name: "all set", env: map[string]string{"JIG_TEST_A": "a", "JIG_TEST_B": "b"}, want: []string{"a", "b"}},
		{name: "all set under CI", env: map[string]string{"JIG_TEST_A": "a", "JIG_TEST_B": "b", "CI": "true"}, want: []string{"a", "b"}},
		{name: "unset skips", env: map[string]string{}, wantSkip: true,
			wantErr: []string{"JIG_TEST_A, JIG_TEST_B are not set", "HOW", "to run this test"}},
		{name: "unset with CI=false skips", env: map[string]string{"CI": "false"}, wantSkip: true,
			wantErr: []string{"are not set", "HOW"}},
		{name: "unset under CI fails", env: map[string]string{"CI": "true"},
			wantErr: []string{"JIG_TEST_A, JIG_TEST_B are not set, but CI=true", "HOW"}},
		{name: "partly set fails", env: map[string]string{"JIG_TEST_A": "a"},
			wantErr: []string{"JIG_TEST_A set but JIG_TEST_B is not set", "HOW"}},
		{name: "partly set fails under CI", env: map[string]string{"JIG_TEST_B": "b", "CI": "true"},
			wantErr: []string{"JIG_TEST_B set but JIG_TEST_A is not set"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, skip, err := lookup(func(n string) string { return tt.env[n] }, "HOW", names...)
			if skip != tt.wantSkip {
				t.Errorf("got skip %v, want %v", skip, tt.wantSkip)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("got error %v, want none", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("values (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("got values %q and no error, want an error", got)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("got error %q, want it to contain %q", err, s)
				}
			}
		})
	}
}

func TestLookupSingleName(t *testing.T) {
	t.Parallel()
	_, _, err := lookup(func(string) string { return "" }, "HOW", "JIG_TEST_REDIS_URL")
	if want := "JIG_TEST_REDIS_URL is not set; HOW to run this test"; err == nil || err.Error() != want {
		t.Errorf("got error %v, want %q", err, want)
	}
}

func TestSnapshot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "run.sh"), []byte("echo hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "src", "run.sh"), 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if err := os.Symlink("src/run.sh", filepath.Join(dir, "run")); err != nil {
		t.Fatal(err)
	}
	got := Snapshot(t, dir)
	for k, v := range got {
		if k == "." || k == "src" {
			got[k] = v[:4] // "dir " + a mode that depends on the umask
		}
	}
	want := map[string]string{
		".":          "dir ",
		"src":        "dir ",
		"src/run.sh": "-rwxr-xr-x echo hi\n",
		"run":        "link src/run.sh",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Snapshot (-want +got):\n%s", diff)
	}
	if got := Snapshot(t, filepath.Join(dir, "absent")); len(got) != 0 {
		t.Errorf("Snapshot of a missing directory = %v, want empty", got)
	}
}

// TestStartGitea starts Gitea and reads its version and the
// administrator's own user with the token StartGitea made.
func TestStartGitea(t *testing.T) {
	t.Parallel()
	g := StartGitea(t)
	var version struct {
		Version string `json:"version"`
	}
	g.API(t, "GET", "/version", nil, &version)
	if version.Version == "" {
		t.Error("gitea answered no version")
	}
	var me struct {
		Login   string `json:"login"`
		IsAdmin bool   `json:"is_admin"`
	}
	g.API(t, "GET", "/user", nil, &me)
	if me.Login != g.User || !me.IsAdmin {
		t.Errorf("GET /user with the token: got %+v, want the administrator %s", me, g.User)
	}
}
