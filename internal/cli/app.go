package cli

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/jigkit/jig/internal/buildinfo"
	"github.com/jigkit/jig/registryclient"
)

// App is the shared plumbing every command receives (bound with kong.Bind):
// streams, output helper, the interactivity decision, the prompter and the
// rc-file configuration.
type App struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Out writes results to Stdout and messages to Stderr.
	Out *Output
	// CI is true with --ci or when the CI environment variable is set.
	CI bool
	// Interactive is true when prompting is allowed: not CI, and stdin and
	// stdout are terminals. It is decided once, before any command runs.
	Interactive bool
	// Prompt asks questions; without a terminal it fails with [ErrNoPrompt].
	Prompt Prompter
	// Getenv reads the environment.
	Getenv func(string) string

	// testPrompt, when set, is used as an interactive prompter (tests).
	testPrompt Prompter

	cfgOnce sync.Once
	cfg     *registryclient.Config
	cfgErr  error
}

func newApp(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) *App {
	a := &App{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv}
	noColor := getenv("NO_COLOR") != ""
	a.Out = newOutput(stdout, stderr, !noColor && isTerminal(stdout), !noColor && isTerminal(stderr))
	a.Prompt = NoPrompt{}
	return a
}

// setup makes the interactivity decision once.
func (a *App) setup(ciFlag bool) {
	a.CI = ciFlag || a.Getenv("CI") != ""
	a.Interactive = !a.CI && isTerminal(a.Stdin) && isTerminal(a.Stdout)
	if a.testPrompt != nil && !a.CI {
		a.Interactive, a.Prompt = true, a.testPrompt
	} else if a.Interactive {
		a.Prompt = newHuhPrompter(a.Stdin, a.Stderr)
	}
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ConfigPath returns the absolute rc-file path ($JIG_CONFIG or ~/.jigrc).
func (a *App) ConfigPath() (string, error) {
	if p := a.Getenv(registryclient.EnvConfig); p != "" {
		return filepath.Abs(p)
	}
	if home := a.Getenv("HOME"); home != "" && filepath.IsAbs(home) {
		return filepath.Join(home, ".jigrc"), nil
	}
	return registryclient.DefaultConfigPath()
}

// Config loads the rc file once per run.
func (a *App) Config() (*registryclient.Config, error) {
	a.cfgOnce.Do(func() {
		p, err := a.ConfigPath()
		if err != nil {
			a.cfgErr = err
			return
		}
		a.cfg, a.cfgErr = registryclient.LoadConfig(p)
	})
	return a.cfg, a.cfgErr
}

// ClientOptions are the options every client the CLI builds gets.
func (a *App) ClientOptions() []registryclient.Option {
	return []registryclient.Option{
		registryclient.WithUserAgent("jig/" + buildinfo.Get().Version),
		registryclient.WithRetryNotify(func(_ int, wait time.Duration, err error) {
			var rl *registryclient.RateLimitError
			if errors.As(err, &rl) && wait >= time.Second {
				a.Out.Warnf("rate limited by %s; retrying in %s", rl.Err.URL, wait.Round(time.Second))
			}
		}),
	}
}

// Client returns a client for the source configured for namespace ns.
func (a *App) Client(ns string) (*registryclient.Client, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	return cfg.Client(ns, a.ClientOptions()...)
}

// Sources returns a router that fetches each registry from its own
// namespace's source.
func (a *App) Sources() (*registryclient.Sources, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	return cfg.Sources(a.ClientOptions()...), nil
}
