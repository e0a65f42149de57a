//go:build unix

package servercli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
)

// publishRaw uploads a one-file package for @main/features/<name>@1.0.0
// with the admin token and returns the status.
func publishRaw(t *testing.T, base, admin, name string) int {
	t.Helper()
	manifest := `{"name":"` + name + `","namespace":"@main","path":"features/` + name + `","type":"registry:feature","version":"1.0.0","priority":4,` +
		`"files":[{"target":"a.txt","type":"registry:docs","path":"templates/a.txt"}]}`
	tgz := bytes.NewBuffer(pt.Build(0, pt.File("registry.json", manifest), pt.File("templates/a.txt", "hi\n")))
	sum := sha256.Sum256(tgz.Bytes())
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "pkg.tar.gz")
	fw.Write(tgz.Bytes())
	mw.WriteField("checksum", hex.EncodeToString(sum[:]))
	mw.Close()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/registries", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := (&http.Client{Timeout: failAfter}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestReloadWebhooks: an edited webhooks.json is taken without a restart
// (issue 30 item 5): publishes after the reload notify the new endpoint
// only. A webhooks.json that does not load keeps the previous one.
func TestReloadWebhooks(t *testing.T) {
	t.Parallel()
	var oldHits, newHits atomic.Int32
	oldHook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { oldHits.Add(1) }))
	defer oldHook.Close()
	newHook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { newHits.Add(1) }))
	defer newHook.Close()
	hookDoc := func(url string) []byte {
		return []byte(`{"webhooks":[{"url":"` + url + `","secret":"s","events":["version.created"],"enabled":true}]}`)
	}
	dir := t.TempDir()
	hooks := filepath.Join(dir, "webhooks.json")
	replace(t, hooks, hookDoc(oldHook.URL))
	base, _, out := start(t, "--storage-root", filepath.Join(dir, "data"), "--admin-token", "adm",
		"--webhook-config-path", hooks, "--config-reload-interval", "20ms")
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.After(failAfter)
		for !cond() {
			select {
			case <-deadline:
				t.Fatalf("gave up waiting for %s; log:\n%s", what, out)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	if code := publishRaw(t, base, "adm", "one"); code != http.StatusCreated {
		t.Fatalf("publish one: got %d", code)
	}
	wait("the first endpoint to be notified", func() bool { return oldHits.Load() == 1 })

	reloads := strings.Count(out.String(), "Reloaded auth.json and webhooks.json")
	replace(t, hooks, hookDoc(newHook.URL))
	wait("the reload", func() bool { return strings.Count(out.String(), "Reloaded auth.json and webhooks.json") > reloads })
	if code := publishRaw(t, base, "adm", "two"); code != http.StatusCreated {
		t.Fatalf("publish two: got %d", code)
	}
	wait("the new endpoint to be notified", func() bool { return newHits.Load() == 1 })

	// A broken file keeps the new endpoint.
	failures := strings.Count(out.String(), "Reloading auth.json and webhooks.json failed")
	replace(t, hooks, []byte(`{"webhooks":[{"url":"`+oldHook.URL+`","url":"`+oldHook.URL+`","secret":"s","events":["version.created"],"enabled":true}]}`))
	wait("the failed reload", func() bool {
		return strings.Count(out.String(), "Reloading auth.json and webhooks.json failed") > failures
	})
	if code := publishRaw(t, base, "adm", "three"); code != http.StatusCreated {
		t.Fatalf("publish three: got %d", code)
	}
	wait("the new endpoint to be notified again", func() bool { return newHits.Load() == 2 })
	if n := oldHits.Load(); n != 1 {
		t.Errorf("the replaced endpoint got %d notifications, want 1 (before the reload only)", n)
	}
}
