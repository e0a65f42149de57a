package rcfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/jigkit/jig/internal/envvar"

	"golang.org/x/net/http/httpguts"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryclient"
)

// DefaultRegistryURL is the URL of the built-in namespaces when
// JIG_REGISTRY_URL is not set.
const DefaultRegistryURL = "http://localhost:8080"

// Environment variables the rc file honours.
const (
	EnvConfig      = "JIG_CONFIG"       // path of the rc file (default ~/.jigrc)
	EnvRegistryURL = "JIG_REGISTRY_URL" // URL of the built-in namespaces
)

// BuiltinNamespaces are always configured and cannot be removed: the
// default namespace and the presets namespace.
var BuiltinNamespaces = []string{registry.DefaultNamespace, registry.PresetNamespace}

// entry is one registry source as stored in the rc file: on disk either a
// URL string or an object {"url", "token", "headers", "defaultNamespace"}.
// A "${VAR}" in URL, Token or a header value is kept as written and
// expanded when a client is built for the source ([*Config.Resolve]).
type entry struct {
	registryclient.Entry
	short bool // stored as a bare URL string
	// other holds the entry's fields jig does not know, kept on save.
	other map[string]json.RawMessage
}

// Config is the rc file (~/.jigrc): registry sources keyed by namespace,
// with the built-in namespaces merged under the entries of the file. Load it
// with [Load]; change it with [*Config.Set] and [*Config.Remove]; write it
// with [*Config.Save], or do all three under a lock with [Edit]. It is a
// [registryclient.Resolver]: [*Config.Sources] routes requests by its
// entries. A Config is not safe for concurrent mutation.
type Config struct {
	// LookupEnv looks up the variables of "${VAR}" when a client is built
	// ([*Config.Client], [*Config.Resolve]); a [*registryclient.Sources]
	// builds each namespace's client once, on its first request. Nil means
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// SSORefresh, when set, renews the SSO session (jig login --sso) of
	// namespace ns, whose entry is e, once its session token has expired:
	// it returns the new token and session, saved by then. A client built
	// for an entry with a session asks it at its first request after the
	// expiry ([registryclient.WithTokenSource]). Nil: the stored token is
	// sent as it is.
	SSORefresh func(ctx context.Context, ns string, e registryclient.Entry) (string, *registryclient.SSOSession, error)

	path       string
	builtinURL string
	entries    map[string]entry           // from the file or set
	other      map[string]json.RawMessage // unknown top-level fields, kept on save

	// ssoState holds the SSO sessions of the clients built so far, by
	// namespace (sso.go).
	ssoMu    sync.Mutex
	ssoState map[string]*ssoState
}

var _ registryclient.Resolver = (*Config)(nil)

// DefaultPath returns $JIG_CONFIG when set, else ~/.jigrc, made
// absolute.
func DefaultPath() (string, error) {
	if p := os.Getenv(EnvConfig); p != "" {
		return filepath.Abs(p)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the rc file: %w; set %s to its path", err, EnvConfig)
	}
	return filepath.Join(home, ".jigrc"), nil
}

// maxConfigFile bounds the size of the rc file.
const maxConfigFile = 16 << 20

// Load reads the rc file at path. A missing file gives only the
// built-in namespaces, whose URL is $JIG_REGISTRY_URL or
// [DefaultRegistryURL]. A file that is not valid JSON, or whose entries are
// malformed, is an error naming the path and wrapping
// [registryclient.ErrInvalidConfig].
func Load(path string) (*Config, error) {
	c := &Config{path: path, entries: map[string]entry{}, builtinURL: DefaultRegistryURL}
	if u := strings.TrimSpace(os.Getenv(EnvRegistryURL)); u != "" {
		c.builtinURL = u
	}
	data, err := safefile.ReadFile(path, maxConfigFile)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading configuration file %s: %w", path, err)
	}
	if err := c.parse(data); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", registryclient.ErrInvalidConfig, path, err)
	}
	return c, nil
}

