package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/alecthomas/kong"

	"github.com/jigkit/jig/internal/buildinfo"
	"github.com/jigkit/jig/internal/kongexit"
	"github.com/jigkit/jig/registryclient"
)

// CLI is the root of the jig command line: global flags and one field per
// command. A command lives in the file named after it, except the
// commands of an installed project (outdated, check, diff, update,
// remove: lifecycle.go) and info (with search in search.go).
type CLI struct {
	CI            bool             `group:"global" name:"ci" help:"Same as --yes --no-input (the CI environment variable is --no-input only: it never answers a confirmation)."`
	Yes           bool             `group:"global" name:"yes" short:"y" help:"Answer yes to confirmations (never to replacing or deleting your files: that is --force)."`
	NoInput       bool             `group:"global" name:"no-input" help:"Never prompt; fail when a value is missing, naming the flag that gives it."`
	ShowVersion   kong.VersionFlag `group:"global" name:"version" short:"V" help:"Print the version and exit."`
	Offline       bool             `group:"global" name:"offline" help:"Use only the local cache and make no network request; an unpinned registry or a preset resolves to the newest cached version."`
	PreferOffline bool             `group:"global" name:"prefer-offline" help:"Take everything the local cache holds from it (unpinned registries and presets: the newest cached version); fetch only what is missing."`
	Quiet         bool             `group:"global" name:"quiet" short:"q" help:"Print only results, warnings and errors: no progress lines or notes."`
	Verbose       bool             `group:"global" name:"verbose" short:"v" help:"Print each HTTP request to stderr: method, URL (secrets redacted), status, time, cache hit or miss, protocol and TLS or h2c (also JIG_DEBUG=1)."`
	Timeout       string           `group:"global" name:"timeout" placeholder:"DURATION" help:"Give up after this long in total, for the registry servers and for merging files, e.g. 30s or 5m; 0 means never (also JIG_TIMEOUT; default 2m). Package installs are not counted."`

	Init     InitCmd     `cmd:"" help:"Create a project from a preset or a registry."`
	Add      AddCmd      `cmd:"" help:"Apply a registry to the project in the current directory."`
	Update   UpdateCmd   `cmd:"" help:"Update installed registries with a three-way merge that keeps your edits."`
	Remove   RemoveCmd   `cmd:"" aliases:"rm" help:"Remove an installed registry, keeping the files you changed."`
	Check    CheckCmd    `cmd:"" help:"Report files and package.json entries that changed since jig wrote them (exit 3 on drift, 1 on error)."`
	Diff     DiffCmd     `cmd:"" help:"Show the unified diff 'jig update' would apply; writes nothing."`
	Resolve  ResolveCmd  `cmd:"" help:"Settle a file the last update left conflicted with one side: --ours, --theirs or --base."`
	Outdated OutdatedCmd `cmd:"" help:"List installed, wanted and latest versions of the installed registries."`
	Fleet    FleetCmd    `cmd:"" help:"See which projects run which registry version (the census), and roll a version out to many repositories as pull requests."`
	Adopt    AdoptCmd    `cmd:"" help:"Write jig.json from the rack.json of a project the reference (rk) made; changes nothing else."`
	Config   ConfigCmd   `cmd:"" help:"Manage registry sources in the rc file (~/.jigrc)."`
	Login    LoginCmd    `cmd:"" help:"Save a namespace's token in the rc file after checking it against the server (token from stdin, or asked for without showing it)."`
	Logout   LogoutCmd   `cmd:"" help:"Remove a namespace's token from the rc file (its URL stays)."`
	Whoami   WhoamiCmd   `cmd:"" help:"Show who the saved token or SSO session of a namespace is to its server, and its rights there."`
	Trust    TrustCmd    `cmd:"" help:"Manage which SSH keys may sign each namespace's versions, and whether a signature is required."`
	Log      LogCmd      `cmd:"" help:"Watch a namespace's transparency log: jig log monitor lists the versions a signing key (or none) published there."`
	Verify   VerifyCmd   `cmd:"" help:"Check the installed versions' signatures against the trust policy and every digest jig.json records (exit 3 on failure)."`
	List     ListCmd     `cmd:"" help:"List the namespaces of a registry server, the registries in one namespace, or the presets (jig list @presets)."`
	Search   SearchCmd   `cmd:"" help:"Search the registries of every configured source."`
	Info     InfoCmd     `cmd:"" help:"Show a registry's description, versions, files and dependencies, and how to add it."`
	Doctor   DoctorCmd   `cmd:"" help:"Check the environment, the project and every configured registry."`
	Publish  PublishCmd  `cmd:"" help:"Publish a registry (directory or .tar.gz) or a preset to its namespace's server."`
	Registry RegistryCmd `cmd:"" help:"Tools for registry authors: test a registry directory before publishing, start a new registry."`
	Version  VersionCmd  `cmd:"" help:"Print the CLI version, Go version, platform and rc-file path."`
	Cache    CacheCmd    `cmd:"" help:"Inspect, verify or empty the local cache of verified registry content."`
	Mcp      McpCmd      `cmd:"" name:"mcp" help:"Serve the registries to coding agents over the Model Context Protocol (stdio)."`

	Help       HelpCmd       `cmd:"" help:"Show help: jig help <command> as jig <command> --help, or a topic: jig help exit-codes, jig help environment."`
	Completion CompletionCmd `cmd:"" help:"Print a shell completion script (bash, zsh, fish or powershell)."`
	Complete   CompleteCmd   `cmd:"" name:"__complete" hidden:"" help:"Print completions for the words after jig (used by the completion scripts)."`
}

