package s3_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEmbeddersDoNotLinkS3 checks that the embeddable handler and the other
// storage backends do not import this package or minio-go: only the
// jig-server command does.
func TestEmbeddersDoNotLinkS3(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	pkgs := []string{
		"github.com/jigkit/jig/registryserver",
		"github.com/jigkit/jig/registryserver/storage/disk",
		"github.com/jigkit/jig/registryserver/storage/memory",
	}
	out, err := exec.CommandContext(t.Context(), goBin, append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/minio/") || dep == "github.com/jigkit/jig/registryserver/storage/s3" {
			t.Errorf("%s is in the dependencies of %v; keep S3 out of the embeddable packages", dep, pkgs)
		}
	}
}
