package registryserver

import (
	"github.com/jigkit/jig/registry/translog"
	"github.com/jigkit/jig/registryserver/internal/ssotoken"
	"github.com/jigkit/jig/registryserver/state"

	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jigkit/jig/registryserver/internal/ops"

	"go.uber.org/zap"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/cache"
)

// Option configures a [Handler]; pass options to [New].
type Option func(*options) error

type options struct {
	// clockSet is true when [WithClock] replaced [time.Now].
	clockSet bool
	storage  storage.Storage
	auth     *AuthConfig
	authSet  bool
	authFile string
	// signersDir is the signers folder, "" for none (signers.go).
	signersDir string
	schemaDir  string
	adminToken string
	// ssoKey signs the session tokens of jig login --sso (sso_routes.go);
	// nil: a random key of this handler.
	ssoKey     []byte
	tiers      CacheTiers
	logger     *zap.Logger
	now        func() time.Time
	cacheBytes int64
	mutableTTL time.Duration
	// ops are the rate limit, trust proxy, metrics and health options
	// (options_ops.go).
	ops ops.Options
	// publish are the upload limits and webhooks (publish.go).
	publish publishOptions
	// notifier carries catalog changes between replicas (search_options.go).
	notifier ChangeNotifier
	// searchRefresh is how often the catalog index reads the change log
	// (search_options.go); 0 for the default.
	searchRefresh time.Duration
	// webBase is the web catalog's base path, "" for none (webcatalog.go).
	webBase string
	// defaultNamespace is advertised in GET /namespaces, "" for none.
	defaultNamespace string
	// census and censusMaxAge are the census options (census.go).
	census       CensusMode
	censusMaxAge time.Duration
	// state, censusLimits and auditMaxAge are the state database's
	// options (state_options.go); state nil for the default.
	state        state.Store
	censusLimits state.Limits
	auditMaxAge  time.Duration
	// upstreams and upstreamMode are the mirror's options (mirror.go).
	upstreams    *UpstreamConfig
	upstreamMode UpstreamMode
	// logKey is the transparency log's signer key, "" for no log
	// (tlog_options.go).
	logKey string
	// witnesses are the witnesses whose cosignatures the logs accept
	// (tlog_options.go).
	witnesses []*translog.CosignatureVerifier
}

// CacheTiers are the max-age values of the Cache-Control header per kind of
// content. A response whose content needed a token says "private" instead
// of "public" and adds "Vary: Authorization, X-Registry-Token"; errors are
// always "no-store". A zero duration sends "no-cache" (store, but
// revalidate with the ETag every time).
type CacheTiers struct {
	// Mutable covers the latest manifest and the versions list
	// (public, max-age=60 by default).
	Mutable time.Duration
	// Immutable covers a versioned manifest and its files
	// (public, max-age=31536000, immutable by default).
	Immutable time.Duration
	// Discovery covers /namespaces and /namespaces/:ns/registries
	// (public, max-age=60 by default).
	Discovery time.Duration
	// Static covers presets and schemas (public, max-age=86400 by default).
	Static time.Duration
}

// DefaultCacheTiers returns the tiers of the jig-server binary (DESIGN.md
// section 3): 60 s for latest, versions and discovery, one year and
// "immutable" for versioned content, one day for presets and schemas.
func DefaultCacheTiers() CacheTiers {
	return CacheTiers{
		Mutable:   60 * time.Second,
		Immutable: 365 * 24 * time.Hour,
		Discovery: 60 * time.Second,
		Static:    24 * time.Hour,
	}
}

func (t CacheTiers) validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"Mutable", t.Mutable}, {"Immutable", t.Immutable}, {"Discovery", t.Discovery}, {"Static", t.Static}} {
		if d.v < 0 {
			return fmt.Errorf("cache tier %s is negative (%s); use 0 for no-cache", d.name, d.v)
		}
		if d.v%time.Second != 0 {
			return fmt.Errorf("cache tier %s (%s) must be a whole number of seconds", d.name, d.v)
		}
	}
	return nil
}

// WithStorage sets where registries, presets and versions lists are read
// from (and published to). The default is an empty in-memory store
// (registryserver/storage/memory), which is useful only in tests.
func WithStorage(s storage.Storage) Option {
	return func(o *options) error {
		if s == nil {
			return errors.New("WithStorage: storage is nil")
		}
		o.storage = s
		return nil
	}
}

// WithAuth sets the parsed auth.json that decides who reads and publishes
// which namespace; see [AuthConfig]. A nil config means "no auth file":
// every stored namespace is public and only the admin token publishes. It
// cannot be combined with [WithAuthFile]. The default is no auth file.
func WithAuth(a *AuthConfig) Option {
	return func(o *options) error {
		o.auth, o.authSet = a, true
		return nil
	}
}

// WithAuthFile reads the auth.json at path once, when [New] runs; to take
// a changed file without a new Handler, load it with [LoadAuthConfig] and
// pass it to [Handler.SetAuth] (jig-server does so on SIGHUP). A missing or
// unparsable file (a key twice included) makes [New] fail; malformed
// namespaces are rejected one by one and logged as warnings. It cannot be combined with [WithAuth]. The default is no
// auth file: every stored namespace is public and only the admin token
// publishes.
func WithAuthFile(path string) Option {
	return func(o *options) error {
		if strings.TrimSpace(path) == "" {
			return errors.New("WithAuthFile: path is empty")
		}
		o.authFile = path
		return nil
	}
}

