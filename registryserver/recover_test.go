package registryserver_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jigkit/jig/registryserver"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// deadOwner is the id of a jig-server process that died: its lock file in
// the upload folder exists and nobody holds it.
const deadOwner = "0123456789abcdef0123456789abcdef"

// plantDeadProcess leaves in dir what a jig-server killed while receiving
// an upload leaves: its lock file and a part of the upload.
func plantDeadProcess(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	upload := filepath.Join(dir, deadOwner+"-123.tar.gz")
	for _, f := range []string{filepath.Join(dir, deadOwner+".lock"), upload} {
		if err := os.WriteFile(f, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return upload
}

// TestUploadFolderOnDisk: on a disk storage uploads are received in
// <root>/.jig/uploads, which is never a namespace; the uploads of a dead
// process are gone once the handler is built.
func TestUploadFolderOnDisk(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	st, err := disk.New(root)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	uploads := filepath.Join(root, ".jig", "uploads")
	stale := plantDeadProcess(t, uploads)
	h := publishHandler(t, st)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the dead process's upload after New: %v, want it removed", err)
	}
	if r := post(t, h, pubAdmin, form{archive: pkg(regJSON("@public", "1.0.0", ""))}); r.status != http.StatusCreated {
		t.Fatalf("publish: got %d %s", r.status, r.body)
	}
	entries, err := os.ReadDir(uploads)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tar.gz") {
			t.Errorf("upload file %s left after the publish", e.Name())
		}
	}
	_, body := get(t, h, "/namespaces", pubAdmin)
	if strings.Contains(string(body), ".jig") || strings.Contains(string(body), "uploads") {
		t.Errorf("/namespaces lists the upload folder: %s", body)
	}
	for _, p := range []string{"/namespaces/.jig/registries", "/registries/.jig/uploads", "/registries/@public/../.jig/uploads/" + deadOwner + ".dead"} {
		if status, _ := get(t, h, p, pubAdmin); status != http.StatusBadRequest && status != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 400 or 404", p, status)
		}
	}
}

// TestHandlerRecover: Recover removes a dead process's uploads and takes
// over its claim at once, removing the half-written version, so the
// retry succeeds.
func TestHandlerRecover(t *testing.T) {
	t.Parallel()
	st := memory.New()
	uploads := filepath.Join(t.TempDir(), "uploads")
	h := publishHandler(t, st, registryserver.WithUploadTempDir(uploads))
	plantDeadProcess(t, uploads)
	now := time.Now().UTC()
	claim, _ := json.Marshal(map[string]any{"id": "crashed", "owner": deadOwner, "started": now, "heartbeat": now})
	for k, v := range map[string]string{
		".publish/@public/features/ui-kit/1.0.0.lock":      string(claim),
		"@public/features/ui-kit/1.0.0/templates/half.txt": "half",
	} {
		if err := st.Put(t.Context(), k, strings.NewReader(v), -1); err != nil {
			t.Fatal(err)
		}
	}
	// Before recovery the claim of the dead process is taken over by the
	// retry itself; here recovery comes first.
	rec, err := h.Recover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := registryserver.Recovery{UploadFiles: 1, UploadBytes: int64(len("partial")), Claims: 1, RemovedKeys: 1}
	if rec != want {
		t.Errorf("Recover = %+v, want %+v", rec, want)
	}
	keys, _ := st.List(t.Context(), "")
	if len(keys) != 0 {
		t.Errorf("keys after Recover = %q, want none", keys)
	}
	if r := post(t, h, pubAdmin, form{archive: pkg(regJSON("@public", "1.0.0", ""))}); r.status != http.StatusCreated {
		t.Fatalf("retry: got %d %s", r.status, r.body)
	}
	if rec, err := h.Recover(t.Context()); err != nil || !rec.Empty() {
		t.Errorf("second Recover = %+v, %v; want nothing to do", rec, err)
	}
	entries, _ := os.ReadDir(uploads)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Contains(names, deadOwner+".dead") || slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, ".tar.gz") }) {
		t.Errorf("upload folder = %q, want the dead marker and no uploads", names)
	}
}

func TestUploadFolderMustBePrivate(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("Unix permissions")
	}
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err := registryserver.New(registryserver.WithUploadTempDir(dir))
	if err == nil || !strings.Contains(err.Error(), "written by other users") {
		t.Errorf("New with a world-writable upload folder: %v, want an error saying so", err)
	}
}
