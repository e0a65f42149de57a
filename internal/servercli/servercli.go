package servercli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"github.com/joho/godotenv"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/jigkit/jig/internal/buildinfo"
	"github.com/jigkit/jig/internal/kongexit"
	"github.com/jigkit/jig/internal/shutdown"
	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/catalog"
	"github.com/jigkit/jig/registryserver/storage/cache"
	"github.com/jigkit/jig/registryserver/webhook"
)

// Exit codes of [Main].
const (
	ExitOK    = 0
	ExitError = 1
)

// CLI holds every setting of jig-server. Each one is a flag and an
// environment variable (DESIGN.md section 3.4); the reference's R2_* names
// are accepted for the S3 settings.
type CLI struct {
	Version kong.VersionFlag `name:"version" help:"Print the version and exit."`

	Port int    `env:"PORT" default:"8080" help:"TCP port to listen on (0 picks a free port)."`
	Host string `env:"HOST" default:"0.0.0.0" help:"Address to bind."`

	StorageSettings `embed:""`
	StateSettings   `embed:""`

	StorageCacheMB  int           `name:"storage-cache-mb" env:"STORAGE_CACHE_MB" default:"64" help:"Memory (MiB) for the in-process read cache in front of S3: published versions are kept until evicted, versions lists, latest presets and listings at most --storage-cache-ttl. 0 disables it. Not used for disk storage."`
	StorageCacheTTL time.Duration `name:"storage-cache-ttl" env:"STORAGE_CACHE_TTL" default:"10s" help:"How long versions lists, latest presets and listings are served from memory (the S3 read cache, or the server's own memory for disk storage) before the storage is asked again (0 to 60s): another replica's publish or rollback shows up here within this time. This replica sees its own publishes at once."`

	AuthConfigPath      string `env:"AUTH_CONFIG_PATH" help:"auth.json declaring public and token-gated namespaces; reloaded on SIGHUP and when it changes (see --config-reload-interval). Without it every stored namespace is public and only ADMIN_TOKEN publishes."`
	AdminToken          string `env:"ADMIN_TOKEN" help:"Admin token: reads every namespace and publishes anywhere. Prefer the environment variable to the flag."`
	SSOTokenKey         string `name:"sso-token-key" env:"SSO_TOKEN_KEY" help:"Secret (at least 32 characters, e.g. from 'openssl rand -base64 48') that signs the session tokens of jig login --sso (auth.json's \"sso\" section). Give every replica the same one; without it sessions work on one process only, until it stops. Prefer the environment variable to the flag."`
	LogKey              string `name:"log-key" env:"LOG_KEY" placeholder:"FILE" help:"File holding the transparency log's signer key (make one with 'jig-server log keygen <name> -o FILE'): every version stored is then logged, and GET /log/… serves the logs. Every replica uses the same key. See docs/server.md."`
	LogWitnesses        string `name:"log-witnesses" env:"LOG_WITNESSES" placeholder:"FILE" help:"File of the witnesses whose cosignatures the transparency logs accept, one verifier key a line as 'jig log witness keygen' prints it (# comments): they POST /log/@ns/cosignature, and the checkpoints then carry their cosignatures. Needs --log-key. See docs/transparency-log.md."`
	SignersDir          string `name:"signers-dir" env:"SIGNERS_DIR" placeholder:"DIR" help:"Folder of OpenSSH allowed_signers files, one per namespace that requires signed versions: <namespace without @>.allowed_signers (main.allowed_signers for @main). Uploads there need a signature by a listed key (400 SIGNATURE_REQUIRED, 403 SIGNATURE_INVALID). Reloaded with auth.json."`
	SchemaDir           string `name:"schema-dir" env:"SCHEMA_DIR" placeholder:"DIR" help:"Folder of the JSON Schemas served at /schemas/<file> (registry-item.json, preset.json, jig.json, rack.json), as the reference's SCHEMA_DIR: uploads must also match its registry-item.json (400 SCHEMA_VALIDATION_FAILED). Default: the storage's schema/ folder; a file neither has is served from the built-in schemas. A folder that does not exist is logged as a warning at start."`
	UpstreamsConfigPath string `name:"upstreams-config-path" env:"UPSTREAMS_CONFIG_PATH" placeholder:"FILE" help:"upstreams.json: the namespaces this server mirrors from other registry servers (pull-through); reloaded with auth.json. A namespace that holds registries published here is never served from upstream. See docs/mirrors.md."`
	UpstreamMode        string `name:"upstream-mode" env:"UPSTREAM_MODE" enum:"pull-through,offline" default:"pull-through" help:"pull-through fetches what is missing from the upstreams; offline serves only what the storage holds and never contacts them."`
	WebhookConfigPath   string `env:"WEBHOOK_CONFIG_PATH" help:"webhooks.json listing the URLs notified when a version is published; reloaded with auth.json."`
	DefaultNamespace    string `name:"default-namespace" env:"DEFAULT_NAMESPACE" placeholder:"NS" help:"Namespace that shorthand identifiers (runtimes/node) in the stored presets and manifests mean, advertised to jig clients in GET /namespaces; e.g. --default-namespace rack to serve a storage written for the reference, whose default namespace is @rack. The @ is optional. Default: none (clients use @main)."`

	Census              string        `name:"census" env:"CENSUS" enum:"on,open,off" default:"on" help:"Who may send census reports (jig check --report) to POST /census/@ns: on takes them from a token that may read the namespace or the admin token, open also anonymously for namespaces anonymous callers may read, off turns the census routes off."`
	CensusMaxAge        time.Duration `name:"census-max-age" env:"CENSUS_MAX_AGE" default:"720h" help:"How old a census report may be and still count in the census views (default 720h, 30 days); older ones are removed within a minute."`
	CensusMaxProjects   int           `name:"census-max-projects" env:"CENSUS_MAX_PROJECTS" default:"100000" help:"The most projects one namespace's census keeps (0: no limit); a new project's report beyond it gets 507 CENSUS_FULL and evicts nobody."`
	CensusReporterLimit int           `name:"census-reporter-limit" env:"CENSUS_REPORTER_LIMIT" default:"10000" help:"The most projects of one namespace one reporter (a token; anonymous reports count as one) may have reported (0: no limit): one CI token cannot fill a namespace. Beyond it: 429 CENSUS_QUOTA."`

	AuditSettings `embed:""`

	TLSCertFile          string        `name:"tls-cert-file" env:"TLS_CERT_FILE" help:"PEM certificate (chain) to serve HTTPS with HTTP/2 directly, without a reverse proxy. Needs --tls-key-file. Reloaded on SIGHUP and when the files change."`
	TLSKeyFile           string        `name:"tls-key-file" env:"TLS_KEY_FILE" help:"PEM private key of --tls-cert-file."`
	TLSReloadInterval    time.Duration `name:"tls-reload-interval" env:"TLS_RELOAD_INTERVAL" default:"10s" help:"How often the certificate and key files are checked for changes (0 disables it; SIGHUP always reloads)."`
	ConfigReloadInterval time.Duration `name:"config-reload-interval" env:"CONFIG_RELOAD_INTERVAL" default:"10s" help:"How often AUTH_CONFIG_PATH, WEBHOOK_CONFIG_PATH, SIGNERS_DIR and UPSTREAMS_CONFIG_PATH are checked for changes and reloaded (0 disables it; SIGHUP always reloads). A file that does not load is logged and the previous one stays in force."`
	WebCatalog           bool          `name:"web-catalog" env:"WEB_CATALOG" default:"true" negatable:"" help:"Serve the web catalog (browse, search, sign in with a token). --no-web-catalog or WEB_CATALOG=false for an API-only server."`
	WebBasePath          string        `name:"web-base-path" env:"WEB_BASE_PATH" default:"/" help:"Where the web catalog lives: / or a path such as /catalog/. Its pages are this path and everything under <path>-/, never an API route."`

	LogLevel             string        `env:"LOG_LEVEL" default:"info" enum:"trace,debug,info,warn,error,fatal" help:"Log level: trace, debug, info, warn, error or fatal."`
	LogFormat            string        `env:"LOG_FORMAT" default:"" enum:",json,pretty" help:"Log format: json or pretty (default: json when NODE_ENV=production, else pretty)."`
	NodeEnv              string        `env:"NODE_ENV" default:"development" help:"production selects JSON logs, as for the reference server."`
	TrustProxy           string        `env:"TRUST_PROXY" default:"false" help:"Client address for rate limits and logs: false (the connection), true (the left-most X-Forwarded-For entry; only behind a proxy that overwrites the header) or a hop count N (the N-th entry from the right)."`
	UploadIdleTimeout    time.Duration `name:"upload-idle-timeout" env:"UPLOAD_IDLE_TIMEOUT" default:"30s" help:"How long an upload may send nothing before it gets 408 and its connection is closed."`
	UploadTimeout        time.Duration `name:"upload-timeout" env:"UPLOAD_TIMEOUT" default:"10m" help:"How long a whole upload may take, however steadily it sends: one still arriving after this gets 408 and its connection is closed (10m is 100 MiB at about 1.5 Mbit/s)."`
	MaxConcurrentUploads int           `name:"max-concurrent-uploads" env:"MAX_CONCURRENT_UPLOADS" default:"16" help:"How many uploads are received at once; one more gets 503 with Retry-After."`
	UploadDir            string        `name:"upload-dir" env:"UPLOAD_DIR" help:"Folder of the uploads being received, owned by jig-server: created with mode 0700, refused if another user owns or may write to it; uploads of jig-server processes that died are removed at start and every --publish-claim-ttl. Default: <STORAGE_ROOT>/.jig/uploads for disk storage, jig-server-uploads-<uid> in the system's temporary folder for S3."`
	PublishClaimTTL      time.Duration `name:"publish-claim-ttl" env:"PUBLISH_CLAIM_TTL" default:"30s" help:"How long the claim of a publish in progress lives without a heartbeat: a publish interrupted on another host can be retried after this long (at once when the server that died ran on this host). Use the same value on every replica; their clocks must agree to well within it."`

	ShutdownTimeout time.Duration `name:"shutdown-timeout" env:"SHUTDOWN_TIMEOUT" default:"25s" help:"On SIGTERM or SIGINT, how long requests in flight may take to finish; then their connections are closed and the server exits (143 after SIGTERM, 130 after SIGINT) within about a second more, even when a request is blocked in storage (plus up to 10s for queued webhooks). A second signal exits at once. Keep it a few seconds below the time the service manager waits before it kills the server (Kubernetes: terminationGracePeriodSeconds, 30s by default)."`

	RedisURL string `env:"REDIS_URL" help:"redis://[user:password@]host:port[/db] shared by replicas for one rate-limit budget per client (default: in memory), and through which they tell each other of publishes at once (without it their catalog indexes poll the change log every STORAGE_CACHE_TTL). If Redis is unreachable requests are allowed (fail open) and jig_ratelimit_redis_failures_total counts them."`
}

