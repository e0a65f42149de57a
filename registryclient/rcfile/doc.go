// Package rcfile reads and edits the rc file (~/.jigrc, or $JIG_CONFIG):
// the registry sources of the jig CLI keyed by namespace.
//
// [Load] reads the file ([DefaultPath] finds it):
//
//	{"registries": {
//	  "@company": {"url": "https://registry.example.com", "token": "${COMPANY_TOKEN}",
//	               "headers": {"X-Team": "web"}},
//	  "@oss": "https://oss.example.com"}}
//
// The built-in namespaces @main and @presets (URL $JIG_REGISTRY_URL or
// [DefaultRegistryURL]) are merged under the file and cannot be removed.
// The token stays in its own field; it becomes "Authorization: Bearer
// <token>" only when shown ([*Config.DisplayHeaders]) and when sent.
// "${VAR}" in url, token and header values is kept in the file as written
// and expanded from the environment when a client is built
// ([*Config.Resolve]).
//
// A [*Config] is a [registryclient.Resolver]: [*Config.Sources] gives the
// router that fetches each registry from its own namespace's source.
//
//	cfg, err := rcfile.Load(path)
//	src := cfg.Sources()
//	m, err := src.Manifest(ctx, registry.MustParseID("@company/features/ui-kit"))
//
// [*Config.Set] and [*Config.Remove] change entries in memory;
// [*Config.Save] writes the file atomically with mode 0600. [Edit] does
// the three under a lock on the file, so that concurrent jig processes
// keep each other's changes. [ValidateNamespaceArg], [ParseHeader] and
// [ParseDefaultNamespace] check what a user typed for an entry, with
// messages that say what to write instead.
package rcfile
