// Package cache is a read cache in front of a [storage.Storage], meant for
// backends where every read is a network round trip (S3).
//
//	st, err := cache.New(s3store, cache.WithMaxBytes(128<<20))
//
// What is cached, by key:
//
//   - Immutable content: "@ns/<seg>…/<version>/…" (a version's
//     registry.json and files) and "presets/<name>/<version>/preset.json".
//     A published version never changes, so these are kept until the size
//     bound evicts them (least recently used first). Not-found answers for
//     them are never cached: a version missing now may be committed by
//     another replica a moment later.
//   - Mutable content: "@ns/<seg>…/versions.json" and
//     "presets/<name>/preset.json", including not-found answers, and every
//     List and ListDir result: kept at most the mutable TTL (default
//     [DefaultMutableTTL], at most [MaxMutableTTL], the 60 s cache tier the
//     server announces for "latest" and listings). Another replica's publish
//     becomes visible here within that TTL. A registryserver handler on
//     this cache counts the TTL against its own WithMutableTTL, so the two
//     tiers never stack to a longer lag than the handler promises.
//   - Anything else (publish claims, health probes) is never cached.
//
// Writes through the cache (Put, PutIf, Delete) go to the backend and then
// drop the key and every cached listing, so this replica sees its own
// writes at once; a read that raced with a write does not refill the cache
// with what it read. Objects larger than an eighth of the size bound (at
// most 8 MiB) are streamed from the backend and not cached.
//
// # Caching and publishing
//
// Conditional writes ([storage.ConditionalPutter]) always go to the backend,
// and a cached ETag is never used to build one: the publish code
// (registryserver/internal/publish) reads through the uncached view that
// [storage.Fresh] returns for a cache, so its existence checks, claims and
// compare-and-swap reads of versions.json see the shared bucket as it is.
// As a second line of defence PutIf forgets its key whatever the outcome,
// so a caller that used a stale ETag and got [storage.ErrPrecondition]
// reads the current one next time.
//
// One window is not closed: a publish that fails after its commit point
// (registry.json written, then the versions.json update fails) rolls the
// version back, and a replica that read the version in between keeps it
// cached. If the same version is then published again with different
// content, that replica serves the first content until it is evicted or
// restarted. Publishing different content under one version is what the
// immutability rule forbids anyway; the window needs a storage failure
// mid-publish to open.
//
// The returned storage implements [storage.ConditionalPutter] and
// [storage.Pinger] exactly when the wrapped one does, so code that probes
// for them behaves as it would without the cache.
package cache