// StorageSettings are the settings that open jig-server's storage, shared
// by the server and the commands that read or write its storage directly
// (jig-server mirror export|import).
type StorageSettings struct {
	StorageRoot    string `env:"STORAGE_ROOT" default:"./data" help:"Directory of the disk storage (registries, presets, versions lists)."`
	StorageBackend string `env:"STORAGE_BACKEND" default:"${storage_backend}" enum:"${storage_backends}" help:"Storage backend: ${storage_backends_help}."`

	S3Endpoint        string `name:"s3-endpoint" env:"S3_ENDPOINT" help:"S3-compatible endpoint URL (derived from R2_ACCOUNT_ID for Cloudflare R2)."`
	S3Bucket          string `name:"s3-bucket" env:"S3_BUCKET,R2_BUCKET_NAME" help:"S3 bucket holding the storage."`
	S3Region          string `name:"s3-region" env:"S3_REGION" help:"S3 region (auto for R2)."`
	S3AccessKeyID     string `name:"s3-access-key-id" env:"S3_ACCESS_KEY_ID,R2_ACCESS_KEY_ID" help:"S3 access key id."`
	S3SecretAccessKey string `name:"s3-secret-access-key" env:"S3_SECRET_ACCESS_KEY,R2_SECRET_ACCESS_KEY" help:"S3 secret access key."`
	R2AccountID       string `name:"r2-account-id" env:"R2_ACCOUNT_ID" help:"Cloudflare account id: sets the S3 endpoint to https://<id>.r2.cloudflarestorage.com and the region to auto."`
	S3Prefix          string `name:"s3-prefix" env:"S3_PREFIX" help:"Key prefix inside the bucket (e.g. jig/), so the registry can share a bucket with other data. Default: the bucket's top level."`
}

