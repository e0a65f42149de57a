package index

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/scalecatalog"
	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/search"
)

// scaleSnapshot returns the snapshot document of the n registries of
// internal/scalecatalog spread over 10 namespaces, as bench/scale plants
// them, all searchable.
func scaleSnapshot(tb testing.TB, n int) []byte {
	tb.Helper()
	snap := snapshot{Format: snapshotFormat, Through: time.Unix(1e9, 0).UTC(), Namespaces: map[string]snapshotNS{}, Presets: []search.Preset{}}
	for i := range n {
		r := scalecatalog.Of(i, 10)
		e := search.Entry{Namespace: r.Namespace, Path: r.Path, Name: r.Name, Version: "3.0.0", Type: scalecatalog.Type, Description: r.Description, Tags: r.Tags}
		ns := snap.Namespaces[r.Namespace]
		ns.Registries = append(ns.Registries, snapshotRegistry{Path: r.Path, Entry: &e, Published: time.Unix(1e9+int64(i), 0).UTC()})
		snap.Namespaces[r.Namespace] = ns
	}
	b, err := json.Marshal(snap)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkSnapshotLoad10k measures loading the catalog index of 10,000
// registries from its snapshot, as a server starts, and reports the heap
// the loaded index keeps per registry (heap-B/doc): decoded entries,
// search sets and listings together.
func BenchmarkSnapshotLoad10k(b *testing.B) {
	const n = 10_000
	doc := scaleSnapshot(b, n)
	load := func() *catalog {
		cat, _, err := decodeSnapshot(bytes.NewReader(doc))
		if err != nil {
			b.Fatal(err)
		}
		return cat
	}
	var cat *catalog
	perDoc := float64(testenv.RetainedHeap(func() any { cat = load(); return cat })) / n
	if got := countSearchable(cat); got != n {
		b.Fatalf("got %d searchable registries, want %d", got, n)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		load()
	}
	b.ReportMetric(perDoc, "heap-B/doc")
}

func countSearchable(cat *catalog) int {
	n := 0
	for _, ns := range cat.byNS {
		n += ns.set.Len()
	}
	return n
}
