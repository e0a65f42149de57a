package registryclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/net/http/httpguts"

	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
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

// Entry is one registry source of the rc file. On disk it is either a URL
// string or an object {"url", "token", "headers", "defaultNamespace"}.
type Entry struct {
	// URL is the server's base URL. A "${VAR}" here, in Token or in a
	// header value is kept as written and expanded when a client is built
	// for the source ([*Config.Client], [*Config.Resolved]).
	URL string `json:"url"`
	// Token is sent as "Authorization: Bearer <token>". It is kept in
	// its own field and never written into Headers.
	Token string `json:"token,omitempty"`
	// Headers are sent with every request to the source.
	Headers map[string]string `json:"headers,omitempty"`
	// DefaultNamespace is the namespace ("@rack") that shorthand
	// identifiers ("runtimes/node") mean in what this source serves; for
	// the @main entry, also in identifiers typed on the command line. It
	// overrides what the server advertises. "" means: ask the server (GET
	// /namespaces), else [registry.DefaultNamespace].
	DefaultNamespace string `json:"defaultNamespace,omitempty"`

	short bool // stored as a bare URL string
}

// Config is the rc file (~/.jigrc): registry sources keyed by namespace,
// with the built-in namespaces merged under the entries of the file. Load it
// with [LoadConfig]; change it with [*Config.Set] and [*Config.Remove];
// write it with [*Config.Save]. A Config is not safe for concurrent
// mutation.
type Config struct {
	// LookupEnv looks up the variables of "${VAR}" when a client is built
	// ([*Config.Client], [*Config.Resolved]); a [*Sources] builds each
	// namespace's client once, on its first request. Nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)

	path       string
	builtinURL string
	entries    map[string]Entry           // from the file or set
	literal    bool                       // from [NewSources]: no built-ins, no "${VAR}"
	other      map[string]json.RawMessage // unknown top-level fields, kept on save
}

// DefaultConfigPath returns $JIG_CONFIG when set, else ~/.jigrc, made
// absolute.
func DefaultConfigPath() (string, error) {
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

// LoadConfig reads the rc file at path. A missing file gives only the
// built-in namespaces, whose URL is $JIG_REGISTRY_URL or
// [DefaultRegistryURL]. A file that is not valid JSON, or whose entries are
// malformed, is an error naming the path and wrapping [ErrInvalidConfig].
func LoadConfig(path string) (*Config, error) {
	c := &Config{path: path, entries: map[string]Entry{}, builtinURL: DefaultRegistryURL}
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
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidConfig, path, err)
	}
	return c, nil
}

