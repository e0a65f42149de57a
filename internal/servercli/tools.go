package servercli

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/jigkit/jig/internal/buildinfo"
	"github.com/jigkit/jig/internal/english"
	"github.com/jigkit/jig/internal/kongexit"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryserver"
)

// toolCommands are the first arguments that select a tool instead of the
// server: "jig-server token new", "jig-server auth check",
// "jig-server health".
var toolCommands = map[string]bool{"token": true, "auth": true, "health": true, "mirror": true, "index": true, "state": true, "audit": true, "log": true}

// toolsHelp is appended to "jig-server --help".
const toolsHelp = `

Other commands (each has --help):
  jig-server token create --namespace @team --scope publish --expires 90d --name ci   make a token, add its hashed entry to auth.json
  jig-server token list | token revoke <id|name>                      list or remove the token entries of auth.json
  jig-server token new --namespace @team [--publish] [--expires 90d]   make a token; prints the auth.json entry with only its SHA-256
  jig-server auth check auth.json                                     validate auth.json and show what each token may do
  jig-server health [--url http://127.0.0.1:8080]                     probe /health (for container HEALTHCHECKs)
  jig-server mirror export --namespace @team -o team.tar              write a namespace's versions to a bundle for the air gap
  jig-server mirror import team.tar                                   check a bundle, then publish its versions into the storage
  jig-server index rebuild                                            read the whole storage into the catalog index (after copying content in by hand)
  jig-server state backup copy.db                                     copy the SQLite state database (census, audit log) while the server runs
  jig-server audit [--since 24h] [--json]                             read a running server's audit log (with ADMIN_TOKEN)
  jig-server log keygen registry.example.com -o log.key                make the transparency log key (LOG_KEY) and print its verifier`

// tools is the command line of the helper commands.
type tools struct {
	Token struct {
		Create tokenCreateCmd `cmd:"" help:"Make a scoped, expiring token for a namespace, print it once and add its hashed entry to auth.json."`
		List   tokenListCmd   `cmd:"" help:"List the token entries of auth.json (ids, names, scopes, expiry; never a token)."`
		Revoke tokenRevokeCmd `cmd:"" help:"Remove a token's entries from auth.json, by id or name."`
		New    tokenNewCmd    `cmd:"" help:"Make a random token for a namespace and print the auth.json entry that stores only its SHA-256 (without editing auth.json)."`
	} `cmd:"" help:"Manage tokens."`
	Auth struct {
		Check authCheckCmd `cmd:"" help:"Validate an auth.json file and print what each token may do."`
	} `cmd:"" help:"Inspect auth.json."`
	Health healthCmd `cmd:"" help:"Ask a running jig-server's /health; exit 0 when it answers 200."`
	Mirror mirrorCmd `cmd:"" help:"Carry registries across an air gap: export a namespace to a bundle file, import one."`
	Index  struct {
		Rebuild indexRebuildCmd `cmd:"" help:"Read the whole storage into the catalog index and have every running server load it."`
	} `cmd:"" help:"Maintain the catalog index (search, listings, the web catalog)."`
	State struct {
		Backup stateBackupCmd `cmd:"" help:"Copy the SQLite state database (census, audit log) while the server runs."`
	} `cmd:"" help:"Maintain the state database (census, audit log)."`
	Audit auditCmd `cmd:"" help:"Read a running jig-server's audit log (GET /audit, with the admin token)."`
	Log   struct {
		Keygen logKeygenCmd `cmd:"" help:"Make a transparency log key: the secret signer key for LOG_KEY, and the verifier line clients trust."`
	} `cmd:"" help:"Manage the transparency log of published versions."`
}

