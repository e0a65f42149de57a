package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jigkit/jig/registry/signing"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// TrustCmd groups the signing-policy subcommands: which keys may sign the
// versions of a namespace, and whether a signature is required. The
// policy lives in the namespace's rc-file entry ("trust").
type TrustCmd struct {
	Add     TrustAddCmd     `cmd:"" help:"Trust an SSH public key (or an allowed_signers file) to sign a namespace's versions."`
	List    TrustListCmd    `cmd:"" aliases:"ls" help:"Show the trust policy of every namespace, or of one."`
	Remove  TrustRemoveCmd  `cmd:"" aliases:"rm" help:"Stop trusting a key, or remove a namespace's whole trust policy."`
	Require TrustRequireCmd `cmd:"" help:"Require (on) or stop requiring (off) a trusted signature on every version of a namespace."`
	Forget  TrustForgetCmd  `cmd:"" help:"Forget the versions seen signed (rollback protection) of a registry or a namespace, after an intended rollback or re-signing."`
	Log     TrustLogCmd     `cmd:"" help:"Require every version of a namespace to be in its server's transparency log, signed by a log key."`
}

// TrustLogCmd groups "jig trust log add|remove".
type TrustLogCmd struct {
	Add    TrustLogAddCmd    `cmd:"" help:"Trust a transparency log key for a namespace: every version installed or updated to must then be in the namespace's log."`
	Remove TrustLogRemoveCmd `cmd:"" aliases:"rm" help:"Stop checking a namespace's versions against a transparency log."`
}

// TrustLogAddCmd is "jig trust log add @ns <verifier> [--witness <vkey>…
// --min-witnesses k]".
type TrustLogAddCmd struct {
	Namespace    string   `arg:"" help:"Namespace, e.g. @company."`
	Verifier     string   `arg:"" help:"The log key's verifier line, \"<name>+<hash>+<key>\", as GET /log/key of the server and its operator publish it, or @FILE to read it from a file."`
	Witness      []string `name:"witness" placeholder:"VKEY" help:"A witness's verifier key (cosignature/v1, as 'jig log witness keygen' prints it), or @FILE; repeat for each witness. Replaces the witnesses trusted before; without it they are kept."`
	MinWitnesses int      `name:"min-witnesses" placeholder:"K" help:"How many of the --witness witnesses must have cosigned every checkpoint accepted (default: all of them)."`
}

// Validate checks the witness flags together.
func (c *TrustLogAddCmd) Validate() error {
	switch {
	case c.MinWitnesses != 0 && len(c.Witness) == 0:
		return errors.New("--min-witnesses needs the witnesses it counts: give each with --witness <verifier key>")
	case c.MinWitnesses < 0 || c.MinWitnesses > len(c.Witness):
		return fmt.Errorf("--min-witnesses %d: give a number from 1 to the %d witnesses listed with --witness", c.MinWitnesses, len(c.Witness))
	}
	return nil
}

// Run sets the namespace's log key, and its witnesses, in the rc file.
func (c *TrustLogAddCmd) Run(ctx context.Context, app *App) error {
	if err := rcfile.ValidateNamespaceArg(c.Namespace); err != nil {
		return err
	}
	v, err := keyArg(c.Verifier)
	if err != nil {
		return err
	}
	v = strings.TrimSpace(v)
	u := rcfile.TrustUpdate{Log: &v}
	if len(c.Witness) > 0 {
		ws := make([]string, len(c.Witness))
		for i, w := range c.Witness {
			if ws[i], err = keyArg(w); err != nil {
				return fmt.Errorf("--witness: %w", err)
			}
			ws[i] = strings.TrimSpace(ws[i])
		}
		k := c.MinWitnesses
		if k == 0 {
			k = len(ws)
		}
		u.Witnesses, u.MinWitnesses = &ws, &k
	}
	cfg, err := editTrust(ctx, app, c.Namespace, u)
	if err != nil {
		return err
	}
	name, _, _ := strings.Cut(v, "+")
	msg := fmt.Sprintf("%s now requires every version to be in the transparency log signed by %s", c.Namespace, name)
	if t := cfg.Trust(c.Namespace); t != nil && t.MinWitnesses > 0 {
		names := make([]string, len(t.Witnesses))
		for i, w := range t.Witnesses {
			names[i], _, _ = strings.Cut(w, "+")
		}
		msg += fmt.Sprintf(", cosigned by at least %d of the witnesses %s", t.MinWitnesses, strings.Join(names, ", "))
	}
	app.Out.Success("%s", msg)
	return nil
}

