package apply

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jigkit/jig/registry"
)

// FuzzReadJournal: whatever .jig/journal.json holds, reading it never
// panics, and a journal it accepts names only clean targets inside the
// project and folders that are clean too, so recovery can never be
// steered outside the project.
func FuzzReadJournal(f *testing.F) {
	for _, s := range []string{
		`{"format":1,"state":"applying","mode":"update","files":[{"target":"a.txt","existed":true,"orig":"YQo=","origMode":420,"new":"sha256:00 644"}]}`,
		`{"format":1,"state":"applied","files":[],"conflicts":[{"target":"b.txt","base":"","ours":"","theirs":"","mode":420,"index":"-"}]}`,
		`{"format":1,"state":"applying","dirs":["../x"],"files":[]}`,
		`{"format":1,"state":"applying","files":[{"target":"/etc/passwd"}]}`,
		`{"format":2}`, `[]`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		if err := os.Mkdir(filepath.Join(root, JournalDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(journalPath(root), b, 0o644); err != nil {
			t.Fatal(err)
		}
		j, err := readJournal(root)
		if err != nil || j == nil {
			return
		}
		for _, en := range append(j.Files, conflictEntries(j.Conflicts)...) {
			if _, err := registry.CleanTarget(en.Target); err != nil && en.Target != registry.ProjectFile {
				t.Fatalf("accepted target %q: %v", en.Target, err)
			}
		}
		for _, d := range j.Dirs {
			if _, err := registry.CleanTarget(d); err != nil {
				t.Fatalf("accepted folder %q: %v", d, err)
			}
		}
	})
}
