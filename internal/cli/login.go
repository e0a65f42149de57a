package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/jigkit/jig/internal/redact"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// LoginCmd is "jig login <ns> [--url URL] [--with-token | --sso]".
type LoginCmd struct {
	Namespace string  `arg:"" optional:"" help:"Namespace to log in to, e.g. @company (with --sso, default: @main)."`
	URL       *string `name:"url" help:"Registry server URL (http:// or https://); needed when the namespace is not configured yet."`
	WithToken bool    `name:"with-token" help:"Read the token from stdin (also the default when stdin is not a terminal)."`
	SSO       bool    `name:"sso" help:"Log in as yourself at your organisation's issuer (Keycloak, Okta, Entra, Dex...): jig shows a code and a page to approve it on, then saves a short-lived token of the server, renewed with the issuer while it allows."`
}

// Validate rejects --sso with --with-token, and a missing namespace
// without --sso.
func (c *LoginCmd) Validate() error {
	switch {
	case c.SSO && c.WithToken:
		return errors.New("--sso and --with-token exclude each other: --sso logs you in at your organisation's issuer, --with-token reads a token from stdin")
	case !c.SSO && c.Namespace == "":
		return errors.New("give the namespace to log in to: jig login @team (or jig login --sso to log in as yourself)")
	}
	return nil
}

// maxTokenInput bounds what jig login reads from stdin.
const maxTokenInput = 64 << 10

// Run reads the token (stdin, or a prompt that shows nothing), checks it
// against the server, and saves it in the rc file as 'jig config set
// --token' does. The token never appears in the output or an error.
func (c *LoginCmd) Run(ctx context.Context, app *App) error {
	ns := c.Namespace
	if ns == "" {
		ns = registry.DefaultNamespace
	}
	if err := rcfile.ValidateNamespaceArg(ns); err != nil {
		return err
	}
	path, err := app.ConfigPath()
	if err != nil {
		return err
	}
	// A copy of the rc file to try the token with; the saved file is
	// edited afresh, under its lock, only once the token passed.
	probe, err := rcfile.Load(path)
	if err != nil {
		return err
	}
	if e, ok := probe.Get(ns); c.URL == nil && (!ok || e.URL == "") {
		sso := ""
		if c.SSO {
			sso = " --sso"
		}
		return fmt.Errorf("%s is not configured yet; give its server: jig login %s%s --url <url>", ns, ns, sso)
	}
	if c.SSO {
		return c.loginSSO(ctx, app, ns, path, probe)
	}
	tok, err := c.readToken(ctx, app)
	if err != nil {
		return err
	}
	if err := probe.Set(ns, rcfile.Update{URL: c.URL, Token: &tok}); err != nil {
		return redact.Error(err, tok)
	}
	e, _ := probe.Get(ns)
	publish, err := checkToken(ctx, app, probe, ns, e.URL, tok)
	if err != nil {
		return redact.Error(err, tok)
	}
	if _, err := rcfile.Edit(ctx, path, func(cfg *rcfile.Config) error {
		return cfg.Set(ns, rcfile.Update{URL: c.URL, Token: &tok})
	}); err != nil {
		return redact.Error(err, tok)
	}
	what := "it may not publish (read only)"
	switch publish {
	case publishYes:
		what = "it may publish (to the namespaces the server allows it)"
	case publishUnknown:
		what = "whether it may publish could not be told"
	}
	app.Out.Success("Logged in to %s at %s: the token reads %s, and %s", ns, e.URL, ns, what)
	app.Out.Printf("Token saved in %s ('jig logout %s' removes it)\n", path, ns)
	return nil
}

// readToken reads the token from stdin (--with-token, or stdin is not a
// terminal), else asks for it on the terminal without showing it.
func (c *LoginCmd) readToken(ctx context.Context, app *App) (string, error) {
	var tok string
	if c.WithToken || !isTerminal(app.Stdin) {
		b, err := io.ReadAll(io.LimitReader(app.Stdin, maxTokenInput+1))
		if err != nil {
			return "", fmt.Errorf("reading the token from stdin: %w", err)
		}
		if len(b) > maxTokenInput {
			return "", errors.New("stdin holds more than a token (over 64 KiB); give only the token")
		}
		tok = strings.TrimSpace(string(b))
		if tok == "" {
			return "", fmt.Errorf("no token on stdin; pipe it in: jig login %s --with-token < token.txt", c.Namespace)
		}
	} else {
		t, err := app.Prompt.Secret(ctx, "Token for "+c.Namespace+" (not shown):")
		if err != nil {
			if errors.Is(err, ErrNoPrompt) {
				return "", fmt.Errorf("no token: no terminal to ask on; pipe it in: jig login %s --with-token < token.txt", c.Namespace)
			}
			return "", err
		}
		tok = strings.TrimSpace(t)
		if tok == "" {
			return "", errors.New("no token given; nothing was saved")
		}
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", errors.New("the token holds spaces or several lines; give only the token (nothing was saved)")
	}
	return tok, nil
}