// TrustLogRemoveCmd is "jig trust log remove @ns".
type TrustLogRemoveCmd struct {
	Namespace string `arg:"" help:"Namespace, e.g. @company."`
}

// Run removes the namespace's log key from the rc file.
func (c *TrustLogRemoveCmd) Run(ctx context.Context, app *App) error {
	if err := rcfile.ValidateNamespaceArg(c.Namespace); err != nil {
		return err
	}
	empty, none, zero := "", []string{}, 0
	if _, err := editTrust(ctx, app, c.Namespace, rcfile.TrustUpdate{Log: &empty, Witnesses: &none, MinWitnesses: &zero}); err != nil {
		return err
	}
	app.Out.Success("%s no longer checks versions against a transparency log", c.Namespace)
	return nil
}

// TrustAddCmd is "jig trust add @ns --key <public key> --principal <name> [--require]".
type TrustAddCmd struct {
	Namespace      string  `arg:"" help:"Namespace, e.g. @company."`
	Key            string  `name:"key" placeholder:"PUBLIC-KEY" help:"The signer's SSH public key, one line as in ~/.ssh/id_ed25519.pub, or @FILE to read it from a .pub file."`
	Principal      string  `name:"principal" placeholder:"NAME" help:"Who the key belongs to, e.g. alice@example.com; shown as 'signed by NAME'."`
	AllowedSigners *string `name:"allowed-signers" placeholder:"FILE" help:"Also trust the keys of an OpenSSH allowed_signers file (as git's gpg.ssh.allowedSignersFile), checked now and stored as an absolute path (~/ kept); an empty value removes it."`
	Require        bool    `name:"require" help:"Also require a trusted signature on every version of the namespace (see 'jig trust require')."`
}

// Validate checks the flags before anything is read or written.
func (c *TrustAddCmd) Validate() error {
	if c.Key == "" && c.AllowedSigners == nil {
		return errors.New("give a key with --key \"<public key>\" --principal <name>, or a file with --allowed-signers <file>")
	}
	if c.Key != "" && c.Principal == "" {
		return errors.New("--key needs --principal <name>, e.g. --principal alice@example.com")
	}
	if c.Key == "" && c.Principal != "" {
		return errors.New("--principal needs --key \"<public key>\"")
	}
	return nil
}

// Run adds the key to the rc file (locked against concurrent changes).
func (c *TrustAddCmd) Run(ctx context.Context, app *App) error {
	if err := rcfile.ValidateNamespaceArg(c.Namespace); err != nil {
		return err
	}
	key, err := keyArg(c.Key)
	if err != nil {
		return err
	}
	signers, err := allowedSignersArg(c.AllowedSigners)
	if err != nil {
		return err
	}
	u := rcfile.TrustUpdate{AddKey: key, AddPrincipal: c.Principal, AllowedSigners: signers}
	if c.Require {
		on := true
		u.Require = &on
	}
	cfg, err := editTrust(ctx, app, c.Namespace, u)
	if err != nil {
		return err
	}
	if key != "" {
		pk, _ := registryclient.ParsePublicKey(key)
		app.Out.Success("%s now trusts %s (%s) to sign its versions", c.Namespace, c.Principal, signing.Fingerprint(pk))
	} else {
		app.Out.Success("Trust policy of %s updated", c.Namespace)
	}
	printTrust(app.Out, cfg.Trust(c.Namespace))
	return nil
}

// keyArg returns the value of --key: the key itself, or the content of
// the file FILE for "@FILE".
func keyArg(v string) (string, error) {
	if !strings.HasPrefix(v, "@") {
		return v, nil
	}
	b, err := safefile.ReadFile(v[1:], 64<<10)
	if err != nil {
		return "", fmt.Errorf("--key %s: %w", v, err)
	}
	return string(b), nil
}

// allowedSignersArg checks the file --allowed-signers names (it must
// parse, so a typo is found now, not at the next install) and returns its
// absolute path; "~/" paths are kept as written (the rc file expands
// them) and "" removes the file from the policy.
func allowedSignersArg(p *string) (*string, error) {
	if p == nil || strings.TrimSpace(*p) == "" {
		return p, nil
	}
	v := strings.TrimSpace(*p)
	read := v
	if strings.HasPrefix(v, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("--allowed-signers %s: %w", v, err)
		}
		read = filepath.Join(home, v[2:])
	} else {
		abs, err := filepath.Abs(v)
		if err != nil {
			return nil, fmt.Errorf("--allowed-signers %s: %w", v, err)
		}
		v, read = abs, abs
	}
	b, err := safefile.ReadFile(read, signing.MaxAllowedSignersSize)
	if err != nil {
		return nil, fmt.Errorf("--allowed-signers: %w", err)
	}
	if _, err := signing.ParseAllowedSigners(b); err != nil {
		return nil, fmt.Errorf("--allowed-signers %s: %w", read, err)
	}
	return &v, nil
}

