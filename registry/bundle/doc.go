// Package bundle is the format of jig's registry bundles: one tar file that
// carries published registry versions across an air gap, from a jig-server
// storage (jig-server mirror export) to another jig-server storage
// (jig-server mirror import) or to a developer's cache (jig cache import).
//
// # Format
//
// A bundle is an uncompressed tar archive of regular files only. Each
// entry is named by the storage key it came from, in the layout of package
// [layout]:
//
//	@ns/<seg>…/versions.json                    the registry's version list (informational)
//	@ns/<seg>…/<version>/registry.json          the version's manifest
//	@ns/<seg>…/<version>/.jig-digests.json      its digest index (required)
//	@ns/<seg>…/<version>/.jig-signatures.json   its signatures (optional)
//	@ns/<seg>…/<version>/.jig-log-proof         its transparency-log proof (optional; a C2SP tlog-proof)
//	@ns/<seg>…/<version>/<file>                 every file of its digest index
//	jig-bundle.json                             the bundle manifest, last
//
// A bundle of presets (namespace "@presets", what jig init -t @presets/<name>
// reads) holds preset documents instead, again named by their storage keys:
//
//	presets/<name>/preset.json                  the latest version, as served
//	presets/<name>/<version>/preset.json        one published version
//
// A bundle holds registries or presets, never both.
//
// Every entry belongs to the one namespace the bundle manifest names. The
// entries are sorted bytewise by name, each name once, and the bundle
// manifest ([ManifestName], which sorts after every "@" name) comes last:
//
//	{"format": "jig-bundle/1", "namespace": "@acme",
//	 "entries": [{"name": "@acme/…", "size": 12, "sha256": "sha256:…"}, …]}
//
// It lists every other entry, in the same order, with its size and
// sha-256. Headers carry no owner, a fixed mode (0644) and a fixed
// modification time ([ModTime]), so the same content always gives the same
// bytes: two exports of one storage are byte-identical.
//
// # Reading
//
// [Read] trusts nothing in the file. Before it returns a [*Bundle] it has
// read every byte once and checked that: each entry is a regular file
// (links, devices, FIFOs and directories are refused); each name is a
// storage key of the layout (no absolute path, no "..", no empty or "."
// segment, no backslash or NUL, no reserved name used as a package file)
// within the name-length and depth limits, appears once, and comes in
// order; the entry count, each entry's size and the total size stay within
// [Limits] (checked while reading, so an oversized bundle is refused
// early); the bundle manifest lists exactly the entries with their sizes
// and digests; every version has a manifest and a digest index naming it,
// the index's manifest digest matches registry.json, the version's files
// are exactly the files of its index with the digests it records; the
// signatures document, when present, names the version; the log proof,
// when present, is a C2SP tlog-proof whose record names the version and
// the sha-256 of its digest index (its checkpoint's signature is the
// importer's to verify, with the log's key); every preset
// document parses as a preset (members that are registry identifiers)
// named by its key, with a semantic version (the key's, for a versioned
// copy), and a latest that is also stored as a versioned copy is byte for
// byte that copy. A preset's schema is checked by the importer, as a
// publish would. Signatures are not
// judged here: that takes a policy (a server's signer files, a client's
// trust settings), which the importers apply.
//
// The content is then read a second time through [Bundle.Open], whose
// reader checks the entry's digest again as it ends, so a bundle file
// changed between the two passes is refused too.
//
// # Writing
//
// [NewWriter] writes a bundle; [Writer.Add] takes entries in increasing
// name order and [Writer.Close] appends the bundle manifest. Write to a
// temporary file and rename it into place once Close returns, so an
// interrupted export leaves no partial bundle behind.
package bundle
