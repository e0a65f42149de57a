// Package layout is the one place that knows how jig-server lays registries
// out in its storage. Every storage key is built by a function here, and
// [Classify] tells what a key holds; the server's routes, the publisher, the
// read cache and the embedded catalog all call it rather than spelling keys
// themselves. The layout is the reference tool's disk layout, so a storage
// written by either can be served by the other:
//
//	@ns/<seg>…/versions.json                      [Versions]: the version list
//	@ns/<seg>…/<version>/registry.json            [Manifest]: the commit point of a publish
//	@ns/<seg>…/<version>/.jig-digests.json        [DigestIndex]: the sha-256 of each file
//	@ns/<seg>…/<version>/.jig-signatures.json     [Signatures]: the SSH signatures of the version
//	@ns/<seg>…/<version>/.jig-log-proof           [LogProof]: the log proof of the version (bundles only)
//	@ns/<seg>…/<version>/<files[].path>           [File]: the package files
//	presets/<name>/preset.json                    [Preset]: the latest preset
//	presets/<name>/<version>/preset.json          [PresetVersion]: a published preset version
//	.publish/@ns/<seg>…/<version>.lock            [Claim]: a publish in progress
//	.tlog/@ns/checkpoint, tile/…, entry/<seg>…/<v> [LogCheckpoint], [LogTile], [LogEntry]: the namespace's transparency log
//	.tlog/@ns/cosignatures                        [LogCosignatures]: the witnesses' newest cosignatures of it
//	.healthcheck                                  [HealthKey]: the /health probe
//
// Namespaces, segments, versions and file paths follow the identifier grammar
// of the registry package; the builders do not validate their arguments
// (callers validate identifiers once, where they enter), while [Classify]
// does. The file names [ManifestFile] and [PresetFile] are also the names of
// those documents in a package directory on disk.
//
// The package depends on the standard library only.
package layout
