package registry_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

func TestCleanTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		target string
		want   string // "" means refused
	}{
		{"src/index.ts", "src/index.ts"},
		{"./a/./b", "a/b"},
		{".gitignore", ".gitignore"},
		{".github/workflows/ci.yml", ".github/workflows/ci.yml"},
		{".gitkeep", ".gitkeep"},
		{"git/x", "git/x"},
		{"git~x", "git~x"},
		{"a.git/b", "a.git/b"},
		{"..git", "..git"},
		{"../x", ""},
		{"/etc/passwd", ""},
		{`a\b`, ""},
		{"C:/x", ""},
		{"a\x00b", ""},
		{".", ""},
		{"", ""},
		// git's own directory, however it is spelled.
		{".git/hooks/pre-commit", ""},
		{".git/config", ""},
		{".git", ""},
		{"sub/.git/config", ""},
		{"./.git/config", ""},
		{".GIT/config", ""},
		{".Git/hooks/post-checkout", ""},
		{".git./config", ""},
		{".git ./config", ""},
		{".git. . /config", ""},
		{".git::$INDEX_ALLOCATION/config", ""},
		{".git:stream", ""},
		{"git~1/config", ""},
		{"GIT~1/hooks/pre-commit", ""},
		{"git~12/config", ""},
		// the project file, jig's own record.
		{"jig.json", ""},
		{"./jig.json", ""},
		{"JIG.JSON", ""},
		{"jig.json.", ""},
		{"jig.json ", ""},
		{"j\u200cig.json", ""},
		{"sub/jig.json", "sub/jig.json"},
		{"jig.jsonc", "jig.jsonc"},
		// jig's journal folder.
		{".jig/journal.json", ""},
		{"./.JIG/x", ""},
		{".jig./journal.json", ""},
		{"sub/.jig/journal.json", "sub/.jig/journal.json"},
		{".jigrc", ".jigrc"},
		{".g\u200cit/config", ""},
		{"\u200d.git/config", ""},
		{".git\ufeff/config", ""},
		{".gi\u206at/hooks/pre-commit", ""},
		{".\u202eGIT\u200f/config", ""},
		// Names that display as something other than they are.
		{"wrote ok\x1b[2K\rfake.txt", ""},
		{"a\rb", ""},
		{"a\nb", ""},
		{"a\tb", ""},
		{"a\x7fb", ""},
		{"a\u0085b", ""},
		{"invoice\u202etxt.exe", ""},
		{"a\u2066b\u2069", ""},
		{"a\u200eb", ""},
		{"a\u061cb", ""},
		{"a\u2028b", ""},
		{"caf\u00e9/\u65e5\u672c.txt", "caf\u00e9/\u65e5\u672c.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			t.Parallel()
			got, err := registry.CleanTarget(tt.target)
			if tt.want == "" {
				if !errors.Is(err, registry.ErrUnsafePath) {
					t.Fatalf("CleanTarget(%q) = %q, %v; want an error wrapping ErrUnsafePath", tt.target, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("CleanTarget(%q) = %q, %v; want %q", tt.target, got, err, tt.want)
			}
		})
	}
}

// FuzzCleanTarget checks that an accepted target is clean (cleaning it
// again changes nothing), relative, free of ".." and of any component git
// would treat as .git, and of characters that display as something else.
func FuzzCleanTarget(f *testing.F) {
	for _, s := range []string{"src/index.ts", ".git/config", ".GIT./x", "git~1/x", ".g\u200cit/x", "a/../b", "./a", ".gitignore"} {
		f.Add(s)
	}
	f.Add("a\u202etxt.exe")
	f.Add("ok\x1b]0;title\x07.txt")
	f.Fuzz(func(t *testing.T, target string) {
		got, err := registry.CleanTarget(target)
		if err != nil {
			if !errors.Is(err, registry.ErrUnsafePath) {
				t.Fatalf("error %v does not wrap ErrUnsafePath", err)
			}
			return
		}
		again, err := registry.CleanTarget(got)
		if err != nil || again != got {
			t.Fatalf("CleanTarget(%q) = %q, but CleanTarget(%q) = %q, %v", target, got, got, again, err)
		}
		if got == "." || got[0] == '/' {
			t.Fatalf("CleanTarget(%q) = %q is not a relative file path", target, got)
		}
		if strings.IndexFunc(got, registry.DeceptiveRune) >= 0 {
			t.Fatalf("CleanTarget(%q) = %q keeps a control or bidi character", target, got)
		}
		for _, seg := range splitSlash(got) {
			if seg == ".." || seg == "." || seg == "" || registry.IsDotGit(seg) {
				t.Fatalf("CleanTarget(%q) = %q keeps segment %q", target, got, seg)
			}
		}
	})
}

func splitSlash(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '/' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}