// Parse decodes rc-file content; path is only remembered for
// [*Config.Save] and messages. The built-in URL is [DefaultRegistryURL].
func Parse(path string, data []byte) (*Config, error) {
	c := &Config{path: path, entries: map[string]entry{}, builtinURL: DefaultRegistryURL}
	if err := c.parse(data); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", registryclient.ErrInvalidConfig, path, err)
	}
	return c, nil
}

func (c *Config) parse(data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := registry.CheckJSONDepth("configuration file", data); err != nil {
		return err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return fmt.Errorf("configuration file is not valid JSON (%v); fix or delete it", err)
	}
	if top == nil {
		return errors.New("configuration file must be a JSON object such as {\"registries\": {}}")
	}
	raw, ok := top["registries"]
	delete(top, "registries")
	if len(top) > 0 {
		c.other = top
	}
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	var regs map[string]json.RawMessage
	if err := json.Unmarshal(raw, &regs); err != nil {
		return errors.New(`"registries" must be an object keyed by namespace`)
	}
	for ns, v := range regs {
		if !strings.HasPrefix(ns, "@") {
			return fmt.Errorf("registry key %q must be a namespace starting with @", ns)
		}
		var e entry
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			e = entry{Entry: registryclient.Entry{URL: s}, short: true}
		} else {
			var obj struct {
				URL              *string           `json:"url"`
				Token            *string           `json:"token"`
				Headers          map[string]string `json:"headers"`
				DefaultNamespace *string           `json:"defaultNamespace"`
				Trust            json.RawMessage   `json:"trust"`
				SSO              json.RawMessage   `json:"sso"`
			}
			if err := json.Unmarshal(v, &obj); err != nil {
				return fmt.Errorf("registry %s must be a URL string or an object {\"url\", \"token\", \"headers\", \"defaultNamespace\", \"trust\"} with string values", ns)
			}
			if s, err := parseSSO(ns, obj.SSO); err != nil {
				return err
			} else {
				e.SSO = s
			}
			if t, err := parseTrust(ns, obj.Trust); err != nil {
				return err
			} else {
				e.Trust = t
			}
			var all map[string]json.RawMessage
			_ = json.Unmarshal(v, &all)
			for _, k := range knownEntryFields {
				delete(all, k)
			}
			if len(all) > 0 {
				e.other = all
			}
			if obj.DefaultNamespace != nil {
				e.DefaultNamespace = *obj.DefaultNamespace
				if err := e.CheckDefaultNamespace(ns); err != nil {
					return err
				}
			}
			if obj.URL != nil {
				e.URL = *obj.URL
			}
			if obj.Token != nil {
				e.Token = *obj.Token
			}
			e.Headers = obj.Headers
		}
		c.entries[ns] = e
	}
	return nil
}

// Path returns the rc file's path.
func (c *Config) Path() string { return c.path }

// IsBuiltin reports whether ns is one of [BuiltinNamespaces].
func IsBuiltin(ns string) bool { return slices.Contains(BuiltinNamespaces, ns) }

// Get returns the entry for namespace ns as stored ("${VAR}" unexpanded):
// the file's entry, or the built-in one for @main and @presets. The
// returned entry is a copy.
func (c *Config) Get(ns string) (registryclient.Entry, bool) {
	if e, ok := c.entries[ns]; ok {
		e.Headers = maps.Clone(e.Headers)
		e.Trust = e.Trust.Clone()
		e.SSO = e.SSO.Clone()
		if e.URL == "" && IsBuiltin(ns) {
			// An override of the token, headers or default namespace
			// alone keeps following the built-in URL.
			e.URL = c.builtinURL
		}
		return e.Entry, true
	}
	if IsBuiltin(ns) {
		return registryclient.Entry{URL: c.builtinURL}, true
	}
	return registryclient.Entry{}, false
}

