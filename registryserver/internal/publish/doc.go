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
//     get [ErrVersionExists] and have written nothing. A claim older than
//     the stale limit (a publisher that crashed) is taken over with a
//     conditional write on its ETag, so again only one publisher wins it.
//  3. Re-check registry.json (a publisher may have committed between 1 and
//     2), then delete anything left under <version>/ by a crashed attempt.
//  4. Write every declared file under <version>/. Only the claim holder
//     writes there, so the stored bytes are the winner's.
//  5. Commit: write <version>/registry.json, create-only. From here on the
//     whole version is readable at its versioned URLs.
//  6. Add the version to versions.json with a compare-and-swap loop (read
//     it with its ETag, add, PutIf on that ETag, retry on a conflict), so
//     concurrent publishes of different versions never lose one. Only now
//     does "latest" move.
//  7. Delete the claim.
//
// Any error in steps 4-6 rolls back: registry.json first (so the version
// disappears at once), then the files, then the claim; versions.json never
// names a version whose content is not in place. A process that dies
// midway leaves its claim, so nobody reads a half-written version; the next
// publish of that version after the stale limit takes the claim over and
// cleans up. If it died between steps 5 and 6 the version is complete but
// unlisted; the next attempt to publish it repairs versions.json (and gets
// [ErrVersionExists]).
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
