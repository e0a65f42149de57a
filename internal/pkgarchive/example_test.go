package pkgarchive_test

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"

	"github.com/jigkit/jig/internal/pkgarchive"
	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
)

func ExampleScan() {
	data := pt.Build(0,
		pt.Dir("./"),
		pt.File("./registry.json", `{"name":"demo"}`),
		pt.File("./templates/a.txt", "hello"),
		pt.Entry{Name: "./link", Type: tar.TypeSymlink, Link: "/etc/passwd"},
	)
	ix, err := pkgarchive.Scan(bytes.NewReader(data), pkgarchive.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(ix.Manifest))
	fmt.Println(ix.Names())
	fmt.Println(ix.Unsafe)

	_, err = pkgarchive.Scan(bytes.NewReader(pt.Build(0, pt.File("../escape", "x"))), pkgarchive.Limits{})
	fmt.Println(err)
	// Output:
	// {"name":"demo"}
	// [registry.json templates/a.txt]
	// [{link symbolic link}]
	// entry path climbs out of the package (..): "../escape"
}

func ExampleWalk() {
	data := pt.Build(0, pt.File("registry.json", "{}"), pt.File("a.txt", "A"), pt.File("b.txt", "B"))
	_ = pkgarchive.Walk(bytes.NewReader(data), pkgarchive.Limits{},
		func(name string) bool { return name != "b.txt" },
		func(name string, size int64, body io.Reader) error {
			b, err := io.ReadAll(body)
			fmt.Printf("%s %d %q\n", name, size, b)
			return err
		})
	// Output:
	// registry.json 2 "{}"
	// a.txt 1 "A"
}
