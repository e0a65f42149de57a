package testenv_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
)

// TestWriteExecutableWhileForking writes and runs fresh programs while other
// goroutines keep starting processes. With os.WriteFile instead of
// WriteExecutable this fails with "text file busy" within a few runs of
// -count=20.
func TestWriteExecutableWhileForking(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	stop := make(chan struct{})
	var forkers sync.WaitGroup
	for range 3 {
		forkers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = exec.Command("sh", "-c", ":").Run()
			}
		})
	}
	defer func() { close(stop); forkers.Wait() }()
	var runners sync.WaitGroup
	errs := make(chan error, 100)
	for w := range 4 {
		runners.Go(func() {
			for i := range 25 {
				p := filepath.Join(dir, fmt.Sprintf("prog-%d-%d", w, i))
				want := fmt.Sprintf("%d-%d", w, i)
				if err := testenv.WriteExecutable(p, []byte("#!/bin/sh\necho "+want+"\n")); err != nil {
					errs <- err
					return
				}
				out, err := exec.Command(p).Output()
				if err != nil {
					errs <- fmt.Errorf("running %s: %w", p, err)
					return
				}
				if got := string(out); got != want+"\n" {
					errs <- fmt.Errorf("%s printed %q, want %q", p, got, want)
				}
			}
		})
	}
	runners.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
