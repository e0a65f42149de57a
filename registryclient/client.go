package registryclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"golang.org/x/mod/sumdb/note"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpproxy"
	"golang.org/x/sync/singleflight"

	"github.com/jigkit/jig/internal/redact"
	"github.com/jigkit/jig/internal/wait"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/signing"
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registry/wire"
)

// Client reads from one registry server. It is safe for concurrent use.
// Build it with [New], or get one per namespace from [*Sources].
type Client struct {
	base    *url.URL
	baseStr string // base without user info or trailing slash, for messages
	opts    options
	hc      *http.Client

	// Digest indexes seen by this client (verify.go), by cache ref.
	idxMu    sync.Mutex
	indexes  map[string]*registry.DigestIndex
	missing  map[string]bool // versions whose server has no index
	idxGroup singleflight.Group
	// policy is the compiled trust policy (signed.go); nil for none.
	policy *policy
	// logKey verifies the namespace's transparency log (tlog.go); nil
	// for none.
	logKey note.Verifier
	// witnesses is the k-of-n witness policy of the log (tlog.go); the
	// zero policy requires none.
	witnesses translog.WitnessPolicy
	// logIndexes are the log indexes of the versions verified, by
	// "@ns/<path>@<version>" (under idxMu).
	logIndexes map[string]int64
	// bundleProofs are the log proofs of the bundle being imported, by
	// proof key (under idxMu): verified like the cache's.
	bundleProofs map[string]string
	signers      map[string]signing.Signer // trusted signer by version ref
	// The client that reads installed versions as merge bases only, and
	// the versions it let through only as such (signed.go).
	baseOnce   sync.Once
	baseClient *Client
	baseOnly   map[string]bool

	// Files downloaded ahead of their File call (ahead.go).
	aheadMu  sync.Mutex
	ahead    map[string]*aheadFile
	aheadSem chan struct{}
}

// New returns a client for the registry server at baseURL, an absolute
// http:// or https:// URL, optionally with a path prefix
// ("https://example.com/registry"). It may not carry a query or fragment.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := parseBaseURL(baseURL)
	if err != nil {
		return nil, err
	}
	o := defaultOptions()
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	c := &Client{base: u, opts: o}
	if o.trust != nil {
		if c.logKey, err = compileLogKey(o.namespace, o.trust.Log); err != nil {
			return nil, err
		}
		if c.witnesses, err = compileWitnesses(o.namespace, o.trust); err != nil {
			return nil, err
		}
	}
	if c.policy, err = compilePolicy(o.namespace, o.trust); err != nil {
		return nil, err
	}
	c.baseStr = strings.TrimRight(redact.Parsed(u), "/")

	var hc http.Client
	if o.httpClient != nil {
		hc = *o.httpClient
	} else {
		hc.Transport = sharedTransport()
	}
	hc.Timeout = o.timeout
	if o.trace != nil {
		next := hc.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		hc.Transport = &tracingTransport{next: next, trace: o.trace}
	}
	userCheck := hc.CheckRedirect
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if !sameOrigin(req.URL, c.base) {
			req.Header.Del("Authorization")
			req.Header.Del("X-Registry-Token")
			req.Header.Del("Proxy-Authorization")
			for k := range c.opts.headers {
				req.Header.Del(k)
			}
		}
		if userCheck != nil {
			return userCheck(req, via)
		}
		return nil
	}
	c.hc = &hc
	return c, nil
}

func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("invalid registry URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("registry URL %q must be an absolute http:// or https:// URL", redact.Parsed(u))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("registry URL %q must not have a query or fragment", redact.Parsed(u))
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// NewTransport returns a new transport configured as the one clients use
// by default: the proxy from HTTP_PROXY, HTTPS_PROXY and NO_PROXY as they
// are now, HTTP/2 when a server offers it over TLS, HTTP/2 over plain TCP
// (h2c) for the GET and HEAD requests to an http:// server reached without
// a proxy once it said it speaks it ([wire.HeaderH2C]; jig-server does),
// and enough idle connections per host that a scaffold's concurrent
// HTTP/1.1 requests reuse their connections instead of opening new ones.
// Use it with [WithHTTPClient] to change one setting (such as
// TLSClientConfig) and keep the others; a [http.Transport.Clone] of it
// speaks only HTTP/1.1 to http:// servers.
func NewTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = proxyFromEnvironment()
	tr.ForceAttemptHTTP2 = true
	tr.MaxIdleConnsPerHost = maxIdleConnsPerHost
	tr.RegisterProtocol("http", newH2CSwitch(tr))
	return tr
}

