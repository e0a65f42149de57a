// Package gitsafe is the one way jig starts git: [Command] runs git so
// that it runs no program a repository, a project's files or a prompt
// would bring in, and stops promptly when its context is cancelled. A
// test fails when non-test code elsewhere starts git itself.
//
// What [Command] always applies, and why:
//
//   - --no-pager and GIT_PAGER=cat: no pager (core.pager, pager.<cmd>).
//   - core.hooksPath=/dev/null: no hooks. A relative hooks path in the
//     user's configuration (husky's ".husky") would pick hooks from the
//     project, whose files a registry wrote.
//   - core.fsmonitor=false: no fsmonitor program.
//   - safe.bareRepository=explicit: a directory that merely looks like a
//     bare repository (HEAD, objects/, refs/ and a config written as
//     plain files) is not used as one, with its config (git 2.38 and
//     later; older versions ignore it).
//   - protocol.allow=never, then https, http, ssh, git and file: never
//     ext:: or fd::, which run commands. [Options.Config] may narrow
//     this further (protocol.http.allow=never).
//   - credential.interactive=never, GIT_TERMINAL_PROMPT=0,
//     GCM_INTERACTIVE=never and, unless the user set GIT_SSH_COMMAND,
//     "ssh -o BatchMode=yes": nothing asks on the terminal.
//   - GIT_EDITOR=: (git's "no editor"): no editor runs.
//   - maintenance.auto=false and gc.auto=0: no "git maintenance run
//     --auto" or "git gc --auto" after a commit or a fetch.
//   - GIT_OPTIONAL_LOCKS=0: a read such as "git status" does not write
//     the index behind the user's back.
//   - A process group of its own, which the context's cancellation
//     interrupts (SIGINT, so git removes its lock files; ssh and the
//     other programs git started stop too), killed if still running a
//     moment later ([procgroup.SetInterrupt]).
//
// What it leaves as the user configured it, and why: credential helpers
// and the ssh command (core.sshCommand, GIT_SSH_COMMAND) come from the
// user's own configuration and are how "jig fleet" authenticates;
// commit signing (commit.gpgSign) is the user's choice for their
// commits; safe.directory is not widened, so git still refuses a
// repository another user owns. The language of git's messages is left
// too: jig reads only plumbing output, which git does not translate.
//
// Filter drivers (filter.<name>.clean, .smudge, .process) run programs
// that a repository's .gitattributes may name; turning them off takes
// the names the configuration defines, so a caller that lets git read
// or write file contents passes [NoFilters] in [Options.Config]. jig
// runs no command that reads diff.external or diff textconv programs
// (git diff, log -p, show); one that starts to must pass --no-ext-diff
// and --no-textconv.
package gitsafe

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/jigkit/jig/internal/procgroup"
)

// config is the configuration every git command runs with, "name=value"
// each, in order (a later value wins).
var config = []string{
	"core.hooksPath=/dev/null",
	"core.fsmonitor=false",
	"safe.bareRepository=explicit",
	"protocol.allow=never",
	"protocol.https.allow=always",
	"protocol.http.allow=always",
	"protocol.ssh.allow=always",
	"protocol.git.allow=always",
	"protocol.file.allow=always",
	"credential.interactive=never",
	"maintenance.auto=false",
	"gc.auto=0",
}

// env is the environment every git command adds to the user's.
var env = []string{
	"GIT_TERMINAL_PROMPT=0",
	"GCM_INTERACTIVE=never",
	"GIT_SSH_VARIANT=auto",
	"GIT_PAGER=cat",
	"GIT_EDITOR=:",
	"GIT_OPTIONAL_LOCKS=0",
}

// Environ returns the environment of jig's git commands: the user's, with
// [Command]'s prompt, pager and editor settings. A program that may run
// git in turn (gh, a user's pull-request command) gets it too.
func Environ() []string {
	e := append(os.Environ(), env...)
	if os.Getenv("GIT_SSH_COMMAND") == "" {
		e = append(e, "GIT_SSH_COMMAND=ssh -o BatchMode=yes")
	}
	return e
}

