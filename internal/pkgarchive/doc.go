// Package pkgarchive is the registry package format, the one home of its
// rules for jig publish (registryclient), jig-server (registryserver) and
// the tests: gzip-compressed tar archives holding a registry.json at their
// root and the template files it declares, their limits, how jig packs
// them ([Pack]), how they are read ([Scan], [Walk]) and the checks an
// upload gets ([Index.Head], [Index.Check], [Inspect]), each refusal with
// the wire code and message jig-server answers ([Refusal]). jig publish
// runs the same checks before it uploads, so it refuses what the server
// would refuse, with the server's words.
//
// The reader never writes to disk and never trusts the archive: it counts
// every byte it decompresses and stops as soon as a limit is crossed (total
// unpacked size, number of entries, path length), so a gzip bomb is refused
// while it is being read. Entry names are normalised (one leading "./" is
// dropped) and checked: absolute paths, ".." segments, empty segments,
// backslashes and NUL bytes, duplicates and file/directory clashes make the
// archive invalid. Symbolic and hard links, devices, FIFOs and other special
// entries are not refused outright but reported in [Index.Unsafe], so the
// caller can decide when to report them (jig-server does so after the
// uploader's permissions have been checked, as the reference does).
//
// jig-server reads an upload twice from a local temporary file: [Scan] to
// validate it and obtain registry.json, then [Walk] to stream the declared
// files to their destination.
package pkgarchive