// List returns every configured namespace, built-ins included, sorted.
func (c *Config) List() []string {
	seen := map[string]bool{}
	var out []string
	for _, ns := range BuiltinNamespaces {
		seen[ns] = true
		out = append(out, ns)
	}
	for ns := range c.entries {
		if !seen[ns] {
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return out
}

// Update is a change to one entry for [*Config.Set]. Nil fields keep the
// current value; Headers are merged into the existing headers by name
// (case-insensitively), and RemoveHeaders are then deleted by name.
type Update struct {
	URL   *string
	Token *string
	// SSO sets the session of jig login --sso (its token goes in Token);
	// ClearSSO removes it.
	SSO      *registryclient.SSOSession
	ClearSSO bool
	// DefaultNamespace sets [registryclient.Entry.DefaultNamespace] ("@rack"; "rack" is
	// accepted too); "" clears it.
	DefaultNamespace *string
	Headers          map[string]string
	// RemoveHeaders names headers to delete. "Authorization" also clears
	// the token. Naming a header the entry does not have is an error.
	RemoveHeaders []string
}

// ParseHeader splits a "Name: Value" header argument, trimming spaces
// around both. The name must be a valid HTTP header name and the value
// non-empty and free of line breaks; the error says what is wrong and how to
// remove a header instead.
func ParseHeader(s string) (name, value string, err error) {
	k, v, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", fmt.Errorf("header %q has no ':'; write it as 'Name: Value', e.g. --header 'X-Team: web'", s)
	}
	return checkHeader(s, k, v)
}

// checkHeader trims and validates one header; s is what the user wrote.
func checkHeader(s, k, v string) (name, value string, err error) {
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	switch {
	case k == "":
		return "", "", fmt.Errorf("header %q has no name before ':'; write it as 'Name: Value'", s)
	case !httpguts.ValidHeaderFieldName(k):
		return "", "", fmt.Errorf("header name %q is not a valid HTTP header name (letters, digits and !#$%%&'*+-.^_`|~ only)", k)
	case v == "":
		return "", "", fmt.Errorf("header %q has no value; to remove a header use --remove-header %s", k, k)
	case !httpguts.ValidHeaderFieldValue(v):
		return "", "", fmt.Errorf("the value of header %q contains a line break or control character", k)
	}
	return k, v, nil
}

// httpScheme reports whether v starts with http:// or https://.
func httpScheme(v string) bool {
	return strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://")
}

// ValidateNamespaceArg checks a namespace given on the command line with
// [registry.ParseNamespace]: it must start with "@" and follow the
// namespace grammar, lowercase only. The message suggests a fix when there
// is an obvious one ("@Company": did you mean @company?).
func ValidateNamespaceArg(ns string) error {
	_, err := registry.ParseNamespace(ns)
	if err == nil {
		return nil
	}
	var ie *registry.IDError
	sug := ""
	if errors.As(err, &ie) && ie.Suggestion != "" {
		sug = "; did you mean " + ie.Suggestion + "?"
	}
	switch {
	case !strings.HasPrefix(ns, "@"):
		return fmt.Errorf("Invalid namespace format: %s. Must start with '@'%s", ns, sug)
	case sug != "":
		return fmt.Errorf("Invalid namespace format: %s. Namespaces are lowercase%s", ns, sug)
	default:
		return fmt.Errorf("Invalid namespace format: %s. Use @ followed by lowercase letters, digits, - or _ (e.g. @company)", ns)
	}
}

// Set adds or updates the entry for ns. A new namespace needs a URL; a URL
// must be absolute http:// or https:// (a "${VAR}" URL is checked when a
// client is built, after expansion). An "Authorization: Bearer <t>" header becomes the token, so a token
// never sits in Headers. Nothing is written until [*Config.Save].
func (c *Config) Set(ns string, u Update) error {
	if err := ValidateNamespaceArg(ns); err != nil {
		return err
	}
	if u.URL == nil && u.Token == nil && u.SSO == nil && !u.ClearSSO && u.DefaultNamespace == nil && len(u.Headers) == 0 && len(u.RemoveHeaders) == 0 {
		return errors.New("the update changes nothing: give a URL, a token, a default namespace, headers or headers to remove")
	}
	var defNS string
	if u.DefaultNamespace != nil {
		var err error
		if defNS, err = ParseDefaultNamespace(*u.DefaultNamespace); err != nil {
			return err
		}
	}
	e, exists := c.entries[ns]
	if !exists && IsBuiltin(ns) {
		exists = true
	}
	if e.URL == "" && IsBuiltin(ns) {
		// Every entry jig writes has its URL, the one in effect now
		// ($JIG_REGISTRY_URL or the default): the reference reads the
		// same file and cannot use an entry without one.
		e.URL = c.builtinURL
	}
	if u.URL != nil {
		v := strings.TrimSpace(*u.URL)
		if !strings.Contains(v, "${") {
			if !httpScheme(v) {
				return errors.New("--url must be an absolute http:// or https:// URL")
			}
			if _, err := registryclient.New(v); err != nil {
				return fmt.Errorf("--url: %w", err)
			}
		}
		e.URL = v
	} else if !exists || (e.URL == "" && !IsBuiltin(ns)) {
		return fmt.Errorf("registry %s is not configured yet; --url is required", ns)
	}
	if u.Token != nil {
		e.Token = strings.TrimSpace(*u.Token)
		// A token set by hand ends the SSO session it replaces.
		e.SSO = nil
	}
	if u.ClearSSO {
		e.SSO = nil
	}
	if u.SSO != nil {
		e.SSO = u.SSO.Clone()
	}
	if u.DefaultNamespace != nil {
		e.DefaultNamespace = defNS
	}
	if len(u.Headers) > 0 || len(u.RemoveHeaders) > 0 {
		h := maps.Clone(e.Headers)
		if h == nil {
			h = map[string]string{}
		}
		names := make([]string, 0, len(u.Headers))
		for k := range u.Headers {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			k, v, err := checkHeader(k+": "+u.Headers[k], k, u.Headers[k])
			if err != nil {
				return err
			}
			if strings.EqualFold(k, "Authorization") {
				if tok, ok := bearer(v); ok {
					e.Token = tok
					deleteFold(h, "Authorization")
					continue
				}
			}
			deleteFold(h, k)
			h[k] = v
		}
		for _, k := range u.RemoveHeaders {
			k = strings.TrimSpace(k)
			auth := strings.EqualFold(k, "Authorization")
			if !hasFold(h, k) && !(auth && e.Token != "") {
				have := make([]string, 0, len(h))
				for _, x := range (registryclient.Entry{Token: e.Token, Headers: h}).DisplayHeaders() {
					have = append(have, x.Name)
				}
				if len(have) == 0 {
					return fmt.Errorf("registry %s has no header %q to remove (it has no headers)", ns, k)
				}
				return fmt.Errorf("registry %s has no header %q to remove (its headers: %s)", ns, k, strings.Join(have, ", "))
			}
			deleteFold(h, k)
			if auth {
				e.Token = ""
			}
		}
		e.Headers = h
	}
	e.short = false
	c.entries[ns] = e
	return nil
}

// ParseDefaultNamespace checks a default namespace given by a user (a
// flag or a prompt): "@rack" or "rack" give "@rack", "" gives "" (none).
// It must be a valid namespace other than @presets; the error says what
// to write instead.
func ParseDefaultNamespace(s string) (string, error) {
	ns := registry.NormalizeNamespace(s)
	if ns == "" {
		return "", nil
	}
	if ns == registry.PresetNamespace {
		return "", fmt.Errorf("the default namespace cannot be %s: shorthand identifiers never name presets; use the namespace the registries are stored in, e.g. @rack", registry.PresetNamespace)
	}
	if _, err := registry.ParseNamespace(ns); err != nil {
		return "", fmt.Errorf("default namespace: %w", err)
	}
	return ns, nil
}

func bearer(v string) (string, bool) {
	if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		return strings.TrimSpace(v[7:]), true
	}
	return "", false
}

