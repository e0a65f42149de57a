package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// HelpCmd is "jig help [command... | topic]": jig help is jig --help, jig
// help <command> is jig <command> --help (see [helpArgs]), and the topics
// are texts no single command owns.
type HelpCmd struct {
	Topic []string `arg:"" optional:"" help:"A command (add, config set, …) or a topic: exit-codes, environment."`
}

// helpTopics are the topics of jig help, by name.
var helpTopics = map[string]func(io.Writer){
	"exit-codes":  printExitCodes,
	"environment": printEnvironment,
}

// Run prints a topic; every other form of jig help was turned into --help
// before parsing.
func (c *HelpCmd) Run(app *App) error {
	if len(c.Topic) == 1 {
		if print := helpTopics[c.Topic[0]]; print != nil {
			print(app.Stdout)
			return nil
		}
	}
	return fmt.Errorf("no help topic %q; the topics are exit-codes and environment, or name a command ('jig help add')", strings.Join(c.Topic, " "))
}

func (c *HelpCmd) Help() string {
	return `Examples:
  jig help                 # the same as jig --help
  jig help config set      # the same as jig config set --help
  jig help exit-codes      # what each exit code means
  jig help environment     # every JIG_* environment variable`
}

// helpArgs turns "jig [global flags] help <command...>" into "jig [global
// flags] <command...> --help", and a bare "jig help" into "jig --help";
// "jig help <topic>" and every other command line stay as they are.
func helpArgs(args []string) []string {
	i := firstWord(args)
	if i < 0 || args[i] != "help" {
		return args
	}
	rest := args[i+1:]
	if len(rest) == 1 && helpTopics[rest[0]] != nil {
		return args
	}
	out := slices.Concat(args[:i], rest, []string{"--help"})
	return out
}

// firstWord returns the index of the first word of args that is not a
// global flag or its value, or -1.
func firstWord(args []string) int {
	g := cliGrammar()
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case g.switchFlags[a]:
		case g.valueFlags[a]:
			i++
		case strings.HasPrefix(a, "-"):
			if k, _, ok := strings.Cut(a, "="); ok && g.valueFlags[k] {
				continue
			}
			return -1
		default:
			return i
		}
	}
	return -1
}

// envVar is one environment variable jig reads or sets.
type envVar struct {
	Name    string
	Meaning string
	// Hidden variables (test hooks) are not printed, but are listed so that
	// TestEnvironmentListsEveryVariable knows them.
	Hidden bool
}

// envVars is the one list of the JIG_* environment variables: jig help
// environment prints it, and TestEnvironmentListsEveryVariable fails when
// the code names a JIG_ variable it lacks.
var envVars = []envVar{
	{rcfile.EnvConfig, "path of the rc file (default ~/.jigrc)", false},
	{rcfile.EnvRegistryURL, "URL of the built-in namespaces @main and @presets (default " + rcfile.DefaultRegistryURL + ")", false},
	{"JIG_CACHE_DIR", "directory of the local cache (default jig under $XDG_CACHE_HOME or the user cache directory)", false},
	{"JIG_CACHE_MAX_MB", "size cap of the local cache in megabytes (default 500)", false},
	{"JIG_TIMEOUT", "what --timeout gives when it is not given, e.g. 30s or 5m; 0 means never (default 2m)", false},
	{EnvDebug, "1 prints each HTTP request to stderr, as --verbose does", false},
	{"JIG_SIGNING_KEY", "SSH private key jig publish signs with, as --sign-key", false},
	{"JIG_FLEET_REPO", "set by jig fleet update for --pr-command: the repository's address, without credentials", false},
	{"JIG_FLEET_BRANCH", "set by jig fleet update for --pr-command: the branch it pushed", false},
	{"JIG_FLEET_BASE", "set by jig fleet update for --pr-command: the branch the request targets", false},
	{"JIG_FLEET_TITLE", "set by jig fleet update for --pr-command: the request's title", false},
	{"JIG_FLEET_BODY", "set by jig fleet update for --pr-command: the request's description", false},
	{"JIG_FLEET_DRAFT", "set by jig fleet update for --pr-command: 1 for a draft request, else empty", false},
	{registryclient.EnvOIDCToken, "an OIDC identity token of the CI job, used when no token is configured (trusted publishing, verified census reports)", false},
	{registryclient.EnvOIDCTokenFile, "a file holding such a token (e.g. a Kubernetes projected token), read anew each time", false},
	{registryclient.EnvGitLabIDToken, "the id_tokens variable a GitLab CI job declares for jig", false},
	{registryclient.EnvOIDCAudience, "the audience asked of GitHub Actions' token service (default the server's origin)", false},
	{"JIG_TEST_KILL_AT_WRITE", "test hook: kill the process at the Nth file write", true},
}

// otherEnv are the other environment variables jig follows.
var otherEnv = []envVar{
	{"CI", "when set, never prompt (as --no-input; a confirmation then needs --yes or --ci)", false},
	{"NO_COLOR", "when set, no colour (also TERM=dumb)", false},
	{"HTTP_PROXY, HTTPS_PROXY, NO_PROXY", "the proxy for registry requests", false},
	{"XDG_CACHE_HOME", "where the local cache goes when JIG_CACHE_DIR is unset", false},
	{"SSH_AUTH_SOCK", "the ssh-agent that signs with an encrypted key", false},
}

// printEnvironment writes the environment variables (jig help environment).
func printEnvironment(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Environment variables of jig:")
	for _, v := range envVars {
		if !v.Hidden {
			fmt.Fprintf(tw, "  %s\t%s\n", v.Name, v.Meaning)
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "Other variables jig follows:")
	for _, v := range otherEnv {
		fmt.Fprintf(tw, "  %s\t%s\n", v.Name, v.Meaning)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, wrap("A source's URL, token or header value in the rc file may name a variable (\"${TEAM_TOKEN}\"); jig reads it when the source is used.", 78))
}
