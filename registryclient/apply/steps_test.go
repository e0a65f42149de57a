package apply

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
)

// stepSource serves @main/features/hooks, which sets a postinstall script
// (the install would run it), and @main/features/plain, which has no
// dependency and no script.
func stepSource() *memSource {
	s := newMemSource()
	s.add("@main/features/hooks", &registry.Manifest{
		Name: "hooks", Namespace: "@main", Type: registry.TypeFeature, Version: "1.0.0", Priority: 5,
		DevDependencies: map[string]string{"left-pad": "^1.0.0"},
		Scripts:         map[string]string{"postinstall": "node setup.js"},
		Files:           []registry.File{{Target: "setup.js", Type: registry.FileScript, Content: strp("require('fs').writeFileSync('pwned', '')\n")}},
	}, nil)
	s.add("@main/features/plain", &registry.Manifest{
		Name: "plain", Namespace: "@main", Type: registry.TypeFeature, Version: "1.0.0", Priority: 5,
		Files: []registry.File{{Target: "README.md", Type: registry.FileDocs, Content: strp("# hi\n")}},
	}, nil)
	return s
}

// TestApplyStepsOff: without WithInstall and WithGitInit, Apply writes and
// runs nothing.
func TestApplyStepsOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p, err := newEngine(t, stepSource()).Run(t.Context(), Request{Dir: dir, Template: "features/hooks", Mode: ModeInit}, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.Install != nil || p.Git != nil {
		t.Errorf("install %+v, git %+v; want neither step", p.Install, p.Git)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		t.Error(".git created without WithGitInit")
	}
}

// TestInstallSkippedForRegistryScripts: an install would run the
// postinstall script a registry set, so without WithAllowScripts it is
// skipped and nothing runs; the result says why.
func TestInstallSkippedForRegistryScripts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p, err := newEngine(t, stepSource(), WithInstall(true)).Run(t.Context(), Request{Dir: dir, Template: "features/hooks", Mode: ModeInit}, false)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Install
	if s == nil || s.Status != StepSkipped || s.Command != "npm install" || !slices.Equal(s.Scripts, []string{"postinstall"}) ||
		s.Error != "package.json now has postinstall from a registry, which 'npm install' would run" {
		t.Fatalf("install = %+v, want skipped because of postinstall", s)
	}
	for _, f := range []string{"node_modules", "package-lock.json", "pwned"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s exists: the install ran", f)
		}
	}
}

// TestInstallOnlyWhenPackagesChange: an add that changes no dependency
// runs no install.
func TestInstallOnlyWhenPackagesChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := newEngine(t, stepSource(), WithInstall(true))
	p, err := e.Run(t.Context(), Request{Dir: dir, Template: "features/plain"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.Install != nil {
		t.Errorf("install = %+v, want none (no dependency changed)", p.Install)
	}
}

// TestInstallFailureIsReported: a package manager that cannot run fails
// the step, not Apply; the files stay written.
func TestInstallFailureIsReported(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bun"); err == nil {
		t.Skip("bun is installed; this test needs a package manager that is not")
	}
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{"package.json": `{"name":"x","packageManager":"bun@1.1.0"}` + "\n"})
	p, err := newEngine(t, fixture(), WithInstall(true)).Run(t.Context(), Request{Dir: dir, Template: "quality/prettier"}, false)
	if err != nil {
		t.Fatalf("Apply failed with the install: %v", err)
	}
	s := p.Install
	var ce *CommandError
	if s == nil || s.Status != StepFailed || s.Command != "bun install" || !errors.As(s.Err, &ce) || s.Error != s.Err.Error() {
		t.Fatalf("install = %+v, want failed with a CommandError", s)
	}
	if _, err := os.Stat(filepath.Join(dir, ".prettierrc")); err != nil {
		t.Errorf("the plan's files were not kept: %v", err)
	}
}

// TestGitStep: WithGitInit makes an init a repository with a first commit;
// an add does not run git.
func TestGitStep(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	dir := t.TempDir()
	e := newEngine(t, stepSource(), WithGitInit(true))
	p, err := e.Run(t.Context(), Request{Dir: dir, Template: "features/plain", Mode: ModeInit}, false)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Git
	if s == nil || s.Command != "git init" {
		t.Fatalf("git = %+v, want the git init step", s)
	}
	// Without a git identity the commit fails; the repository is there.
	var ce *CommandError
	if s.Status == StepFailed && (!errors.As(s.Err, &ce) || !strings.HasPrefix(ce.Command, "git commit")) {
		t.Errorf("git = %+v, want ok or a failed commit", s)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		t.Errorf("no repository: %v", err)
	}
	p, err = e.Run(t.Context(), Request{Dir: dir, Template: "features/hooks"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.Git != nil {
		t.Errorf("add ran git: %+v", p.Git)
	}
}

// TestFrozenNotRecorded: a frozen install that needs a registry jig.json
// does not record fails with a NotRecordedError and writes nothing.
func TestFrozenNotRecorded(t *testing.T) {
	t.Parallel()
	src := stepSource()
	dir := t.TempDir()
	e := newEngine(t, src)
	if _, err := e.Run(t.Context(), Request{Dir: dir, Template: "features/plain", Mode: ModeInit}, false); err != nil {
		t.Fatal(err)
	}
	before := testenv.Snapshot(t, dir)
	src.manifests["@main/features/plain"].RegistryDependencies = []string{"@main/features/hooks"}
	_, err := e.Run(t.Context(), Request{Dir: dir, Frozen: true}, false)
	var nr *NotRecordedError
	if !errors.Is(err, ErrFrozen) || !errors.As(err, &nr) || nr.Registry != "@main/features/hooks" {
		t.Fatalf("got %v, want a NotRecordedError for @main/features/hooks", err)
	}
	assertSame(t, before, testenv.Snapshot(t, dir))
}

// TestFrozenFileChanged: a frozen install whose registry now gives a file
// other bytes than jig.json records (the manifest digest cannot tell, here
// the source reports none) fails with a FrozenFileError naming the file,
// the registry version and both digests, and writes nothing.
func TestFrozenFileChanged(t *testing.T) {
	t.Parallel()
	src := stepSource()
	e := newEngine(t, src)
	orig := t.TempDir()
	if _, err := e.Run(t.Context(), Request{Dir: orig, Template: "features/plain", Mode: ModeInit}, false); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, map[string]string{registry.ProjectFile: readFile(t, filepath.Join(orig, registry.ProjectFile))})
	before := testenv.Snapshot(t, dir)
	src.manifests["@main/features/plain"].Files[0].Content = strp("# changed\n")
	_, err := e.Run(t.Context(), Request{Dir: dir, Frozen: true}, false)
	var fe *FrozenFileError
	if !errors.Is(err, ErrFrozen) || !errors.Is(err, registry.ErrDigestMismatch) || !errors.As(err, &fe) {
		t.Fatalf("got %v, want a FrozenFileError", err)
	}
	want := FrozenFileError{Target: "README.md", Registry: "@main/features/plain@1.0.0", Recorded: registry.Digest([]byte("# hi\n")), Got: registry.Digest([]byte("# changed\n"))}
	if *fe != want {
		t.Errorf("got %+v, want %+v", *fe, want)
	}
	assertSame(t, before, testenv.Snapshot(t, dir))
}
