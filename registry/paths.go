package registry

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/jigkit/jig/internal/ident"
)

// ErrUnsafePath is wrapped by errors about paths that could escape their root.
var ErrUnsafePath = errors.New("unsafe path")

// ValidFilePath reports whether p is a legal path of a file inside a registry
// package: relative POSIX, an optional leading "./", segments of
// [A-Za-z0-9._@+-], and no ".", ".." or empty segments.
func ValidFilePath(p string) bool { return ident.FilePath(p) }

// NormalizeFilePath returns p without a leading "./". It does not validate;
// call [ValidFilePath] first.
func NormalizeFilePath(p string) string { return strings.TrimPrefix(p, "./") }

// CleanTarget checks a file target (files[].target) and returns it in clean,
// slash-separated form. Targets are relative to the project root; absolute
// paths, Windows drive or UNC forms, backslashes, NUL bytes and any path that
// climbs out of the root ("..") are refused with an error wrapping
// [ErrUnsafePath]. Symlinks are a property of the disk, not of the string:
// writers must still check them.
func CleanTarget(target string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%w: target %q %s", ErrUnsafePath, target, why)
	}
	switch {
	case target == "":
		return bad("is empty")
	case strings.ContainsRune(target, 0):
		return bad("contains a NUL byte")
	case strings.Contains(target, `\`):
		return bad(`contains a backslash; use / as the separator`)
	case strings.HasPrefix(target, "/"):
		return bad("is absolute; targets are relative to the project root")
	case len(target) >= 2 && target[1] == ':':
		return bad("looks like a Windows drive path; targets are relative to the project root")
	}
	for _, seg := range strings.Split(target, "/") {
		if seg == ".." {
			return bad("leaves the project directory (..)")
		}
	}
	c := path.Clean(target)
	if c == "." {
		return bad("names the project directory itself, not a file")
	}
	return c, nil
}
