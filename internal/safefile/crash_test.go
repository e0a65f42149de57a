package safefile_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/internal/testenv"
)

// TestHelperWriter is run as a separate process by TestKilledWriter: it
// starts replacing the file named in SAFEFILE_HELPER_PATH, writes part of
// the new content, says so, and waits to be killed before the rename.
func TestHelperWriter(t *testing.T) {
	p := os.Getenv("SAFEFILE_HELPER_PATH")
	if p == "" {
		t.Skip("helper process for TestKilledWriter")
	}
	safefile.WriteAtomic(p, 0o600, func(w io.Writer) error {
		io.WriteString(w, "half of the new")
		if f, ok := w.(*os.File); ok {
			f.Sync()
		}
		os.Stdout.WriteString("written\n")
		select {}
	}, safefile.Options{TempPattern: ".crash-*.tmp"})
}

// TestKilledWriter kills (SIGKILL) a real process between writing the
// temporary file and renaming it: the file keeps its old content, and what
// is left is only a temporary file named by the pattern, for a sweep.
func TestKilledWriter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "state.json")
	if err := safefile.WriteFileAtomic(p, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, out := testenv.StartHelper(t, "TestHelperWriter", "SAFEFILE_HELPER_PATH="+p)
	if line, err := out.ReadString('\n'); err != nil || line != "written\n" {
		t.Fatalf("helper: %q, %v", line, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if got, err := os.ReadFile(p); err != nil || string(got) != "old\n" {
		t.Fatalf("after the kill the file holds %q, %v; want the old content", got, err)
	}
	ents, _ := os.ReadDir(dir)
	var left []string
	for _, e := range ents {
		if e.Name() != "state.json" {
			left = append(left, e.Name())
		}
	}
	if len(left) != 1 || !strings.HasPrefix(left[0], ".crash-") {
		t.Errorf("after the kill the folder holds %q besides the file, want one .crash-*.tmp", left)
	}
}
