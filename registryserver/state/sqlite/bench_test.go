package sqlite_test

import (
	"context"
	"sync/atomic"

	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jigkit/jig/registry/wire"
	"github.com/jigkit/jig/registryserver/state"
	"github.com/jigkit/jig/registryserver/state/sqlite"
)

func benchReport(i, v int) *state.Report {
	r := &state.Report{Namespace: "@b", Reporter: "ci", At: time.Now(), CensusReport: wire.CensusReport{Project: fmt.Sprintf("https://git.example/p-%06d.git", i)}}
	for k := range 3 {
		e := wire.CensusEntry{Path: fmt.Sprintf("group-%d/reg-%d", (i+k)%20, (i+k)%20), Version: fmt.Sprintf("%d.0.0", 1+(i+v+k)%5), State: wire.CensusClean}
		if (i+v+k)%5 == 0 {
			e.State, e.Drifted = wire.CensusModified, []string{"package.json", fmt.Sprintf("src/f-%d.ts", (i+v)%40)}
		}
		r.Registries = append(r.Registries, e)
	}
	return r
}

// BenchmarkPutReport stores reports into a namespace of 10,000 projects:
// new projects, and new reports of existing ones.
func BenchmarkPutReport(b *testing.B) {
	st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	const n = 10000
	for i := range n {
		if err := st.PutReport(b.Context(), benchReport(i, 0), state.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("replace", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if err := st.PutReport(b.Context(), benchReport(i%n, i/n+1), state.Limits{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("replace-32", func(b *testing.B) {
		var seq atomic.Int64
		b.SetParallelism(16) // 32 reporters on 2 cores
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := int(seq.Add(1))
				if err := st.PutReport(context.Background(), benchReport(i%n, i/n+7), state.Limits{}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("new", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if err := st.PutReport(b.Context(), benchReport(n+i, 0), state.Limits{Namespace: 1 << 30, Reporter: 1 << 30}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
