// Package pkgarchive reads registry packages: gzip-compressed tar archives
// holding a registry.json at their root and the template files it declares.
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
// Typical use reads the archive twice from a local temporary file: [Scan]
// to validate it and obtain registry.json, then [Walk] to stream the
// declared files to their destination.
package pkgarchive
