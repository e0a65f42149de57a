package disk_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/jigkit/jig/registryserver/storage"
)

// benchSizes are a manifest-sized and a template-file-sized object.
var benchSizes = []int{1 << 10, 64 << 10}

func benchGet(b *testing.B, st storage.Storage) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			key := fmt.Sprintf("@main/bench/1.0.0/file-%d", size)
			if err := st.Put(b.Context(), key, bytes.NewReader(make([]byte, size)), int64(size)); err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 32<<10)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				rc, _, err := st.Get(b.Context(), key)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.CopyBuffer(io.Discard, rc, buf); err != nil {
					b.Fatal(err)
				}
				rc.Close()
			}
		})
	}
}

func benchStat(b *testing.B, st storage.Storage) {
	const key = "@main/bench/versions.json"
	if err := st.Put(b.Context(), key, bytes.NewReader([]byte(`{"versions":["1.0.0"]}`)), -1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Stat(b.Context(), key); err != nil {
			b.Fatal(err)
		}
	}
}

func benchPut(b *testing.B, st storage.Storage) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			data := make([]byte, size)
			key := fmt.Sprintf("@main/bench/1.0.0/put-%d", size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if err := st.Put(b.Context(), key, bytes.NewReader(data), int64(size)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGet(b *testing.B)  { benchGet(b, newDisk(b, b.TempDir())) }
func BenchmarkStat(b *testing.B) { benchStat(b, newDisk(b, b.TempDir())) }
func BenchmarkPut(b *testing.B)  { benchPut(b, newDisk(b, b.TempDir())) }

func BenchmarkPutIf(b *testing.B) {
	st := newDisk(b, b.TempDir())
	const key = "@main/bench/versions.json"
	etag, err := st.PutIf(b.Context(), key, bytes.NewReader([]byte("0")), 1, "")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if etag, err = st.PutIf(b.Context(), key, bytes.NewReader([]byte("1")), 1, etag); err != nil {
			b.Fatal(err)
		}
	}
}