// validateStorage checks the storage settings.
func (c *StorageSettings) validateStorage() error { return c.storageBackend().validate(c) }

// Validate checks combinations kong's tags cannot express.
func (c *CLI) Validate() error {
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("--port/PORT %d is out of range; use 1-65535 (or 0 for any free port)", c.Port)
	}
	if c.UploadIdleTimeout <= 0 {
		return fmt.Errorf("--upload-idle-timeout/UPLOAD_IDLE_TIMEOUT %v must be positive, such as 30s", c.UploadIdleTimeout)
	}
	if c.UploadTimeout <= 0 {
		return fmt.Errorf("--upload-timeout/UPLOAD_TIMEOUT %v must be positive, such as 10m", c.UploadTimeout)
	}
	if c.MaxConcurrentUploads <= 0 {
		return fmt.Errorf("--max-concurrent-uploads/MAX_CONCURRENT_UPLOADS %d must be positive, such as 16", c.MaxConcurrentUploads)
	}
	if c.ShutdownTimeout <= 0 {
		return fmt.Errorf("--shutdown-timeout/SHUTDOWN_TIMEOUT %v must be positive, such as 30s", c.ShutdownTimeout)
	}
	if c.PublishClaimTTL < time.Second {
		return fmt.Errorf("--publish-claim-ttl/PUBLISH_CLAIM_TTL %v is too short; use at least 1s, such as 30s", c.PublishClaimTTL)
	}
	if c.StorageCacheMB < 0 {
		return fmt.Errorf("--storage-cache-mb/STORAGE_CACHE_MB %d is negative; use 0 to disable the cache or a size in MiB such as 64", c.StorageCacheMB)
	}
	if c.StorageCacheTTL < 0 || c.StorageCacheTTL > cache.MaxMutableTTL {
		return fmt.Errorf("--storage-cache-ttl/STORAGE_CACHE_TTL %v is out of range; use 0s to %v (the cache tier of versions lists)", c.StorageCacheTTL, cache.MaxMutableTTL)
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return errors.New("--tls-cert-file/TLS_CERT_FILE and --tls-key-file/TLS_KEY_FILE go together; set both to serve HTTPS, or neither")
	}
	if c.ConfigReloadInterval < 0 {
		return fmt.Errorf("--config-reload-interval/CONFIG_RELOAD_INTERVAL %v is negative; use 0 to disable the check or a duration such as 10s", c.ConfigReloadInterval)
	}
	if c.TLSReloadInterval < 0 {
		return fmt.Errorf("--tls-reload-interval/TLS_RELOAD_INTERVAL %v is negative; use 0 to disable the check or a duration such as 10s", c.TLSReloadInterval)
	}
	if _, err := c.defaultNamespace(); err != nil {
		return err
	}
	if c.CensusMaxProjects < 0 || c.CensusReporterLimit < 0 {
		return errors.New("--census-max-projects/CENSUS_MAX_PROJECTS and --census-reporter-limit/CENSUS_REPORTER_LIMIT must not be negative; 0 is no limit")
	}
	if err := c.validateAudit(); err != nil {
		return err
	}
	if err := c.validateStorage(); err != nil {
		return err
	}
	return c.validateState(&c.StorageSettings)
}

