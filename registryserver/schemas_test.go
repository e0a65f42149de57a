package registryserver_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// tagsSchema is an operator's registry-item.json that wants tags.
const tagsSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":["tags"],
  "properties":{"tags":{"type":"array","minItems":1,"items":{"type":"string"}}},
  "propertyNames":{"pattern":"^[$a-zA-Z]+$"}}`

// TestOperatorSchemaEnforced: the registry-item.json a storage holds (the
// reference's SCHEMA_DIR default, <STORAGE_ROOT>/schema) is served and
// every upload must match it: 400 SCHEMA_VALIDATION_FAILED naming what is
// wrong, as the reference answers (issue 36, N3). Nothing is stored.
func TestOperatorSchemaEnforced(t *testing.T) {
	t.Parallel()
	st := memory.New()
	putString(t, st, layout.Schema(registry.ManifestSchemaFile), tagsSchema)
	h := publishHandler(t, st)
	if code, body := get(t, h, "/schemas/registry-item.json", ""); code != 200 || string(body) != tagsSchema {
		t.Fatalf("GET /schemas/registry-item.json: got %d %s, want the storage's schema", code, body)
	}
	r := post(t, h, pubAdmin, form{archive: pkg(regJSON("@public", "1.0.0", ""))})
	if r.status != http.StatusBadRequest || r.Code != "SCHEMA_VALIDATION_FAILED" || !strings.Contains(r.Msg, "tags") {
		t.Fatalf("without tags: got %d %s %q, want 400 SCHEMA_VALIDATION_FAILED naming tags", r.status, r.Code, r.Msg)
	}
	if code, _ := get(t, h, "/registries/@public/features/ui-kit/1.0.0", ""); code != http.StatusNotFound {
		t.Errorf("the refused version is served: %d", code)
	}
	r = post(t, h, pubAdmin, form{archive: pkg(regJSON("@public", "1.0.0", `,"tags":[]`))})
	if r.status != http.StatusBadRequest || !strings.Contains(r.Msg, "/tags") {
		t.Fatalf("empty tags: got %d %s %q, want 400 at /tags", r.status, r.Code, r.Msg)
	}
	if r := post(t, h, pubAdmin, form{archive: pkg(regJSON("@public", "1.0.0", `,"tags":["ui"]`))}); r.status != http.StatusCreated {
		t.Fatalf("with tags: got %d %s %q, want 201", r.status, r.Code, r.Msg)
	}
	// The operator changes the schema: the next upload sees the new one.
	putString(t, st, layout.Schema(registry.ManifestSchemaFile), `{"type":"object","required":["license"]}`)
	if r := post(t, h, pubAdmin, form{archive: pkg(regJSON("@public", "1.1.0", `,"tags":["ui"]`))}); r.status != http.StatusBadRequest || !strings.Contains(r.Msg, "license") {
		t.Fatalf("after the schema changed: got %d %s %q, want 400 naming license", r.status, r.Code, r.Msg)
	}
}

// TestSchemaDir: WithSchemaDir (SCHEMA_DIR) serves and enforces the
// folder's files; a folder that does not exist is a warning at start, and
// the built-in schemas apply.
func TestSchemaDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, registry.ManifestSchemaFile), []byte(tagsSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	// The storage's own copy is not used when a folder is given.
	putString(t, st, layout.Schema(registry.ManifestSchemaFile), `{"type":"object","required":["license"]}`)
	h := publishHandler(t, st, registryserver.WithSchemaDir(dir))
	if code, body := get(t, h, "/schemas/registry-item.json", ""); code != 200 || string(body) != tagsSchema {
		t.Fatalf("GET /schemas/registry-item.json: got %d %s, want SCHEMA_DIR's", code, body)
	}
	embedded, _ := registry.SchemaFile(registry.PresetSchemaFile)
	if code, body := get(t, h, "/schemas/preset.json", ""); code != 200 || string(body) != string(embedded) {
		t.Errorf("GET /schemas/preset.json: got %d, want the built-in schema (SCHEMA_DIR has none)", code)
	}
	if r := post(t, h, pubAdmin, form{archive: pkg(regJSON("@public", "1.0.0", ""))}); r.status != http.StatusBadRequest || r.Code != "SCHEMA_VALIDATION_FAILED" {
		t.Fatalf("without tags: got %d %s %q, want 400 SCHEMA_VALIDATION_FAILED", r.status, r.Code, r.Msg)
	}
	if r := post(t, h, pubAdmin, form{archive: pkg(regJSON("@public", "1.0.0", `,"tags":["ui"]`))}); r.status != http.StatusCreated {
		t.Fatalf("with tags: got %d %s %q, want 201", r.status, r.Code, r.Msg)
	}

	core, logs := observer.New(zap.WarnLevel)
	missing := filepath.Join(dir, "nope")
	h = publishHandler(t, memory.New(), registryserver.WithSchemaDir(missing), registryserver.WithLogger(zap.New(core)))
	if n := logs.FilterMessageSnippet("SCHEMA_DIR does not exist").FilterField(zap.String("schema_dir", missing)).Len(); n != 1 {
		t.Errorf("got %d warnings about the missing SCHEMA_DIR, want 1: %v", n, logs.All())
	}
	if r := post(t, h, pubAdmin, form{archive: pkg(regJSON("@public", "1.0.0", ""))}); r.status != http.StatusCreated {
		t.Fatalf("missing SCHEMA_DIR: got %d %s %q, want 201 (built-in schema)", r.status, r.Code, r.Msg)
	}
}

// TestOperatorSchemaHostile: a schema that would make the server fetch
// (a remote or file "$ref"), or is huge or deeply nested, is not compiled:
// uploads get 500 (as the reference's for a schema it cannot load), no
// request leaves the server, and nothing is stored.
func TestOperatorSchemaHostile(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"type":"object"}`))
	}))
	t.Cleanup(remote.Close)
	secret := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(secret, []byte(`{"type":"object"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, schema := range map[string]string{
		"remote ref":   `{"$ref":"` + remote.URL + `/x.json"}`,
		"file ref":     `{"$ref":"file://` + secret + `"}`,
		"relative ref": `{"$id":"` + remote.URL + `/base.json","$ref":"other.json"}`,
		"deep":         strings.Repeat(`{"not":`, 200) + `{}` + strings.Repeat(`}`, 200),
		"huge":         `{"description":"` + strings.Repeat("x", 2<<20) + `"}`,
		"not json":     `{"type":`,
		"bad regexp":   `{"pattern":"(?<x"}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := memory.New()
			putString(t, st, layout.Schema(registry.ManifestSchemaFile), schema)
			h := publishHandler(t, st)
			r := post(t, h, pubAdmin, form{archive: pkg(regJSON("@public", "1.0.0", `,"tags":["ui"]`))})
			if r.status != http.StatusInternalServerError {
				t.Errorf("got %d %s %q, want 500", r.status, r.Code, r.Msg)
			}
			if strings.Contains(r.Msg, secret) || strings.Contains(r.Msg, remote.URL) {
				t.Errorf("the 500 tells the caller about the schema: %q", r.Msg)
			}
			if code, _ := get(t, h, "/registries/@public/features/ui-kit/1.0.0", ""); code != http.StatusNotFound {
				t.Errorf("a version was stored: %d", code)
			}
		})
	}
	t.Cleanup(func() {
		if n := hits.Load(); n != 0 {
			t.Errorf("the server fetched %d schemas", n)
		}
	})
}

func putString(t *testing.T, st storage.Storage, key, s string) {
	t.Helper()
	if err := st.Put(t.Context(), key, strings.NewReader(s), int64(len(s))); err != nil {
		t.Fatal(err)
	}
}
