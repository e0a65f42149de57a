package registryserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// TestLongPathsAre400 checks that a path part or a path longer than the
// storage can hold is the caller's error (400) on every route and
// backend, never a 500 with an error-level log line (issue 10 item 9).
func TestLongPathsAre400(t *testing.T) {
	t.Parallel()
	seg := strings.Repeat("a", storage.MaxSegmentLength+1)
	// Short parts, but a key over storage.MaxKeyLength bytes.
	longPath := strings.TrimSuffix(strings.Repeat(strings.Repeat("b", 200)+"/", 6), "/")
	tests := []struct {
		target, code string
	}{
		{"/registries/@main/" + seg, "INVALID_PATH"},
		{"/registries/@main/" + seg + "/versions", "INVALID_PATH"},
		{"/registries/@main/" + seg + "/1.0.0", "INVALID_PATH"},
		{"/registries/@main/x/1.0.0/files/" + seg, "INVALID_PATH"},
		{"/registries/@main/x/1.0.0/files/" + longPath, "INVALID_PATH"},
		{"/registries/@main/" + longPath, "INVALID_PATH"},
		{"/registries/@" + seg + "/x", "INVALID_PATH"},
		{"/registries/@gated/" + seg, "INVALID_PATH"},
		{"/registries/@main/x/1.0.0-" + seg, "INVALID_PATH"},
		{"/namespaces/@" + seg + "/registries", "INVALID_NAMESPACE"},
		{"/presets/" + seg, "INVALID_PRESET"},
	}
	backends := map[string]func(t *testing.T) storage.Storage{
		"memory": func(*testing.T) storage.Storage { return memory.New() },
		"disk": func(t *testing.T) storage.Storage {
			st, err := disk.New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		},
	}
	for name, newStorage := range backends {
		for _, auth := range []string{"gated.json", ""} {
			t.Run(fmt.Sprintf("%s/auth=%q", name, auth), func(t *testing.T) {
				t.Parallel()
				core, logs := observer.New(zapcore.WarnLevel)
				opts := []registryserver.Option{
					registryserver.WithStorage(newStorage(t)),
					registryserver.WithLogger(zap.New(core)),
					registryserver.WithAdminToken(adminToken),
				}
				if auth != "" {
					opts = append(opts, registryserver.WithAuthFile(filepath.Join("testdata", "auth", auth)))
				}
				h, err := registryserver.New(opts...)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = h.Close() })
				logs.TakeAll() // startup warnings
				for _, tt := range tests {
					for _, tok := range []string{"", adminToken} {
						resp := do(h, http.MethodGet, tt.target, bearer(tok))
						var body struct{ Code string }
						_ = json.Unmarshal(readBody(t, resp), &body)
						if resp.StatusCode != http.StatusBadRequest || body.Code != tt.code {
							t.Errorf("GET %.60s… (token %q): got %d %s, want 400 %s", tt.target, tok, resp.StatusCode, body.Code, tt.code)
						}
					}
				}
				for _, e := range logs.All() {
					t.Errorf("log line at %s: %s %v", e.Level, e.Message, e.ContextMap())
				}
			})
		}
	}
}

// TestPublishLongPaths checks that a package whose storage keys would be
// too long is refused with 400 before anything is written.
func TestPublishLongPaths(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", storage.MaxSegmentLength+1)
	manifestWithFile := func(path, file string) string {
		return fmt.Sprintf(`{"name":"ui-kit","namespace":"@gated","type":"registry:feature","version":"1.0.0","priority":4%s,
		  "files":[{"target":"src/a.txt","type":"registry:lib","path":%q}]}`, path, file)
	}
	tests := map[string][]byte{
		"file segment": pt.Build(0, pt.Dir("./"), pt.File("./registry.json", manifestWithFile("", "templates/"+long)),
			pt.File("./templates/"+long, "x")),
		"file path": pt.Build(0, pt.Dir("./"), pt.File("./registry.json", manifestWithFile("", strings.Repeat("d/", 400)+"a.txt")),
			pt.File("./"+strings.Repeat("d/", 400)+"a.txt", "x")),
		"storage path": pkg(regJSON("@gated", "1.0.0", `,"path":"`+strings.Repeat("p/", 400)+`ui-kit"`)),
	}
	for name, archive := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			st, err := disk.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			core, logs := observer.New(zapcore.WarnLevel)
			h := publishHandler(t, st, registryserver.WithLogger(zap.New(core)),
				registryserver.WithUploadLimits(registryserver.UploadLimits{MaxPathLength: 4096}))
			r := post(t, h, pubPublish, form{archive: pt.Gzip(archive)})
			if r.status != http.StatusBadRequest {
				t.Fatalf("got %d %s %q, want 400", r.status, r.Code, r.Msg)
			}
			keys, err := st.List(t.Context(), "")
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != 0 {
				t.Errorf("storage holds %q after a refused publish, want nothing", keys)
			}
			for _, e := range logs.All() {
				t.Errorf("log line at %s: %s %v", e.Level, e.Message, e.ContextMap())
			}
		})
	}
}