// runTool runs one of the helper commands.
func runTool(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer kongexit.Recover(&code)
	if args[0] == "mirror" || args[0] == "index" || args[0] == "state" || args[0] == "audit" || args[0] == "token" {
		// The mirror and index commands open the server's storage with the
		// server's settings, .env included; audit reads its admin token
		// and port from there too.
		if err := loadDotEnv(".env"); err != nil {
			fmt.Fprintf(stderr, "jig-server: %v\n", err)
			return ExitError
		}
	}
	var t tools
	parser, err := kong.New(&t,
		kong.Name("jig-server"),
		kong.Writers(stdout, stderr),
		kongexit.Option(),
		kong.BindTo(ctx, (*context.Context)(nil)),
		kong.Vars{"version": "jig-server " + buildinfo.Get().String(), "port": portOrDefault(os.Getenv("PORT"))},
		kong.Vars(backendVars()),
	)
	if err != nil {
		fmt.Fprintf(stderr, "jig-server: %v\n", err)
		return ExitError
	}
	// With --json a failure is also one JSON document on stdout, as jig's
	// commands give it: {"error": {"code": "ERROR", "message": "..."}}.
	asJSON := slices.Contains(args, "--json")
	kctx, err := parser.Parse(args)
	if err != nil {
		hint := fmt.Sprintf("Run 'jig-server %s --help' for usage.", args[0])
		fmt.Fprintf(stderr, "jig-server: %v\n%s\n", err, hint)
		if asJSON {
			printToolErrorJSON(stdout, "USAGE", err.Error(), hint)
		}
		return ExitError
	}
	kctx.BindTo(stdout, (*io.Writer)(nil))
	kctx.Bind(stderrWriter{stderr})
	if err := kctx.Run(); err != nil {
		fmt.Fprintf(stderr, "jig-server: %v\n", err)
		var rep reportedError
		if asJSON && !errors.As(err, &rep) {
			printToolErrorJSON(stdout, "ERROR", err.Error(), "")
		}
		return ExitError
	}
	return ExitOK
}

// toolError is the --json error document of a tool command, shaped as
// jig's: {"error": {"code", "message", "hint"?}}.
type toolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

func printToolErrorJSON(w io.Writer, code, msg, hint string) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Error toolError `json:"error"`
	}{toolError{code, msg, hint}})
}

// reportedError is a failure whose --json document was already written
// (auth check's report lists its problems): nothing more goes to stdout.
type reportedError struct{ error }

func (e reportedError) Unwrap() error { return e.error }

// portOrDefault is PORT when it is a number, else jig-server's default.
func portOrDefault(p string) string {
	if _, err := strconv.Atoi(p); err == nil {
		return p
	}
	return "8080"
}

// tokenNewCmd is "jig-server token new".
type tokenNewCmd struct {
	Namespace string   `required:"" help:"Namespace the token opens, e.g. @team (the @ is optional)."`
	Publish   bool     `help:"Let the token publish to the namespace (it always reads)."`
	Census    []string `placeholder:"@NS,..." help:"Let the token read the census (the projects that report with jig check --report) of these namespaces, e.g. @team,@main: namespaces it may read, public ones included."`
	Expires   string   `help:"Lifetime such as 90d, 12h or 2027-12-31 (default: never)."`
	Mark      string   `help:"Label kept in auth.json and shown in logs instead of the token."`
	JSON      bool     `name:"json" help:"Print one JSON document: token, namespace and entry."`
}

// Help is shown by "jig-server token new --help".
func (c *tokenNewCmd) Help() string {
	return `The token is printed once; auth.json keeps only its SHA-256 ("tokenSha256").
Add the printed entry to the namespace's list in auth.json; jig-server takes it within
--config-reload-interval, or at once on SIGHUP (systemctl reload jig-server).

Examples:
  jig-server token new --namespace @team
  jig-server token new --namespace @team --publish --expires 90d --mark ci
  jig-server token new --namespace @ops --census @ops,@main --mark "platform team"`
}

