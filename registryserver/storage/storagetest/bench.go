package storagetest

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/jigkit/jig/registry/layout"
	"github.com/jigkit/jig/registryserver/storage"
)

// benchSizes are a manifest-sized and a template-file-sized object.
var benchSizes = []int{1 << 10, 64 << 10}

// Bench runs the read and write benchmarks every backend reports, as
// sub-benchmarks Get/<size>, Stat, Put/<size> and (for a
// [storage.ConditionalPutter]) PutIf. newStorage is called once per
// sub-benchmark and must return an empty storage.
func Bench(b *testing.B, newStorage func(b *testing.B) storage.Storage) {
	b.Run("Get", func(b *testing.B) {
		st := newStorage(b)
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
	})
	b.Run("Stat", func(b *testing.B) {
		st := newStorage(b)
		key := layout.Versions("@main", "bench")
		if err := st.Put(b.Context(), key, bytes.NewReader([]byte(`{"versions":["1.0.0"]}`)), -1); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := st.Stat(b.Context(), key); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Put", func(b *testing.B) {
		st := newStorage(b)
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
	})
	b.Run("PutIf", func(b *testing.B) {
		cp, ok := newStorage(b).(storage.ConditionalPutter)
		if !ok {
			b.Skip("the backend has no conditional writes")
		}
		key := layout.Versions("@main", "bench")
		etag, err := cp.PutIf(b.Context(), key, bytes.NewReader([]byte("0")), 1, "")
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if etag, err = cp.PutIf(b.Context(), key, bytes.NewReader([]byte("1")), 1, etag); err != nil {
				b.Fatal(err)
			}
		}
	})
}
