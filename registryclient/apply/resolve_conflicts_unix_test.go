//go:build unix

package apply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStagingRunsNoFilter: staging conflicts in git's index runs nothing
// a hostile .git/config names (a project unpacked with its .git folder):
// not the fsmonitor, not a hook, and not the clean filter git runs on
// files it cannot tell are unchanged ("racily clean") when it writes the
// index.
func TestStagingRunsNoFilter(t *testing.T) {
	needGit(t)
	t.Parallel()
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	evil := filepath.Join(dir, "evil.sh")
	if err := os.WriteFile(evil, []byte("#!/bin/sh\ntouch '"+marker+"'\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(dir, "repo")
	git := func(args ...string) { t.Helper(); gitIn(t, repo, args...) }
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q")
	for name, data := range map[string]string{"a.txt": "a\n", "b.txt": "b\n", ".gitattributes": "* filter=evil\n"} {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", "a.txt", "b.txt")
	git("commit", "-q", "-m", "init")
	git("config", "filter.evil.clean", evil)
	git("config", "filter.evil.smudge", evil)
	git("config", "core.fsmonitor", evil)
	git("config", "core.hooksPath", dir)
	// Every entry racily clean: git re-reads them when it writes the index.
	old := time.Unix(1e9, 0)
	if err := os.Chtimes(filepath.Join(repo, ".git", "index"), old, old); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, lifecycleSource())
	j := &journal{Conflicts: []journalConflict{{Target: "a.txt", Base: []byte("a\n"), Ours: []byte("a1\n"), Theirs: []byte("a2\n"), Mode: 0o644}}}
	if w := e.stageConflicts(t.Context(), repo, j); w != "" {
		t.Fatal(w)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("staging the conflicts ran a program the repository's configuration names")
	}
	if j.Conflicts[0].Index == "" {
		t.Error("the conflict was not staged")
	}
	// A driver whose name cannot be overridden: nothing is staged.
	git("config", "filter.ev=il.clean", evil)
	if err := os.Chtimes(filepath.Join(repo, ".git", "index"), old, old); err != nil {
		t.Fatal(err)
	}
	j = &journal{Conflicts: []journalConflict{{Target: "b.txt", Base: []byte("b\n"), Ours: []byte("b1\n"), Theirs: []byte("b2\n"), Mode: 0o644}}}
	if w := e.stageConflicts(t.Context(), repo, j); !strings.Contains(w, `"ev=il" cannot be turned off`) {
		t.Errorf("got warning %q, want the driver named", w)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("staging the conflicts ran a program the repository's configuration names")
	}
}
