package servercli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/authfile"
	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryserver"
)

// authFileFlag is the auth.json the token commands edit: the server's
// AUTH_CONFIG_PATH (also read from .env).
type authFileFlag struct {
	AuthConfig string `name:"auth-config" env:"AUTH_CONFIG_PATH" required:"" placeholder:"FILE" help:"The auth.json to edit (default: AUTH_CONFIG_PATH, also from .env). A running jig-server reloads it within --config-reload-interval, or at once on SIGHUP."`
}

// tokenCreateCmd is "jig-server token create".
type tokenCreateCmd struct {
	authFileFlag
	Namespace string   `required:"" help:"Namespace the token opens, e.g. @team (the @ is optional)."`
	Scope     []string `name:"scope" placeholder:"SCOPE" help:"Rights in the namespace, repeatable or comma-separated: read, publish, census:report, census:read, admin (all of them in this namespace). Every scope includes read. Default: read."`
	Expires   string   `required:"" help:"Lifetime such as 90d, 12h or 2027-12-31, or never (a token that never expires must be asked for by name)."`
	Name      string   `help:"Name of the entry, unique in auth.json: shown in logs, the audit log and token list, and accepted by token revoke."`
	Gate      bool     `help:"Allow adding the first token of a public namespace, which gates it: anonymous readers lose it."`
	JSON      bool     `name:"json" help:"Print one JSON document: token, id, namespace and entry."`
}

// Help is shown by "jig-server token create --help".
func (c *tokenCreateCmd) Help() string {
	return `The token is printed once; auth.json keeps only its SHA-256. The entry is added to the
namespace's list in auth.json under a lock, and the file replaced atomically. A namespace auth.json
does not declare is added, gated. A running jig-server takes the new entry within
--config-reload-interval, or at once on SIGHUP.

Examples:
  jig-server token create --namespace @team --scope publish --expires 90d --name ci-release
  jig-server token create --namespace @team --scope census:report --expires 365d --name fleet-ci
  jig-server token create --namespace @team --scope read,census:read --expires 30d --name alice`
}

// scopes reads --scope: each value may hold several, comma-separated.
func (c *tokenCreateCmd) scopes() ([]string, error) {
	var out []string
	for _, v := range c.Scope {
		for _, s := range strings.Split(v, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			sc, err := registryserver.ParseScope(s)
			if err != nil {
				return nil, fmt.Errorf("--scope: %w", err)
			}
			if !slices.Contains(out, string(sc)) {
				out = append(out, string(sc))
			}
		}
	}
	if len(out) == 0 {
		out = []string{string(registryserver.ScopeRead)}
	}
	return out, nil
}

