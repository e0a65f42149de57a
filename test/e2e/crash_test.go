package e2e

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/pkgarchive"
	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registryclient"
	"github.com/jigkit/jig/registryserver/storage/s3"
)

// crashServer is one jig-server process on a disk storage, which the test
// may kill.
type crashServer struct{ *testenv.Server }

// startCrashServer runs the built jig-server with the storage settings env
// on port, and waits until it answers /health.
func startCrashServer(t *testing.T, dir string, env []string, port int) *crashServer {
	t.Helper()
	bin, err := buildBin()
	if err != nil {
		t.Fatal(err)
	}
	return &crashServer{testenv.StartServer(t, bin, dir, append([]string{"PORT=" + strconv.Itoa(port),
		"ADMIN_TOKEN=" + adminToken, "LOG_LEVEL=info"}, env...)...)}
}

func (s *crashServer) kill(t *testing.T) {
	t.Helper()
	if err := s.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
}

// bigRegistry writes a registry of n small files plus one of big bytes to
// a new folder and returns the folder and the big file's SHA-256.
func bigRegistry(t *testing.T, version string, n, big int) (string, string) {
	t.Helper()
	dir := t.TempDir()
	type file struct {
		Target string `json:"target"`
		Type   string `json:"type"`
		Path   string `json:"path"`
	}
	var files []file
	for i := range n {
		name := fmt.Sprintf("files/f%05d.txt", i)
		files = append(files, file{name, "registry:docs", name})
		if err := os.MkdirAll(filepath.Join(dir, "files"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintf("file %d of %s\n", i, version)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	blob := make([]byte, big)
	for i := range blob {
		blob[i] = byte(i*7919 + i/251) // poorly compressible, deterministic
	}
	if err := os.WriteFile(filepath.Join(dir, "blob.bin"), blob, 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, file{"blob.bin", "registry:docs", "blob.bin"})
	m, _ := json.Marshal(map[string]any{
		"name": "big", "namespace": "@e2e", "type": "registry:feature", "version": version, "priority": 4, "files": files,
	})
	if err := os.WriteFile(filepath.Join(dir, "registry.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(blob)
	return dir, hex.EncodeToString(sum[:])
}

// uploadFiles lists the upload files (not lock files or markers) in the
// server's upload folder.
func uploadFiles(t *testing.T, uploads string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(uploads, "*.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// crashStorage is a storage the killed servers use, as the test sees it.
type crashStorage struct {
	env     []string // the server's storage settings
	uploads string   // the server's upload folder
	// exists reports whether key exists; count how many objects (on
	// disk: files, the backend's temporary files included) are under
	// the folder prefix.
	exists func(key string) bool
	count  func(prefix string) int
}

func diskStorage(t *testing.T, dir string) crashStorage {
	data := filepath.Join(dir, "data")
	return crashStorage{
		env:     []string{"STORAGE_ROOT=" + data},
		uploads: filepath.Join(data, ".jig", "uploads"),
		exists:  func(key string) bool { _, err := os.Stat(filepath.Join(data, key)); return err == nil },
		count: func(prefix string) int {
			n := 0
			_ = filepath.WalkDir(filepath.Join(data, prefix), func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					n++
				}
				return nil
			})
			return n
		},
	}
}

func s3Storage(t *testing.T, dir string) crashStorage {
	env := s3Env(t)
	cfg := testenv.S3(t)
	var prefix string
	for _, e := range env {
		if p, ok := strings.CutPrefix(e, "S3_PREFIX="); ok {
			prefix = p
		}
	}
	st, err := s3.New(t.Context(), s3.Config{Endpoint: cfg.Endpoint, Bucket: cfg.Bucket, Region: cmp.Or(cfg.Region, "us-east-1"),
		AccessKeyID: cfg.AccessKey, SecretAccessKey: cfg.SecretKey, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	uploads := filepath.Join(dir, "uploads")
	return crashStorage{
		env:     append(env, "UPLOAD_DIR="+uploads),
		uploads: uploads,
		exists: func(key string) bool {
			_, err := st.Stat(context.WithoutCancel(t.Context()), key)
			return err == nil
		},
		count: func(p string) int {
			keys, _ := st.List(context.WithoutCancel(t.Context()), p)
			return len(keys)
		},
	}
}

// poll waits until cond holds, for at most two minutes (a hang, not a
// timing assertion).
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestKillDuringPublish kills jig-server with SIGKILL in the middle of a
// publish, twice: while it receives the upload, and while it writes the
// version's files. Each time the restarted server leaves no upload file
// behind, shows no part of the version, and a retry of the same version
// succeeds at once (issue 10 item 13). It runs on disk and on S3.
func TestKillDuringPublish(t *testing.T) {
	t.Parallel()
	t.Run("disk", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		killDuringPublish(t, dir, diskStorage(t, dir))
	})
	t.Run("s3", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		killDuringPublish(t, dir, s3Storage(t, dir))
	})
}

func killDuringPublish(t *testing.T, dir string, st crashStorage) {
	port := freePort(t)
	const reg = "@e2e/features/big/"
	pkg, blobSum := bigRegistry(t, "1.0.0", 2000, 8<<20)

	// 1. Killed while receiving: the client sends half the body and
	// waits until the server has spooled some of it to disk.
	srv := startCrashServer(t, dir, st.env, port)
	var tgz bytes.Buffer
	if _, _, err := pkgarchive.Pack(&tgz, pkg); err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/registries", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+adminToken)
	respc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("the killed server answered %s", resp.Status)
		}
		respc <- err
	}()
	fw, err := mw.CreateFormFile("file", "big.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write(tgz.Bytes()[:tgz.Len()/2]); err != nil {
		t.Fatal(err)
	}
	poll(t, "the upload file", func() bool {
		for _, f := range uploadFiles(t, st.uploads) {
			if fi, err := os.Stat(f); err == nil && fi.Size() > 0 {
				return true
			}
		}
		return false
	})
	srv.kill(t)
	pw.CloseWithError(io.ErrClosedPipe)
	<-respc
	if got := uploadFiles(t, st.uploads); len(got) != 1 {
		t.Fatalf("after the kill: upload files %q, want the one being received", got)
	}

	srv = startCrashServer(t, dir, st.env, port)
	if got := uploadFiles(t, st.uploads); len(got) != 0 {
		t.Errorf("after the restart: upload files %q, want none", got)
	}

	// 2. Killed while writing the version: the publish is stopped
	// (SIGSTOP) as soon as its claim and its first files exist, checked
	// to be halfway, then killed. Should it have finished in between, the
	// next version is tried.
	version := ""
	var vdir, claim string
	for attempt := range 5 {
		v := fmt.Sprintf("1.0.%d", attempt)
		vdir, claim = reg+v+"/", ".publish/"+reg+v+".lock"
		pkg, blobSum = bigRegistry(t, v, 2000, 8<<20)
		c, err := registryclient.New(srv.URL, registryclient.WithToken(adminToken))
		if err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() { _, err := c.Publish(t.Context(), pkg); errc <- err }()
		poll(t, "the claim and the first files", func() bool {
			return st.exists(claim) && st.count(vdir) >= 5
		})
		if err := srv.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		halfway := st.exists(claim) && !st.exists(vdir+"registry.json")
		srv.kill(t)
		<-errc
		if halfway {
			version = v
			break
		}
		t.Logf("attempt %d: the publish of %s finished before it was stopped; trying again", attempt, v)
		srv = startCrashServer(t, dir, st.env, port)
	}
	if version == "" {
		t.Fatal("every publish finished before it could be stopped halfway")
	}
	written := st.count(vdir)
	if written == 0 || len(uploadFiles(t, st.uploads)) != 1 {
		t.Fatalf("after the kill: %d files written, uploads %q; want some files and the upload", written, uploadFiles(t, st.uploads))
	}
	t.Logf("killed the publish of %s after %d of 2002 files", version, written)

	srv = startCrashServer(t, dir, st.env, port)
	if got := uploadFiles(t, st.uploads); len(got) != 0 {
		t.Errorf("after the restart: upload files %q, want none", got)
	}
	if st.exists(claim) {
		t.Errorf("after the restart the claim %s is still there", claim)
	}
	if n := st.count(vdir); n > 0 {
		t.Errorf("after the restart %d files of the interrupted publish are left", n)
	}
	for _, path := range []string{"/registries/" + reg + version, "/registries/" + reg + version + "/files/files/f00000.txt"} {
		if code, _ := get(t, srv.URL+path, "127.0.0.1"); code != http.StatusNotFound {
			t.Errorf("GET %s after the restart = %d, want 404", path, code)
		}
	}

	// The retry succeeds at once and serves every file.
	c, err := registryclient.New(srv.URL, registryclient.WithToken(adminToken))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := c.Publish(ctx, pkg)
	if err != nil {
		t.Fatalf("retrying the publish of %s: %v", version, err)
	}
	if want := reg + version; res.Path != want {
		t.Errorf("published path %q, want %q", res.Path, want)
	}
	code, body := get(t, srv.URL+"/registries/"+reg+version+"/files/blob.bin", "127.0.0.1")
	if sum := sha256.Sum256(body); code != http.StatusOK || hex.EncodeToString(sum[:]) != blobSum {
		t.Errorf("blob.bin after the retry: %d, sha256 %x; want 200 and %s", code, sum, blobSum)
	}
	for _, i := range []int{0, 999, 1999} {
		code, body := get(t, srv.URL+fmt.Sprintf("/registries/%s%s/files/files/f%05d.txt", reg, version, i), "127.0.0.1")
		if want := fmt.Sprintf("file %d of %s\n", i, version); code != http.StatusOK || string(body) != want {
			t.Errorf("file %d after the retry: %d %q, want 200 %q", i, code, body, want)
		}
	}
	// 2000 files, blob.bin, registry.json and the digest index.
	if n := st.count(vdir); n != 2003 {
		t.Errorf("the version folder holds %d files, want 2003", n)
	}
}
