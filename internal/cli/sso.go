package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/redact"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// ssoLoginAgain is the command that starts a new SSO session for ns.
func ssoLoginAgain(ns string) string { return "jig login " + ns + " --sso" }

// loginSSO is "jig login <ns> --sso": the device grant at the issuer the
// server names (GET /auth/sso), the ID token exchanged for the server's
// session token (POST /auth/sso/token), both saved with the issuer's
// refresh token in the rc file. Nothing is saved unless every step
// succeeds.
func (c *LoginCmd) loginSSO(ctx context.Context, app *App, ns, path string, probe *rcfile.Config) error {
	empty := ""
	if err := probe.Set(ns, rcfile.Update{URL: c.URL, Token: &empty, ClearSSO: true}); err != nil {
		return err
	}
	e, _ := probe.Get(ns)
	cl, err := probe.Client(ns, app.ClientOptions()...)
	if err != nil {
		return err
	}
	info, err := cl.SSO(ctx)
	var se *registryclient.StatusError
	switch {
	case errors.As(err, &se) && se.StatusCode == http.StatusNotFound:
		return fmt.Errorf("the server at %s has no SSO login (its auth.json has no \"sso\" section); nothing was saved. Log in with a token instead: jig login %s", e.URL, ns)
	case err != nil:
		return fmt.Errorf("cannot ask %s how to log in: %w; nothing was saved. Check --url, or run 'jig doctor'", e.URL, err)
	}
	show := func(d registryclient.DeviceCode) {
		app.Out.Errorln(fmt.Sprintf("To log in to %s, open %s and enter the code %s", ns, d.VerificationURI, d.UserCode))
		if d.VerificationURIComplete != "" {
			app.Out.Errorln(fmt.Sprintf("  (or open %s)", d.VerificationURIComplete))
		}
		until := ""
		if !d.Expires.IsZero() {
			until = " (the code expires at " + d.Expires.UTC().Format("15:04 UTC") + ")"
		}
		app.Out.Errorln("Waiting for the approval" + until + "; Ctrl-C stops.")
	}
	toks, err := registryclient.DeviceLogin(ctx, nil, *info, show)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, registryclient.ErrSSODenied):
		return fmt.Errorf("the login was denied at %s; nothing was saved. To try again: %s", info.Issuer, ssoLoginAgain(ns))
	case errors.Is(err, registryclient.ErrSSOCodeExpired):
		return fmt.Errorf("the code expired before it was approved; nothing was saved. To try again: %s", ssoLoginAgain(ns))
	case err != nil:
		return fmt.Errorf("device login at %s failed: %w; nothing was saved", info.Issuer, err)
	}
	t, err := exchangeSSO(ctx, cl, e.URL, ns, toks.IDToken)
	if err != nil {
		return fmt.Errorf("%w; nothing was saved", err)
	}
	sess := &registryclient.SSOSession{Issuer: info.Issuer, ClientID: info.ClientID, Scopes: info.Scopes,
		RefreshToken: toks.RefreshToken, ExpiresAt: t.ExpiresAt, Person: t.Person}
	if _, err := rcfile.Edit(ctx, path, func(cfg *rcfile.Config) error {
		return cfg.Set(ns, rcfile.Update{URL: c.URL, Token: &t.Token, SSO: sess})
	}); err != nil {
		return redact.Error(redact.Error(err, t.Token), toks.RefreshToken)
	}
	app.Out.Success("Logged in to %s at %s as %s: %s", ns, e.URL, t.Person, rightsText(t.Namespaces))
	renew := "renewed with the issuer while it allows"
	if toks.RefreshToken == "" {
		renew = "not renewable (the issuer gave no refresh token: ask for the offline_access scope)"
	}
	app.Out.Printf("Session until %s, %s; saved in %s ('jig logout %s' removes it)\n",
		t.ExpiresAt.UTC().Format(time.RFC3339), renew, path, ns)
	return nil
}

// exchangeSSO sends the issuer's ID token to the server for its session
// token; the errors say what the server refused.
func exchangeSSO(ctx context.Context, cl *registryclient.Client, url, ns, idToken string) (*wire.SSOToken, error) {
	t, err := cl.ExchangeSSO(ctx, idToken)
	var se *registryclient.StatusError
	switch {
	case errors.As(err, &se) && se.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("the server at %s gives you no rights: %s", url, se.Message)
	case errors.As(err, &se) && (se.StatusCode == http.StatusUnauthorized || se.StatusCode == http.StatusServiceUnavailable):
		return nil, fmt.Errorf("the server at %s refused the issuer's ID token (%s: %s); its auth.json \"sso\" section must name the issuer and client id jig used", url, se.Code, se.Message)
	case err != nil:
		return nil, fmt.Errorf("exchanging the ID token at %s: %w", url, redact.Error(err, idToken))
	}
	return t, nil
}

// rightsText is "read, publish in @team; read in @docs".
func rightsText(r wire.Rights) string {
	if len(r) == 0 {
		return "no namespace beyond the public ones"
	}
	names := r.Namespaces()
	parts := make([]string, len(names))
	for i, ns := range names {
		parts[i] = strings.Join(r[ns], ", ") + " in " + ns
	}
	return strings.Join(parts, "; ")
}