// Run makes the token, adds its entry and prints the token once.
func (c *tokenCreateCmd) Run(ctx context.Context, stdout io.Writer) error {
	ns, err := registry.ParseNamespace(registry.NormalizeNamespace(c.Namespace))
	if err != nil {
		return fmt.Errorf("--namespace: %w", err)
	}
	scopes, err := c.scopes()
	if err != nil {
		return err
	}
	if c.Name != "" && !registryserver.ValidTokenName(c.Name) {
		return fmt.Errorf("--name %q: a name is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit, and not 12 or 64 hex digits", c.Name)
	}
	entry := tokenEntry{Scopes: scopes, Name: c.Name}
	switch strings.TrimSpace(c.Expires) {
	case "never":
		if c.Name == "" {
			return errors.New("--expires never: a token that never expires needs a --name, so that it can be found and revoked later")
		}
	default:
		if err := entry.expireIn(c.Expires); err != nil {
			return err
		}
	}
	tok, sum, err := entry.newToken()
	if err != nil {
		return err
	}
	raw, err := json.Marshal(entry)
	if err != nil {
		return err
	}
	now := time.Now()
	err = authfile.Edit(ctx, c.AuthConfig, true, func(d *authfile.Doc) error {
		if c.Name != "" {
			for _, e := range allEntries(d, now) {
				if e.grant.Name == c.Name {
					return fmt.Errorf("%s already has a token named %q (in %s); choose another --name, or revoke it first with jig-server token revoke %s", c.AuthConfig, c.Name, e.ns, c.Name)
				}
			}
		}
		entries, ok := d.Entries(ns)
		_, present := d.Get(ns)
		switch {
		case present && !ok:
			return fmt.Errorf("%s: the value of %q is not a list of token entries; fix it (jig-server auth check %s) before adding tokens", c.AuthConfig, ns, c.AuthConfig)
		case present && len(entries) == 0 && !c.Gate:
			return fmt.Errorf("%s is public in %s (an empty list): its first token would gate it, and anonymous readers would lose it. Run again with --gate to gate it", ns, c.AuthConfig)
		}
		return d.SetEntries(ns, append(entries, raw))
	}, func(out []byte) error {
		a, err := registryserver.ParseAuthConfig(out)
		if err != nil {
			return err
		}
		if !a.Declared(ns) {
			for _, w := range a.Warnings() {
				if ae, ok := errors.AsType[*registryserver.AuthEntryError](w); ok && ae.Namespace == ns {
					return fmt.Errorf("%s: %w; fix it (jig-server auth check %s) before adding tokens", c.AuthConfig, w, c.AuthConfig)
				}
			}
			return fmt.Errorf("%s: %s would not be declared", c.AuthConfig, ns)
		}
		return nil
	})
	if err != nil {
		return err
	}
	id := registryserver.TokenID(sum)
	if c.JSON {
		return printMadeToken(stdout, tok, sum, ns, entry)
	}
	expiry := "never expires"
	if entry.ExpiresAt != "" {
		expiry = "expires " + entry.ExpiresAt
	}
	fmt.Fprintf(stdout, "Token (shown once; store it now): %s\n", tok)
	fmt.Fprintf(stdout, "Added to %s: id %s, %s, scopes %s in %s, %s.\n", c.AuthConfig, id, nameOrNone(c.Name), strings.Join(scopes, ", "), ns, expiry)
	fmt.Fprintf(stdout, "A running jig-server takes it within --config-reload-interval (SIGHUP: at once).\n")
	fmt.Fprintf(stdout, "Clients use it with: jig config set %s --url <server-url> --token <token>\n", ns)
	return nil
}

func nameOrNone(name string) string {
	if name == "" {
		return "no name"
	}
	return "name " + name
}

// listedEntry is one token entry of an auth.json, described.
type listedEntry struct {
	ns    string
	index int // in the namespace's list
	grant registryserver.TokenGrant
	err   error // the entry is malformed
}

// allEntries describes every token entry of every namespace of d, in
// file order.
func allEntries(d *authfile.Doc, now time.Time) []listedEntry {
	var out []listedEntry
	for _, m := range d.Members {
		if !registry.ValidNamespace(m.Key) {
			continue
		}
		entries, _ := d.Entries(m.Key)
		for i, e := range entries {
			g, err := registryserver.DescribeEntry(e, now)
			out = append(out, listedEntry{ns: m.Key, index: i, grant: g, err: err})
		}
	}
	return out
}

// tokenListCmd is "jig-server token list".
type tokenListCmd struct {
	authFileFlag
	Namespace string `help:"Only the tokens of this namespace."`
	JSON      bool   `name:"json" help:"Print one JSON document: {\"tokens\": [...]}."`
}

// listedToken is a line of token list --json.
type listedToken struct {
	Namespace string `json:"namespace"`
	registryserver.TokenGrant
}

