// Package registryclient is the Go client of a jig registry server: a typed
// HTTP API ([Client]), the rc file that configures registry sources per
// namespace ([Config], ~/.jigrc) and a router that fetches each registry from
// its own namespace's source ([Sources]).
//
// # Client
//
// [New] builds a client for one server. Every read route has a method
// taking a context first ([Client.Namespaces], [Client.Registries],
// [Client.Manifest], [Client.Versions], [Client.File], [Client.Preset],
// [Client.Schema], [Client.Health]). Idempotent requests are retried after
// network errors, 429 (honouring Retry-After up to a bound) and 5xx, with
// exponential backoff, a bounded number of times ([WithRetry]). Requests
// time out ([WithTimeout]), response bodies are capped ([WithMaxBodySize]),
// HTTP_PROXY/HTTPS_PROXY/NO_PROXY are honoured, and the token and custom
// headers are sent only to the server's own origin: a redirect to another
// origin drops them.
//
// Errors are typed: [*StatusError] for a non-2xx answer (with the server's
// code and message and the registry concerned; errors.Is matches
// [ErrNotFound], [ErrUnauthorized] and [ErrForbidden]), [*RateLimitError]
// for a 429 that outlasted the retries, [*NetworkError] for a request that
// got no answer. No error text ever contains a token.
//
//	c, err := registryclient.New("https://registry.example.com",
//		registryclient.WithToken(os.Getenv("REGISTRY_TOKEN")))
//	m, err := c.Manifest(ctx, registry.MustParseID("@company/features/ui-kit"))
//
// # rc file
//
// [LoadConfig] reads ~/.jigrc (or $JIG_CONFIG, see [DefaultConfigPath]):
//
//	{"registries": {
//	  "@company": {"url": "https://registry.example.com", "token": "${COMPANY_TOKEN}",
//	               "headers": {"X-Team": "web"}},
//	  "@oss": "https://oss.example.com"}}
//
// The built-in namespaces @main and @presets (URL $JIG_REGISTRY_URL or
// http://localhost:8080) are merged under the file and cannot be removed.
// The token stays in its own field; it becomes "Authorization: Bearer
// <token>" only when shown ([Entry.DisplayHeaders]) and when sent. "${VAR}"
// in url, token and header values is kept in the file as written and
// expanded from the environment when a client is built ([*Config.Client]);
// [*Sources] builds each namespace's client on its first request and
// reuses it.
// [*Config.Save] writes the file atomically with mode 0600.
package registryclient
