package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// Program returns the path of the program name on PATH. When it is
// missing the test is skipped with how (the command that installs it),
// or fails when CI is "true": CI must install every program the tests
// use.
func Program(t testing.TB, name, how string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not on PATH, but CI=true: %s", name, how)
	}
	t.Skipf("%s is not on PATH; %s to run this test", name, how)
	return ""
}