// defaultNamespace returns --default-namespace with its "@" ("rack" and
// "@rack" both give "@rack"), or "" when it is not set.
func (c *CLI) defaultNamespace() (string, error) {
	ns := registry.NormalizeNamespace(c.DefaultNamespace)
	if ns == "" {
		return "", nil
	}
	if !registry.ValidDefaultNamespace(ns) {
		return "", fmt.Errorf("--default-namespace/DEFAULT_NAMESPACE %q is not a namespace other than %s; use lowercase letters, digits, - or _, e.g. --default-namespace rack", c.DefaultNamespace, registry.PresetNamespace)
	}
	return ns, nil
}

// Server timeouts: headers must arrive quickly (no slowloris); responses
// may be large on slow links. There is no overall read timeout: the
// handler never waits for the body of a route that reads none, and bounds
// upload bodies by progress (--upload-idle-timeout) rather than by one
// budget for 100 MiB.
const (
	readHeaderTimeout = 10 * time.Second
	writeTimeout      = 10 * time.Minute
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
	// webhookDrainTimeout bounds the delivery of queued webhooks at
	// shutdown, after the requests drained.
	webhookDrainTimeout = 10 * time.Second
)

// Main runs jig-server with args (without the program name) until ctx ends,
// then shuts down gracefully. It reads .env from the working directory
// first (real environment variables win). It returns 0 after a clean
// shutdown or --help, 1 on any error.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer kongexit.Recover(&code)
	if len(args) > 0 && toolCommands[args[0]] {
		return runTool(ctx, args, stdout, stderr)
	}
	if err := loadDotEnv(".env"); err != nil {
		fmt.Fprintf(stderr, "jig-server: %v\n", err)
		return ExitError
	}
	var cli CLI
	parser, err := newParser(&cli, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "jig-server: %v\n", err)
		return ExitError
	}
	if _, err := parser.Parse(args); err != nil {
		fmt.Fprintf(stderr, "jig-server: %v\nRun 'jig-server --help' for usage.\n", err)
		return ExitError
	}
	log, err := newLogger(&cli, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "jig-server: %v\n", err)
		return ExitError
	}
	defer func() { _ = log.Sync() }()
	if err := serve(ctx, &cli, log); err != nil {
		log.Error("jig-server stopped", zap.Error(err))
		return ExitError
	}
	return ExitOK
}

