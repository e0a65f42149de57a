package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/gitsafe"
	"github.com/jigkit/jig/internal/redact"
)

// fleetConfig is the configuration of every git command the fleet runs,
// after [gitsafe.Command]'s safety settings (no hooks, fsmonitor, prompts
// or transports that run commands; local paths allowed, so a fleet of
// repositories on disk works). Configuration the repository brings
// cannot add commands: a fresh clone's .git/config is written by git
// itself. The filter drivers of the user's configuration, which a
// repository's .gitattributes may name, are turned off too
// ([noFilters]).
var fleetConfig = []string{
	"advice.detachedHead=false",
	"init.defaultBranch=main",
}

// noFilters returns the configuration that turns off every filter driver
// the user's configuration defines (filter.<name>.clean, .smudge and
// .process, which run programs, and .required): a repository's
// .gitattributes may name any of them for any file, and a clone must run
// nothing. An error (no configuration at all) gives none.
func noFilters(ctx context.Context, dir string) []string {
	g := &gitRunner{dir: dir}
	out, err := g.run(ctx, "", "config", "--name-only", "--get-regexp", `^filter\.`)
	if err != nil {
		return nil
	}
	config, _ := gitsafe.NoFilters(strings.Split(out, "\n"))
	return config
}

// gitRunner runs git (or another program) in a directory, bounded by ctx,
// and scrubs the repository's credentials from its errors.
type gitRunner struct {
	dir    string   // the working directory
	env    []string // extra environment of programs other than git
	secret []string // strings to scrub from output
	config []string // more configuration, after fleetConfig
}

// run runs git ([gitsafe.Command]) with args and returns its trimmed
// standard output.
func (g *gitRunner) run(ctx context.Context, stdin string, args ...string) (string, error) {
	o := gitsafe.Options{Config: slices.Concat(fleetConfig, g.config)}
	return g.output(ctx, o.Command(ctx, g.dir, args...), stdin, "git", args)
}

// exec runs name, a program other than git, with args; it gets the
// environment of git commands ([gitsafe.Environ]), as it may run git. A
// cancelled ctx interrupts it and then kills it after a moment.
func (g *gitRunner) exec(ctx context.Context, stdin, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = g.dir
	cmd.Env = append(gitsafe.Environ(), g.env...)
	cmd.Cancel = func() error {
		if runtime.GOOS == "windows" {
			return cmd.Process.Kill()
		}
		return cmd.Process.Signal(os.Interrupt)
	}
	cmd.WaitDelay = 2 * time.Second
	return g.output(ctx, cmd, stdin, name, args)
}

// output runs cmd, name with args, and returns its trimmed standard
// output; an error shows its first argument and the end of its output,
// scrubbed.
func (g *gitRunner) output(ctx context.Context, cmd *exec.Cmd, stdin, name string, args []string) (string, error) {
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return "", errors.New(g.scrub(fmt.Sprintf("%s %s: %v: %s", shortName(name), firstWord(args), err, lastLines(msg, 4))))
	}
	return strings.TrimSpace(out.String()), nil
}

func shortName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		return name[i+1:]
	}
	return name
}

func firstWord(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// lastLines keeps the last n lines of s: git's own explanation is at the
// end.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}

// scrub removes the repository's credentials from s ([redact.Text]).
func (g *gitRunner) scrub(s string) string { return redact.Text(s, g.secret) }

// redactText returns s, an error or a program's output, as it may be
// shown ([redact.Text]): every URL without user information, query or
// fragment, and each of secrets standing as a word of its own blanked.
func redactText(s string, secrets []string) string { return redact.Text(s, secrets) }

// Redact returns repo as it may be shown and stored ([redact.Strip]): a
// URL with a scheme loses its user information (user:password@ or
// token@), its query (?private_token=…) and fragment; an scp-like address
// (git@host:path) and a local path are returned as they are.
func Redact(repo string) string { return redact.Strip(repo) }

// secrets returns the parts of repo that must never be shown outside a
// URL either ([redact.Secrets]).
func secrets(repo string) []string { return redact.Secrets(repo) }

// host returns the host name of a repository address ("" for a local
// path).
func host(repo string) string {
	if u, err := url.Parse(repo); err == nil && u.Scheme != "" && u.Host != "" {
		return strings.ToLower(u.Hostname())
	}
	// scp-like: [user@]host:path
	if i := strings.Index(repo, ":"); i > 0 && !strings.ContainsAny(repo[:i], `/\`) {
		h := repo[:i]
		if j := strings.LastIndex(h, "@"); j >= 0 {
			h = h[j+1:]
		}
		return strings.ToLower(h)
	}
	return ""
}
