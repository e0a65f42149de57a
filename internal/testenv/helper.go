package testenv

import (
	"bufio"
	"os"
	"os/exec"
	"testing"
)

// StartHelper runs the test named name of this test binary as a process
// of its own, with env (KEY=value) added to the environment, for a test
// that kills a process halfway. It returns the process and a reader of
// its standard output (where the helper says how far it got); the
// process is killed and waited for when the test ends.
func StartHelper(t testing.TB, name string, env ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewReader(out)
}
