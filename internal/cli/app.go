package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/jigkit/jig/internal/buildinfo"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/cache"
	"github.com/jigkit/jig/registryclient/rcfile"
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
	// CI is true with --ci or when the CI environment variable is set:
	// nothing is asked.
	CI bool
	// Yes is true with --yes (-y) or --ci: confirmations are answered yes
	// (see [App.Confirm]). The CI environment variable never sets it (it
	// turns prompts off; it does not answer them), and it never replaces
	// or deletes a file jig would otherwise keep: that is each command's
	// --force.
	Yes bool
	// Interactive is true when prompting is allowed: not CI, not
	// --no-input, and stdin and stdout are terminals. It is decided once,
	// before any command runs.
	Interactive bool
	// Prompt asks questions; without a terminal it fails with [ErrNoPrompt].
	Prompt Prompter
	// Getenv reads the environment.
	Getenv func(string) string

	// testPrompt, when set, is used as an interactive prompter (tests).
	testPrompt Prompter

	// Mode is where content may come from (--offline, --prefer-offline).
	Mode registryclient.Mode
	// JSON is true when the command runs with --json: an error is then
	// also printed as {"error": {code, message, hint}} on stdout.
	JSON bool
	// trace prints each HTTP request (--verbose, JIG_DEBUG=1); nil for
	// none.
	trace func(registryclient.Trace)

	// command is the first word of the command being run ("config" for
	// jig config set), for the exit code of a usage error.
	command string

	// timeout and deadline bound all registry requests of the command
	// (--timeout, JIG_TIMEOUT); zero means none.
	timeout  time.Duration
	deadline time.Time

	cfgOnce sync.Once
	cfg     *rcfile.Config
	cfgErr  error

	cacheOnce sync.Once
	cache     *cache.Cache
	cacheErr  error
	cacheWarn sync.Once
}

// Cache opens the local content cache once per run: $JIG_CACHE_DIR, else
// jig under the user cache directory (XDG_CACHE_HOME honoured), capped at
// $JIG_CACHE_MAX_MB megabytes (default 500).
func (a *App) Cache() (*cache.Cache, error) {
	a.cacheOnce.Do(func() {
		dir := cache.DefaultDir(a.Getenv)
		var opts []cache.Option
		if v := a.Getenv("JIG_CACHE_MAX_MB"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				a.cacheErr = fmt.Errorf("JIG_CACHE_MAX_MB=%q must be a positive number of megabytes", v)
				return
			}
			opts = append(opts, cache.WithMaxBytes(n<<20))
		}
		a.cache, a.cacheErr = cache.Open(dir, opts...)
	})
	return a.cache, a.cacheErr
}

func newApp(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) *App {
	a := &App{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv}
	noColor := getenv("NO_COLOR") != "" || getenv("TERM") == "dumb"
	a.Out = newOutput(stdout, stderr, !noColor && isTerminal(stdout), !noColor && isTerminal(stderr))
	a.Prompt = NoPrompt{}
	return a
}

// setup makes the interactivity decision once: --ci means --yes
// --no-input; the CI environment variable means --no-input only, so a
// confirmation then fails naming the flag that answers it (gh and npm
// never take CI for consent either).
func (a *App) setup(ciFlag, yes, noInput bool) {
	a.CI = ciFlag || a.Getenv("CI") != ""
	a.Yes = yes || ciFlag
	noInput = noInput || a.CI
	a.Interactive = !noInput && isTerminal(a.Stdin) && isTerminal(a.Stdout)
	if a.testPrompt != nil && !noInput {
		a.Interactive, a.Prompt = true, a.testPrompt
	} else if a.Interactive {
		a.Prompt = newHuhPrompter(a.Stdin, a.Stderr, a.plainTerminal())
	}
}

// EnvDebug is the environment variable that, set (to 1; not to 0 or
// false), turns the request trace of --verbose on.
const EnvDebug = "JIG_DEBUG"

// setVerbosity applies --quiet and --verbose (or JIG_DEBUG=1).
func (a *App) setVerbosity(quiet, verbose bool) {
	a.Out.quiet = quiet
	if d := a.Getenv(EnvDebug); verbose || (d != "" && d != "0" && !strings.EqualFold(d, "false")) {
		var mu sync.Mutex // requests run concurrently; one line at a time
		a.trace = func(t registryclient.Trace) {
			line := traceLine(t)
			mu.Lock()
			defer mu.Unlock()
			a.Out.Errorln(line)
		}
	}
}

