package registryserver_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
	"github.com/jigkit/jig/registryserver/storage/disk"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// BenchmarkPublish measures POST /registries end to end on memory storage:
// multipart parsing, temp file, checksum, two archive passes, schema
// validation and the atomic commit. Each iteration publishes a new
// registry of 10 files of 4 KiB.
func BenchmarkPublish(b *testing.B) {
	h := publishHandler(b, memory.New())
	files := ""
	var entries []pt.Entry
	for i := range 10 {
		if i > 0 {
			files += ","
		}
		files += fmt.Sprintf(`{"target":"f%d.txt","type":"registry:lib","path":"templates/f%d.txt"}`, i, i)
		entries = append(entries, pt.File(fmt.Sprintf("templates/f%d.txt", i), fmt.Sprintf("%04096d", i)))
	}
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		manifest := fmt.Sprintf(`{"name":"r%d","namespace":"@gated","type":"registry:build","version":"1.0.0","priority":3,"files":[%s]}`, i, files)
		archive := pt.Build(0, append([]pt.Entry{pt.File("registry.json", manifest)}, entries...)...)
		f := form{archive: archive}
		b.StartTimer()
		if r := postB(b, h, pubPublish, f); r != http.StatusCreated {
			b.Fatalf("got %d", r)
		}
	}
}

// BenchmarkPublishDisk500 is [BenchmarkPublish] on disk storage with 500
// files of 2 KiB (about 1 MB), the size bench/publish.sh times with jig
// publish: what the server spends on one upload of many small files.
func BenchmarkPublishDisk500(b *testing.B) {
	st, err := disk.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	h := publishHandler(b, st)
	var files strings.Builder
	var entries []pt.Entry
	for i := range 500 {
		if i > 0 {
			files.WriteString(",")
		}
		fmt.Fprintf(&files, `{"target":"f%d.txt","type":"registry:lib","path":"templates/f%d.txt"}`, i, i)
		entries = append(entries, pt.File(fmt.Sprintf("templates/f%d.txt", i), fmt.Sprintf("%02048d", i)))
	}
	b.SetBytes(500 * 2048)
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		manifest := fmt.Sprintf(`{"name":"many","namespace":"@gated","type":"registry:build","version":"1.0.%d","priority":3,"files":[%s]}`, i, files.String())
		archive := pt.Build(0, append([]pt.Entry{pt.File("registry.json", manifest)}, entries...)...)
		f := form{archive: archive}
		b.StartTimer()
		if r := postB(b, h, pubPublish, f); r != http.StatusCreated {
			b.Fatalf("got %d", r)
		}
	}
}