// Validate rejects contradictory global flags.
func (c *CLI) Validate() error {
	if c.Offline && c.PreferOffline {
		return errors.New("--offline and --prefer-offline exclude each other; give one")
	}
	if c.Quiet && c.Verbose {
		return errors.New("--quiet and --verbose exclude each other; give one")
	}
	return nil
}

// Main runs the jig command line with args (without the program name) and
// returns the exit code (see [exitCodes]): 0 on success, 1 on error, 2 on
// a usage error of a command the reference lacks, 3 when the answer is "not
// clean", 130 when aborted (the context was cancelled, or a prompt was
// aborted). cmd/jig runs it under internal/shutdown.Run, which cancels ctx on
// SIGINT or SIGTERM, abandons a command still blocked a second later, and
// then exits 130 or 143 whatever Main returns.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, args, newApp(stdin, stdout, stderr, os.Getenv))
}

func run(ctx context.Context, args []string, app *App) (code int) {
	args = helpArgs(headerValues(args))
	var root CLI
	stdout, stderr := app.Stdout, app.Stderr
	defer kongexit.Recover(&code)
	parser, err := newParser(ctx, app, &root, args)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %s\n", escapeLines(err.Error()))
		return ExitError
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		if slices.Contains(args, "--json") {
			printErrorJSON(stdout, errorReport{Code: codeUsage, Message: err.Error(), Hint: "Run 'jig --help' for usage."})
		}
		fmt.Fprintf(stderr, "Error: %s\n", escapeLines(err.Error()))
		fmt.Fprintln(stderr, "Run 'jig --help' for usage.")
		return usageExit(parsedCommand(err))
	}
	app.command = topCommand(kctx.Selected())
	app.JSON = jsonRequested(kctx)
	app.setup(root.CI, root.Yes, root.NoInput)
	app.setVerbosity(root.Quiet, root.Verbose)
	if err := app.setTimeout(root.Timeout); err != nil {
		return app.report(ctx, err)
	}
	switch {
	case root.Offline:
		app.Mode = registryclient.Offline
	case root.PreferOffline:
		app.Mode = registryclient.PreferOffline
	}
	err = kctx.Run()
	return app.report(ctx, err)
}

