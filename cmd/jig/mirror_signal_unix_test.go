//go:build unix

package main_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stallingS3 answers the check of bucket "jig" at start with 200 and
// never answers anything else; ready reports that such a request
// arrived.
func stallingS3(t *testing.T) (url string, ready func() bool) {
	return hangingServerExcept(t, func(r *http.Request) bool {
		return r.Method == http.MethodHead && strings.Trim(r.URL.Path, "/") == "jig"
	})
}

// TestSignalEndsMirror: jig-server mirror export and import, blocked on a
// storage that stops answering, end within two seconds of SIGTERM or
// SIGINT with 143 or 130; the export leaves no bundle and no temporary
// file behind.
func TestSignalEndsMirror(t *testing.T) {
	t.Parallel()
	for _, sig := range signals {
		for _, cmd := range [][]string{
			{"mirror", "export", "--namespace", "@main", "-o", "out.tar"},
			{"mirror", "import", "in.tar"},
		} {
			t.Run(cmd[1]+"/"+sigName(sig), func(t *testing.T) {
				t.Parallel()
				s3URL, ready := stallingS3(t)
				dir := t.TempDir()
				if cmd[1] == "import" {
					writeBundle(t, filepath.Join(dir, "in.tar"))
				}
				p := startProc(t, dir, []string{
					"HOME=" + dir, "STORAGE_BACKEND=s3", "S3_ENDPOINT=" + s3URL, "S3_BUCKET=jig", "S3_REGION=us-east-1",
					"S3_ACCESS_KEY_ID=test", "S3_SECRET_ACCESS_KEY=test-secret",
				}, nil, "jig-server", cmd...)
				if !p.waitBlocked(t, ready) {
					t.Fatalf("jig-server %s ended before reading the storage\noutput:\n%s", cmd[1], p.output())
				}
				if cmd[1] == "export" {
					// Blocked while writing: the temporary file exists.
					if tmp, _ := filepath.Glob(filepath.Join(dir, ".out.tar.*.tmp")); len(tmp) != 1 {
						t.Fatalf("got temporary files %v while the export runs, want one", tmp)
					}
				}
				p.stop(t, sig, stopBound)
				if got := p.code(); got != 128+int(sig) {
					t.Errorf("got exit code %d, want %d\noutput:\n%s", got, 128+int(sig), p.output())
				}
				ents, err := os.ReadDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range ents {
					if e.Name() != "in.tar" {
						t.Errorf("%s left %s behind", cmd[1], e.Name())
					}
				}
			})
		}
	}
}
