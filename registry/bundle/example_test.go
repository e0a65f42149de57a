package bundle_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registry/bundle"
	"github.com/jigkit/jig/registry/layout"
)

func Example() {
	// One version of @acme/tools/greeter with one file.
	file := []byte("hello\n")
	manifest := []byte(`{"name":"greeter","version":"1.0.0"}`)
	index, _ := (&registry.DigestIndex{Namespace: "@acme", Path: "tools/greeter", Version: "1.0.0",
		Manifest: registry.Digest(manifest), Files: map[string]string{"templates/hello.txt": registry.Digest(file)}}).Marshal()

	var buf bytes.Buffer
	w := bundle.NewWriter(&buf, "@acme")
	// Entries go in sorted by name.
	for _, e := range []struct {
		name string
		data []byte
	}{
		{layout.DigestIndex("@acme", "tools/greeter", "1.0.0"), index},
		{layout.Manifest("@acme", "tools/greeter", "1.0.0"), manifest},
		{layout.File("@acme", "tools/greeter", "1.0.0", "templates/hello.txt"), file},
	} {
		if err := w.Add(e.name, int64(len(e.data)), bytes.NewReader(e.data)); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	b, err := bundle.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), bundle.Limits{})
	if err != nil {
		panic(err)
	}
	for _, v := range b.Versions {
		fmt.Println(v.ID(), strings.Join(v.Files, ","))
		r, _, _ := b.Open(v, "templates/hello.txt")
		data, _ := io.ReadAll(r)
		fmt.Printf("%q\n", data)
	}
	// Output:
	// @acme/tools/greeter@1.0.0 templates/hello.txt
	// "hello\n"
}