// maxIdleConnsPerHost covers the concurrent requests of one scaffold
// (net/http keeps 2 by default, so a burst of requests opens new
// connections and closes them again).
const maxIdleConnsPerHost = 32

// transports are the default transports of clients built without
// [WithHTTPClient], by proxy configuration: clients of every namespace
// (and every Sources) in a process share one connection pool per server.
var (
	transportsMu sync.Mutex
	transports   = map[httpproxy.Config]*http.Transport{}
)

func sharedTransport() *http.Transport {
	cfg := *httpproxy.FromEnvironment()
	transportsMu.Lock()
	defer transportsMu.Unlock()
	if tr := transports[cfg]; tr != nil {
		return tr
	}
	if len(transports) >= 8 {
		// The environment keeps changing (tests): do not hoard pools.
		for k, tr := range transports {
			tr.CloseIdleConnections()
			delete(transports, k)
		}
	}
	tr := NewTransport()
	f := cfg.ProxyFunc()
	tr.Proxy = func(r *http.Request) (*url.URL, error) { return f(r.URL) }
	transports[cfg] = tr
	return tr
}

// proxyFromEnvironment reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY (and their
// lowercase forms) when the client is built, unlike http.ProxyFromEnvironment
// which caches them for the life of the process.
func proxyFromEnvironment() func(*http.Request) (*url.URL, error) {
	f := httpproxy.FromEnvironment().ProxyFunc()
	return func(r *http.Request) (*url.URL, error) { return f(r.URL) }
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		effectivePort(a) == effectivePort(b)
}

func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// BaseURL returns the server URL the client was built with, without user
// info or a trailing slash.
func (c *Client) BaseURL() string { return c.baseStr }

// Namespace returns the namespace given with [WithNamespace], or "".
func (c *Client) Namespace() string { return c.opts.namespace }

// request describes one call. Only GET and HEAD are retried.
type request struct {
	method     string
	path       string // escaped, starting with "/"
	registry   string // what the request concerns, for errors
	maxBytes   int64
	header     http.Header
	body       []byte
	noRetry5xx bool
	okStatuses []int // extra statuses whose body is returned without error
	// cacheable is set for content the cache keeps: sending the request
	// is a cache miss (see [WithTrace]).
	cacheable bool
	// timeout, when longer than the client's, replaces it for this request
	// (uploads).
	timeout time.Duration
}

type response struct {
	status int
	header http.Header
	body   []byte
	url    string
}

func (c *Client) url(path string) string {
	return strings.TrimRight(c.base.String(), "/") + path
}

// do sends r with retries and returns the response of a 2xx (or one of
// r.okStatuses). Other statuses become a [*StatusError] (or
// [*RateLimitError]); transport failures a [*NetworkError].
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	if r.method == "" {
		r.method = http.MethodGet
	}
	if r.maxBytes == 0 {
		r.maxBytes = c.opts.maxJSONBytes
	}
	if r.registry == "" {
		r.registry = c.opts.namespace
	}
	full := c.url(r.path)
	shown := c.baseStr + r.path
	if c.opts.mode == Offline {
		return nil, fmt.Errorf("%w: %s %s was not requested", ErrOffline, r.method, shown)
	}
	if !c.opts.deadline.IsZero() {
		parent := ctx
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, c.opts.deadline)
		defer cancel()
		resp, err := c.doAttempts(ctx, r, full, shown)
		if err != nil && parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: %s %s did not finish in time", ErrDeadline, r.method, shown)
		}
		return resp, err
	}
	return c.doAttempts(ctx, r, full, shown)
}

