// Package registryclient is the Go client of a jig registry server: a typed
// HTTP API ([Client]) and a router that fetches each registry from its own
// namespace's source ([Sources]), configured per namespace by a [Resolver]
// such as the rc file (package rcfile).
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
// # Sources
//
// [*Sources] routes each request to the client of the namespace it
// concerns. [NewSources] builds it from [Entry] values given in code;
// [NewSourcesFrom] from any [Resolver], such as the rc file ~/.jigrc that
// the jig CLI uses (package [github.com/jigkit/jig/registryclient/rcfile],
// which also edits it). Each namespace's client is built on its first
// request and reused.
//
// # Signatures
//
// With a trust policy ([WithTrust], an [Entry]'s Trust, the rc file's
// "trust"), every version's digest index is checked against the
// version's SSH signatures before anything of the version is used: a
// signature that does not verify is a [*SignatureError], and so, when the
// policy requires a signature, is an unsigned or untrusted version. The
// files are checked against that very index. With [WithCache], signatures
// are cached with the content (and verified again when read back), and
// the versions seen signed are remembered: a server that goes back on them
// gives a [*RollbackError]. [Client.SignedBy] says who signed a version.
package registryclient