// newParser returns the kong parser of jig-server's flags into cli. Exits
// (after --help or --version) unwind to [Main] ([kongexit.Recover]).
func newParser(cli *CLI, stdout, stderr io.Writer) (*kong.Kong, error) {
	return kong.New(cli,
		kong.Name("jig-server"),
		kong.Description("jig-server serves namespaced registries over HTTP. Every flag can also be set by the environment variable shown, or in a .env file in the working directory."+toolsHelp),
		kong.Writers(stdout, stderr),
		kongexit.Option(),
		kong.Vars{"version": "jig-server " + buildinfo.Get().String()},
		kong.Vars(backendVars()),
	)
}

// loadDotEnv sets the variables of path (when it exists) that are not
// already set in the environment.
func loadDotEnv(path string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := godotenv.Load(path); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}

// recoverTimeout bounds the recovery of interrupted publishes at startup.
const recoverTimeout = 30 * time.Second

// serve runs the server until ctx ends.
func serve(ctx context.Context, c *CLI, log *zap.Logger) error {
	hup := notifyHUP()
	defer signal.Stop(hup)
	cfg := newConfigReloader(c, log)
	var certs *certReloader
	if c.TLSCertFile != "" {
		var err error
		if certs, err = newCertReloader(c.TLSCertFile, c.TLSKeyFile, log); err != nil {
			return err
		}
	}
	reg := prometheus.NewRegistry()
	info := buildinfo.Get()
	log.Info("Starting jig-server", zap.String("version", info.Version), zap.String("commit", info.Commit),
		zap.String("go", info.GoVersion))
	if err := registerBuildInfo(reg, info); err != nil {
		return err
	}
	st, closeStorage, err := openStorage(ctx, &c.StorageSettings, storageCache{mb: c.StorageCacheMB, ttl: c.StorageCacheTTL}, reg)
	if err != nil {
		return err
	}
	defer func() {
		if err := closeStorage(); err != nil {
			log.Warn("closing storage", zap.Error(err))
		}
	}()
	db, err := openState(ctx, &c.StateSettings, st)
	if err != nil {
		return err
	}
	defer func() {
		if err := db.Close(); err != nil {
			log.Warn("closing the state database", zap.Error(err))
		}
	}()
	opsOpts, closeOps, err := opsOptions(ctx, c, log, reg)
	if err != nil {
		return err
	}
	defer closeOps()
	// STORAGE_CACHE_TTL is the whole staleness budget: registryserver.New
	// takes the S3 read cache's share (the same TTL) out of the handler's.
	opts := append([]registryserver.Option{
		registryserver.WithMutableTTL(c.StorageCacheTTL),
		registryserver.WithStorage(st),
		registryserver.WithLogger(log),
		registryserver.WithAdminToken(c.AdminToken),
		registryserver.WithUploadIdleTimeout(c.UploadIdleTimeout),
		registryserver.WithUploadTimeout(c.UploadTimeout),
		registryserver.WithMaxConcurrentUploads(c.MaxConcurrentUploads),
		registryserver.WithPublishClaimTTL(c.PublishClaimTTL),
		registryserver.WithCensus(registryserver.CensusMode(c.Census)),
		registryserver.WithCensusMaxAge(c.CensusMaxAge),
		registryserver.WithState(db),
		registryserver.WithCensusLimits(c.CensusMaxProjects, c.CensusReporterLimit),
	}, opsOpts...)
	opts = append(opts, c.auditOptions()...)
	if c.UploadDir != "" {
		opts = append(opts, registryserver.WithUploadTempDir(c.UploadDir))
	}
	if c.AuthConfigPath != "" {
		opts = append(opts, registryserver.WithAuthFile(c.AuthConfigPath))
	}
	if k := strings.TrimSpace(c.SSOTokenKey); k != "" {
		if len(k) < 32 {
			return fmt.Errorf("SSO_TOKEN_KEY has %d characters; give a secret of at least 32, such as the output of: openssl rand -base64 48", len(k))
		}
		opts = append(opts, registryserver.WithSSOKey([]byte(k)))
	}
	var signers *signersReloader
	if c.SchemaDir != "" {
		opts = append(opts, registryserver.WithSchemaDir(c.SchemaDir))
	}
	if logKey, err := readLogKey(c.LogKey); err != nil {
		return err
	} else if logKey != "" {
		opts = append(opts, registryserver.WithLogKey(logKey))
	}
	if c.LogWitnesses != "" {
		vkeys, err := readWitnesses(c.LogWitnesses)
		if err != nil {
			return err
		}
		opts = append(opts, registryserver.WithWitnesses(vkeys...))
	}
	if c.SignersDir != "" {
		signers = newSignersReloader(c.SignersDir, log)
		opts = append(opts, registryserver.WithSignersDir(c.SignersDir))
	}
	if c.WebCatalog {
		opts = append(opts, registryserver.WithWebCatalog(c.WebBasePath))
	}
	if ns, err := c.defaultNamespace(); err != nil {
		return err
	} else if ns != "" {
		opts = append(opts, registryserver.WithDefaultNamespace(ns))
	}
	var upstreams *upstreamsReloader
	if c.UpstreamsConfigPath != "" {
		upstreams = newUpstreamsReloader(ctx, c.UpstreamsConfigPath, log)
		up, err := registryserver.LoadUpstreams(c.UpstreamsConfigPath)
		if err != nil {
			return err
		}
		opts = append(opts, registryserver.WithUpstreams(up), registryserver.WithUpstreamMode(registryserver.UpstreamMode(c.UpstreamMode)))
		log.Info("mirroring namespaces from upstreams", zap.Strings("namespaces", up.Namespaces()), zap.String("mode", c.UpstreamMode))
	}
	if c.WebhookConfigPath != "" {
		hooks, err := loadWebhooks(c.WebhookConfigPath, log)
		if err != nil {
			return err
		}
		opts = append(opts, registryserver.WithWebhooks(hooks), registryserver.WithWebhookDrainTimeout(webhookDrainTimeout))
	}
	h, err := registryserver.New(opts...)
	if err != nil {
		// Said to an operator, not a Go programmer: no package prefix.
		return errors.New(strings.TrimPrefix(err.Error(), "registryserver: "))
	}
	defer func() {
		if err := h.Close(); err != nil {
			log.Warn("closing handler", zap.Error(err))
		}
	}()
	// Bind before writing anything: a server that cannot start (the port
	// is taken, the address is wrong) leaves the storage as it was.
	ln, err := net.Listen("tcp", net.JoinHostPort(c.Host, strconv.Itoa(c.Port)))
	if err != nil {
		return fmt.Errorf("listening on %s:%d: %w", c.Host, c.Port, err)
	}
	defer ln.Close() // a no-op once Serve has taken it
	if err := h.CheckUpstreams(ctx); err != nil {
		return err
	}
	// Seed only once the whole configuration was accepted and the port is
	// ours; requests wait in the listen backlog meanwhile. A mirror serves
	// its upstreams' catalog, not its own.
	if c.UpstreamsConfigPath == "" {
		seeded, err := catalog.Seed(ctx, st)
		if err != nil {
			return fmt.Errorf("seeding the empty storage with the starter catalog: %w", err)
		}
		if seeded {
			log.Info("Seeded the empty storage with the starter catalog", zap.Int("keys", len(catalog.Keys())))
		}
	}
	// Finish what publishes interrupted by a crash left (their claims,
	// half-written versions), so a retry succeeds at once; the handler
	// repeats it every claim TTL.
	rctx, rcancel := context.WithTimeout(ctx, recoverTimeout)
	rec, err := h.Recover(rctx)
	rcancel()
	if err != nil {
		log.Warn("Recovering interrupted publishes failed; retrying every claim TTL", zap.Error(err))
	}
	if !rec.Empty() {
		log.Info("Recovered interrupted publishes", zap.Int("uploads", rec.UploadFiles), zap.Int64("upload_bytes", rec.UploadBytes),
			zap.Int("claims", rec.Claims), zap.Int("removed_keys", rec.RemovedKeys), zap.Int("listed_versions", rec.ListedVersions))
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          zap.NewStdLog(log.Named("http")),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	// HTTP/2 over plain TCP too, so a jig scaffold's concurrent requests
	// share one connection without TLS.
	registryserver.EnableH2C(srv)
	addr := ln.Addr().(*net.TCPAddr)
	scheme := "http"
	// One SIGHUP reloads everything: the certificate, auth.json,
	// webhooks.json, the signer files and the upstreams file. Each is
	// also reloaded when its files change.
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	cfg.h = h
	if c.AuthConfigPath != "" {
		if a, err := registryserver.LoadAuthConfig(c.AuthConfigPath); err == nil {
			warnInClear(log, a)
		}
	}
	reloadables := []reloadable{cfg}
	watchFiles(wctx, cfg, c.ConfigReloadInterval)
	if signers != nil {
		signers.h = h
		reloadables = append(reloadables, signers)
		watchFiles(wctx, signers, c.ConfigReloadInterval)
	}
	if upstreams != nil {
		upstreams.h = h
		reloadables = append(reloadables, upstreams)
		watchFiles(wctx, upstreams, c.ConfigReloadInterval)
	}
	if certs != nil {
		scheme = "https"
		srv.TLSConfig = certs.tlsConfig()
		reloadables = append(reloadables, certs)
		watchFiles(wctx, certs, c.TLSReloadInterval)
	}
	watchSignals(wctx, hup, log, reloadables...)
	log.Info("Server listening at "+scheme+"://"+net.JoinHostPort(c.Host, strconv.Itoa(addr.Port)),
		zap.String("address", c.Host), zap.Int("port", addr.Port), zap.String("storage", c.backend()),
		zap.String("scheme", scheme))

	// Until now a signal stops the server within [shutdown.Grace]; from
	// now on requests in flight are drained first (and then the queued
	// webhooks), and a handler blocked in storage is cut off after that.
	grace := c.ShutdownTimeout + shutdown.Grace
	if c.WebhookConfigPath != "" {
		grace += webhookDrainTimeout
	}
	shutdown.SetGrace(ctx, grace)
	errc := make(chan error, 1)
	go func() {
		if certs != nil {
			// HTTP/2 is offered by ALPN; the certificate comes from
			// TLSConfig.GetCertificate.
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	log.Info("Shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// Requests still running after the grace period (a handler
		// blocked in storage) are cut off: their connections close, and
		// main does not wait for their goroutines.
		_ = srv.Close()
		return fmt.Errorf("graceful shutdown: requests still running after %v were cut off: %w", c.ShutdownTimeout, err)
	}
	<-errc // Serve returned http.ErrServerClosed
	return nil
}

// loadWebhooks reads webhooks.json. A missing file means no webhooks, as
// in the reference; a malformed one stops the server.
func loadWebhooks(path string, log *zap.Logger) ([]webhook.Hook, error) {
	cfg, err := webhook.Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		log.Info("No webhooks file; publishing sends no webhooks", zap.String("path", path))
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings {
		log.Warn("webhooks.json: " + w)
	}
	enabled := 0
	for _, h := range cfg.Webhooks {
		if h.Enabled {
			enabled++
		}
	}
	log.Info("Webhooks loaded", zap.String("path", path), zap.Int("enabled", enabled), zap.Int("total", len(cfg.Webhooks)))
	return cfg.Webhooks, nil
}

// registerBuildInfo exports jig_build_info{version,commit,goversion} 1, the
// usual way to join a build's identity onto other series in dashboards.
func registerBuildInfo(reg prometheus.Registerer, info buildinfo.Info) error {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "jig_build_info",
		Help:        "Always 1; the labels say which build of jig-server is running.",
		ConstLabels: prometheus.Labels{"version": info.Version, "commit": info.Commit, "goversion": info.GoVersion},
	})
	g.Set(1)
	return reg.Register(g)
}