func hasFold(h map[string]string, k string) bool {
	for x := range h {
		if strings.EqualFold(x, k) {
			return true
		}
	}
	return false
}

func deleteFold(h map[string]string, k string) {
	for x := range h {
		if strings.EqualFold(x, k) {
			delete(h, x)
		}
	}
}

// Remove deletes the entry for ns. For a built-in namespace (@main,
// @presets) it deletes the file's override, which restores the built-in
// default URL; a built-in without an override, or an unknown namespace, is
// an error. Nothing is written until [*Config.Save].
func (c *Config) Remove(ns string) error {
	if err := ValidateNamespaceArg(ns); err != nil {
		return err
	}
	if _, ok := c.entries[ns]; !ok {
		if IsBuiltin(ns) {
			return fmt.Errorf("%s is built in and has no override in %s to remove; it uses %s", ns, c.path, c.builtinURL)
		}
		return fmt.Errorf("Registry '%s' not found", ns)
	}
	delete(c.entries, ns)
	return nil
}

// HasOverride reports whether the rc file has an entry of its own for ns,
// which for a built-in namespace overrides its default.
func (c *Config) HasOverride(ns string) bool {
	_, ok := c.entries[ns]
	return ok
}

// BuiltinURL returns the URL the built-in namespaces use without an
// override: $JIG_REGISTRY_URL or [DefaultRegistryURL].
func (c *Config) BuiltinURL() string { return c.builtinURL }

