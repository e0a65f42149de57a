package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/merge"
	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryclient/apply"
)

func TestEscape(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain text, é and 日本", "plain text, é and 日本"},
		{"wrote ok\x1b[2K\rfake.txt", `wrote ok\x1b[2K\rfake.txt`},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\x07title`},
		{"a\nb\tc", `a\nb\tc`},
		{"del\x7f", `del\x7f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"txt.exe\u202egnp.", `txt.exe\u202egnp.`},
		{"\u2066iso\u2069 \u200e\u200f\u061c", `\u2066iso\u2069 \u200e\u200f\u061c`},
		{"bad \xff\x9b byte", `bad \xff\x9b byte`},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got, want := escapeLines("a\x1b[31m\n\tb\r\n"), "a\\x1b[31m\n\tb\\r\n"; got != want {
		t.Errorf("escapeLines = %q, want %q", got, want)
	}
}

// shownUnsafe returns the first character of out that could steer a
// terminal (newlines aside, and tabs with lines), or "".
func shownUnsafe(out string, lines bool) string {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		if r != '\n' && !(lines && r == '\t') && unsafeRune(r, size) {
			return out[i : i+size]
		}
		i += size
	}
	return ""
}

// printManifestFields prints, the way info, search, add, init, update and
// the error report do, a registry whose description, tags, target,
// dependency and version text is s, and returns everything written: the
// text output, and the error report (which keeps the line breaks of the
// messages jig composes).
func printManifestFields(s string) (string, string) {
	var buf bytes.Buffer
	o := newOutput(&buf, &buf, false, false)
	m := &registry.Manifest{
		Name: "x", Namespace: "@main", Type: registry.Type(s), Version: "1.0.0", Description: s, Tags: []string{s, "ok"},
		Files:                []registry.File{{Target: s, Type: registry.FileDocs, Content: &s}},
		Dependencies:         map[string]string{s: s},
		RegistryDependencies: []string{s},
		Variants:             map[string]registry.VariantBlock{"grpc": {Description: s}},
	}
	info := &registryclient.Info{ID: "@main/" + s, Version: s, Latest: "1.0.0", Versions: []string{s}, Manifest: m}
	printInfo(o, info, []string{s}, []fileJSON{{Target: s, Strategy: s, Language: s}})
	printHits(o, []search.Hit{{Entry: search.Entry{Namespace: "@main", Path: s, Name: s, Version: s, Type: s, Description: s, Tags: []string{s}}}})
	r := apply.PlannedRegistry{ID: s, Key: s, Version: s, Language: registry.Language(s), Files: []string{s},
		Dependencies: []apply.Dependency{{Name: s, Range: s}}, RegistryDependencies: []string{s}}
	p := &apply.Plan{Dir: s, Template: s, Name: s, Registries: []apply.PlannedRegistry{r},
		Files:    []apply.FileChange{{Target: s, Action: apply.ActionCreate, Reason: s}, {Target: s, Action: apply.ActionConflict, Conflicts: []merge.Conflict{{Path: s, Ours: s, Theirs: s}}}},
		Packages: []apply.PackageChange{{Name: s, Range: s, Previous: s, Action: apply.PackageChanged}},
		Warnings: []string{s}, Updates: []apply.RegistryUpdate{{Key: s, From: s, To: s, Action: "update"}},
		Scripts: []merge.ScriptChange{{Name: s, Command: s, Previous: s}},
	}
	printPlan(o, p)
	printRegistry(o, p, r, true)
	printLifecycle(o, p, true)
	o.Success("Added %s (%s)", r.ID, r.Language)
	o.Warnf("%s", s)
	o.Infof("Adding registry: %s", s)
	o.Errorln(s, errors.New(s))
	o.Println(existingDirNote(s, p.Files))
	pr := &progress{w: &buf}
	pr.line("wrote " + s)
	var errBuf bytes.Buffer
	printError(&errBuf, o, reportFor(errors.New("fetching "+s+": "+s), 0, false))
	return buf.String(), errBuf.String()
}

// FuzzManifestOutput: whatever a manifest or a server says, no character
// that could steer a terminal reaches it, and the text cannot add lines
// of its own (the output has no more lines than with a plain value; an
// empty or blank one may drop some).
func FuzzManifestOutput(f *testing.F) {
	for _, s := range []string{"plain", "wrote ok\x1b[2K\rfake.txt", "\x1b]0;title\x07", "a\nb", "\u202etxt.exe", "\x9b2J", "\xff", "tab\there", "\u2028"} {
		f.Add(s)
	}
	plain, _ := printManifestFields("plain")
	wantLines := strings.Count(plain, "\n")
	f.Fuzz(func(t *testing.T, s string) {
		out, errOut := printManifestFields(s)
		if c := shownUnsafe(out, false); c != "" {
			t.Fatalf("printing %q let %q through:\n%s", s, c, out)
		}
		if c := shownUnsafe(errOut, true); c != "" {
			t.Fatalf("reporting an error with %q let %q through:\n%s", s, c, errOut)
		}
		if got := strings.Count(out, "\n"); got > wantLines {
			t.Fatalf("printing %q wrote %d lines, want at most %d:\n%s", s, got, wantLines, out)
		}
	})
}
