// Package ident holds the identifier grammar
// that the registry package documents (namespaces, path segments, SemVer
// versions, package file paths). It depends on the standard library only,
// so that packages the registry package itself imports (registry/layout)
// can follow the same grammar. Callers outside the module use the
// registry.Valid* functions, which call these.
package ident

import "strings"

// The grammar's regular expressions without anchors, as the JSON Schemas
// spell them (registry/schemas), so schema messages can be matched to them.
const (
	NamespacePattern = `@[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?`
	SegmentPattern   = `[a-z0-9]+(?:-[a-z0-9]+)*`
	// VersionPattern is the official SemVer 2.0 regular expression with
	// non-capturing groups.
	VersionPattern = `(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)(?:-(?:(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?`
)

// The matchers below are plain code rather than the compiled patterns: the
// jig process compiled these four expressions on every start, whether or not
// it used them. A fuzz test holds each matcher to its pattern.

// Namespace reports whether ns is a namespace such as "@main".
func Namespace(ns string) bool {
	if len(ns) < 2 || ns[0] != '@' {
		return false
	}
	body := ns[1:]
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case lowerOrDigit(c):
		case (c == '-' || c == '_') && i > 0 && i < len(body)-1:
		default:
			return false
		}
	}
	return true
}

// Segment reports whether s is one lowercase kebab-case path segment.
func Segment(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case lowerOrDigit(c):
		case c == '-' && s[i-1] != '-':
		default:
			return false
		}
	}
	return true
}

// Version reports whether v is a full SemVer 2.0 version. It is the one
// version validator: registry.ValidVersion calls it and registry's
// version ordering accepts exactly what it accepts.
func Version(v string) bool {
	core, build, hasBuild := strings.Cut(v, "+")
	core, pre, hasPre := strings.Cut(core, "-")
	nums := strings.Split(core, ".")
	if len(nums) != 3 {
		return false
	}
	for _, n := range nums {
		if !numericIdentifier(n) {
			return false
		}
	}
	if hasPre && !identifiers(pre, true) {
		return false
	}
	return !hasBuild || identifiers(build, false)
}

// identifiers reports whether s is dot-separated, non-empty identifiers of
// [0-9A-Za-z-]; in a pre-release (pre), an all-digit one has no leading zero.
func identifiers(s string, pre bool) bool {
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return false
		}
		digits := true
		for i := 0; i < len(id); i++ {
			c := id[i]
			switch {
			case c >= '0' && c <= '9':
			case c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
				digits = false
			default:
				return false
			}
		}
		if pre && digits && !numericIdentifier(id) {
			return false
		}
	}
	return true
}

// numericIdentifier reports whether s is 0 or digits without a leading 0.
func numericIdentifier(s string) bool {
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func lowerOrDigit(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// FilePath reports whether p is a legal path of a file inside a registry
// package: relative POSIX, an optional leading "./", segments of
// [A-Za-z0-9._@+-], and no ".", ".." or empty segments.
func FilePath(p string) bool {
	p = strings.TrimPrefix(p, "./")
	if p == "" {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." || !fileSegment(seg) {
			return false
		}
	}
	return true
}

// fileSegment reports whether seg is one or more of [A-Za-z0-9._@+-].
func fileSegment(seg string) bool {
	if seg == "" {
		return false
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if !(c >= 'A' && c <= 'Z' || lowerOrDigit(c) || strings.IndexByte("._@+-", c) >= 0) {
			return false
		}
	}
	return true
}