// editTrust applies u to ns's policy in the rc file under its lock.
func editTrust(ctx context.Context, app *App, ns string, u rcfile.TrustUpdate) (*rcfile.Config, error) {
	path, err := app.ConfigPath()
	if err != nil {
		return nil, err
	}
	return rcfile.Edit(ctx, path, func(cfg *rcfile.Config) error { return cfg.SetTrust(ns, u) })
}

// trustJSON is one namespace's policy in 'jig trust list --json'.
type trustJSON struct {
	Namespace      string         `json:"namespace"`
	AllowedSigners string         `json:"allowedSigners,omitempty"`
	Keys           []trustKeyJSON `json:"keys"`
	Require        bool           `json:"require"`
	// Log, Witnesses and MinWitnesses are the transparency log policy.
	Log          string   `json:"log,omitempty"`
	Witnesses    []string `json:"witnesses,omitempty"`
	MinWitnesses int      `json:"minWitnesses,omitempty"`
}

type trustKeyJSON struct {
	Principal   string `json:"principal"`
	Key         string `json:"key"`
	Fingerprint string `json:"fingerprint"`
}

func trustView(ns string, t *registryclient.Trust) trustJSON {
	v := trustJSON{Namespace: ns, AllowedSigners: t.AllowedSigners, Require: t.Require, Keys: []trustKeyJSON{},
		Log: t.Log, Witnesses: t.Witnesses, MinWitnesses: t.MinWitnesses}
	for _, k := range t.Keys {
		fp := ""
		if pk, err := registryclient.ParsePublicKey(k.Key); err == nil {
			fp = signing.Fingerprint(pk)
		}
		v.Keys = append(v.Keys, trustKeyJSON{Principal: k.Principal, Key: k.Key, Fingerprint: fp})
	}
	return v
}

func printTrust(o *Output, t *registryclient.Trust) {
	if t == nil {
		o.Println("  (no trust policy: versions install whether signed or not)")
		return
	}
	v := trustView("", t)
	req := "no (unsigned versions install; signed ones must verify)"
	if t.Require {
		req = "yes (unsigned or untrusted versions are refused)"
	}
	o.Printf("  Require signature: %s\n", req)
	if t.AllowedSigners != "" {
		o.Printf("  Allowed signers file: %s\n", t.AllowedSigners)
	}
	if len(v.Keys) == 0 && t.AllowedSigners == "" {
		o.Println("  Keys: (none: every version is refused while a signature is required)")
	}
	for _, k := range v.Keys {
		o.Printf("  Key: %s  %s\n", k.Fingerprint, k.Principal)
	}
	if t.Log != "" {
		o.Printf("  Transparency log key: %s\n", t.Log)
	}
	if t.MinWitnesses > 0 {
		o.Printf("  Log witnesses: at least %d of %d must cosign each checkpoint\n", t.MinWitnesses, len(t.Witnesses))
		for _, w := range t.Witnesses {
			o.Printf("  Witness: %s\n", w)
		}
	}
}

// TrustListCmd is "jig trust list [@ns] [--json]".
type TrustListCmd struct {
	Namespace string `arg:"" optional:"" help:"Only this namespace, e.g. @company."`
	JSON      bool   `name:"json" help:"Print JSON: an array of {namespace, allowedSigners, keys: [{principal, key, fingerprint}], require, log, witnesses, minWitnesses}."`
}

// Run prints the policies.
func (c *TrustListCmd) Run(app *App) error {
	if c.Namespace != "" {
		if err := rcfile.ValidateNamespaceArg(c.Namespace); err != nil {
			return err
		}
	}
	cfg, err := app.Config()
	if err != nil {
		return err
	}
	out := []trustJSON{}
	for _, ns := range cfg.List() {
		if c.Namespace != "" && ns != c.Namespace {
			continue
		}
		if t := cfg.Trust(ns); t != nil {
			out = append(out, trustView(ns, t))
		}
	}
	if c.JSON {
		return app.Out.JSON(out)
	}
	if len(out) == 0 {
		what := "No namespace has"
		if c.Namespace != "" {
			what = c.Namespace + " has"
		}
		app.Out.Printf("%s a trust policy (%s). Add one with 'jig trust add %s --key \"<public key>\" --principal <name>'.\n", what, cfg.Path(), orNS(c.Namespace))
		return nil
	}
	app.Out.Printf("Trust policies (%s):\n", cfg.Path())
	for _, v := range out {
		app.Out.Println()
		app.Out.Println(v.Namespace)
		printTrust(app.Out, cfg.Trust(v.Namespace))
	}
	return nil
}

