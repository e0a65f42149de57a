package index

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/jigkit/jig/registry/search"
	"github.com/jigkit/jig/registryserver/internal/core"
	"github.com/jigkit/jig/registryserver/storage"
	"github.com/jigkit/jig/registryserver/storage/memory"
)

// TestDecodeSnapshot: the snapshot a catalog is written as reads back as
// the same catalog, and damaged or foreign documents are refused.
func TestDecodeSnapshot(t *testing.T) {
	t.Parallel()
	e := search.Entry{Namespace: "@a", Path: "x/y", Name: "y", Version: "1.0.0", Type: "registry:lib", Tags: []string{"t"}}
	through := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	good := snapshot{Format: snapshotFormat, Through: through, Presets: []search.Preset{{Name: "node"}},
		Namespaces: map[string]snapshotNS{"@a": {Registries: []snapshotRegistry{{Path: "x/y", Entry: &e}, {Path: "x/listed-only"}}}}}
	b, err := json.Marshal(good)
	if err != nil {
		t.Fatal(err)
	}
	cat, got, err := decodeSnapshot(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	n := cat.byNS["@a"]
	if !got.Equal(through) || n == nil || strings.Join(n.paths, ",") != "x/listed-only,x/y" || n.set.Len() != 1 || len(cat.presets) != 1 {
		t.Fatalf("decoded %v through %v", cat, got)
	}
	if d, ok := n.set.Get("x/y"); !ok || d.Name != "y" {
		t.Errorf("entry x/y: %v %v", d, ok)
	}
	for name, doc := range map[string]string{
		"other format":     `{"format":2,"through":"2026-12-06T12:00:00Z","namespaces":{"@a":{"registries":[{"path":"x"}]}}}`,
		"no format":        `{"namespaces":{}}`,
		"bad namespace":    `{"format":1,"namespaces":{"nope":{"registries":[{"path":"x"}]}}}`,
		"path escapes":     `{"format":1,"namespaces":{"@a":{"registries":[{"path":"../x"}]}}}`,
		"entry elsewhere":  `{"format":1,"namespaces":{"@a":{"registries":[{"path":"x","entry":{"namespace":"@b","path":"x"}}]}}}`,
		"truncated":        string(b[:len(b)/2]),
		"not an object":    `[1]`,
		"namespaces array": `{"format":1,"namespaces":[]}`,
	} {
		if _, _, err := decodeSnapshot(strings.NewReader(doc)); err == nil {
			t.Errorf("%s: decoded %s", name, doc)
		}
	}
}

// FuzzDecodeSnapshot: any document either decodes into a catalog whose
// every registry name is valid, or is refused; nothing panics.
func FuzzDecodeSnapshot(f *testing.F) {
	f.Add([]byte(`{"format":1,"through":"2026-12-06T12:00:00Z","namespaces":{"@a":{"registries":[{"path":"x/y","entry":{"namespace":"@a","path":"x/y","name":"y","version":"1.0.0","type":"registry:lib"}}]}},"presets":[]}`))
	f.Add([]byte(`{"format":1,"namespaces":{"@a":{"registries":[{"path":"x"},{"path":"x"}]}}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		cat, _, err := decodeSnapshot(bytes.NewReader(doc))
		if err != nil {
			return
		}
		for ns, n := range cat.byNS {
			for i, p := range n.paths {
				if i > 0 && n.paths[i-1] >= p {
					t.Fatalf("%s: paths not sorted and unique: %q", ns, n.paths)
				}
			}
			for _, d := range n.set.Docs() {
				if d.Namespace != ns {
					t.Fatalf("%s holds an entry of %s", ns, d.Namespace)
				}
			}
		}
	})
}

// TestEncodeSnapshot: encodeSnapshot writes the bytes json.Encoder writes
// for the whole snapshot value (as the server wrote it before streaming),
// and they decode back to the same catalog.
func TestEncodeSnapshot(t *testing.T) {
	t.Parallel()
	through := time.Date(2026, 12, 6, 12, 0, 0, 5, time.FixedZone("x", 3600))
	entry := func(ns, path string, tags ...string) search.Doc {
		d := search.Prepare(search.Entry{Namespace: ns, Path: path, Name: path, Version: "1.0.0", Type: "registry:lib",
			Description: "<b>&\u2028 Ünïcode", Tags: tags})
		d.Published = time.Unix(1e9, 7).UTC()
		return d
	}
	cats := map[string]*catalog{
		"empty": {byNS: map[string]*nsIndex{}},
		"several": {byNS: map[string]*nsIndex{
			"@b": newNS([]string{"listed-only", "x/y"}, search.NewSet([]search.Doc{entry("@b", "x/y", "t", "<u>")})),
			"@a": newNS([]string{"a"}, search.NewSet([]search.Doc{entry("@a", "a")})),
			"@c": newNS([]string{"only-listed"}, search.NewSet(nil)),
		}, presets: []search.Preset{{Name: "node", Version: "1.0.0", Registries: []string{"@a/a"}}}},
	}
	for name, cat := range cats {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			snap := snapshot{Format: snapshotFormat, Through: through.UTC(), Namespaces: map[string]snapshotNS{}, Presets: cat.presets}
			if snap.Presets == nil {
				snap.Presets = []search.Preset{}
			}
			for ns, n := range cat.byNS {
				var regs []snapshotRegistry
				for _, p := range n.paths {
					r := snapshotRegistry{Path: p}
					if d, ok := n.set.Get(p); ok {
						e := d.Entry
						r.Entry, r.Published = &e, d.Published
					}
					regs = append(regs, r)
				}
				snap.Namespaces[ns] = snapshotNS{Registries: regs}
			}
			var want, got bytes.Buffer
			if err := json.NewEncoder(&want).Encode(snap); err != nil {
				t.Fatal(err)
			}
			if err := encodeSnapshot(&got, cat, through); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Fatalf("got\n%s\nwant\n%s", got.String(), want.String())
			}
			back, at, err := decodeSnapshot(&got)
			if err != nil || !at.Equal(through) || len(back.byNS) != len(cat.byNS) {
				t.Fatalf("decoded %v through %v, %v", back, at, err)
			}
		})
	}
}

// shortPut is a storage whose Put reads a few bytes and fails.
type shortPut struct{ storage.Storage }

var errShortPut = errors.New("the disk is full")

func (shortPut) Put(_ context.Context, _ string, r io.Reader, _ int64) error {
	_, _ = io.ReadFull(r, make([]byte, 10))
	return errShortPut
}

// TestWriteSnapshotStorageStops: when storage stops reading the snapshot,
// writeSnapshot returns its error once the encoder has stopped too.
func TestWriteSnapshotStorageStops(t *testing.T) {
	t.Parallel()
	paths := make([]string, 5000)
	for i := range paths {
		paths[i] = "reg-" + strconv.Itoa(i)
	}
	cat := &catalog{byNS: map[string]*nsIndex{"@a": newNS(paths, search.NewSet(nil))}}
	s := &Index{Core: &core.Core{Store: shortPut{memory.New()}, Log: zap.NewNop()}}
	if err := s.writeSnapshot(t.Context(), cat, time.Now()); !errors.Is(err, errShortPut) {
		t.Fatalf("got %v, want %v", err, errShortPut)
	}
}
