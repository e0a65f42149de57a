package registry

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

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

// driveForm is why a target like "C:x" (or "./C:x") is refused.
const driveForm = "looks like a Windows drive path; targets are relative to the project root"

// CleanTarget checks a file target (files[].target) and returns it in clean,
// slash-separated form. Targets are relative to the project root; absolute
// paths, Windows drive or UNC forms, backslashes, NUL bytes, any path that
// climbs out of the root ("..") and any path with a component git treats as
// its ".git" directory ([IsDotGit]: ".git/hooks/pre-commit", ".GIT/config",
// "sub/.git", "git~1/config") are refused with an error wrapping
// [ErrUnsafePath]: a file there would let a registry run code through git's
// hooks or configuration. So is the project file itself ([IsProjectFile]):
// a registry writing jig.json could forge install records. Symlinks are a property of the disk, not of the
// string: writers must still check them.
//
// Targets with a character [DeceptiveRune] reports (control characters
// such as ESC or "\r", bidirectional overrides such as U+202E) are refused
// too: such a name shows as something other than it is, on a terminal or
// in a file manager.
func CleanTarget(target string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%w: target %q %s", ErrUnsafePath, target, why)
	}
	switch {
	case target == "":
		return bad("is empty")
	case strings.ContainsRune(target, 0):
		return bad("contains a NUL byte")
	case strings.IndexFunc(target, DeceptiveRune) >= 0:
		i := strings.IndexFunc(target, DeceptiveRune)
		r, _ := utf8.DecodeRuneInString(target[i:])
		return bad(fmt.Sprintf("contains the control character %U, which makes a name display as something other than it is; rename the file", r))
	case strings.Contains(target, `\`):
		return bad(`contains a backslash; use / as the separator`)
	case strings.HasPrefix(target, "/"):
		return bad("is absolute; targets are relative to the project root")
	case len(target) >= 2 && target[1] == ':':
		return bad(driveForm)
	}
	for _, seg := range strings.Split(target, "/") {
		if seg == ".." {
			return bad("leaves the project directory (..)")
		}
	}
	for _, seg := range strings.Split(target, "/") {
		if IsDotGit(seg) {
			return bad(fmt.Sprintf("is inside git's metadata directory (%q counts as .git); registries may not write git hooks or configuration", seg))
		}
	}
	c := path.Clean(target)
	if c == "." {
		return bad("names the project directory itself, not a file")
	}
	if len(c) >= 2 && c[1] == ':' {
		// "./C:" cleans to a drive form too.
		return bad(driveForm)
	}
	if IsProjectFile(c) {
		return bad(fmt.Sprintf("is the project file %s, which only jig writes (it records what is installed); registries may not write it", ProjectFile))
	}
	if first, _, _ := strings.Cut(c, "/"); IsJigDir(first) {
		return bad(fmt.Sprintf("is inside %s, the folder where jig keeps the journal of an update; registries may not write there", JigDir))
	}
	return c, nil
}

// JigDir is the folder at a project's root where jig keeps the journal of
// the command writing the project (see the apply package); no registry
// file may go there.
const JigDir = ".jig"

// IsJigDir reports whether the first component of a clean target names
// [JigDir] on some file system (case, the code points HFS+ ignores and
// NTFS's trailing dots and spaces are ignored, as in [IsProjectFile]).
func IsJigDir(seg string) bool {
	return strings.EqualFold(strings.TrimRight(hfsIgnorable.Replace(seg), " ."), JigDir)
}

// IsProjectFile reports whether the clean target c names the project file
// ([ProjectFile]) at the project root on some file system: case is
// ignored, and so are the code points HFS+ ignores and NTFS's trailing
// dots and spaces, as in [IsDotGit].
func IsProjectFile(c string) bool {
	s := strings.TrimRight(hfsIgnorable.Replace(c), " .")
	return strings.EqualFold(s, ProjectFile)
}

// hfsIgnorable are the code points HFS+ ignores in file names; git skips
// them too when it compares a name with ".git" (see git's is_hfs_dotgit).
var hfsIgnorable = strings.NewReplacer(
	"\u200c", "", "\u200d", "", "\u200e", "", "\u200f", "",
	"\u202a", "", "\u202b", "", "\u202c", "", "\u202d", "", "\u202e", "",
	"\u206a", "", "\u206b", "", "\u206c", "", "\u206d", "", "\u206e", "", "\u206f", "",
	"\ufeff", "",
)

// IsDotGit reports whether one path component names git's ".git" directory
// on some file system, applying the normalisations git itself applies when
// it checks paths (verify_path, is_hfs_dotgit, is_ntfs_dotgit):
//
//   - case is ignored (".GIT", ".Git");
//   - the code points HFS+ ignores (U+200C–U+200F, U+202A–U+202E,
//     U+206A–U+206F, U+FEFF) are removed first (".g\u200cit");
//   - NTFS drops trailing dots and spaces and treats a colon as the start
//     of an alternate data stream (".git.", ".git ", ".git::$INDEX_ALLOCATION");
//   - NTFS short names: "git~1", and any "git~<digits>".
//
// It is stricter than git where git's rule depends on the platform: every
// normalisation applies everywhere, because a project written on Linux may be
// checked out on macOS or Windows.
func IsDotGit(seg string) bool {
	s := hfsIgnorable.Replace(seg)
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimRight(s, " .")
	if strings.EqualFold(s, ".git") {
		return true
	}
	if len(s) > 4 && strings.EqualFold(s[:4], "git~") {
		for _, c := range s[4:] {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	return false
}

// DeceptiveRune reports whether r must not appear in a name shown to people
// as is: a control character (C0, DEL, C1: ESC sequences, "\r", "\b"), a
// line or paragraph separator (U+2028, U+2029), or a Unicode bidirectional
// control (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), which
// reorders what follows it ("txt.exe" shown as "exe.txt"). [CleanTarget]
// refuses targets with one; printers escape them.
func DeceptiveRune(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
}