// tokenEntry is one auth.json token entry holding only the token's hash.
type tokenEntry struct {
	TokenSha256 string   `json:"tokenSha256"`
	Publish     bool     `json:"publish,omitempty"`
	Scopes      []string `json:"scopes,omitempty"`
	Name        string   `json:"name,omitempty"`
	Census      []string `json:"census,omitempty"`
	Mark        string   `json:"mark,omitempty"`
	ExpiresAt   string   `json:"expiresAt,omitempty"`
}

// tokenPrefix marks jig tokens so secret scanners can find leaked ones.
const tokenPrefix = "jig_"

// newToken returns a random token: tokenPrefix and 32 random bytes in
// unpadded base64url.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// expireIn sets the entry's expiresAt from --expires (see
// [parseLifetime]).
func (e *tokenEntry) expireIn(lifetime string) error {
	exp, err := parseLifetime(lifetime, time.Now().UTC())
	if err != nil {
		return err
	}
	e.ExpiresAt = exp.UTC().Format(time.RFC3339)
	return nil
}

// newToken makes a random token ([newToken]) for the entry, which keeps
// only its SHA-256.
func (e *tokenEntry) newToken() (string, [sha256.Size]byte, error) {
	tok, err := newToken()
	if err != nil {
		return "", [sha256.Size]byte{}, fmt.Errorf("making a random token: %w", err)
	}
	sum := sha256.Sum256([]byte(tok))
	e.TokenSha256 = hex.EncodeToString(sum[:])
	return tok, sum, nil
}

// printMadeToken prints the --json document of token new and token
// create: the token (shown once), its id, namespace and entry.
func printMadeToken(stdout io.Writer, tok string, sum [sha256.Size]byte, ns string, entry tokenEntry) error {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Token     string     `json:"token"`
		ID        string     `json:"id"`
		Namespace string     `json:"namespace"`
		Entry     tokenEntry `json:"entry"`
	}{tok, registryserver.TokenID(sum), ns, entry})
}