// doAttempts is [Client.do]'s retry loop.
func (c *Client) doAttempts(ctx context.Context, r request, full, shown string) (*response, error) {
	idempotent := r.method == http.MethodGet || r.method == http.MethodHead
	attempts := 1
	if idempotent {
		attempts += c.opts.retryMax
	}
	var lastErr error
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 {
			delay := c.backoff(attempt)
			var rl *RateLimitError
			if errors.As(lastErr, &rl) && rl.RetryAfter > 0 {
				delay = rl.RetryAfter
			}
			if c.opts.retryNotify != nil {
				c.opts.retryNotify(attempt, delay, lastErr)
			}
			if err := wait.Sleep(ctx, delay); err != nil {
				return nil, err
			}
		}
		resp, err, retry := c.once(ctx, r, full, shown)
		if err == nil {
			return resp, nil
		}
		lastErr = err
		if !retry || ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, lastErr
}

// once sends one attempt; retry reports whether a later attempt may help.
func (c *Client) once(ctx context.Context, r request, full, shown string) (_ *response, _ error, retry bool) {
	if r.cacheable {
		ctx = c.withCacheMiss(ctx)
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, full, body)
	if err != nil {
		return nil, fmt.Errorf("building the request for %s: %w", shown, err), false
	}
	for k, v := range c.opts.headers {
		req.Header.Set(k, v)
	}
	if c.opts.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.token)
	}
	if c.opts.tokenSource != nil {
		tok, err := c.opts.tokenSource(ctx)
		if err != nil {
			return nil, err, false
		}
		if strings.ContainsAny(tok, "\r\n") {
			return nil, errors.New("the token source gave a token with line breaks"), false
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if c.opts.userAgent != "" {
		req.Header.Set("User-Agent", c.opts.userAgent)
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	hc := c.hc
	if r.timeout > 0 && hc.Timeout > 0 && r.timeout > hc.Timeout {
		cp := *hc
		cp.Timeout = r.timeout
		hc = &cp
	}
	cancelIdle := func(error) {}
	if c.opts.idleTimeout > 0 {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		cancelIdle = cancel
		req = req.WithContext(ctx)
	}
	res, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err(), false
		}
		return nil, &NetworkError{Method: r.method, URL: shown, Err: unwrapURLError(err)}, retryable(err)
	}
	defer res.Body.Close()
	if c.opts.idleTimeout > 0 {
		// From the headers on, every read must make progress in time.
		idle := newIdleReader(res.Body, c.opts.idleTimeout, cancelIdle)
		defer idle.stop()
		res.Body = struct {
			io.Reader
			io.Closer
		}{idle, res.Body}
	}
	ok := res.StatusCode >= 200 && res.StatusCode < 300
	for _, s := range r.okStatuses {
		ok = ok || res.StatusCode == s
	}
	limit := r.maxBytes
	if !ok && limit > 64<<10 {
		limit = 64 << 10 // error bodies are small; never read a huge one
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		if errors.Is(context.Cause(ctx), errIdle) {
			err = errIdle
		} else if ctx.Err() != nil {
			return nil, ctx.Err(), false
		}
		return nil, &NetworkError{Method: r.method, URL: shown, Err: fmt.Errorf("reading response: %w", unwrapURLError(err))}, retryable(err)
	}
	if int64(len(data)) > limit {
		if ok {
			return nil, fmt.Errorf("%w: %s sent more than %s; the limit protects against runaway responses", ErrTooLarge, shown, humanBytes(r.maxBytes)), false
		}
		data = data[:limit]
	}
	if ok {
		return &response{status: res.StatusCode, header: res.Header, body: data, url: shown}, nil, false
	}
	se := &StatusError{StatusCode: res.StatusCode, Registry: r.registry, URL: shown}
	var eb wire.Error
	if decodeJSON(shown, data, &eb) == nil {
		se.Code, se.Message = eb.Code, eb.Message
	}
	switch {
	case se.Code == wire.CodeCensusQuota || se.Code == wire.CodeCensusFull:
		// A limit, not a load: asking again changes nothing.
		return nil, se, false
	case res.StatusCode == http.StatusTooManyRequests:
		ra := parseRetryAfter(res.Header.Get("Retry-After"), time.Now())
		rle := &RateLimitError{RetryAfter: ra, Err: se}
		return nil, rle, ra <= c.opts.retryMaxWait
	case res.StatusCode >= 500:
		return &response{status: res.StatusCode, header: res.Header, body: data, url: shown}, se, !r.noRetry5xx
	}
	return nil, se, false
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (c *Client) backoff(attempt int) time.Duration {
	d := c.opts.retryBaseWait << (attempt - 1)
	if d > c.opts.retryMaxWait || d <= 0 {
		d = c.opts.retryMaxWait
	}
	if d > 1 {
		d = d/2 + rand.N(d/2+1) // jitter in [d/2, d]
	}
	return d
}

// parseRetryAfter reads delay-seconds or an HTTP date; 0 when absent or bad.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now).Round(time.Second)
	}
	return 0
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func (c *Client) getJSON(ctx context.Context, r request, v any) error {
	resp, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	return decodeJSON(resp.url, resp.body, v)
}

