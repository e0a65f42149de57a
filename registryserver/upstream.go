package registryserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jigkit/jig/internal/envvar"
	"github.com/jigkit/jig/internal/jsonkeys"
	"github.com/jigkit/jig/internal/redact"
	"github.com/jigkit/jig/internal/safefile"
	"github.com/jigkit/jig/registry"
)

// UpstreamMode says whether a mirror contacts its upstreams; see
// [WithUpstreamMode].
type UpstreamMode string

// The modes of [WithUpstreamMode].
const (
	// UpstreamPullThrough fetches what is missing from the upstream, and
	// refreshes versions lists, latest manifests and presets from it.
	UpstreamPullThrough UpstreamMode = "pull-through"
	// UpstreamOffline serves only what the storage holds and never
	// contacts an upstream (an air-gapped mirror).
	UpstreamOffline UpstreamMode = "offline"
)

// Limits of an upstreams file.
const (
	maxUpstreamsFileSize = 1 << 20
	// DefaultUpstreamTimeout bounds each request to an upstream, body
	// included, when its entry sets no "timeout".
	DefaultUpstreamTimeout = 30 * time.Second
	maxUpstreamTimeout     = 10 * time.Minute
)

// Upstream is one entry of an upstreams file: a registry server (a
// jig-server or a reference server) whose namespaces this server mirrors.
type Upstream struct {
	// URL is the upstream's base URL, without user info, query or fragment.
	URL string
	// Token, when not "", is sent as "Authorization: Bearer <token>".
	Token string
	// Headers are sent with every request to the upstream.
	Headers map[string]string
	// Namespaces maps each namespace served here to its name upstream
	// ("@public" here is "@main" there). "@presets" maps to itself and
	// mirrors the upstream's presets.
	Namespaces map[string]string
	// Timeout bounds each request to the upstream, body included.
	Timeout time.Duration
}

// label is what the upstream is called in logs and metrics: its URL
// (which carries no credentials).
func (u *Upstream) label() string { return u.URL }

// UpstreamConfig is a parsed upstreams file ([LoadUpstreams]): which
// namespaces this server serves from which upstream. It is immutable.
type UpstreamConfig struct {
	upstreams []*Upstream
	// byLocal maps a namespace served here to its upstream.
	byLocal map[string]*Upstream
}

// Upstreams returns the entries of the file, in its order.
func (c *UpstreamConfig) Upstreams() []*Upstream {
	if c == nil {
		return nil
	}
	return slices.Clone(c.upstreams)
}

// Serves reports whether namespace ns (or "@presets") is served from an
// upstream.
func (c *UpstreamConfig) Serves(ns string) bool {
	if c == nil {
		return false
	}
	_, ok := c.byLocal[ns]
	return ok
}