// Options are what one caller adds to [Command]'s settings. The zero
// value adds nothing.
type Options struct {
	// Config holds more configuration, "name=value" each, given after
	// the safety settings. It may narrow the transports
	// (protocol.<name>.allow=never) but not change another safety
	// setting: such a command fails to start, saying so.
	Config []string
}

// Command returns the command that runs git with args in dir ("" is the
// current directory) with the safety settings of the package
// documentation; it is Options{}.Command.
func Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	return Options{}.Command(ctx, dir, args...)
}

// Command returns the command that runs git with args in dir ("" is the
// current directory), with the safety settings of the package
// documentation and then o's. args start with git's subcommand (or are
// "--version"): a global option before it ("-c", "-C", "--exec-path",
// …) belongs in o or dir, and such a command fails to start, saying so.
// The caller sets the command's input and output and may add to its Env.
func (o Options) Command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	argv := make([]string, 0, 1+2*(len(config)+len(o.Config))+len(args))
	argv = append(argv, "--no-pager")
	for _, c := range config {
		argv = append(argv, "-c", c)
	}
	for _, c := range o.Config {
		argv = append(argv, "-c", c)
	}
	cmd := exec.CommandContext(ctx, "git", append(argv, args...)...)
	cmd.Dir = dir
	cmd.Env = Environ()
	procgroup.SetInterrupt(cmd)
	if err := o.check(args); err != nil {
		cmd.Err = err
	}
	return cmd
}

// check returns why o and args may not run.
func (o Options) check(args []string) error {
	if len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "--version" {
		return fmt.Errorf("gitsafe: git option %q before the subcommand; give configuration in Options.Config and the directory as dir", args[0])
	}
	for _, c := range o.Config {
		name, value, ok := strings.Cut(c, "=")
		if !ok || name == "" {
			return fmt.Errorf("gitsafe: configuration %q is not name=value", c)
		}
		if !overrides(name) {
			continue
		}
		if strings.HasPrefix(strings.ToLower(name), "protocol.") && value == "never" {
			continue // narrows the transports
		}
		return fmt.Errorf("gitsafe: configuration %q would change a safety setting", c)
	}
	return nil
}

// overrides reports whether the configuration name is one of the safety
// settings (section and variable names are case-insensitive).
func overrides(name string) bool {
	for _, c := range config {
		n, _, _ := strings.Cut(c, "=")
		if strings.EqualFold(n, name) {
			return true
		}
	}
	if l := strings.ToLower(name); strings.HasPrefix(l, "protocol.") && strings.HasSuffix(l, ".allow") {
		return true // a transport the list does not name is "never" through protocol.allow
	}
	return false
}

// NoFilters returns the configuration ("name=value" each, for
// [Options.Config]) that turns off the filter drivers whose configuration
// keys are given ("filter.<name>.<variable>", as "git config --name-only
// --get-regexp '^filter\.'" lists them): their clean, smudge and process
// programs, and their required flag. A repository's .gitattributes may
// name any driver for any file, and git runs the clean filter even when
// it only writes the index (to re-read a file it cannot tell is
// unchanged). A name that a "-c" option cannot spell (it holds "=" or a
// line break) is returned in bad instead.
func NoFilters(keys []string) (config, bad []string) {
	seen := map[string]bool{}
	for _, key := range keys {
		i := strings.LastIndex(key, ".")
		if !strings.HasPrefix(key, "filter.") || i <= len("filter.") {
			continue
		}
		name := key[len("filter."):i]
		if seen[name] {
			continue
		}
		seen[name] = true
		if strings.ContainsAny(name, "=\n") {
			bad = append(bad, name)
			continue
		}
		for _, v := range []string{"clean=", "smudge=", "process=", "required=false"} {
			config = append(config, "filter."+name+"."+v)
		}
	}
	return config, bad
}