// decodeJSON unmarshals a response body into v after checking its nesting
// depth ([registry.CheckJSONDepth]); from names the URL in errors.
func decodeJSON(from string, data []byte, v any) error {
	if err := registry.CheckJSONDepth(from, data); err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("invalid JSON from %s: %w", from, err)
	}
	return nil
}

// Namespaces lists the namespaces the caller may read, sorted.
//
// API: GET /namespaces
func (c *Client) Namespaces(ctx context.Context) ([]string, error) {
	var body wire.Namespaces
	if err := c.getJSON(ctx, request{path: "/namespaces"}, &body); err != nil {
		return nil, err
	}
	if body.Namespaces == nil {
		body.Namespaces = []string{}
	}
	return body.Namespaces, nil
}

// DefaultNamespace returns the namespace the server says shorthand
// identifiers ("runtimes/node") in its presets and manifests mean, such as
// "@rack" for a storage written for the reference, or "" when it says
// nothing (then [registry.DefaultNamespace] applies; the reference's
// server never says). An advertised value that [registry.ValidDefaultNamespace]
// refuses is an error wrapping [ErrInvalidAdvertisement], never used.
//
// API: GET /namespaces (its "defaultNamespace" field)
func (c *Client) DefaultNamespace(ctx context.Context) (string, error) {
	var body wire.Namespaces
	if err := c.getJSON(ctx, request{path: "/namespaces"}, &body); err != nil {
		return "", err
	}
	if body.DefaultNamespace == "" {
		return "", nil
	}
	if !registry.ValidDefaultNamespace(body.DefaultNamespace) {
		return "", fmt.Errorf("%w: %s/namespaces names %q as its default namespace; want a namespace such as @rack other than %s",
			ErrInvalidAdvertisement, c.baseStr, shorten(body.DefaultNamespace), registry.PresetNamespace)
	}
	return body.DefaultNamespace, nil
}

// Registries lists the registry paths in namespace ns ("build/rollup"),
// sorted.
//
// API: GET /namespaces/:ns/registries
func (c *Client) Registries(ctx context.Context, ns string) ([]string, error) {
	if !registry.ValidNamespace(ns) {
		return nil, fmt.Errorf("invalid namespace %q: it must start with @ and use lowercase letters, digits, - or _ (e.g. @main)", ns)
	}
	var body wire.Registries
	if err := c.getJSON(ctx, request{path: "/namespaces/" + url.PathEscape(ns) + "/registries", registry: ns}, &body); err != nil {
		return nil, err
	}
	if body.Registries == nil {
		body.Registries = []string{}
	}
	return body.Registries, nil
}

func registryPath(id registry.ID) (string, error) {
	if !registry.ValidNamespace(id.Namespace) || !registry.ValidPath(id.Path) {
		return "", fmt.Errorf("invalid registry identifier %q: %w", id.String(), registry.ErrInvalidID)
	}
	if id.IsPreset() {
		return "", fmt.Errorf("%s names a preset; fetch it with Preset", id.Key())
	}
	var b strings.Builder
	b.WriteString("/registries/")
	b.WriteString(url.PathEscape(id.Namespace))
	for _, s := range id.Segments() {
		b.WriteString("/")
		b.WriteString(url.PathEscape(s))
	}
	if id.Version != "" {
		if !registry.ValidVersion(id.Version) {
			return "", fmt.Errorf("invalid version %q in %s: %w", id.Version, id.Key(), registry.ErrInvalidID)
		}
		b.WriteString("/")
		b.WriteString(url.PathEscape(id.Version))
	}
	return b.String(), nil
}

