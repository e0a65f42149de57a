package registry_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jigkit/jig/registry"
)

// TestParseIDVariants: a suffix other than :ts and :js names a variant
// when it is a safe lowercase name; anything else is refused, saying
// which part is wrong.
func TestParseIDVariants(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", registry.MaxVariantName+1)
	tests := []struct {
		in          string
		wantVariant string
		wantLang    registry.Language
		wantErr     string // in the message
		suggestion  string
	}{
		{in: "@main/services/go-service:distroless", wantVariant: "distroless"},
		{in: "services/go-service@1.0.0:grpc", wantVariant: "grpc"},
		{in: "@presets/go-service:distroless", wantVariant: "distroless"},
		{in: "x:ts", wantLang: registry.LangTS},
		{in: "x:" + long[:registry.MaxVariantName], wantVariant: long[:registry.MaxVariantName]},
		{in: "x:Distroless", wantErr: "variants are lowercase", suggestion: "x:distroless"},
		{in: "x:..", wantErr: "is not a language or variant suffix"},
		{in: "x:a/b", wantErr: "is not a language or variant suffix"},
		{in: "x:a.b", wantErr: "is not a language or variant suffix"},
		{in: "x:", wantErr: "the suffix after : is empty"},
		{in: "x:ts:grpc", wantErr: "path"},
		{in: "x:" + long, wantErr: "at most 40 characters"},
		{in: "x:grpc-ünicode", wantErr: "is not a language or variant suffix"},
		{in: "@presets/go-service:ts", wantErr: "a preset takes no @version or :ts/:js suffix"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			id, err := registry.ParseID(tc.in)
			if tc.wantErr != "" {
				var ie *registry.IDError
				if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an *IDError saying %q", err, tc.wantErr)
				}
				if ie.Suggestion != tc.suggestion {
					t.Errorf("got suggestion %q, want %q", ie.Suggestion, tc.suggestion)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if id.Variant != tc.wantVariant || id.Language != tc.wantLang {
				t.Errorf("got variant %q language %q, want %q %q", id.Variant, id.Language, tc.wantVariant, tc.wantLang)
			}
			if again, err := registry.ParseID(id.String()); err != nil || again != id {
				t.Errorf("round trip of %q: got %+v, %v", id.String(), again, err)
			}
		})
	}
}

// TestManifestVariantsValidation: the schema and the checks beside it
// refuse variant names that are not safe, too many variants, variant
// files that leave the project and a default that is not a variant.
func TestManifestVariantsValidation(t *testing.T) {
	t.Parallel()
	base := `{"name":"x","namespace":"@main","type":"registry:feature","version":"1.0.0","priority":4,`
	many := make([]string, registry.MaxVariants+1)
	for i := range many {
		many[i] = fmt.Sprintf(`"v%d":{}`, i)
	}
	tests := []struct {
		name, doc, wantErr string
	}{
		{name: "valid", doc: base + `"variants":{"distroless":{"description":"d","files":[{"target":"Dockerfile","type":"registry:config","content":"FROM x"}]}},"defaultVariant":"distroless"}`},
		{name: "uppercase name", doc: base + `"variants":{"Grpc":{}}}`, wantErr: "/variants"},
		{name: "dotdot name", doc: base + `"variants":{"..":{}}}`, wantErr: "/variants"},
		{name: "a language as a name", doc: base + `"variants":{"ts":{}}}`, wantErr: "not ts or js"},
		{name: "too long", doc: base + `"variants":{"` + strings.Repeat("a", 41) + `":{}}}`, wantErr: "at most 40 bytes"},
		{name: "too many", doc: base + `"variants":{` + strings.Join(many, ",") + `}}`, wantErr: "65 variants, more than the 64 allowed"},
		{name: "file escapes", doc: base + `"variants":{"grpc":{"files":[{"target":"../x","type":"registry:config","content":"x"}]}}}`, wantErr: "/variants/grpc/files/0/target"},
		{name: "file into .git", doc: base + `"variants":{"grpc":{"files":[{"target":".git/hooks/pre-commit","type":"registry:config","content":"x"}]}}}`, wantErr: "/variants/grpc/files/0/target"},
		{name: "unknown default", doc: base + `"variants":{"grpc":{}},"defaultVariant":"rest"}`, wantErr: `defaultVariant "rest" is not one of`},
		{name: "unknown field in a block", doc: base + `"variants":{"grpc":{"scripts":{"a":"b"}}}}`, wantErr: "/variants/grpc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := registry.ValidateManifestJSON([]byte(tc.doc))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("got %v, want an error saying %q", err, tc.wantErr)
			}
		})
	}
}

func ExampleManifest_ForVariant() {
	m, err := registry.ParseManifest([]byte(`{
  "name": "go-service", "namespace": "@main", "type": "registry:framework", "version": "1.1.0", "priority": 2,
  "ecosystem": "go",
  "files": [
    {"target": "main.go", "type": "registry:entry", "path": "templates/main.go"},
    {"target": "Dockerfile", "type": "registry:config", "path": "templates/Dockerfile"}
  ],
  "variants": {
    "distroless": {
      "description": "A distroless runtime image",
      "files": [{"target": "Dockerfile", "type": "registry:config", "path": "templates/Dockerfile.distroless"}]
    },
    "grpc": {
      "dependencies": {"google.golang.org/grpc": "v1.66.0"}
    }
  }
}`))
	if err != nil {
		panic(err)
	}
	fmt.Println("variants:", m.VariantNames())
	for _, f := range m.ForVariant("", "distroless").Files {
		fmt.Println(f.Target, "<-", f.Path)
	}
	fmt.Println("grpc requires", m.ForVariant("", "grpc").Dependencies)
	fmt.Println(m.CheckVariant("@main/services/go-service@1.1.0", "alpine"))
	// Output:
	// variants: [distroless grpc]
	// main.go <- templates/main.go
	// Dockerfile <- templates/Dockerfile.distroless
	// grpc requires map[google.golang.org/grpc:v1.66.0]
	// @main/services/go-service@1.1.0 has no variant "alpine"; its variants are: distroless, grpc (as in @main/services/go-service:distroless)
}