// parseLifetime reads --expires: Nd, a Go duration, or a date/time.
func parseLifetime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n > 0 && n <= 36500 {
			return now.AddDate(0, 0, n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			if !t.After(now) {
				return time.Time{}, fmt.Errorf("--expires %s is in the past", s)
			}
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--expires %q is not a lifetime; use days (90d), a duration (12h) or a date (2027-12-31)", s)
}

// Run prints the token once with its auth.json entry.
func (c *tokenNewCmd) Run(stdout io.Writer) error {
	ns, err := registry.ParseNamespace(registry.NormalizeNamespace(c.Namespace))
	if err != nil {
		return fmt.Errorf("--namespace: %w", err)
	}
	c.Namespace = ns
	entry := tokenEntry{Publish: c.Publish, Mark: c.Mark}
	for _, v := range c.Census {
		ns, err := registry.ParseNamespace(registry.NormalizeNamespace(v))
		if err != nil {
			return fmt.Errorf("--census: %w", err)
		}
		if !slices.Contains(entry.Census, ns) {
			entry.Census = append(entry.Census, ns)
		}
	}
	if c.Expires != "" {
		if err := entry.expireIn(c.Expires); err != nil {
			return err
		}
	}
	tok, sum, err := entry.newToken()
	if err != nil {
		return err
	}
	if c.JSON {
		return printMadeToken(stdout, tok, sum, c.Namespace, entry)
	}
	line, err := json.Marshal(entry)
	if err != nil {
		return err
	}
	what := "reads " + c.Namespace
	if c.Publish {
		what = "reads and publishes " + c.Namespace
	}
	if len(entry.Census) > 0 {
		what += ", and reads the census of " + strings.Join(entry.Census, ", ")
	}
	fmt.Fprintf(stdout, "Token (shown once; store it now): %s\n", tok)
	fmt.Fprintf(stdout, "It %s; id %s.\n\n", what, registryserver.TokenID(sum))
	fmt.Fprintf(stdout, "Add this entry to the %q list in auth.json (it holds only the token's SHA-256):\n%s\n\n", c.Namespace, line)
	fmt.Fprintf(stdout, "Clients use it with: jig config set %s --url <server-url> --token <token>\n", c.Namespace)
	return nil
}

// authCheckCmd is "jig-server auth check".
type authCheckCmd struct {
	File       string `arg:"" type:"existingfile" help:"The auth.json to check."`
	SignersDir string `name:"signers-dir" env:"SIGNERS_DIR" placeholder:"DIR" help:"Also check the signer files of this folder (<namespace without @>.allowed_signers) and list the keys each holds."`
	Upstreams  string `name:"upstreams-config-path" env:"UPSTREAMS_CONFIG_PATH" placeholder:"FILE" help:"Also check this upstreams file, and that auth.json declares every namespace it mirrors."`
	JSON       bool   `name:"json" help:"Print one JSON document: namespaces, tokens, signers and problems."`
}

// Help is shown by "jig-server auth check --help".
func (c *authCheckCmd) Help() string {
	return `Each finding is an error or a warning. Errors: a namespace jig-server would reject (it
refuses that namespace alone and serves the rest) and a token stored in clear. Warnings: what
works but needs a look (an expired token, a signer file no key of which can sign now, or one for
a namespace auth.json does not declare, a mirrored namespace auth.json does not declare).
The output ends with a summary line.

Exit codes: 0 when there is no error (warnings only, or nothing); 1 when there is an error, or the
file does not load at all (a key twice in one object: jig-server refuses the whole file).
Tokens are shown by id: the first 12 hex digits of their SHA-256 (printf %s "$TOKEN" | sha256sum).

Examples:
  jig-server auth check /etc/jig/auth.json
  jig-server auth check /etc/jig/auth.json --signers-dir /etc/jig/signers
  jig-server auth check /etc/jig/auth.json --upstreams-config-path /etc/jig/upstreams.json
  jig-server auth check auth.json --json`
}

// finding is one thing auth check reports: an error (exit 1) or a
// warning.
type finding struct {
	err bool
	msg string
}

func errorf(format string, args ...any) finding {
	return finding{err: true, msg: fmt.Sprintf(format, args...)}
}

func warningf(format string, args ...any) finding {
	return finding{msg: fmt.Sprintf(format, args...)}
}

// Run validates the file and prints each namespace's access, then each
// finding marked "error:" or "warning:" and a summary line. Any error
// fails the command.
func (c *authCheckCmd) Run(stdout io.Writer) error {
	a, err := registryserver.LoadAuthConfig(c.File)
	if err != nil {
		return err
	}
	now := time.Now()
	desc := a.Describe(now)
	var problems []finding
	for _, w := range a.Warnings() {
		problems = append(problems, errorf("%s", w.Error()))
	}
	for _, ns := range desc {
		for _, t := range ns.Tokens {
			if t.InClear {
				problems = append(problems, errorf("%s: token %s is stored in clear; replace its \"token\" with \"tokenSha256\": %q", ns.Namespace, t.ID, t.SHA256))
			}
			if t.Expired {
				problems = append(problems, warningf("%s: token %s expired on %s; remove its entry, or issue a new one with jig-server token new --namespace %s", ns.Namespace, t.ID, t.ExpiresAt.UTC().Format(time.RFC3339), ns.Namespace))
			}
		}
	}
	var signers []signerFileReport
	if c.SignersDir != "" {
		s, err := registryserver.LoadSigners(c.SignersDir)
		if err != nil {
			return err
		}
		var more []finding
		signers, more = describeSigners(s, now, a.Declared)
		problems = append(problems, more...)
	}
	if c.Upstreams != "" {
		up, err := registryserver.LoadUpstreams(c.Upstreams)
		if err != nil {
			return err
		}
		for _, ns := range up.UndeclaredIn(a.Declared) {
			problems = append(problems, warningf("%s is mirrored from an upstream (%s) but not declared here: nobody can read it; add \"%s\": [] (public) or its tokens", ns, c.Upstreams, ns))
		}
	}
	errs, warns := []string{}, []string{}
	for _, p := range problems {
		if p.err {
			errs = append(errs, p.msg)
		} else {
			warns = append(warns, p.msg)
		}
	}
	summary := fmt.Sprintf("%s: %s, %s", c.File, english.Count(len(errs), "error", "errors"), english.Count(len(warns), "warning", "warnings"))
	if c.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Namespaces []registryserver.NamespaceAccess `json:"namespaces"`
			Signers    []signerFileReport               `json:"signers,omitempty"`
			// Problems are Errors then Warnings, as before the split.
			Problems []string `json:"problems"`
			Errors   []string `json:"errors"`
			Warnings []string `json:"warnings"`
		}{desc, signers, append(slices.Clone(errs), warns...), errs, warns}); err != nil {
			return err
		}
	} else {
		for _, ns := range desc {
			if ns.Public {
				fmt.Fprintf(stdout, "%s  public: anyone reads; only the admin token publishes\n", ns.Namespace)
				continue
			}
			fmt.Fprintf(stdout, "%s  gated: %s\n", ns.Namespace, english.Count(len(ns.Tokens), "token", "tokens"))
			for _, t := range ns.Tokens {
				scopes := make([]string, len(t.Scopes))
				for i, sc := range t.Scopes {
					scopes[i] = string(sc)
				}
				what := strings.Join(scopes, ", ")
				if t.Name != "" {
					what = "name " + t.Name + "  " + what
				}
				if len(t.Census) > 0 {
					what += ", census of " + strings.Join(t.Census, ", ")
				}
				line := fmt.Sprintf("  %s  %s", t.ID, what)
				if t.Mark != "" {
					line += fmt.Sprintf("  mark %q", t.Mark)
				}
				switch {
				case t.Expired:
					line += "  EXPIRED " + t.ExpiresAt.UTC().Format(time.RFC3339)
				case t.ExpiresAt != nil:
					line += "  expires " + t.ExpiresAt.UTC().Format(time.RFC3339)
				}
				if t.InClear {
					line += "  (stored in clear)"
				}
				fmt.Fprintln(stdout, line)
			}
		}
		printSigners(stdout, c.SignersDir, signers)
		for _, e := range errs {
			fmt.Fprintln(stdout, "error: "+e)
		}
		for _, w := range warns {
			fmt.Fprintln(stdout, "warning: "+w)
		}
		fmt.Fprintln(stdout, summary)
	}
	if len(errs) > 0 {
		err := fmt.Errorf("%s; fix the errors and run 'jig-server auth check %s' again", summary, c.File)
		if c.JSON {
			return reportedError{err}
		}
		return err
	}
	return nil
}

// healthCmd is "jig-server health".
type healthCmd struct {
	URL     string        `default:"http://127.0.0.1:${port}" help:"Base URL of the server to ask (default: this machine on PORT)."`
	Timeout time.Duration `default:"5s" help:"How long to wait for the answer."`
}

// Help is shown by "jig-server health --help".
func (c *healthCmd) Help() string {
	return `For container health checks in images without curl.

Examples:
  jig-server health
  jig-server health --url http://127.0.0.1:9000`
}

// Run asks /health and fails unless it answers 200.
func (c *healthCmd) Run(ctx context.Context, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.URL, "/")+"/health", nil)
	if err != nil {
		return fmt.Errorf("--url %q: %w", c.URL, err)
	}
	client := &http.Client{Timeout: c.Timeout, Transport: &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: c.Timeout}).DialContext}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("health check of %s failed: %w", c.URL, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health check of %s: %s %s", c.URL, resp.Status, strings.TrimSpace(string(body)))
	}
	fmt.Fprintln(stdout, strings.TrimSpace(string(body)))
	return nil
}
