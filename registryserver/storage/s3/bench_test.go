package s3_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// The S3 benchmarks need the server scripts/ci/start-s3.sh starts; without
// JIG_TEST_S3_ENDPOINT they are skipped.

var benchSizes = []int{1 << 10, 64 << 10}

func BenchmarkGet(b *testing.B) {
	st := newS3(b)
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

func BenchmarkStat(b *testing.B) {
	st := newS3(b)
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

func BenchmarkPut(b *testing.B) {
	st := newS3(b)
	data := make([]byte, 1<<10)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := st.Put(b.Context(), "@main/bench/1.0.0/put", bytes.NewReader(data), int64(len(data))); err != nil {
			b.Fatal(err)
		}
	}
}
