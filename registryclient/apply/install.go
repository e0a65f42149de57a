package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jigkit/jig/internal/gitsafe"
	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
)

// CommandError is a failed external command (package manager, git). Its
// message names the command to run by hand.
type CommandError struct {
	Command string // e.g. "npm install"
	Dir     string
	Output  string // the tail of the command's output
	Err     error
}

func (e *CommandError) Error() string {
	s := fmt.Sprintf("%s failed: %v", e.Command, e.Err)
	if e.Output != "" {
		s += "\n" + e.Output
	}
	return s + fmt.Sprintf("\nrun %q in %s by hand", e.Command, e.Dir)
}

func (e *CommandError) Unwrap() error { return e.Err }

// StepStatus is how an install or git step ended.
type StepStatus string

// The statuses of a [StepResult].
const (
	StepOK      StepStatus = "ok"
	StepSkipped StepStatus = "skipped" // see [StepResult.Error] for why; git: already a repository
	StepFailed  StepStatus = "failed"
)

// StepResult reports the install or git step [Engine.Apply] ran after
// writing a plan ([WithInstall], [WithGitInit]).
type StepResult struct {
	// Command is the step's command: "<package manager> install" or
	// "git init".
	Command string `json:"command"`
	// Status is [StepOK], [StepSkipped] or [StepFailed].
	Status StepStatus `json:"status"`
	// Error says why the step failed or was skipped.
	Error string `json:"error,omitempty"`
	// Scripts are the install-time package.json scripts that made the
	// install skip ([Plan.InstallScripts]).
	Scripts []string `json:"-"`
	// Err is the failure, a [*CommandError] when a command failed.
	Err error `json:"-"`
}

// installAndGitInit runs the steps asked for with [WithInstall] and [WithGitInit]
// after p was written.
func (e *Engine) installAndGitInit(ctx context.Context, p *Plan) {
	if e.opts.install && (p.Mode == ModeInit || p.PackagesChanged()) {
		cmd := DetectPackageManager(p.Dir) + " install"
		if args := ecosystemInstall(p.eco); args != nil {
			cmd = strings.Join(args, " ")
		} else if !p.eco.IsNode() {
			cmd = "" // java and generic projects have no install step
		}
		switch {
		case cmd == "":
		case p.skipInstall:
			p.Install = &StepResult{Command: cmd, Status: StepSkipped, Error: SkipInstallRecorded}
		case !p.eco.IsNode():
			p.Install = e.ecosystemInstallStep(ctx, p, ecosystemInstall(p.eco))
		default:
			p.Install = e.install(ctx, p)
		}
	}
	if e.opts.gitInit && p.Mode == ModeInit {
		p.Git = gitStep(ctx, p.Dir)
	}
}

// ErrToolMissing is the [StepResult.Err] of a go or python project's
// install step skipped because its tool (go, uv) is not on PATH.
var ErrToolMissing = errors.New("the install tool is not on PATH")

// SkipInstallRecorded is the [StepResult.Error] of an install skipped
// because jig.json records that the project does not want installs
// ([Request.SkipInstall]).
const SkipInstallRecorded = "the project was made with --skip-install (\"skipInstall\": true in jig.json)"

// install runs the package manager's install in p.Dir, or skips it when
// that would run scripts from a registry that are not allowed.
func (e *Engine) install(ctx context.Context, p *Plan) *StepResult {
	pm := DetectPackageManager(p.Dir)
	res := &StepResult{Command: pm + " install", Status: StepOK}
	if scripts := p.InstallScripts(); len(scripts) > 0 && !e.opts.allowScripts {
		res.Status, res.Scripts = StepSkipped, scripts
		res.Error = fmt.Sprintf("package.json now has %s from a registry, which '%s install' would run", strings.Join(scripts, ", "), pm)
		return res
	}
	e.progress("install", "running %s install", pm)
	if err := run(ctx, p.Dir, pm, "install"); err != nil {
		res.Status, res.Error, res.Err = StepFailed, err.Error(), err
	}
	return res
}