// traceLine is one request of the trace, for people: "http: GET <url>
// 200 12ms HTTP/2.0 h2c cache=miss", or "http: cache hit <what>".
func traceLine(t registryclient.Trace) string {
	if t.Cache == "hit" {
		return "http: cache hit " + t.URL + " (no request)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "http: %s %s", t.Method, t.URL)
	if t.Err != nil {
		fmt.Fprintf(&b, " failed after %s: %v", t.Duration.Round(time.Microsecond), t.Err)
	} else {
		fmt.Fprintf(&b, " %d %s %s %s", t.Status, t.Duration.Round(time.Microsecond), t.Proto, t.Conn)
	}
	if t.Cache != "" {
		b.WriteString(" cache=" + t.Cache)
	}
	return b.String()
}

// Confirm asks question q (def is the default answer) and returns the
// answer: yes at once with --yes; without a terminal an error that names
// --yes (-y), or flag when flag is not "" (the command's own flag that
// answers it, such as --force).
func (a *App) Confirm(ctx context.Context, q string, def bool, flag, what string) (bool, error) {
	if a.Yes {
		return true, nil
	}
	ok, err := a.Prompt.Confirm(ctx, q, def)
	if err != nil {
		if flag == "" {
			flag = "--yes (-y)"
		}
		return false, NeedFlag(err, flag, what)
	}
	return ok, nil
}

// plainTerminal reports whether the terminal must get plain text only: no
// colour and no escape sequences or queries (NO_COLOR set, or TERM=dumb).
func (a *App) plainTerminal() bool {
	return a.Getenv("NO_COLOR") != "" || a.Getenv("TERM") == "dumb"
}

// DefaultTimeout bounds the registry requests of one command when neither
// --timeout nor JIG_TIMEOUT is given.
const DefaultTimeout = 2 * time.Minute

// setTimeout decides the command's deadline from --timeout, else
// JIG_TIMEOUT, else [DefaultTimeout]. A bare number is seconds; 0 means no
// deadline.
func (a *App) setTimeout(flag string) error {
	v, from := flag, "--timeout"
	if v == "" {
		v, from = a.Getenv("JIG_TIMEOUT"), "JIG_TIMEOUT"
	}
	d := DefaultTimeout
	if v = strings.TrimSpace(v); v != "" {
		var err error
		if n, aerr := strconv.Atoi(v); aerr == nil {
			d, err = time.Duration(n)*time.Second, nil
		} else {
			d, err = time.ParseDuration(v)
		}
		if err != nil || d < 0 {
			return fmt.Errorf("%s %q is not a duration; use e.g. 30s, 5m or 0 for no limit", from, v)
		}
	}
	a.timeout = d
	if d > 0 {
		a.deadline = time.Now().Add(d)
	}
	return nil
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ConfigPath returns the absolute rc-file path ($JIG_CONFIG or ~/.jigrc).
func (a *App) ConfigPath() (string, error) {
	if p := a.Getenv(rcfile.EnvConfig); p != "" {
		return filepath.Abs(p)
	}
	if home := a.Getenv("HOME"); home != "" && filepath.IsAbs(home) {
		return filepath.Join(home, ".jigrc"), nil
	}
	return rcfile.DefaultPath()
}

// Config loads the rc file once per run.
func (a *App) Config() (*rcfile.Config, error) {
	a.cfgOnce.Do(func() {
		p, err := a.ConfigPath()
		if err != nil {
			a.cfgErr = err
			return
		}
		a.cfg, a.cfgErr = rcfile.Load(p)
		if a.cfg != nil {
			a.cfg.SSORefresh = a.refreshSSO
		}
	})
	return a.cfg, a.cfgErr
}

// ClientOptions are the options every client the CLI builds gets: the
// cache (when it can be opened; a warning otherwise), the offline mode and
// notices printed to stderr.
func (a *App) ClientOptions() []registryclient.Option {
	var opts []registryclient.Option
	if c, err := a.Cache(); err == nil {
		opts = append(opts, registryclient.WithCache(c))
	} else {
		// Offline, the command then fails for want of content: this says why.
		a.cacheWarn.Do(func() { a.Out.Warnf("local cache unavailable (%v); continuing without it", err) })
	}
	if a.trace != nil {
		opts = append(opts, registryclient.WithTrace(a.trace))
	}
	opts = append(opts, registryclient.WithMode(a.Mode),
		registryclient.WithNotice(func(msg string) { a.Out.Infof("note: %s", msg) }))
	if !a.deadline.IsZero() {
		opts = append(opts, registryclient.WithDeadline(a.deadline))
	}
	return append(opts,
		registryclient.WithUserAgent("jig/"+buildinfo.Get().Version),
		registryclient.WithRetryNotify(func(_ int, wait time.Duration, err error) {
			var rl *registryclient.RateLimitError
			if errors.As(err, &rl) && wait >= time.Second {
				a.Out.Warnf("rate limited by %s; retrying in %s", rl.Err.URL, wait.Round(time.Second))
			}
		}),
	)
}

// Client returns a client for the source configured for namespace ns.
func (a *App) Client(ns string) (*registryclient.Client, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	return cfg.Client(ns, a.ClientOptions()...)
}

// WriteClient returns the client of namespace ns for a command that
// writes with the caller's identity (jig publish, census reports): when
// the source has no token, the CI's OIDC identity token
// ([registryclient.FindCIIdentity], asked for the server's origin as its
// audience) is sent instead, so CI needs no stored secret. It says on
// stderr where the identity came from, never the token.
func (a *App) WriteClient(ctx context.Context, ns string) (*registryclient.Client, error) {
	cfg, err := a.Config()
	if err != nil {
		return nil, err
	}
	e, err := cfg.Resolve(ns)
	if err != nil || e.Token != "" {
		return cfg.Client(ns, a.ClientOptions()...)
	}
	id, err := registryclient.FindCIIdentity(ctx, a.Getenv, registryclient.Origin(e.URL), nil)
	if err != nil {
		return nil, fmt.Errorf("finding the CI's identity token for %s: %w", ns, err)
	}
	if id == nil {
		return cfg.Client(ns, a.ClientOptions()...)
	}
	a.Out.Infof("Using the identity token of %s for %s", id.Source, ns)
	return cfg.Client(ns, append(a.ClientOptions(), registryclient.WithToken(id.Token))...)
}

// signedInWithSSO says whether ns's source holds a session of jig login
// --sso (false when the configuration cannot be read).
func (a *App) signedInWithSSO(ns string) bool {
	cfg, err := a.Config()
	if err != nil {
		return false
	}
	e, err := cfg.Resolve(ns)
	return err == nil && e.SSO != nil
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
