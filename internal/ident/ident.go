// Package ident holds the regular expressions of the identifier grammar
// that the registry package documents (namespaces, path segments, SemVer
// versions, package file paths). It depends on the standard library only,
// so that packages the registry package itself imports (registry/layout)
// can follow the same grammar. Callers outside the module use the
// registry.Valid* functions, which call these.
package ident

import (
	"regexp"
	"strings"
)

// The grammar's regular expressions without anchors, as the JSON Schemas
// spell them (registry/schemas), so schema messages can be matched to them.
const (
	NamespacePattern = `@[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?`
	SegmentPattern   = `[a-z0-9]+(?:-[a-z0-9]+)*`
	// VersionPattern is the official SemVer 2.0 regular expression with
	// non-capturing groups.
	VersionPattern = `(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-(?:(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?`
)

var (
	namespaceRE = regexp.MustCompile(`^` + NamespacePattern + `$`)
	segmentRE   = regexp.MustCompile(`^` + SegmentPattern + `$`)
	semverRE    = regexp.MustCompile(`^` + VersionPattern + `$`)
	fileSegRE   = regexp.MustCompile(`^[A-Za-z0-9._@+-]+$`)
)

// Namespace reports whether ns is a namespace such as "@main".
func Namespace(ns string) bool { return namespaceRE.MatchString(ns) }

// Segment reports whether s is one lowercase kebab-case path segment.
func Segment(s string) bool { return segmentRE.MatchString(s) }

// Version reports whether v is a full SemVer 2.0 version. It is the one
// version validator: registry.ValidVersion calls it and registry's
// version ordering accepts exactly what it accepts.
func Version(v string) bool { return semverRE.MatchString(v) }

// FilePath reports whether p is a legal path of a file inside a registry
// package: relative POSIX, an optional leading "./", segments of
// [A-Za-z0-9._@+-], and no ".", ".." or empty segments.
func FilePath(p string) bool {
	p = strings.TrimPrefix(p, "./")
	if p == "" {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." || !fileSegRE.MatchString(seg) {
			return false
		}
	}
	return true
}
