package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/rcfile"
)

// ConfigCmd groups the rc-file subcommands.
type ConfigCmd struct {
	List   ConfigListCmd   `cmd:"" aliases:"ls" help:"Show every configured registry source, built-ins included."`
	Get    ConfigGetCmd    `cmd:"" help:"Show one registry source."`
	Set    ConfigSetCmd    `cmd:"" help:"Add or update a registry source."`
	Remove ConfigRemoveCmd `cmd:"" aliases:"rm" help:"Remove a registry source."`
}

// headerList marshals as a JSON object keeping the display order
// (Authorization first).
type headerList []registryclient.Header

// MarshalJSON writes the headers as one object in display order.
func (h headerList) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, x := range h {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(x.Name)
		v, _ := json.Marshal(x.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

type entryJSON struct {
	Namespace        string     `json:"namespace,omitempty"`
	URL              string     `json:"url"`
	Headers          headerList `json:"headers,omitempty"`
	DefaultNamespace string     `json:"defaultNamespace,omitempty"`
	// Trust is the signing policy ('jig trust list' shows it in full).
	Trust *registryclient.Trust `json:"trust,omitempty"`
}

func printEntry(o *Output, e registryclient.Entry) {
	o.Printf("  URL:     %s\n", e.URL)
	if e.DefaultNamespace != "" {
		o.Printf("  Default namespace: %s (shorthand such as runtimes/node means %s/runtimes/node)\n", e.DefaultNamespace, e.DefaultNamespace)
	}
	if t := e.Trust; t != nil {
		what := english.Count(len(t.Keys), "key", "keys")
		if t.AllowedSigners != "" {
			what += " and the allowed signers file " + t.AllowedSigners
		}
		req := "signatures not required"
		if t.Require {
			req = "signatures required"
		}
		o.Printf("  Trust:   %s, %s (see 'jig trust list')\n", what, req)
	}
	hs := e.DisplayHeaders()
	if len(hs) == 0 {
		o.Println("  Headers: (none)")
		return
	}
	o.Println("  Headers:")
	for _, h := range hs {
		o.Printf("    %s -> %s\n", h.Name, h.Value)
	}
}

// ConfigListCmd is "jig config list".
type ConfigListCmd struct {
	JSON bool `name:"json" help:"Print JSON: an object keyed by namespace."`
}

// Run prints every source.
func (c *ConfigListCmd) Run(app *App) error {
	cfg, err := app.Config()
	if err != nil {
		return err
	}
	if c.JSON {
		out := map[string]entryJSON{}
		for _, ns := range cfg.List() {
			e, _ := cfg.Get(ns)
			out[ns] = entryJSON{URL: e.URL, Headers: e.DisplayHeaders(), DefaultNamespace: e.DefaultNamespace, Trust: e.Trust}
		}
		return app.Out.JSON(out)
	}
	app.Out.Printf("Configured registries (%s):\n", cfg.Path())
	for _, ns := range cfg.List() {
		e, _ := cfg.Get(ns)
		app.Out.Println()
		label := ns
		if rcfile.IsBuiltin(ns) {
			label += " (built-in)"
		}
		app.Out.Println(label)
		printEntry(app.Out, e)
	}
	return nil
}

// ConfigGetCmd is "jig config get <ns>".
type ConfigGetCmd struct {
	Namespace string `arg:"" help:"Namespace, e.g. @company."`
	JSON      bool   `name:"json" help:"Print JSON {namespace, url, headers}."`
}

// Run prints one source.
func (c *ConfigGetCmd) Run(app *App) error {
	if err := rcfile.ValidateNamespaceArg(c.Namespace); err != nil {
		return err
	}
	cfg, err := app.Config()
	if err != nil {
		return err
	}
	e, ok := cfg.Get(c.Namespace)
	if !ok {
		return fmt.Errorf("Registry '%s' not found. Add it with 'jig config set %s --url <url>'.", c.Namespace, c.Namespace)
	}
	if c.JSON {
		return app.Out.JSON(entryJSON{Namespace: c.Namespace, URL: e.URL, Headers: e.DisplayHeaders(), DefaultNamespace: e.DefaultNamespace, Trust: e.Trust})
	}
	app.Out.Printf("Configuration for %s:\n", c.Namespace)
	printEntry(app.Out, e)
	return nil
}

// ConfigSetCmd is "jig config set <ns> [--url] [--token] [--default-namespace] [--header]... [--remove-header]...".
type ConfigSetCmd struct {
	Namespace        string   `arg:"" help:"Namespace, e.g. @company."`
	URL              *string  `name:"url" help:"Registry server URL (http:// or https://). Required for a new namespace."`
	Token            *string  `name:"token" help:"Bearer token, sent as 'Authorization: Bearer <token>'."`
	DefaultNamespace *string  `name:"default-namespace" placeholder:"NS" help:"Namespace that shorthand identifiers (runtimes/node) mean in what this source serves (for @main: also in identifiers you type); overrides what the server advertises. E.g. @rack for a storage written for the reference. '' removes the setting."`
	Header           []string `name:"header" sep:"none" help:"Custom header 'Name: Value' (repeatable); replaces a header of the same name."`
	RemoveHeader     []string `name:"remove-header" sep:"none" placeholder:"NAME" help:"Remove the header NAME (repeatable); Authorization also removes the token."`
}

// Validate checks the flags before anything is read or written.
func (c *ConfigSetCmd) Validate() error {
	if c.URL == nil && c.Token == nil && c.DefaultNamespace == nil && len(c.Header) == 0 && len(c.RemoveHeader) == 0 {
		return errors.New("At least one of --url, --token, --default-namespace, --header or --remove-header must be provided")
	}
	return nil
}

// Run updates the rc file (locked against concurrent changes) and prints
// the entry.
func (c *ConfigSetCmd) Run(ctx context.Context, app *App) error {
	if err := rcfile.ValidateNamespaceArg(c.Namespace); err != nil {
		return err
	}
	headers := map[string]string{}
	for _, h := range c.Header {
		k, v, err := rcfile.ParseHeader(h)
		if err != nil {
			return err
		}
		headers[k] = v
	}
	path, err := app.ConfigPath()
	if err != nil {
		return err
	}
	cfg, err := rcfile.Edit(ctx, path, func(cfg *rcfile.Config) error {
		return cfg.Set(c.Namespace, rcfile.Update{URL: c.URL, Token: c.Token, DefaultNamespace: c.DefaultNamespace, Headers: headers, RemoveHeaders: c.RemoveHeader})
	})
	if err != nil {
		return err
	}
	e, _ := cfg.Get(c.Namespace)
	app.Out.Success("Registry %s configured successfully", c.Namespace)
	printEntry(app.Out, e)
	return nil
}

// ConfigRemoveCmd is "jig config remove <ns> [-f]".
type ConfigRemoveCmd struct {
	Namespace string `arg:"" help:"Namespace, e.g. @company."`
	Force     bool   `short:"f" name:"force" help:"Remove without asking (as --yes does)."`
}

// Run removes a source after confirmation. For a built-in namespace it
// removes the rc file's override, which restores the default URL.
func (c *ConfigRemoveCmd) Run(ctx context.Context, app *App) error {
	if err := rcfile.ValidateNamespaceArg(c.Namespace); err != nil {
		return err
	}
	cfg, err := app.Config()
	if err != nil {
		return err
	}
	builtin := rcfile.IsBuiltin(c.Namespace)
	if builtin && !cfg.HasOverride(c.Namespace) {
		return fmt.Errorf("%s is built in and has no override to remove; it already uses the default %s", c.Namespace, cfg.BuiltinURL())
	}
	if _, ok := cfg.Get(c.Namespace); !ok {
		return fmt.Errorf("Registry '%s' not found", c.Namespace)
	}
	if !c.Force {
		q := fmt.Sprintf("Remove registry '%s'?", c.Namespace)
		if builtin {
			q = fmt.Sprintf("Remove your override of %s and go back to %s?", c.Namespace, cfg.BuiltinURL())
		}
		ok, err := app.Confirm(ctx, q, false, "--yes (-y) or -f (--force)", fmt.Sprintf("removing %s needs confirmation", c.Namespace))
		if err != nil {
			return err
		}
		if !ok {
			app.Out.Println("Operation cancelled")
			return nil
		}
	}
	path, err := app.ConfigPath()
	if err != nil {
		return err
	}
	cfg, err = rcfile.Edit(ctx, path, func(cfg *rcfile.Config) error { return cfg.Remove(c.Namespace) })
	if err != nil {
		return err
	}
	if builtin {
		app.Out.Success("Override of %s removed; it uses the default %s again", c.Namespace, cfg.BuiltinURL())
		return nil
	}
	app.Out.Success("Registry %s removed successfully", c.Namespace)
	return nil
}

// headerValues rewrites "config set ... --header 'A: 1' 'B: 2'" as
// "--header 'A: 1' --header 'B: 2'": the reference's --header takes every
// value up to the next flag. A value counts only when it contains a colon
// (as every "Name: Value" header does, and no namespace), so the namespace
// may still follow the headers. Other commands' args are returned as they
// are.
func headerValues(args []string) []string {
	i := slices.Index(args, "config")
	if i < 0 || i+1 >= len(args) || args[i+1] != "set" {
		return args
	}
	out := make([]string, 0, len(args))
	inHeader := false
	for j := 0; j < len(args); j++ {
		a := args[j]
		switch {
		case a == "--":
			return append(out, args[j:]...)
		case a == "--header" && j+1 < len(args):
			// kong takes the next argument as the value, whatever it is.
			out = append(out, a, args[j+1])
			j++
			inHeader = true
		case strings.HasPrefix(a, "--header="):
			out = append(out, a)
			inHeader = true
		case inHeader && !strings.HasPrefix(a, "-") && strings.Contains(a, ":"):
			out = append(out, "--header", a)
		default:
			out = append(out, a)
			inHeader = false
		}
	}
	return out
}