// DisplayHeaders returns the headers sent to ns as they are shown
// ([registryclient.Entry.DisplayHeaders]), "${VAR}" unexpanded.
func (c *Config) DisplayHeaders(ns string) []registryclient.Header {
	e, ok := c.Get(ns)
	if !ok {
		return nil
	}
	return e.DisplayHeaders()
}

// Marshal encodes the rc file as it is saved: the file's entries only (not
// the built-in defaults), two-space indented, with a trailing newline.
// Entries that were read as bare URL strings and not changed stay strings.
func (c *Config) Marshal() ([]byte, error) {
	top := map[string]any{}
	for k, v := range c.other {
		top[k] = v
	}
	regs := map[string]any{}
	for ns, e := range c.entries {
		if e.short && e.Token == "" && len(e.Headers) == 0 && e.DefaultNamespace == "" && e.Trust == nil && e.SSO == nil && len(e.other) == 0 {
			regs[ns] = e.URL
			continue
		}
		u := e.URL
		if u == "" && IsBuiltin(ns) {
			// A built-in's entry read without a URL (older jig wrote
			// them): written with the URL it uses, as the reference
			// needs one.
			u = c.builtinURL
		}
		obj := orderedObject{{"url", u}, {"token", e.Token}, {"headers", e.Headers}, {"defaultNamespace", e.DefaultNamespace}}
		if u == "" {
			obj = obj[1:]
		}
		if e.Headers == nil {
			obj.set("headers", map[string]string{})
		}
		if e.Token == "" {
			obj = obj.without("token")
		}
		if e.DefaultNamespace == "" {
			obj = obj.without("defaultNamespace")
		}
		if e.Trust != nil {
			obj = append(obj, field{"trust", e.Trust})
		}
		if e.SSO != nil {
			obj = append(obj, field{"sso", e.SSO})
		}
		for _, k := range slices.Sorted(maps.Keys(e.other)) {
			obj = append(obj, field{k, e.other[k]})
		}
		regs[ns] = obj
	}
	top["registries"] = regs
	b, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Save writes the rc file atomically with [safefile.WriteAtomic] (a
// synced temporary file in the same directory, renamed, the directory
// synced) with mode 0600, making its missing directories private (0700). When the rc file's path is a
// symbolic link, the link is kept and the file it points to is replaced
// (the temporary file is made next to that target). Save does not lock:
// use [Edit] to change the file when other processes may too.
func (c *Config) Save() error {
	if c.path == "" {
		return errors.New("configuration has no file path")
	}
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	fail := func(err error) error { return fmt.Errorf("writing configuration file %s: %w", c.path, err) }
	target, err := resolveLink(c.path)
	if err != nil {
		return fail(err)
	}
	err = safefile.WriteAtomic(target, 0o600, safefile.Content(data), safefile.Options{DirPerm: 0o700, TempPattern: ".jigrc-*.tmp"})
	if err != nil {
		return fail(err)
	}
	return nil
}

// expand replaces ${VAR} from the environment; a missing variable is an
// error naming it and where it was used.
func (c *Config) expand(ns, field, s string) (string, error) {
	out, missing := envvar.Expand(s, c.LookupEnv)
	if missing != "" {
		return "", &EnvNotSetError{Namespace: ns, Var: missing, Field: field}
	}
	return out, nil
}

// Resolve returns the entry for ns with "${VAR}" expanded in its URL,
// token and header values: what is sent. An unconfigured ns gives a
// [*registryclient.NotConfiguredError], an unset variable an
// [*EnvNotSetError].
func (c *Config) Resolve(ns string) (registryclient.Entry, error) {
	e, ok := c.Get(ns)
	if !ok {
		return registryclient.Entry{}, &registryclient.NotConfiguredError{Namespace: ns}
	}
	var err error
	if e.URL, err = c.expand(ns, "url", e.URL); err != nil {
		return registryclient.Entry{}, err
	}
	if e.Token, err = c.expand(ns, "token", e.Token); err != nil {
		return registryclient.Entry{}, err
	}
	for k, v := range e.Headers {
		if e.Headers[k], err = c.expand(ns, "header "+k, v); err != nil {
			return registryclient.Entry{}, err
		}
	}
	if e.Trust != nil {
		if e.Trust.AllowedSigners, err = c.trustPath(e.Trust.AllowedSigners); err != nil {
			return registryclient.Entry{}, fmt.Errorf("%w: registry %s: %w", registryclient.ErrInvalidConfig, ns, err)
		}
	}
	if e.SSO != nil && c.SSORefresh != nil {
		e.TokenSource = c.ssoSource(ns, e)
	}
	return e, nil
}

// Sources returns a router over the configured namespaces
// ([registryclient.NewSourcesFrom]); opts are applied to every client it
// builds.
func (c *Config) Sources(opts ...registryclient.Option) *registryclient.Sources {
	return registryclient.NewSourcesFrom(c, opts...)
}

// Client returns a client for namespace ns with the source's URL, token and
// headers ("${VAR}" expanded now). opts are applied after those. An
// unconfigured namespace gives a [*registryclient.NotConfiguredError].
func (c *Config) Client(ns string, opts ...registryclient.Option) (*registryclient.Client, error) {
	return c.Sources(opts...).Client(ns)
}

// knownEntryFields are the entry fields jig reads; others are kept as
// they are on save.
var knownEntryFields = []string{"url", "token", "headers", "defaultNamespace", "trust", "sso"}

// field is one member of an [orderedObject].
type field struct {
	name  string
	value any
}

// orderedObject marshals as a JSON object with its members in order.
type orderedObject []field

func (o orderedObject) set(name string, v any) {
	for i := range o {
		if o[i].name == name {
			o[i].value = v
		}
	}
}

func (o orderedObject) without(name string) orderedObject {
	return slices.DeleteFunc(o, func(f field) bool { return f.name == name })
}

// MarshalJSON writes the members in order.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.name)
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