// publishAnswer is what the server said about a token's publishing.
type publishAnswer int

const (
	publishNo publishAnswer = iota
	publishYes
	publishUnknown
)

// checkToken asks the server at url whether tok reads ns (listing its
// registries) and whether it may publish. Every failure says what to do
// and that nothing was saved.
func checkToken(ctx context.Context, app *App, cfg *rcfile.Config, ns, url, tok string) (publishAnswer, error) {
	cl, err := cfg.Client(ns, app.ClientOptions()...)
	if err != nil {
		return publishNo, err
	}
	_, err = cl.Registries(ctx, ns)
	var se *registryclient.StatusError
	if err == nil {
		// A public namespace reads with any token: the upload check
		// tells whether the server knows this one. Any other failure of
		// that check only leaves the answer to "may it publish" open.
		var may bool
		may, err = cl.MayPublish(ctx)
		switch {
		case err == nil && may:
			return publishYes, nil
		case err == nil:
			return publishNo, nil
		case !errors.As(err, &se) || se.StatusCode != http.StatusUnauthorized:
			app.Out.Warnf("could not tell whether the token may publish: %v", redact.Error(err, tok))
			return publishUnknown, nil
		}
	}
	switch {
	case errors.As(err, &se) && se.StatusCode == http.StatusUnauthorized:
		return publishNo, fmt.Errorf("the server at %s does not accept this token (%s); nothing was saved. Check the token, or ask the server's admin for a new one", url, se.Code)
	case errors.As(err, &se) && se.StatusCode == http.StatusForbidden:
		return publishNo, fmt.Errorf("the token cannot read %s at %s, or the server has no namespace %s; nothing was saved. Check the namespace and the token", ns, url, ns)
	case errors.As(err, &se):
		return publishNo, fmt.Errorf("%s does not answer as a jig registry server (%d %s); nothing was saved. Check --url", url, se.StatusCode, http.StatusText(se.StatusCode))
	}
	return publishNo, fmt.Errorf("cannot check the token: %w; nothing was saved. Check --url, or run 'jig doctor'", err)
}

// LogoutCmd is "jig logout <ns>".
type LogoutCmd struct {
	Namespace string `arg:"" help:"Namespace whose token to remove, e.g. @company."`
}

// Run removes the namespace's token (and SSO session) from the rc file;
// its URL and other headers stay.
func (c *LogoutCmd) Run(ctx context.Context, app *App) error {
	if err := rcfile.ValidateNamespaceArg(c.Namespace); err != nil {
		return err
	}
	path, err := app.ConfigPath()
	if err != nil {
		return err
	}
	empty := ""
	_, err = rcfile.Edit(ctx, path, func(cfg *rcfile.Config) error {
		if e, ok := cfg.Get(c.Namespace); !ok || (e.Token == "" && e.SSO == nil) {
			return fmt.Errorf("%s has no token saved in %s; nothing to log out of", c.Namespace, path)
		}
		return cfg.Set(c.Namespace, rcfile.Update{Token: &empty, ClearSSO: true})
	})
	if err != nil {
		return err
	}
	app.Out.Success("Logged out of %s: its token was removed from %s (its URL stays)", c.Namespace, path)
	return nil
}

// Help shows examples under the flags of jig login --help.
func (c *LoginCmd) Help() string {
	return `Examples:
  jig login @team --url https://registry.example.com   # asks for the token, shows nothing
  jig login @team --with-token < token.txt             # from a file
  echo "$TEAM_TOKEN" | jig login @team                 # in CI (stdin is not a terminal)
  jig login @team --sso                                # as yourself, at your organisation's issuer`
}

// Help shows examples under the flags of jig logout --help.
func (c *LogoutCmd) Help() string {
	return `Examples:
  jig logout @team   # removes the token; the URL stays in ~/.jigrc`
}