// ParseConfig decodes rc-file content; path is only remembered for
// [*Config.Save] and messages. The built-in URL is [DefaultRegistryURL].
func ParseConfig(path string, data []byte) (*Config, error) {
	c := &Config{path: path, entries: map[string]Entry{}, builtinURL: DefaultRegistryURL}
	if err := c.parse(data); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrInvalidConfig, path, err)
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
		var e Entry
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			e = Entry{URL: s, short: true}
		} else {
			var obj struct {
				URL              *string           `json:"url"`
				Token            *string           `json:"token"`
				Headers          map[string]string `json:"headers"`
				DefaultNamespace *string           `json:"defaultNamespace"`
			}
			if err := json.Unmarshal(v, &obj); err != nil {
				return fmt.Errorf("registry %s must be a URL string or an object {\"url\", \"token\", \"headers\", \"defaultNamespace\"} with string values", ns)
			}
			if obj.DefaultNamespace != nil {
				if err := checkEntryDefaultNamespace(ns, *obj.DefaultNamespace); err != nil {
					return err
				}
				e.DefaultNamespace = *obj.DefaultNamespace
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

// Get returns the entry for namespace ns: the file's entry, or the built-in
// one for @main and @presets. The returned entry is a copy.
func (c *Config) Get(ns string) (Entry, bool) {
	if e, ok := c.entries[ns]; ok {
		e.Headers = cloneHeaders(e.Headers)
		if e.URL == "" && IsBuiltin(ns) && !c.literal {
			// An override of the token, headers or default namespace
			// alone keeps following the built-in URL.
			e.URL = c.builtinURL
		}
		return e, true
	}
	if IsBuiltin(ns) && !c.literal {
		return Entry{URL: c.builtinURL, short: true}, true
	}
	return Entry{}, false
}

// List returns every configured namespace, built-ins included, sorted.
func (c *Config) List() []string {
	seen := map[string]bool{}
	var out []string
	for _, ns := range BuiltinNamespaces {
		if c.literal {
			break
		}
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
	// DefaultNamespace sets [Entry.DefaultNamespace] ("@rack"; "rack" is
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
	if u.URL == nil && u.Token == nil && u.DefaultNamespace == nil && len(u.Headers) == 0 && len(u.RemoveHeaders) == 0 {
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
	if !exists && IsBuiltin(ns) && !c.literal {
		// A built-in gets a file entry without a URL of its own, so it
		// keeps following $JIG_REGISTRY_URL (see [*Config.Get]) unless
		// --url says otherwise.
		exists = true
	}
	if u.URL != nil {
		v := strings.TrimSpace(*u.URL)
		if !strings.Contains(v, "${") {
			if !httpScheme(v) {
				return errors.New("--url must be an absolute http:// or https:// URL")
			}
			if _, err := parseBaseURL(v); err != nil {
				return fmt.Errorf("--url: %w", err)
			}
		}
		e.URL = v
	} else if !exists || (e.URL == "" && !IsBuiltin(ns)) {
		return fmt.Errorf("registry %s is not configured yet; --url is required", ns)
	}
	if u.Token != nil {
		e.Token = strings.TrimSpace(*u.Token)
	}
	if u.DefaultNamespace != nil {
		e.DefaultNamespace = defNS
	}
	if len(u.Headers) > 0 || len(u.RemoveHeaders) > 0 {
		h := cloneHeaders(e.Headers)
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
				for _, x := range (Entry{Token: e.Token, Headers: h}).DisplayHeaders() {
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

// checkEntryDefaultNamespace checks the defaultNamespace v of entry ns as
// stored ("@rack"; "" for none).
func checkEntryDefaultNamespace(ns, v string) error {
	if v != "" && !registry.ValidDefaultNamespace(v) {
		return fmt.Errorf("registry %s: defaultNamespace %q must be a namespace such as @rack, other than %s", ns, v, registry.PresetNamespace)
	}
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

// Header is one displayed header.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DisplayHeaders returns the headers sent to ns as they are shown: the
// token as "Authorization: Bearer <token>" first, then the custom headers
// sorted by name (an Authorization custom header is replaced by the token).
// Values are shown as stored, "${VAR}" unexpanded.
func (c *Config) DisplayHeaders(ns string) []Header {
	e, ok := c.Get(ns)
	if !ok {
		return nil
	}
	return e.DisplayHeaders()
}

// DisplayHeaders is [*Config.DisplayHeaders] for one entry.
func (e Entry) DisplayHeaders() []Header {
	var out []Header
	var auth *Header
	names := make([]string, 0, len(e.Headers))
	for k := range e.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if strings.EqualFold(k, "Authorization") {
			if e.Token == "" {
				auth = &Header{Name: k, Value: e.Headers[k]}
			}
			continue
		}
		out = append(out, Header{Name: k, Value: e.Headers[k]})
	}
	if e.Token != "" {
		auth = &Header{Name: "Authorization", Value: "Bearer " + e.Token}
	}
	if auth != nil {
		out = append([]Header{*auth}, out...)
	}
	return out
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
		if e.short && e.Token == "" && len(e.Headers) == 0 && e.DefaultNamespace == "" {
			regs[ns] = e.URL
			continue
		}
		obj := struct {
			URL              string            `json:"url,omitempty"` // none: a built-in's default
			Token            string            `json:"token,omitempty"`
			Headers          map[string]string `json:"headers"`
			DefaultNamespace string            `json:"defaultNamespace,omitempty"`
		}{URL: e.URL, Token: e.Token, Headers: e.Headers, DefaultNamespace: e.DefaultNamespace}
		if obj.Headers == nil {
			obj.Headers = map[string]string{}
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

// Save writes the rc file atomically (a temporary file in the same
// directory, then rename) with mode 0600. When the rc file's path is a
// symbolic link, the link is kept and the file it points to is replaced
// (the temporary file is made next to that target). Save does not lock:
// use [UpdateConfig] to change the file when other processes may too.
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
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	f, err := os.CreateTemp(dir, ".jigrc-*.tmp")
	if err != nil {
		return fail(err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, target); err != nil {
		return fail(err)
	}
	return nil
}

// varRE matches ${NAME}; compiled on first use, not on every start.
var varRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`) })

// expand replaces ${VAR} from the environment; a missing variable is an
// error naming it and where it was used.
func (c *Config) expand(ns, field, s string) (string, error) {
	if c.literal {
		return s, nil
	}
	lookup := c.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var missing string
	out := varRE().ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		v, ok := lookup(name)
		if !ok && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", &EnvNotSetError{Namespace: ns, Var: missing, Field: field}
	}
	return out, nil
}

// Resolved returns the entry for ns with "${VAR}" expanded in its URL, token
// and header values.
func (c *Config) Resolved(ns string) (Entry, error) {
	e, ok := c.Get(ns)
	if !ok {
		return Entry{}, &NotConfiguredError{Namespace: ns}
	}
	var err error
	if e.URL, err = c.expand(ns, "url", e.URL); err != nil {
		return Entry{}, err
	}
	if e.Token, err = c.expand(ns, "token", e.Token); err != nil {
		return Entry{}, err
	}
	for k, v := range e.Headers {
		if e.Headers[k], err = c.expand(ns, "header "+k, v); err != nil {
			return Entry{}, err
		}
	}
	return e, nil
}

// Client returns a client for namespace ns with the source's URL, token and
// headers ("${VAR}" expanded now). opts are applied after those. An
// unconfigured namespace gives a [*NotConfiguredError].
func (c *Config) Client(ns string, opts ...Option) (*Client, error) {
	e, err := c.Resolved(ns)
	if err != nil {
		return nil, err
	}
	if e.URL == "" {
		return nil, &MissingURLError{Namespace: ns}
	}
	if _, err := url.Parse(e.URL); err != nil {
		return nil, fmt.Errorf("%w: registry %s: url: %w", ErrInvalidConfig, ns, err)
	}
	all := []Option{WithNamespace(ns), WithHeaders(e.Headers)}
	if e.Token != "" {
		all = append(all, WithToken(e.Token))
	}
	all = append(all, opts...)
	cl, err := New(e.URL, all...)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", ns, err)
	}
	return cl, nil
}

func cloneHeaders(h map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	c := make(map[string]string, len(h))
	for k, v := range h {
		c[k] = v
	}
	return c
}
