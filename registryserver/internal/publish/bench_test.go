package publish_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/jigkit/jig/registryserver/internal/publish"
	"github.com/jigkit/jig/registryserver/storage/disk"
)

// BenchmarkPublishDisk measures the server side of a publish on disk
// storage: claim, every file of the version, the digest index, the commit
// point and versions.json. Each iteration publishes a new version of 500
// files, of 2 KiB (about 1 MB) or of 20 KB (10 MB). Run it with -benchmem;
// the time is the disk's as much as the code's.
func BenchmarkPublishDisk(b *testing.B) {
	for _, bc := range []struct {
		name  string
		files int
		size  int
	}{
		{"500x2KiB", 500, 2 << 10},
		{"500x20KB", 500, 20_000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			st, err := disk.New(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			s := publish.New(st)
			contents := make([][]byte, bc.files)
			for i := range contents {
				contents[i] = bytes.Repeat([]byte{byte('a' + i%26)}, bc.size)
			}
			writeFiles := func(put publish.PutFunc) error {
				for i, c := range contents {
					if err := put(context.Background(), fmt.Sprintf("templates/f%d.txt", i), int64(len(c)), bytes.NewReader(c)); err != nil {
						return err
					}
				}
				return nil
			}
			b.SetBytes(int64(bc.files * bc.size))
			n := 0
			for b.Loop() {
				n++
				if err := s.Publish(b.Context(), version(fmt.Sprintf("1.0.%d", n), "bench"), writeFiles); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
