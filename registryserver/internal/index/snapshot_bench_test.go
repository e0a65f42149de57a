package index

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry/search"
)

// scaleSnapshot returns the snapshot document of n registries as
// bench/scale plants them: spread over 10 namespaces and 100 groups,
// reg-<i> but one in 100 lint-<i>, one in 10 with "lint" in its
// description, all searchable.
func scaleSnapshot(tb testing.TB, n int) []byte {
	tb.Helper()
	snap := snapshot{Format: snapshotFormat, Through: time.Unix(1e9, 0).UTC(), Namespaces: map[string]snapshotNS{}, Presets: []search.Preset{}}
	for i := range n {
		ns := "@scale" + strconv.Itoa(i%10)
		name := "reg-" + strconv.Itoa(i)
		if i%100 == 0 {
			name = "lint-" + strconv.Itoa(i)
		}
		path := "group-" + strconv.Itoa(i/10%100) + "/" + name
		desc := "Registry " + strconv.Itoa(i) + " of the scale benchmark."
		if i%10 == 0 {
			desc += " Adds a lint step."
		}
		e := search.Entry{Namespace: ns, Path: path, Name: name, Version: "3.0.0", Type: "registry:feature", Description: desc,
			Tags: []string{"scale", "group-" + strconv.Itoa(i%100)}}
		n := snap.Namespaces[ns]
		n.Registries = append(n.Registries, snapshotRegistry{Path: path, Entry: &e, Published: time.Unix(1e9+int64(i), 0).UTC()})
		snap.Namespaces[ns] = n
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
