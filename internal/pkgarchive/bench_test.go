package pkgarchive_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/pkgarchive"
	pt "github.com/jigkit/jig/internal/pkgarchive/pkgarchivetest"
)

// BenchmarkScan reads a package of 100 files of 10 KiB each.
func BenchmarkScan(b *testing.B) {
	entries := []pt.Entry{pt.File("registry.json", `{"name":"x"}`)}
	for i := range 100 {
		entries = append(entries, pt.File(fmt.Sprintf("templates/f%03d.txt", i), strings.Repeat(fmt.Sprintf("line %d\n", i), 1400)))
	}
	data := pt.Build(0, entries...)
	var unpacked int64
	for _, e := range entries {
		unpacked += int64(len(e.Body))
	}
	b.SetBytes(unpacked) // MB/s of unpacked content
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pkgarchive.Scan(bytes.NewReader(data), pkgarchive.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
