// Package publish makes registry versions and presets visible on a
// [storage.Storage] atomically and immutably.
//
// # How a version is published
//
// A key/value store has no directory rename, so a version cannot appear in
// one step. Instead one key is the commit point: the version's
// registry.json. Readers find a version only through it (the versioned
// manifest route reads it, "latest" reads versions.json and then it), so a
// version whose registry.json is missing does not exist for them. Publishing
// a version runs these steps:
//
//  1. If <version>/registry.json exists, the version exists: stop with
//     [ErrVersionExists].
//  2. Claim the version: create .publish/@ns/<seg>…/<version>.lock with a
//     create-only conditional write (PutIf with ifMatch ""). Of several
//     concurrent publishers of one version exactly one succeeds; the others
//     get [ErrVersionExists] and have written nothing. The claim names the
//     attempt, its owner (the publishing process, see [WithOwner]) and a
//     heartbeat time that the publisher refreshes every third of the
//     claim TTL ([WithClaimTTL], 30 s by default) with a conditional write
//     on the claim's ETag. A claim is taken over, again with a conditional
//     write on its ETag so that only one publisher wins it, when its owner
//     is known to be dead (its lock in the server's scratch folder is
//     free: the process was killed), when it was left behind by this very
//     process, when its heartbeat is older than the TTL (a publisher on
//     another host that died or cannot reach the storage), or when it is
//     unreadable and older than the TTL. A publisher whose heartbeat finds
//     the claim taken over, or that could not refresh it for two thirds of
//     the TTL, stops with [ErrClaimLost] and touches nothing more.
//  3. Re-check registry.json (a publisher may have committed between 1 and
//     2), then delete anything left under <version>/ by a crashed attempt.
//  4. Write every declared file under <version>/, a few at a time
//     ([WithWriteConcurrency]), then the digest index computed from what
//     was stored (which must equal [Version.Index] when one is given) and
//     the signatures document ([Version.Signatures]), all through one
//     [storage.Batch], whose Sync then makes them durable together (on
//     disk: one flush per file and one per folder). Only the claim holder
//     writes there, so the stored bytes are the winner's. The first write
//     that fails cancels the others; the rollback starts once none is in
//     progress.
//  5. Remove any key under <version>/ that this publish did not write (a
//     previous holder that kept writing after losing the claim), then
//     commit: write <version>/registry.json, create-only, after every
//     other key of the version is durable. From here on the whole version
//     is readable at its versioned URLs.
//  6. Add the version to versions.json with a compare-and-swap loop (read
//     it with its ETag, add, PutIf on that ETag, retry on a conflict), so
//     concurrent publishes of different versions never lose one. Only now
//     does "latest" move.
//  7. Delete the claim, after reading it back to check it is still ours.
//
// Any error in steps 4-6 rolls back: registry.json first (so the version
// disappears at once), then the files, then the claim; versions.json never
// names a version whose content is not in place. A process that dies
// midway leaves its claim, so nobody reads a half-written version; the next
// publish of that version takes the claim over as soon as the rule above
// allows and cleans up, and [Store.Recover] (which jig-server runs at start
// and periodically) does the same without waiting for a retry. If it died
// between steps 5 and 6 the version is complete but unlisted; recovery, or
// the next attempt to publish it, repairs versions.json (the attempt gets
// [ErrVersionExists]). Clocks of replicas sharing a storage must agree to
// well within the claim TTL; claims written by jig-servers older than
// heartbeats are taken over only after [DefaultStaleAfter].
//
// Backends without [storage.ConditionalPutter] get the same guarantees
// within one process from in-memory locks, not across processes.
//
// # Presets
//
// A preset version is stored create-only at presets/<name>/<version>/preset.json;
// presets/<name>/preset.json (what /presets/<name> serves, the reference's
// layout) is then replaced by a compare-and-swap loop only when the new
// version is higher than the one it holds, so it always holds the highest
// version published.
package publish