// WithSignersDir makes the namespaces named by the signer files of dir
// require signed versions; see [Signers] and [LoadSigners], which reads
// the folder once, when [New] runs (a missing or unreadable folder, or a
// bad file, makes New fail). To take changed files without a new Handler,
// load them with [LoadSigners] and pass them to [Handler.SetSigners]
// (jig-server does so on SIGHUP). Without it, no namespace requires
// signatures, but a signature an upload carries must still verify. The
// default is no signers folder.
func WithSignersDir(dir string) Option {
	return func(o *options) error {
		if strings.TrimSpace(dir) == "" {
			return errors.New("WithSignersDir: dir is empty")
		}
		o.signersDir = dir
		return nil
	}
}

// WithAdminToken sets the admin token (surrounding spaces are trimmed). A
// request carrying it passes every namespace check, sees every namespace
// and may publish anywhere. "" disables it. The default is no admin token.
func WithAdminToken(token string) Option {
	return func(o *options) error {
		o.adminToken = strings.TrimSpace(token)
		return nil
	}
}

// WithSSOKey sets the key (at least 32 bytes) that signs and checks the
// session tokens the server issues to people who log in with the
// organisation's issuer (auth.json's "sso" section, jig login --sso).
// Replicas that share it accept each other's tokens, and tokens survive a
// restart; changing it ends every session at once (clients log in again
// through their refresh token). The default is a random key of this
// handler: tokens work on this process only, until it stops.
func WithSSOKey(key []byte) Option {
	return func(o *options) error {
		if len(key) < ssotoken.MinKeyBytes {
			return fmt.Errorf("WithSSOKey: the key has %d bytes; give at least %d random bytes", len(key), ssotoken.MinKeyBytes)
		}
		o.ssoKey = append([]byte(nil), key...)
		return nil
	}
}

// WithCacheTiers sets the Cache-Control max-age of each kind of content;
// see [CacheTiers]. The default is [DefaultCacheTiers].
func WithCacheTiers(t CacheTiers) Option {
	return func(o *options) error {
		if err := t.validate(); err != nil {
			return fmt.Errorf("WithCacheTiers: %w", err)
		}
		o.tiers = t
		return nil
	}
}

// WithLogger sets the logger for startup warnings and server errors.
// Tokens are never logged, and neither are namespaces a caller may not
// read at info level or below. The default is zap.NewNop().
func WithLogger(l *zap.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return errors.New("WithLogger: logger is nil")
		}
		o.logger = l
		return nil
	}
}

// WithCompressionCache sets how many bytes of compressed responses the
// handler keeps in memory, least recently used first out, so immutable
// content is compressed once rather than per request. 0 disables the cache
// (every compressible response is compressed when sent). The default is
// 32 MiB.
func WithCompressionCache(bytes int64) Option {
	return func(o *options) error {
		if bytes < 0 {
			return fmt.Errorf("WithCompressionCache: size %d is negative", bytes)
		}
		o.cacheBytes = bytes
		return nil
	}
}

// WithMutableTTL sets how long another replica's publish or rollback on
// the same storage may take to show: the handler trusts what it read from
// the storage about a registry's versions list, a version's registry.json
// (the commit point of a publish) and a file's metadata for d before
// reading them again. Within it, latest and versioned manifests, versions
// lists and files (up to an eighth of the compression cache each) are
// answered from memory without a storage call. This handler's own
// publishes show at once.
//
// When the storage is a read cache ([cache.New]), the cache's own mutable
// TTL counts against d: the handler keeps what it read for d less the
// cache's TTL (the defaults of both give 0: the handler asks the cache
// every time), and [New] fails when the cache's TTL is longer than d.
//
// d must be between 0 (ask the storage on every request; bodies are still
// kept in memory while their ETag is unchanged) and
// [cache.MaxMutableTTL]. The default is [cache.DefaultMutableTTL].
func WithMutableTTL(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 || d > cache.MaxMutableTTL {
			return fmt.Errorf("WithMutableTTL(%v): want 0 to %v, the cache tier of versions lists", d, cache.MaxMutableTTL)
		}
		o.mutableTTL = d
		return nil
	}
}

// WithDefaultNamespace sets the namespace ("@rack") that shorthand
// identifiers ("runtimes/node") in the stored presets and manifests mean,
// for a storage written for a client whose default namespace is not jig's
// "@main" (the reference's is "@rack"). It is advertised as
// "defaultNamespace" in GET /namespaces to callers who may read that
// namespace (a gated one stays hidden from the others), and jig clients
// resolve shorthand with it; the reference's clients ignore the field. ns
// must be a valid namespace other than "@presets"; "" means none. The
// default is none: /namespaces is sent exactly as before.
func WithDefaultNamespace(ns string) Option {
	return func(o *options) error {
		if ns != "" && !registry.ValidDefaultNamespace(ns) {
			return fmt.Errorf("WithDefaultNamespace(%q): want a namespace such as @rack (@ followed by lowercase letters, digits, - or _), other than %s", ns, registry.PresetNamespace)
		}
		o.defaultNamespace = ns
		return nil
	}
}

func defaultOptions() options {
	return options{
		tiers:      DefaultCacheTiers(),
		logger:     zap.NewNop(),
		now:        time.Now,
		cacheBytes: 32 << 20,
		mutableTTL: cache.DefaultMutableTTL,
		ops:        defaultOpsOptions(),

		census:       CensusOn,
		censusMaxAge: DefaultCensusMaxAge,
		censusLimits: state.Limits{Namespace: DefaultCensusMaxProjects, Reporter: DefaultCensusReporterProjects},
		auditMaxAge:  DefaultAuditMaxAge,
	}
}

func (o *options) validate() error {
	if o.authSet && o.authFile != "" {
		return errors.New("use either WithAuth or WithAuthFile, not both")
	}
	if len(o.witnesses) > 0 && o.logKey == "" {
		return errors.New("witnesses (WithWitnesses, LOG_WITNESSES) cosign a transparency log: set the log key too (WithLogKey, LOG_KEY)")
	}
	return validateOps(&o.ops)
}
