package pkgarchivetest_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
)

func ExampleBuild() {
	data := pkgarchivetest.Build(0,
		pkgarchivetest.File("registry.json", "{}"),
		pkgarchivetest.Entry{Name: "evil", Type: tar.TypeSymlink, Link: "/etc/passwd"},
		pkgarchivetest.Entry{Name: "zeros", Zeros: 1 << 20},
	)
	zr, _ := gzip.NewReader(bytes.NewReader(data))
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		fmt.Println(h.Name, h.Size, h.Linkname != "")
	}
	fmt.Println(len(data) < 4096)
	// Output:
	// registry.json 2 false
	// evil 0 true
	// zeros 1048576 false
	// true
}
