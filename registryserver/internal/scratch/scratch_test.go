package scratch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// die drops d's lock the way the kernel does when a process is killed: the
// lock file stays, unlocked, and nothing is cleaned up.
//
// A test that calls die and then expects the lock to be free must not run
// in parallel with TestKilledProcess: a fork copies every open descriptor
// into the child until it execs, so the lock (held per open file, not per
// descriptor) can outlive die for that moment, and the owner still looks
// alive. Such tests do not call t.Parallel(): the sequential tests of a
// package all finish before its parallel ones start.
func die(t *testing.T, d *Dir) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lock != nil {
		d.lock.Close()
		d.lock = nil
	}
	d.closed = true
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func open(t *testing.T, dir string) *Dir {
	t.Helper()
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestOwnerStates(t *testing.T) {
	// Not parallel: see die.
	if !canLock {
		t.Skip("needs flock(2)")
	}
	dir := filepath.Join(t.TempDir(), "uploads")
	self, live, dead := open(t, dir), open(t, dir), open(t, dir)
	for _, d := range []*Dir{live, dead} {
		if _, err := d.CreateTemp(".tar.gz"); err != nil {
			t.Fatal(err)
		}
	}
	die(t, dead)
	tests := []struct {
		name string
		id   string
		want State
	}{
		{"this process", self.ID(), Alive},
		{"another owner holding its lock", live.ID(), Alive},
		{"an owner whose lock is free", dead.ID(), Dead},
		{"an owner never seen here", newID(), Unknown},
		{"garbage", "../../etc/passwd", Unknown},
		{"empty", "", Unknown},
		{"upper-case hex", strings.ToUpper(live.ID()), Unknown},
	}
	for _, tt := range tests {
		if got := self.Owner(tt.id); got != tt.want {
			t.Errorf("%s: Owner = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSweepRemovesOnlyDeadOwnersFiles(t *testing.T) {
	// Not parallel: see die.
	if !canLock {
		t.Skip("needs flock(2)")
	}
	dir := filepath.Join(t.TempDir(), "uploads")
	sweeper, live, dead := open(t, dir), open(t, dir), open(t, dir)
	liveFile, err := live.CreateTemp(".tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer liveFile.Close()
	deadFile, err := dead.CreateTemp(".tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	deadFile.WriteString("half an upload")
	deadFile.Close()
	die(t, dead)
	// Not of the pattern: never touched.
	foreign := []string{"notes.txt", strings.Repeat("g", idLen) + "-x"}
	for _, f := range foreign {
		os.WriteFile(filepath.Join(dir, f), nil, 0o600)
	}
	// An owner whose lock file an operator removed.
	orphan := filepath.Join(dir, newID()+"-123.tar.gz")
	os.WriteFile(orphan, []byte("x"), 0o600)

	sw, err := sweeper.Sweep()
	if err != nil {
		t.Fatal(err)
	}
	if sw.Files != 2 || sw.Bytes != int64(len("half an upload")+1) {
		t.Errorf("Sweep = %+v, want 2 files of %d bytes", sw, len("half an upload")+1)
	}
	got := names(t, dir)
	want := append([]string{filepath.Base(liveFile.Name()), live.ID() + lockSuffix, dead.ID() + deadSuffix}, foreign...)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("after Sweep the folder holds %q, want %q", got, want)
	}
	if s := sweeper.Owner(dead.ID()); s != Dead {
		t.Errorf("after Sweep Owner(dead) = %v, want dead (the marker)", s)
	}
	if s := sweeper.Owner(live.ID()); s != Alive {
		t.Errorf("after Sweep Owner(live) = %v, want alive", s)
	}
	// A second sweep finds nothing more.
	if sw, err := sweeper.Sweep(); err != nil || sw.Files != 0 {
		t.Errorf("second Sweep = %+v, %v; want nothing removed", sw, err)
	}
}

func TestSweepMissingFolder(t *testing.T) {
	t.Parallel()
	d := open(t, filepath.Join(t.TempDir(), "never-created"))
	if sw, err := d.Sweep(); err != nil || sw != (Swept{}) {
		t.Errorf("Sweep of a missing folder = %+v, %v; want nothing, nil", sw, err)
	}
	if _, err := os.Stat(d.Path()); !os.IsNotExist(err) {
		t.Errorf("Sweep created the folder: %v", err)
	}
}

func TestCloseRemovesOwnFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "uploads")
	other := open(t, dir)
	d := open(t, dir)
	f, err := d.CreateTemp(".tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	of, err := other.CreateTemp(".tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	of.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Base(of.Name()), other.ID() + lockSuffix}
	slices.Sort(want)
	if got := names(t, dir); !slices.Equal(got, want) {
		t.Errorf("after Close the folder holds %q, want %q", got, want)
	}
	if _, err := d.CreateTemp(".x"); err == nil {
		t.Error("CreateTemp after Close succeeded, want an error")
	}
}

func TestRefusesSharedFolder(t *testing.T) {
	t.Parallel()
	if !canLock {
		t.Skip("Unix permissions")
	}
	base := t.TempDir()
	shared := filepath.Join(base, "shared")
	os.Mkdir(shared, 0o777)
	os.Chmod(shared, 0o777)
	link := filepath.Join(base, "link")
	os.Symlink(t.TempDir(), link)
	for _, dir := range []string{shared, link} {
		if _, err := Open(dir); err == nil {
			t.Errorf("Open(%s) succeeded, want an error", dir)
		}
	}
	// Made shared after Open: refused on first use.
	later := filepath.Join(base, "later")
	d := open(t, later)
	os.Mkdir(later, 0o777)
	os.Chmod(later, 0o777)
	if err := d.Acquire(); err == nil {
		t.Errorf("Acquire in a folder writable by others succeeded, want an error")
	}
}

// TestHelperOwner is run as a separate process by TestKilledProcess: it
// creates an upload file, says so, and waits to be killed.
func TestHelperOwner(t *testing.T) {
	dir := os.Getenv("SCRATCH_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process for TestKilledProcess")
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := d.CreateTemp(".tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("uploading")
	os.Stdout.WriteString(d.ID() + "\n")
	select {}
}

// TestKilledProcess kills a real process holding an upload file: while it
// lives it is alive and its file stays; once killed, its file is swept.
func TestKilledProcess(t *testing.T) {
	t.Parallel()
	if !canLock {
		t.Skip("needs flock(2)")
	}
	dir := filepath.Join(t.TempDir(), "uploads")
	cmd, out := testenv.StartHelper(t, "TestHelperOwner", "SCRATCH_HELPER_DIR="+dir)
	id, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	id = strings.TrimSpace(id)
	d := open(t, dir)
	if s := d.Owner(id); s != Alive {
		t.Fatalf("Owner(running helper) = %v, want alive", s)
	}
	if sw, err := d.Sweep(); err != nil || sw.Files != 0 {
		t.Fatalf("Sweep while the helper runs = %+v, %v; want nothing removed", sw, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if s := d.Owner(id); s != Dead {
		t.Fatalf("Owner(killed helper) = %v, want dead", s)
	}
	sw, err := d.Sweep()
	if err != nil || sw.Files != 1 {
		t.Fatalf("Sweep after the kill = %+v, %v; want its upload removed", sw, err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{id + deadSuffix}) {
		t.Errorf("after the sweep the folder holds %q, want only the dead marker", got)
	}
}