func idLabel(id registry.ID) string {
	s := id.Key()
	if id.Version != "" {
		s += "@" + id.Version
	}
	return s
}

// Manifest fetches a registry's manifest: the latest version's when
// id.Version is "", else that version's. The language suffix is ignored.
// The bytes are verified against the version's digest index when the
// server publishes one (a mismatch is a [*registry.DigestError]); with
// [WithCache] and [WithMode] they may come from the cache.
//
// API: GET /registries/@ns/<path> or GET /registries/@ns/<path>/<version>
func (c *Client) Manifest(ctx context.Context, id registry.ID) (*registry.Manifest, error) {
	r, err := c.ManifestWithDigest(ctx, id)
	if err != nil {
		return nil, err
	}
	return r.Manifest, nil
}

// Versions lists a registry's published versions, newest first.
//
// API: GET /registries/@ns/<path>/versions
func (c *Client) Versions(ctx context.Context, id registry.ID) ([]string, error) {
	id.Version = ""
	p, err := registryPath(id)
	if err != nil {
		return nil, err
	}
	var body wire.VersionList
	if err := c.getJSON(ctx, request{path: p + "/versions", registry: id.Key()}, &body); err != nil {
		return nil, err
	}
	if body.Versions == nil {
		body.Versions = []string{}
	}
	newest := ""
	for _, v := range body.Versions {
		if registry.ValidVersion(v) && (newest == "" || registry.CompareVersions(v, newest) > 0) {
			newest = v
		}
	}
	if err := c.checkLatest(id, newest); err != nil {
		return nil, err
	}
	return body.Versions, nil
}

// File downloads one file of a registry version. id.Version is required;
// path is a package file path (files[].path) and must pass
// [registry.ValidFilePath]. The body is capped (see [WithMaxBodySize]). It
// is verified against the version's digest index when the server
// publishes one (a mismatch is a [*registry.DigestError]) and comes from
// the cache when [WithCache] holds it.
//
// API: GET /registries/@ns/<path>/<version>/files/<file path>
func (c *Client) File(ctx context.Context, id registry.ID, path string) ([]byte, error) {
	if id.Version == "" {
		return nil, fmt.Errorf("downloading %s from %s: a version is required", path, id.Key())
	}
	if !registry.ValidFilePath(path) {
		return nil, fmt.Errorf("invalid file path %q in %s: %w", path, idLabel(id), registry.ErrUnsafePath)
	}
	if _, err := registryPath(id); err != nil {
		return nil, err
	}
	return c.verifiedFile(ctx, id, path, func() ([]byte, error) {
		norm := registry.NormalizeFilePath(path)
		if body, ok := c.takeAhead(ctx, id, norm); ok {
			return body, nil
		}
		return c.fetchFile(ctx, id, norm)
	})
}

// fetchFile downloads path of id (pinned, path valid and normalized)
// without verifying it.
func (c *Client) fetchFile(ctx context.Context, id registry.ID, path string) ([]byte, error) {
	p, err := registryPath(id)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(p)
	b.WriteString("/files")
	for _, s := range strings.Split(path, "/") {
		b.WriteString("/")
		b.WriteString(url.PathEscape(s))
	}
	resp, err := c.do(ctx, request{path: b.String(), registry: idLabel(id), maxBytes: c.opts.maxFileBytes, cacheable: true})
	if err != nil {
		return nil, err
	}
	return resp.body, nil
}