// Run lists the entries; tokens in clear are shown by id only.
func (c *tokenListCmd) Run(stdout io.Writer) error {
	data, err := readAuthFile(c.AuthConfig)
	if err != nil {
		return err
	}
	d, err := authfile.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", c.AuthConfig, err)
	}
	var ns string
	if c.Namespace != "" {
		if ns, err = registry.ParseNamespace(registry.NormalizeNamespace(c.Namespace)); err != nil {
			return fmt.Errorf("--namespace: %w", err)
		}
	}
	out := []listedToken{}
	for _, e := range allEntries(d, time.Now()) {
		if e.err != nil || (ns != "" && e.ns != ns) {
			continue
		}
		g := e.grant
		g.SHA256 = "" // list shows ids; auth check prints the hash to write instead of a clear token
		out = append(out, listedToken{Namespace: e.ns, TokenGrant: g})
	}
	if c.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Tokens []listedToken `json:"tokens"`
		}{out})
	}
	if len(out) == 0 {
		fmt.Fprintf(stdout, "No token entries in %s.\n", c.AuthConfig)
		return nil
	}
	for _, t := range out {
		scopes := make([]string, len(t.Scopes))
		for i, s := range t.Scopes {
			scopes[i] = string(s)
		}
		line := fmt.Sprintf("%s  %-10s  %-20s  %s", t.ID, t.Namespace, orDash(t.Name), strings.Join(scopes, ","))
		switch {
		case t.Expired:
			line += "  EXPIRED " + t.ExpiresAt.UTC().Format(time.RFC3339)
		case t.ExpiresAt != nil:
			line += "  expires " + t.ExpiresAt.UTC().Format(time.RFC3339)
		default:
			line += "  never expires"
		}
		if t.InClear {
			line += "  (stored in clear)"
		}
		fmt.Fprintln(stdout, line)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// readAuthFile reads an auth.json within authfile.MaxSize (a FIFO or
// device is refused, as jig-server refuses it).
func readAuthFile(path string) ([]byte, error) {
	data, err := safefile.ReadFile(path, authfile.MaxSize)
	if errors.Is(err, safefile.ErrTooLarge) {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, authfile.MaxSize)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return data, nil
}

// tokenRevokeCmd is "jig-server token revoke".
type tokenRevokeCmd struct {
	authFileFlag
	Token     string `arg:"" name:"id-or-name" help:"The token's id (12 hex digits, from token list) or its entry's name."`
	Namespace string `help:"Remove only the entries of this namespace (default: every namespace the token opens)."`
}

// Run removes the matching entries.
func (c *tokenRevokeCmd) Run(ctx context.Context, stdout io.Writer) error {
	var only string
	if c.Namespace != "" {
		var err error
		if only, err = registry.ParseNamespace(registry.NormalizeNamespace(c.Namespace)); err != nil {
			return fmt.Errorf("--namespace: %w", err)
		}
	}
	want := strings.TrimSpace(c.Token)
	var removed []string
	err := authfile.Edit(ctx, c.AuthConfig, false, func(d *authfile.Doc) error {
		drop := map[string][]int{}
		for _, e := range allEntries(d, time.Now()) {
			if e.err != nil || (only != "" && e.ns != only) {
				continue
			}
			if matchesToken(e.grant, want) {
				drop[e.ns] = append(drop[e.ns], e.index)
			}
		}
		if len(drop) == 0 {
			return fmt.Errorf("no token entry of %s has the id or name %q; jig-server token list shows them", c.AuthConfig, c.Token)
		}
		for _, m := range d.Members {
			idx, ok := drop[m.Key]
			if !ok {
				continue
			}
			entries, _ := d.Entries(m.Key)
			if len(entries) == len(idx) {
				return fmt.Errorf("revoking the last token of %s would leave its list empty, which makes %s public; issue its replacement first (jig-server token create --namespace %s ...), or remove %s from %s to close it", m.Key, m.Key, m.Key, m.Key, c.AuthConfig)
			}
			kept := entries[:0]
			for i, e := range entries {
				if !slices.Contains(idx, i) {
					kept = append(kept, e)
				}
			}
			if err := d.SetEntries(m.Key, kept); err != nil {
				return err
			}
			removed = append(removed, fmt.Sprintf("%s (%d)", m.Key, len(idx)))
		}
		return nil
	}, func(out []byte) error {
		_, err := registryserver.ParseAuthConfig(out)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Revoked %s: removed its entries of %s from %s.\n", c.Token, strings.Join(removed, ", "), c.AuthConfig)
	fmt.Fprintf(stdout, "A running jig-server stops accepting it within --config-reload-interval (SIGHUP: at once).\n")
	return nil
}

// matchesToken reports whether the entry g is the one revoke names: by
// its id (any case) or its name (exactly).
func matchesToken(g registryserver.TokenGrant, idOrName string) bool {
	return (g.Name != "" && g.Name == idOrName) || (len(idOrName) == 12 && g.ID == strings.ToLower(idOrName))
}