// errSSOUnchanged ends an rc-file edit that has nothing to write.
var errSSOUnchanged = errors.New("unchanged")

// refreshSSO is the rc file's [rcfile.Config.SSORefresh]: under the rc
// file's lock (so that two jig processes never both spend the same
// refresh token), it takes a session another process renewed meanwhile,
// else refreshes with the issuer, exchanges the new ID token with the
// server and saves both. When the issuer refuses, the message says to
// log in again; the rc file is left as it was.
func (a *App) refreshSSO(ctx context.Context, ns string, e registryclient.Entry) (string, *registryclient.SSOSession, error) {
	path, err := a.ConfigPath()
	if err != nil {
		return "", nil, err
	}
	var tok string
	var sess *registryclient.SSOSession
	_, err = rcfile.Edit(ctx, path, func(cfg *rcfile.Config) error {
		cur, ok := cfg.Get(ns)
		if !ok || cur.SSO == nil {
			return fmt.Errorf("the SSO session of %s is no longer in %s (jig logout?); log in again: %s", ns, path, ssoLoginAgain(ns))
		}
		if cur.Token != e.Token && !cur.SSO.Expired(time.Now(), time.Minute) {
			tok, sess = cur.Token, cur.SSO
			return errSSOUnchanged
		}
		toks, err := registryclient.RefreshSSO(ctx, nil, *cur.SSO)
		var ie *registryclient.IssuerError
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.As(err, &ie):
			return fmt.Errorf("your SSO session for %s has ended: %s refused to renew it (%s); log in again: %s", ns, ie.Issuer, ie.Code, ssoLoginAgain(ns))
		case err != nil:
			return fmt.Errorf("renewing the SSO session of %s: %w", ns, redact.Error(err, cur.SSO.RefreshToken))
		}
		cl, err := registryclient.New(cur.URL, append(a.ClientOptions(), registryclient.WithNamespace(ns), registryclient.WithHeaders(cur.Headers))...)
		if err != nil {
			return err
		}
		t, err := exchangeSSO(ctx, cl, cur.URL, ns, toks.IDToken)
		if err != nil {
			return fmt.Errorf("renewing the SSO session of %s: %w. Log in again when that is fixed: %s", ns, err, ssoLoginAgain(ns))
		}
		sess = cur.SSO.Clone()
		sess.RefreshToken, sess.ExpiresAt, sess.Person = toks.RefreshToken, t.ExpiresAt, t.Person
		tok = t.Token
		return cfg.Set(ns, rcfile.Update{Token: &tok, SSO: sess})
	})
	if err != nil && !errors.Is(err, errSSOUnchanged) {
		return "", nil, err
	}
	a.Out.Infof("Renewed the SSO session of %s (until %s)", ns, sess.ExpiresAt.UTC().Format(time.RFC3339))
	return tok, sess, nil
}

// WhoamiCmd is "jig whoami [<ns>]".
type WhoamiCmd struct {
	Namespace string `arg:"" optional:"" help:"Namespace whose server to ask (default: the default namespace, @main)."`
	JSON      bool   `name:"json" help:"Print the server's answer as one JSON document: kind, person, issuer, subject, groups, expires and namespaces (each with its scopes)."`
}

// Run asks the namespace's server who its saved token (or SSO session)
// is and what it opens.
func (c *WhoamiCmd) Run(ctx context.Context, app *App) error {
	ns := c.Namespace
	if ns == "" {
		ns = registry.DefaultNamespace
	}
	if err := rcfile.ValidateNamespaceArg(ns); err != nil {
		return err
	}
	cl, err := app.Client(ns)
	if err != nil {
		return err
	}
	w, err := cl.Whoami(ctx)
	var se *registryclient.StatusError
	if errors.As(err, &se) && se.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("the server of %s does not accept the saved token (%s: %s); log in again: jig login %s (or %s)", ns, se.Code, se.Message, ns, ssoLoginAgain(ns))
	}
	if err != nil {
		return err
	}
	return app.Out.Result(c.JSON, w, func() {
		switch w.Kind {
		case wire.WhoAnonymous:
			app.Out.Printf("No token for %s: you read its public namespaces only (jig login %s, or %s)\n", ns, ns, ssoLoginAgain(ns))
			return
		case wire.WhoAdmin:
			app.Out.Printf("The admin token of the server of %s: every namespace, every right\n", ns)
			return
		case wire.WhoPerson:
			app.Out.Printf("%s (subject %s at %s)\n", w.Person, w.Subject, w.Issuer)
			if len(w.Groups) > 0 {
				app.Out.Printf("Groups: %s\n", strings.Join(w.Groups, ", "))
			}
			if w.Expires != nil {
				app.Out.Printf("Session until %s\n", w.Expires.UTC().Format(time.RFC3339))
			}
		case wire.WhoIdentity:
			app.Out.Printf("Identity %s at %s\n", w.Subject, w.Issuer)
		default:
			app.Out.Printf("A token of the server of %s\n", ns)
		}
		app.Out.Printf("Rights: %s\n", rightsText(w.Namespaces))
	})
}

// Help shows examples under the flags of jig whoami --help.
func (c *WhoamiCmd) Help() string {
	return `Examples:
  jig whoami @team          # who the saved token or SSO session is, and its rights
  jig whoami @team --json`
}
