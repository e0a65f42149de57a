package registry_test

import (
	"bufio"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

func FuzzParseID(f *testing.F) {
	file, err := os.Open("testdata/ids.txt")
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		f.Add(sc.Text())
	}
	file.Close()
	f.Fuzz(func(t *testing.T, s string) {
		id, err := registry.ParseID(s)
		// Another default namespace changes the namespace of shorthand
		// and nothing else: not validity, not the other parts.
		other, otherErr := registry.ParseID(s, registry.WithDefaultNamespace("@rack"))
		if (err == nil) != (otherErr == nil) {
			t.Fatalf("ParseID(%q): error %v, with @rack as default: error %v", s, err, otherErr)
		}
		if err == nil {
			want := id
			if registry.IsShorthand(s) {
				want.Namespace = "@rack"
			}
			if other != want {
				t.Fatalf("ParseID(%q, WithDefaultNamespace(@rack)) = %+v, want %+v", s, other, want)
			}
		}
		if err != nil {
			var ie *registry.IDError
			if !errors.As(err, &ie) || !errors.Is(err, registry.ErrInvalidID) {
				t.Fatalf("ParseID(%q): error %v is not an *IDError wrapping ErrInvalidID", s, err)
			}
			// A suggestion is always valid and lowercase.
			if ie.Suggestion != "" {
				id, err := registry.ParseID(ie.Suggestion)
				if err != nil {
					t.Fatalf("ParseID(%q) suggests %q, which does not parse: %v", s, ie.Suggestion, err)
				}
				if id.Key() != strings.ToLower(id.Key()) {
					t.Fatalf("ParseID(%q) suggests %q, which is not lowercase", s, ie.Suggestion)
				}
			}
			return
		}
		if id.Key() != strings.ToLower(id.Key()) {
			t.Fatalf("ParseID(%q) = %+v: uppercase accepted", s, id)
		}
		if !registry.ValidNamespace(id.Namespace) || !registry.ValidPath(id.Path) {
			t.Fatalf("ParseID(%q) = %+v: invalid namespace or path accepted", s, id)
		}
		if id.Version != "" && !registry.ValidVersion(id.Version) {
			t.Fatalf("ParseID(%q) = %+v: invalid version accepted", s, id)
		}
		if id.Language != "" && id.Language != registry.LangTS && id.Language != registry.LangJS {
			t.Fatalf("ParseID(%q) = %+v: unknown language accepted", s, id)
		}
		// A variant is a safe name, never a language, never beside one.
		if id.Variant != "" && (!registry.ValidVariant(id.Variant) || id.Language != "" ||
			strings.ContainsAny(id.Variant, "./\\:") || len(id.Variant) > registry.MaxVariantName || id.Variant != strings.ToLower(id.Variant)) {
			t.Fatalf("ParseID(%q) = %+v: bad variant accepted", s, id)
		}
		if id.Bare().Key() != id.Key() || id.Bare().Variant != "" || id.Bare().Language != "" {
			t.Fatalf("ParseID(%q).Bare() = %+v", s, id.Bare())
		}
		// Round trip: the canonical string parses back to the same ID.
		again, err := registry.ParseID(id.String())
		if err != nil {
			t.Fatalf("ParseID(%q).String() = %q does not parse: %v", s, id.String(), err)
		}
		if again != id {
			t.Fatalf("round trip of %q: got %+v, want %+v", s, again, id)
		}
		if !strings.HasPrefix(id.String(), id.Key()) {
			t.Fatalf("String %q does not start with Key %q", id.String(), id.Key())
		}
		// The key never climbs out of its namespace folder.
		for _, seg := range id.Segments() {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("ParseID(%q): segment %q", s, seg)
			}
		}
	})
}