// newParser builds the kong parser of root for args: the model of the
// command args name only (see [onlyCommand]), or of every command.
func newParser(ctx context.Context, app *App, root *CLI, args []string) (*kong.Kong, error) {
	opts := []kong.Option{
		kong.Name("jig"),
		kong.Description("jig scaffolds projects from versioned registries and manages registry sources."),
		kong.Writers(app.Stdout, app.Stderr),
		kongexit.Option(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		// The command's own flags come first, then the global ones.
		kong.ExplicitGroups([]kong.Group{{Key: "global", Title: "Global flags:"}}),
		kong.BindTo(ctx, (*context.Context)(nil)),
		kong.Bind(app),
		kong.Vars{"version": "jig " + buildinfo.Get().String()},
	}
	if skip := onlyCommand(args); skip != "" {
		opts = append(opts, kong.IgnoreFields(skip))
	}
	return kong.New(root, opts...)
}

// report prints err and maps it to an exit code.
func (a *App) report(ctx context.Context, err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, errNotClean) {
		// The command printed its answer (on stdout, the one --json
		// document included); what made it "not clean" goes to stderr.
		if re, ok := errors.AsType[*reportedError](err); ok {
			printError(a.Stderr, a.Out, re.r)
		}
		return ExitNotClean
	}
	if errors.Is(err, errSilent) {
		return ExitError
	}
	code := ExitError
	if errors.Is(err, ErrNoPrompt) {
		// A value that only a flag can give without a terminal.
		code = usageExit(a.command)
	}
	if errors.Is(err, ErrAborted) || errors.Is(err, context.Canceled) || ctx.Err() != nil {
		code = ExitAborted
	}
	r := reportFor(err, a.timeout, code == ExitAborted)
	if a.JSON {
		printErrorJSON(a.Stdout, r)
	}
	printError(a.Stderr, a.Out, r)
	return code
}

// jsonRequested reports whether the command being run has --json set.
func jsonRequested(kctx *kong.Context) bool {
	for _, f := range kctx.Flags() {
		if f.Name == "json" {
			v, ok := kctx.FlagValue(f).(bool)
			return ok && v
		}
	}
	return false
}

// errSilent is returned by commands that already printed why they failed
// (doctor with errors); Main exits 1 without printing anything else.
var errSilent = errors.New("failed")

// errNotClean is returned by a command that found and printed that the
// project is not clean (check's drift, outdated --exit-code, update's
// conflicts, verify's failures); Main exits [ExitNotClean] without printing
// anything else. [notClean] adds a report for stderr.
var errNotClean = errors.New("drift")

// notClean returns an error that exits [ExitNotClean] after printing r on
// stderr only (never as a --json document: the command's answer is the
// one on stdout). It is for a check that ran and failed, such as a
// registry whose version does not cover its changes.
func notClean(r errorReport) error {
	return &reportedError{err: fmt.Errorf("%w: %s", errNotClean, r.Message), r: r}
}

// usageExit is the exit code of a usage error of command (its first word,
// "" for none): 1 for the reference's commands and for none, as rk, else
// [ExitUsage].
func usageExit(command string) int {
	if command == "" || slices.Contains(referenceCommands, command) {
		return ExitError
	}
	return ExitUsage
}

// parsedCommand returns the first word of the command a parse error
// concerns, or "".
func parsedCommand(err error) string {
	var pe *kong.ParseError
	if !errors.As(err, &pe) || pe.Context == nil {
		return ""
	}
	return topCommand(pe.Context.Selected())
}

// topCommand returns the name of the command of [CLI] that n is or is
// under, or "" for none.
func topCommand(n *kong.Node) string {
	for n != nil && n.Parent != nil && n.Parent.Type != kong.ApplicationNode {
		n = n.Parent
	}
	if n == nil || n.Type == kong.ApplicationNode {
		return ""
	}
	return n.Name
}
