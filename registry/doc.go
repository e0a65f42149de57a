// Package registry is the pure core of jig: the identifier grammar, the
// registry manifest ([Manifest]), presets ([Preset]), the project file
// ([Project], jig.json), version lists, file-path safety rules and the
// embedded JSON Schemas. It names the merge strategies a manifest may ask
// for ([Strategy]); package [github.com/jigkit/jig/registry/merge]
// implements them, with the three-way merge, the unified diff and the
// package.json edits.
//
// It depends on the standard library and small pure libraries only, so it can
// be imported by servers, clients and build tooling alike.
//
// # Identifiers
//
// A registry identifier has the form
//
//	[@namespace/]path/to/name[@version][:ts|:js|:variant]
//
// and is parsed by [ParseID]:
//
//   - namespace: "@" followed by lowercase letters, digits, "-" and "_",
//     starting and ending with a letter or digit
//     (^@[a-z0-9](?:[a-z0-9-_]*[a-z0-9])?$). When omitted the namespace is [DefaultNamespace] ("@main").
//   - path: one or more segments separated by "/", each lowercase kebab case
//     (^[a-z0-9]+(?:-[a-z0-9]+)*$). Empty segments are not allowed.
//   - version: a full SemVer 2.0 version after the last "@" of the path part
//     (pre-release and build metadata allowed; no ranges or tags).
//   - language: a trailing ":ts" or ":js".
//   - variant: any other trailing ":name" names one of the registry's named
//     variants ([Manifest.Variants]): lowercase kebab case
//     (^[a-z0-9]+(?:-[a-z0-9]+)*$), at most [MaxVariantName] bytes, never
//     "ts" or "js" ([ValidVariant]). One suffix at most. A preset
//     ("@presets/go-service:distroless") takes a variant, which its members
//     that declare it get, but no version or language.
//
// Identifiers are lowercase and never lowercased silently: "Quality/ESLint"
// or "@Company" is an error whose [IDError.Suggestion] is the lowercase
// form ("did you mean quality/eslint?"). [ParseNamespace] applies the same
// rule to a namespace on its own, so every command treats case alike.
//
// The canonical key of an identifier is "@namespace/path" ([ID.Key]); it is
// what deduplication and conflict checks compare. An identifier in the
// [PresetNamespace] ("@presets") names a preset: one segment, no version and
// no language suffix.
//
// # File paths
//
// Paths of files inside a registry package (files[].path, custom merge
// scripts, the files/ URL suffix) follow [ValidFilePath]: relative POSIX
// paths, an optional leading "./", segments of [A-Za-z0-9._@+-], no "." or
// ".." segments and no empty segments. Project targets (files[].target) are
// checked by [CleanTarget], which refuses absolute paths, anything that
// would leave the project directory, and anything inside git's metadata
// directory ([IsDotGit]: ".git" in any case, with trailing dots or spaces,
// as the NTFS short name "git~1", or with code points HFS+ ignores), and
// names with a character [DeceptiveRune] reports (control characters,
// bidirectional overrides), which display as something other than they
// are.
//
// # JSON nesting depth
//
// Every JSON document this package and package merge parse (manifests,
// presets, version lists, digest indexes, jig.json, package.json and both
// sides of a json merge) may nest objects and arrays at most
// [MaxJSONDepth] (64) levels deep. [CheckJSONDepth] is the one check, a
// single pass run before a document is decoded; registryclient uses it
// for the rc file and every server answer. A deeper document gives a
// [*JSONDepthError] naming the document and the limit.
package registry