// ecosystemInstallStep runs a go or python project's install command
// (args) when its tool is on PATH, and says so when it is not.
func (e *Engine) ecosystemInstallStep(ctx context.Context, p *Plan, args []string) *StepResult {
	cmd := strings.Join(args, " ")
	res := &StepResult{Command: cmd, Status: StepOK}
	if _, err := exec.LookPath(args[0]); err != nil {
		res.Status, res.Err = StepSkipped, ErrToolMissing
		res.Error = fmt.Sprintf("%s is not on PATH; install it and run %q in %s", args[0], cmd, p.Dir)
		return res
	}
	e.progress("install", "running %s", cmd)
	if err := run(ctx, p.Dir, args[0], args[1:]...); err != nil {
		res.Status, res.Error, res.Err = StepFailed, err.Error(), err
	}
	return res
}

// gitStep runs initGit in dir.
func gitStep(ctx context.Context, dir string) *StepResult {
	created, err := initGit(ctx, dir)
	res := &StepResult{Command: "git init", Status: StepOK}
	switch {
	case err != nil:
		res.Status, res.Error, res.Err = StepFailed, err.Error(), err
	case !created:
		res.Status, res.Error = StepSkipped, fmt.Sprintf("%s is already inside a git repository", dir)
	}
	return res
}

// DetectPackageManager returns the package manager a project uses: the
// name in package.json's packageManager field ("pnpm@9.1.0" → "pnpm"),
// else the first lockfile found (pnpm-lock.yaml, yarn.lock,
// bun.lockb or bun.lock, package-lock.json), else "npm".
func DetectPackageManager(dir string) string {
	if b, err := safefile.ReadFile(filepath.Join(dir, "package.json"), maxProjectFile); err == nil {
		var pj struct {
			PackageManager string `json:"packageManager"`
		}
		if registry.CheckJSONDepth("package.json", b) == nil && json.Unmarshal(b, &pj) == nil && pj.PackageManager != "" {
			name, _, _ := strings.Cut(pj.PackageManager, "@")
			switch name {
			case "npm", "pnpm", "yarn", "bun":
				return name
			}
		}
	}
	for _, l := range []struct{ file, pm string }{
		{"pnpm-lock.yaml", "pnpm"}, {"yarn.lock", "yarn"}, {"bun.lockb", "bun"}, {"bun.lock", "bun"}, {"package-lock.json", "npm"},
	} {
		if _, err := os.Stat(filepath.Join(dir, l.file)); err == nil {
			return l.pm
		}
	}
	return "npm"
}

// git runs git in dir ([gitsafe.Command]: the files there come from
// registries, so git runs nothing they could name).
func git(ctx context.Context, dir string, args ...string) error {
	return runCmd(gitsafe.Command(ctx, dir, args...), commandLine("git", args))
}

// inGitRepo reports whether dir is inside a git work tree.
func inGitRepo(ctx context.Context, dir string) bool {
	out, err := gitsafe.Command(ctx, dir, "rev-parse", "--is-inside-work-tree").Output()
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

// initGit runs "git init" and makes a first commit of everything in dir,
// unless dir is already inside a git repository (then it does nothing and
// reports false). git runs as [gitsafe.Command] runs it, and the commit
// with --no-verify, so that nothing a registry wrote is executed.
// A failure is a [*CommandError].
func initGit(ctx context.Context, dir string) (bool, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return false, &CommandError{Command: "git init", Dir: dir, Err: errors.New("git was not found on PATH")}
	}
	if inGitRepo(ctx, dir) {
		return false, nil
	}
	if err := git(ctx, dir, "init", "-q"); err != nil {
		return false, err
	}
	if err := git(ctx, dir, "add", "-A"); err != nil {
		return true, err
	}
	if err := git(ctx, dir, "commit", "-q", "--no-verify", "-m", "Initial commit from jig"); err != nil {
		return true, err
	}
	return true, nil
}

// commandLine renders a command for people to copy, quoting arguments
// with spaces.
func commandLine(name string, args []string) string {
	parts := []string{name}
	for _, a := range args {
		if strings.ContainsAny(a, " \t\"'") {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

func run(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	return runCmd(cmd, commandLine(name, args))
}

// runCmd runs cmd; a failure is a [*CommandError] that shows the command
// as shown.
func runCmd(cmd *exec.Cmd, shown string) error {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		tail := strings.TrimSpace(out.String())
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return &CommandError{Command: shown, Dir: cmd.Dir, Output: tail, Err: err}
	}
	return nil
}