func orNS(ns string) string {
	if ns == "" {
		return "@company"
	}
	return ns
}

// TrustRemoveCmd is "jig trust remove @ns [--key <fingerprint or key>]".
type TrustRemoveCmd struct {
	Namespace string `arg:"" help:"Namespace, e.g. @company."`
	Key       string `name:"key" placeholder:"FINGERPRINT" help:"The key to stop trusting: its SHA256:... fingerprint (see 'jig trust list'), the public key, or @FILE for a .pub file. Without --key the whole policy of the namespace is removed."`
}

// Run removes a key or the whole policy.
func (c *TrustRemoveCmd) Run(ctx context.Context, app *App) error {
	if err := rcfile.ValidateNamespaceArg(c.Namespace); err != nil {
		return err
	}
	if c.Key == "" {
		path, err := app.ConfigPath()
		if err != nil {
			return err
		}
		if _, err := rcfile.Edit(ctx, path, func(cfg *rcfile.Config) error { return cfg.RemoveTrust(c.Namespace) }); err != nil {
			return err
		}
		app.Out.Success("Trust policy of %s removed: its versions install whether signed or not", c.Namespace)
		return nil
	}
	key, err := keyArg(c.Key)
	if err != nil {
		return err
	}
	cfg, err := editTrust(ctx, app, c.Namespace, rcfile.TrustUpdate{RemoveKey: key})
	if err != nil {
		return err
	}
	app.Out.Success("%s no longer trusts key %s", c.Namespace, strings.TrimSpace(c.Key))
	printTrust(app.Out, cfg.Trust(c.Namespace))
	return nil
}

// TrustRequireCmd is "jig trust require @ns on|off".
type TrustRequireCmd struct {
	Namespace string `arg:"" help:"Namespace, e.g. @company."`
	Setting   string `arg:"" enum:"on,off,true,false" help:"on (or true): refuse versions without a trusted signature; off (or false): install unsigned versions, still refusing bad signatures."`
}

// Run sets require.
func (c *TrustRequireCmd) Run(ctx context.Context, app *App) error {
	if err := rcfile.ValidateNamespaceArg(c.Namespace); err != nil {
		return err
	}
	on := c.Setting == "on" || c.Setting == "true"
	cfg, err := editTrust(ctx, app, c.Namespace, rcfile.TrustUpdate{Require: &on})
	if err != nil {
		return err
	}
	if on {
		app.Out.Success("%s now requires a trusted signature on every version", c.Namespace)
	} else {
		app.Out.Success("%s no longer requires signatures", c.Namespace)
	}
	printTrust(app.Out, cfg.Trust(c.Namespace))
	if t := cfg.Trust(c.Namespace); on && t != nil && len(t.Keys) == 0 && t.AllowedSigners == "" {
		app.Out.Warnf("%s trusts no key yet, so every version is refused; add one with 'jig trust add %s --key \"<public key>\" --principal <name>'", c.Namespace, c.Namespace)
	}
	return nil
}

// TrustForgetCmd is "jig trust forget <@ns[/path[@version]]>".
type TrustForgetCmd struct {
	What string `arg:"" name:"registry" placeholder:"@NS[/PATH[@VERSION]]" help:"A namespace (@company), a registry (@company/runtimes/node) or one version (@company/runtimes/node@1.2.0)."`
}

// Run drops the rollback memory of what.
func (c *TrustForgetCmd) Run(ctx context.Context, app *App) error {
	rest := strings.TrimPrefix(c.What, "@")
	end := strings.IndexAny(rest, "/@")
	if end < 0 {
		end = len(rest)
	}
	if err := rcfile.ValidateNamespaceArg("@" + rest[:end]); err != nil || !strings.HasPrefix(c.What, "@") {
		return fmt.Errorf("%q must be a namespace (@company), a registry (@company/runtimes/node) or a version (@company/runtimes/node@1.2.0)", c.What)
	}
	ch, err := app.Cache()
	if err != nil {
		return err
	}
	n, err := ch.ForgetSigned(ctx, c.What)
	if err != nil {
		return err
	}
	if n == 0 {
		app.Out.Printf("Nothing remembered for %s\n", c.What)
		return nil
	}
	app.Out.Success("Forgot the signed versions of %s (%d); the next versions seen signed are remembered again", c.What, n)
	return nil
}
