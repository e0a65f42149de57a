package testenv

import (
	"os"
	"os/exec"
	"testing"
)

const chromiumHow = "install Chromium (apt-get install chromium) or set JIG_TEST_CHROMIUM to a Chrome or Chromium binary"

// Chromium returns the path of a Chrome or Chromium binary for browser
// tests: JIG_TEST_CHROMIUM, else chromium, chromium-browser,
// google-chrome or google-chrome-stable on PATH. Without one the test is
// skipped, or fails under CI=true.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("JIG_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return need(t, os.Getenv, chromiumHow, "JIG_TEST_CHROMIUM")[0]
}

// Artifacts returns a directory where a test may leave files for people
// to look at (screenshots): $JIG_TEST_ARTIFACTS/<test name> when that is
// set, else a directory under t.TempDir(). The path is logged.
func Artifacts(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if root := os.Getenv("JIG_TEST_ARTIFACTS"); root != "" {
		dir = root + string(os.PathSeparator) + sanitize(t.Name())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("test artifacts in %s", dir)
	return dir
}

func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}