// Preset fetches a preset by name ("node", or "@presets/node").
//
// API: GET /presets/:name
func (c *Client) Preset(ctx context.Context, name string) (*registry.Preset, error) {
	name = strings.TrimPrefix(name, registry.PresetNamespace+"/")
	if !registry.ValidSegment(name) {
		return nil, fmt.Errorf("invalid preset name %q: it must be lowercase kebab case, e.g. node-library", name)
	}
	if c.opts.mode == PreferOffline || c.opts.mode == Offline {
		if p, v := c.cachedPreset(name); p != nil {
			c.notice("%s/%s resolved to %s, the newest version in the cache (%s)", registry.PresetNamespace, name, v, modeName(c.opts.mode))
			return p, nil
		}
		if c.opts.mode == Offline {
			return nil, notCached("preset %s/%s from %s", registry.PresetNamespace, name, c.baseStr)
		}
	}
	p, body, err := c.fetchPreset(ctx, name)
	if err != nil {
		return nil, err
	}
	c.rememberPreset(name, p, body)
	return p, nil
}

// PresetJSON fetches a preset by name ("node", or "@presets/node") from
// the server and returns its document exactly as served, after checking
// that it parses as a preset; a mirror stores these bytes as they are. It
// never reads the cache.
//
// API: GET /presets/:name
func (c *Client) PresetJSON(ctx context.Context, name string) ([]byte, error) {
	name = strings.TrimPrefix(name, registry.PresetNamespace+"/")
	if !registry.ValidSegment(name) {
		return nil, fmt.Errorf("invalid preset name %q: it must be lowercase kebab case, e.g. node-library", name)
	}
	if c.opts.mode == Offline {
		return nil, notCached("preset %s/%s from %s", registry.PresetNamespace, name, c.baseStr)
	}
	_, body, err := c.fetchPreset(ctx, name)
	return body, err
}

// fetchPreset downloads and parses preset name (valid).
func (c *Client) fetchPreset(ctx context.Context, name string) (*registry.Preset, []byte, error) {
	resp, err := c.do(ctx, request{path: "/presets/" + name, registry: registry.PresetNamespace + "/" + name})
	if err != nil {
		return nil, nil, err
	}
	p, err := registry.ParsePreset(resp.body)
	if err != nil {
		return nil, nil, fmt.Errorf("invalid preset from %s: %w", resp.url, err)
	}
	return p, resp.body, nil
}

// Schema fetches one of the server's JSON Schemas by file name, one of
// [registry.SchemaNames] (e.g. "registry-item.json").
//
// API: GET /schemas/:file
func (c *Client) Schema(ctx context.Context, name string) ([]byte, error) {
	if name == "" || strings.ContainsAny(name, "/\\?#%") || name == "." || name == ".." {
		return nil, fmt.Errorf("invalid schema name %q; expected a file name such as registry-item.json", name)
	}
	resp, err := c.do(ctx, request{path: "/schemas/" + url.PathEscape(name), registry: "schema " + name})
	if err != nil {
		return nil, err
	}
	return resp.body, nil
}

// Health is the server's health report: [wire.StatusOK] or
// [wire.StatusError], with checks keyed by name ("storage").
type Health = wire.Health

// HealthCheck is one check of a [Health] report.
type HealthCheck = wire.HealthCheck

// Health fetches the server's health report. When the server answers 503
// with a report, both the report and a [*StatusError] are returned. A 503 is
// not retried.
//
// API: GET /health
func (c *Client) Health(ctx context.Context) (*Health, error) {
	resp, err := c.do(ctx, request{path: "/health", noRetry5xx: true, okStatuses: []int{http.StatusServiceUnavailable}})
	if err != nil {
		return nil, err
	}
	var h Health
	if err := decodeJSON(resp.url, resp.body, &h); err != nil {
		if resp.status != http.StatusOK {
			return nil, &StatusError{StatusCode: resp.status, Registry: c.opts.namespace, URL: resp.url}
		}
		return nil, fmt.Errorf("invalid health report from %s: %w", resp.url, err)
	}
	if resp.status != http.StatusOK {
		se := &StatusError{StatusCode: resp.status, Registry: c.opts.namespace, URL: resp.url, Message: "health status " + h.Status}
		for name, chk := range h.Checks {
			if chk.Error != "" {
				se.Message += "; " + name + ": " + chk.Error
			}
		}
		return &h, se
	}
	return &h, nil
}

// shorten cuts s to at most 64 bytes for a message, so a hostile server
// cannot fill the terminal.
func shorten(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