// TestParseIDCase: identifiers are lowercase everywhere; uppercase is
// refused with the lowercase form as a suggestion, never lowercased
// silently.
func TestParseIDCase(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, part, suggestion string }{
		{"Quality/ESLint", "path", "quality/eslint"},
		{"quality/ESLint@1.0.0-RC.1:js", "path", "quality/eslint@1.0.0-RC.1:js"},
		{"@Main/quality/eslint", "namespace", "@main/quality/eslint"},
		{"@BAD/x", "namespace", "@bad/x"},
		{"@presets/Node", "path", "@presets/node"},
		{"@main/Foo_Bar", "path", ""}, // not fixable by lowercasing
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			_, err := registry.ParseID(tt.in)
			var ie *registry.IDError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v, want an *IDError", err)
			}
			if ie.Part != tt.part || ie.Suggestion != tt.suggestion {
				t.Errorf("got part %q suggestion %q, want %q %q", ie.Part, ie.Suggestion, tt.part, tt.suggestion)
			}
			if tt.suggestion != "" && !strings.HasSuffix(err.Error(), "did you mean "+tt.suggestion+"?") {
				t.Errorf("got %q, want it to end with the suggestion", err)
			}
		})
	}
}

func TestParseNamespace(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, suggestion string }{
		{"@company", ""},
		{"@BAD", "@bad"},
		{"company", "@company"},
		{"@-x", ""},
		{"@", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := registry.ParseNamespace(tt.in)
			if tt.in == "@company" {
				if err != nil || got != tt.in {
					t.Fatalf("got %q, %v; want %q", got, err, tt.in)
				}
				return
			}
			var ie *registry.IDError
			if !errors.As(err, &ie) || ie.Part != "namespace" || ie.Suggestion != tt.suggestion {
				t.Fatalf("got %v (suggestion %q), want a namespace error suggesting %q", err, suggestion(ie), tt.suggestion)
			}
			if !strings.HasPrefix(err.Error(), "invalid namespace ") {
				t.Errorf("got %q, want it to start with \"invalid namespace\"", err)
			}
		})
	}
}

func suggestion(ie *registry.IDError) string {
	if ie == nil {
		return ""
	}
	return ie.Suggestion
}

// TestParseIDDefaultNamespace: WithDefaultNamespace gives shorthand its
// namespace; a value that is not a namespace, or is @presets (shorthand
// never names a preset), is ignored.
func TestParseIDDefaultNamespace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, def, want string
	}{
		{"runtimes/node", "@rack", "@rack/runtimes/node"},
		{"  runtimes/node@1.0.0:ts ", "@rack", "@rack/runtimes/node@1.0.0:ts"},
		{"@main/runtimes/node", "@rack", "@main/runtimes/node"},
		{"@presets/node", "@rack", "@presets/node"},
		{"runtimes/node", "", "@main/runtimes/node"},
		{"runtimes/node", "@presets", "@main/runtimes/node"},
		{"runtimes/node", "rack", "@main/runtimes/node"},
		{"runtimes/node", "@Rack", "@main/runtimes/node"},
		{"runtimes/node", "@../x", "@main/runtimes/node"},
		{"node", "@presets", "@main/node"},
	} {
		id, err := registry.ParseID(tc.in, registry.WithDefaultNamespace(tc.def))
		if err != nil {
			t.Fatalf("ParseID(%q, WithDefaultNamespace(%q)): %v", tc.in, tc.def, err)
		}
		if got := id.String(); got != tc.want {
			t.Errorf("ParseID(%q, WithDefaultNamespace(%q)) = %s, want %s", tc.in, tc.def, got, tc.want)
		}
	}
	for _, s := range []string{"runtimes/node", " a/b", "x@1.0.0"} {
		if !registry.IsShorthand(s) {
			t.Errorf("IsShorthand(%q) = false, want true", s)
		}
	}
	for _, s := range []string{"@main/x", " @rack/x", "@presets/node"} {
		if registry.IsShorthand(s) {
			t.Errorf("IsShorthand(%q) = true, want false", s)
		}
	}
}
