package core

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkCompress measures compressing a JSON-like body once per coding
// and size: the work (and memory) of a compression-cache miss.
func BenchmarkCompress(b *testing.B) {
	unit := `{"path":"templates/src/index.ts","type":"template","target":"src/index.ts","content":"export const x = 1;"},` + "\n"
	for _, size := range []int{4 << 10, 48 << 10, 400 << 10} {
		data := []byte(strings.Repeat(unit, size/len(unit)+1)[:size])
		for _, enc := range supportedEncodings {
			b.Run(fmt.Sprintf("%s/%dKiB", enc, size>>10), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if _, err := compress(enc, data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
