// Package registryserver is the jig registry server as an embeddable
// [net/http.Handler]: namespaced registries, presets and schemas over HTTP,
// with token-gated namespaces, cache tiers, conditional requests and
// response compression. The jig-server binary is a thin wrapper around it.
//
// Build a handler with [New] and functional options, and mount it like any
// other handler:
//
//	st, _ := disk.New("./data")
//	h, err := registryserver.New(
//		registryserver.WithStorage(st),
//		registryserver.WithAuthFile("auth.json"),
//		registryserver.WithAdminToken(os.Getenv("ADMIN_TOKEN")),
//		registryserver.WithLogger(logger),
//	)
//	if err != nil { … }
//	defer h.Close()
//	http.ListenAndServe(":8080", h)
//
// # Routes
//
// Every route the handler serves is listed here (a test checks the list
// against the registered routes):
//
//	GET, HEAD /registries                                     404 NOT_FOUND: no such route (as the reference)
//	GET, HEAD /registries/@ns/<seg>…                          latest manifest (versions[0])
//	GET, HEAD /registries/@ns/<seg>…/versions                 {"versions":[…]}, newest first
//	GET, HEAD /registries/@ns/<seg>…/<semver>                 that version's manifest
//	GET, HEAD /registries/@ns/<seg>…/<semver>/digests         that version's digest index (jig's)
//	GET, HEAD /registries/@ns/<seg>…/<semver>/signatures      that version's SSH signatures, [] when unsigned (jig's)
//	GET, HEAD /registries/@ns/<seg>…/<semver>/files/<path>    a template file
//	POST      /registries                                     publish a registry package (multipart; a token that may publish)
//	GET, HEAD /namespaces                                     {"namespaces":[…]} the caller may read
//	GET, HEAD /namespaces/:ns/registries                      {"namespace","registries":[…]}
//	GET, HEAD /search?q=&namespace=&type=&tag=&limit=&cursor= registries the caller may read, one page
//	GET, HEAD /presets                                        every preset: name, latest version, description, members
//	GET, HEAD /presets/:name                                  a preset
//	GET, HEAD /presets/                                       400 INVALID_PRESET: an empty name (as the reference)
//	POST      /presets                                        publish a preset.json (admin token)
//	POST      /census/:ns                                     a project's census report (jig check --report)
//	GET, HEAD /census/:ns                                     one census line per registry the reports name (census right)
//	GET, HEAD /census/:ns/<seg>…?limit=&cursor=               a registry's census: versions, projects, one page (census right)
//	GET, HEAD /audit?since=&until=&actor=&namespace=&action=&cursor=&limit=  the audit log, newest first, one page (admin token)
//	GET, HEAD /auth/sso                                       the organisation's issuer for people: issuer, client id, scopes (auth.json "sso")
//	POST      /auth/sso/token                                 a person's ID token exchanged for a short-lived session token
//	GET, HEAD /auth/whoami                                    who the request's token is, and the namespaces it opens with their scopes
//	GET, HEAD /log/key                                        the transparency log key's verifier line (with WithLogKey)
//	GET, HEAD /log/@ns/checkpoint                             the namespace's log checkpoint, a signed note (ns read)
//	GET, HEAD /log/@ns/tile/<H>/<L>/<N>[.p/<W>]               a tile of the namespace's log, as the Go checksum database's (ns read)
//	GET, HEAD /log/lookup/@ns/<seg>…@<semver>?since=          a version's log record, index and tlog-proof, and a consistency proof (ns read)
//	POST      /log/lookup                                    the batch lookup: many versions, one checkpoint per namespace (what the caller cannot read left out)
//	POST      /log/@ns/cosignature                           a witness's cosignature of a tree head of the log (with WithWitnesses; ns read)
//	GET, HEAD /schemas/:file                                  registry-item.json, preset.json, jig.json, rack.json
//	GET, HEAD /health                                         see Operations
//	GET, HEAD /metrics                                        see Operations (with WithMetrics)
//	GET, HEAD /                                               the web catalog (with WithWebCatalog, at its base path)
//	GET, HEAD, POST /-/…                                      the web catalog's pages, sign-in and static files
//
// The path after /registries follows the identifier grammar of package
// [github.com/jigkit/jig/registry]: part 0 is the namespace, the version is
// the first later part that is a full SemVer version, and anything that
// does not fit is 400 INVALID_PATH. Empty parts (a doubled or trailing
// slash) are left out, as the reference does.
//
// # Errors
//
// Every error is a JSON body {"code": "...", "message": "..."} with
// Cache-Control: no-store. Access is checked in this order: 400
// INVALID_PATH, then, for a namespace that is not public, 401 UNAUTHORIZED
// (no token), 401 INVALID_TOKEN (unknown token), 401 TOKEN_EXPIRED, 403
// FORBIDDEN_NAMESPACE (a valid token of other namespaces only), then 404
// NOT_FOUND. A gated namespace and one that is not declared in auth.json
// get the same answers, so a caller without access cannot tell whether a
// gated namespace exists. The admin token passes every namespace check. Unknown routes
// are 404 NOT_FOUND and wrong methods 405 METHOD_NOT_ALLOWED.
//
// # Signed versions
//
// POST /registries takes up to 16 "signature" fields: armored SSH
// signatures (package [github.com/jigkit/jig/registry/signing]) over the
// version's digest index, which the handler computes from the package
// before it stores anything. Every signature must verify (403
// SIGNATURE_INVALID). With [WithSignersDir], a namespace that has a signer
// file ([Signers]) requires at least one signature by a key the file lists
// (400 SIGNATURE_REQUIRED, 403 SIGNATURE_INVALID); these checks come after
// the token's, so a caller who may not publish there learns nothing of
// them. The signatures are stored beside the version before its commit
// point and served, immutable, at .../<semver>/signatures.
//
// # Mirrors
//
// With [WithUpstreams] (an upstreams file read by [LoadUpstreams]) the
// handler serves namespaces of other registry servers through its own
// storage. A read that misses fetches the version from the upstream with
// package [github.com/jigkit/jig/registryclient] (which checks it against
// the upstream's digest index), runs every check of an upload on it,
// verifies its signatures against the [Signers] policy, and stores it with
// the publish protocol before serving it; nothing is stored when any check
// fails. Versions lists, latest manifests and presets are asked again after
// the mutable TTL ([WithMutableTTL]); when the upstream cannot be asked
// they are served from the storage with "Warning: 110", and a version
// never fetched is 504 UPSTREAM_UNAVAILABLE. A namespace holding registries
// published on this server is never filled from an upstream
// ([Handler.CheckUpstreams] reports it), and publishing into a mirrored
// namespace is refused. [WithUpstreamMode] with [UpstreamOffline] serves
// only what is stored.
//
// # Bundles
//
// Package [github.com/jigkit/jig/registryserver/bundleio] moves published
// versions between storages without a server: its Export writes a
// namespace's published versions from a storage to a bundle (package
// [github.com/jigkit/jig/registry/bundle]), and its Import stores a checked bundle's versions in another storage
// through the same publish protocol as an upload, after checking all of
// it (signatures against [Signers] included) and writing nothing on any
// problem. jig-server mirror export|import run them.
//
// # Access
//
// The token comes from "Authorization: Bearer <t>" or else
// "X-Registry-Token: <t>". [AuthConfig] (auth.json) declares public and
// gated namespaces; without one every stored namespace is public and only
// the admin token publishes. Gated namespace names never appear in a
// response, an error or an info log line for a caller who may not read
// them. Tokens are compared as SHA-256 digests in constant time and are
// never logged. Reading a namespace's census (GET /census/…, the files
// projects edit in the web catalog) needs the census right whatever the
// namespace's read policy: the admin token, or a token whose auth.json
// entry lists the namespace under "census" and that may read it.
//
// # Audit log
//
// Every write is recorded in the audit log of the state database
// ([WithState]): publishes (refused ones too, with the error code),
// preset publishes, versions and presets a mirror fetched, census
// reports, failed token checks (coalesced per client and minute, so that
// failures cannot flood the log), index rebuilds, configuration reloads
// ([Handler.SetAuth], [Handler.SetSigners], [Handler.SetUpstreams],
// [Handler.SetWebhooks]) and reads of the log itself. An event holds the
// time, the actor (a token's auth.json mark and the first 12 hex digits
// of its SHA-256, "admin", "anonymous" or "operator"; never a token),
// the action, namespace, target, outcome ("ok" or the error code),
// request id and client address ([state.Event]). Events are written in
// the background, so an outage of the database never fails a publish;
// GET /audit then answers 503 STATE_UNAVAILABLE. Events older than
// [WithAuditMaxAge] are removed.
//
// # Caching and compression
//
// Cache-Control follows [CacheTiers]. Content that needed a token is sent
// "private" with "Vary: Authorization, X-Registry-Token" so shared caches
// never hand it to someone else. Every 200 carries an ETag (files: the
// storage's, "<mtime-ms hex>-<size hex>" on disk) and If-None-Match is
// answered with Not Modified. Bodies of 1 KiB and more are compressed
// with br, gzip or deflate as Accept-Encoding asks (q-values honoured),
// each encoding with its own ETag; encoded bodies are cached in memory
// (bounded, least recently used out) so immutable content is compressed
// once. What was read of published versions and versions lists is
// answered from memory for [WithMutableTTL]; a storage read cache
// (registryserver/storage/cache) in front of the backend counts against
// that time, so another replica's publish still shows within it.
//
// # Operations
//
// Every request, on every route (unknown paths, /health and /metrics
// included), is rate limited per client address: [DefaultRateLimit]
// requests per [DefaultRateWindow] by default ([WithRateLimit], or
// [WithLimiter] for a limiter shared by replicas such as
// ratelimit/redisrate). Every response carries RateLimit-Limit,
// RateLimit-Remaining and RateLimit-Reset (seconds until the window
// resets); over the limit the answer is 429 with Retry-After (the window
// length, 60) and {"code":"RATE_LIMIT_EXCEEDED","message":"Rate limit
// exceeded. Try again in <N>s"}. A limiter error lets requests through.
// The client address is the connection's unless [WithTrustProxy] trusts
// X-Forwarded-For (see [ParseTrustProxy] for TRUST_PROXY).
//
// Each request is logged once at info level as "request completed" with
// reqId, method, url (credentials in the query redacted), statusCode,
// responseTime (ms), remoteAddress and the request headers; authorization,
// cookie, set-cookie, x-registry-token and proxy-authorization are written
// as [REDACTED] unless the logger is enabled at debug level.
//
//	GET, HEAD /health     200 {"status":"ok","checks":{"storage":{"status":"ok"}}} or 503 with the error
//	GET, HEAD /metrics    Prometheus text exposition of the registry given to WithMetrics
//
// /health probes the storage ([storage.Pinger] when the backend has it)
// within [WithHealthTimeout]. /metrics holds the reference server's names
// (process_*, nodejs_* fed by Go runtime equivalents), the go_* collectors
// and http_request_duration_seconds{method,route,status_code}.
package registryserver