// Namespaces returns the namespaces served from upstreams, sorted.
func (c *UpstreamConfig) Namespaces() []string {
	if c == nil {
		return nil
	}
	out := make([]string, 0, len(c.byLocal))
	for ns := range c.byLocal {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// UndeclaredIn returns, sorted, the namespaces served from upstreams that
// the auth configuration a does not declare ("@presets" aside): with an
// auth file, nobody may read them. A nil a (no auth file: every namespace
// public) gives none.
func (c *UpstreamConfig) UndeclaredIn(a *AuthConfig) []string {
	if c == nil || a == nil {
		return nil
	}
	var out []string
	for _, ns := range c.Namespaces() {
		if ns != registry.PresetNamespace && !a.Declared(ns) {
			out = append(out, ns)
		}
	}
	return out
}

// LoadUpstreams reads and parses the upstreams file at path; see
// [ParseUpstreams]. "${NAME}" in its url, token and header values is
// expanded from the environment.
func LoadUpstreams(path string) (*UpstreamConfig, error) {
	data, err := safefile.ReadFile(path, maxUpstreamsFileSize)
	if errors.Is(err, safefile.ErrTooLarge) {
		return nil, fmt.Errorf("upstreams file %s is larger than %d bytes", path, maxUpstreamsFileSize)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the upstreams file: %w", err)
	}
	c, err := ParseUpstreams(data, nil)
	if err != nil {
		return nil, fmt.Errorf("upstreams file %s: %w", path, err)
	}
	return c, nil
}

// upstreamsFile is the JSON form of an upstreams file.
type upstreamsFile struct {
	Upstreams []upstreamEntry `json:"upstreams"`
}

type upstreamEntry struct {
	URL        string            `json:"url"`
	Token      string            `json:"token"`
	Headers    map[string]string `json:"headers"`
	Namespaces map[string]string `json:"namespaces"`
	Timeout    string            `json:"timeout"`
}

// ParseUpstreams parses an upstreams file:
//
//	{"upstreams": [{
//	  "url": "https://registry.example.com",
//	  "token": "${UPSTREAM_TOKEN}",
//	  "headers": {"X-Team": "platform"},
//	  "namespaces": {"@main": "@main", "@public": "@main", "@presets": "@presets"},
//	  "timeout": "30s"
//	}]}
//
// Each key of "namespaces" is a namespace served here, its value the
// namespace's name upstream. "${NAME}" in url, token and header values is
// expanded with lookup (os.LookupEnv when nil); an unset variable is an
// error. The file is checked strictly: unknown fields, a key twice in an
// object, a URL that is not an absolute http(s) URL (or carries user
// info, a query or a fragment), a token together with an Authorization
// header, a namespace that breaks the grammar, one served by two
// upstreams, and a timeout that is not a positive duration of at most 10m
// are errors naming the entry.
func ParseUpstreams(data []byte, lookup func(string) (string, bool)) (*UpstreamConfig, error) {
	if err := jsonkeys.Check(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f upstreamsFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf(`not an upstreams document ({"upstreams": [{"url": …, "namespaces": {…}}]}): %w`, err)
	}
	if dec.More() {
		return nil, errors.New("unexpected data after the upstreams document")
	}
	if len(f.Upstreams) == 0 {
		return nil, errors.New(`"upstreams" lists no upstream; add {"url": …, "namespaces": {"@main": "@main"}} or leave the setting unset`)
	}
	c := &UpstreamConfig{byLocal: map[string]*Upstream{}}
	for i, e := range f.Upstreams {
		where := fmt.Sprintf("upstreams[%d]", i)
		u, err := e.parse(where, lookup)
		if err != nil {
			return nil, err
		}
		for local := range u.Namespaces {
			if other, ok := c.byLocal[local]; ok {
				return nil, fmt.Errorf("%s: namespace %s is already served by upstream %s; a namespace comes from one upstream only", where, local, other.URL)
			}
			c.byLocal[local] = u
		}
		c.upstreams = append(c.upstreams, u)
	}
	return c, nil
}

func (e upstreamEntry) parse(where string, lookup func(string) (string, bool)) (*Upstream, error) {
	expand := func(field, s string) (string, error) {
		out, missing := envvar.Expand(s, lookup)
		if missing != "" {
			return "", fmt.Errorf("%s: %s uses ${%s}, which is not set; set the environment variable or edit the file", where, field, missing)
		}
		return out, nil
	}
	raw, err := expand("url", e.URL)
	if err != nil {
		return nil, err
	}
	// Messages show the URL as written: an expanded ${NAME} may be secret.
	base, err := upstreamURL(raw, e.URL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	u := &Upstream{URL: base, Headers: map[string]string{}, Namespaces: map[string]string{}, Timeout: DefaultUpstreamTimeout}
	if u.Token, err = expand("token", e.Token); err != nil {
		return nil, err
	}
	u.Token = strings.TrimSpace(u.Token)
	if strings.ContainsAny(u.Token, "\r\n") {
		return nil, fmt.Errorf("%s: the token must not contain line breaks", where)
	}
	for k, v := range e.Headers {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") {
			return nil, fmt.Errorf("%s: header name %q is not a header name (no spaces or ':')", where, k)
		}
		if v, err = expand("header "+k, v); err != nil {
			return nil, err
		}
		if strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("%s: the value of header %s must not contain line breaks", where, k)
		}
		ck := http.CanonicalHeaderKey(k)
		if _, dup := u.Headers[ck]; dup {
			return nil, fmt.Errorf("%s: header %s is given twice (header names ignore case)", where, ck)
		}
		if u.Token != "" && (ck == "Authorization" || ck == "X-Registry-Token") {
			return nil, fmt.Errorf("%s: both \"token\" and a %s header; give the token once, in \"token\"", where, ck)
		}
		u.Headers[ck] = v
	}
	if len(e.Namespaces) == 0 {
		return nil, fmt.Errorf(`%s: "namespaces" is empty; map each namespace served here to its name upstream, e.g. {"@main": "@main"}`, where)
	}
	for local, remote := range e.Namespaces {
		switch {
		case local == registry.PresetNamespace || remote == registry.PresetNamespace:
			if local != remote {
				return nil, fmt.Errorf("%s: %s can only map to itself (%q: %q); presets are not renamed", where, registry.PresetNamespace, registry.PresetNamespace, registry.PresetNamespace)
			}
		case !registry.ValidNamespace(local):
			return nil, fmt.Errorf("%s: namespace %q is not a namespace such as @main (@ then lowercase letters, digits, - or _)", where, local)
		case !registry.ValidNamespace(remote):
			return nil, fmt.Errorf("%s: namespace %s maps to %q upstream, which is not a namespace such as @main", where, local, remote)
		}
		u.Namespaces[local] = remote
	}
	if e.Timeout != "" {
		d, err := time.ParseDuration(e.Timeout)
		if err != nil || d <= 0 || d > maxUpstreamTimeout {
			return nil, fmt.Errorf("%s: timeout %q is not a duration between 1s and %v, such as 30s", where, e.Timeout, maxUpstreamTimeout)
		}
		u.Timeout = d
	}
	return u, nil
}

// upstreamURL checks an upstream's base URL and returns it without a
// trailing slash. Messages name it as shown (the URL as written in the
// file, before ${NAME} expansion).
func upstreamURL(raw, shown string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", errors.New(`"url" is missing; give the upstream's base URL, e.g. https://registry.example.com`)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("url %q is not an absolute http:// or https:// URL", redact.URL(shown))
	}
	if u.User != nil {
		return "", fmt.Errorf("url %q carries credentials; put the token in \"token\" (with ${NAME} to read it from the environment)", redact.URL(shown))
	}
	if u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("url %q must not have a query or fragment", redact.URL(shown))
	}
	return strings.TrimRight(u.String(), "/"), nil
}
