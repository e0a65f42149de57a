package core

import (
	"hash/maphash"
	"strconv"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// TestResourceCacheAgreesWithParse reads more paths than the table has
// slots, twice over, valid and invalid ones mixed: every answer, first
// read or remembered, is what parseResource says, and a path whose slot
// another path took is parsed again rather than answered wrongly.
func TestResourceCacheAgreesWithParse(t *testing.T) {
	t.Parallel()
	c := &resourceCache{seed: maphash.MakeSeed()}
	var paths []string
	for i := range 3 * resourceCacheSlots {
		n := strconv.Itoa(i)
		paths = append(paths,
			"@main/reg"+n,
			"@main/reg"+n+"/1.0."+n+"/files/src/"+n+".ts",
			"@main/Reg"+n, // invalid
		)
	}
	for round := range 2 {
		for _, p := range paths {
			want, wantOK := parseResource(p)
			if wantOK {
				want = want.withKeys()
			}
			got, ok := c.Parse(p)
			if ok != wantOK {
				t.Fatalf("round %d: parse(%q) ok = %v, want %v", round, p, ok, wantOK)
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(Resource{})); diff != "" {
				t.Fatalf("round %d: parse(%q) (-want +got):\n%s", round, p, diff)
			}
		}
	}
}

// TestResourceCacheCopiesPath checks that what the table keeps does not
// point into the caller's string (which may be a slice of a large request
// line).
func TestResourceCacheCopiesPath(t *testing.T) {
	t.Parallel()
	c := &resourceCache{seed: maphash.MakeSeed()}
	line := "@main/a/1.0.0/files/x.ts?" + string(make([]byte, 1<<16))
	p := line[:len("@main/a/1.0.0/files/x.ts")]
	if _, ok := c.Parse(p); !ok {
		t.Fatalf("parse(%q) failed", p)
	}
	e := c.slots[maphash.String(c.seed, p)%resourceCacheSlots].Load()
	if e == nil {
		t.Fatal("the path was not remembered")
	}
	if unsafeSameMemory(e.p, p) || unsafeSameMemory(e.res.Namespace, p) {
		t.Error("the remembered path shares memory with the request's string")
	}
}

func FuzzResourceCache(f *testing.F) {
	seedLines(f, "registry-paths.txt")
	c := &resourceCache{seed: maphash.MakeSeed()}
	f.Fuzz(func(t *testing.T, p string) {
		// Emptying p's slot first keeps each run deterministic (a miss,
		// then a hit), as the fuzzer's coverage guidance needs.
		c.slots[maphash.String(c.seed, p)%resourceCacheSlots].Store(nil)
		want, wantOK := parseResource(p)
		if wantOK {
			want = want.withKeys() // and the storage keys of what it names
		}
		for range 2 {
			got, ok := c.Parse(p)
			if ok != wantOK || got != want {
				t.Fatalf("parse(%q) = %+v, %v; parseResource gives %+v, %v", p, got, ok, want, wantOK)
			}
		}
	})
}

// unsafeSameMemory reports whether a and b start at the same byte.
func unsafeSameMemory(a, b string) bool {
	return len(a) > 0 && len(b) > 0 && unsafe.StringData(a) == unsafe.StringData(b)
}

// BenchmarkParseResource compares parsing a file path every time with
// reading it again through the table.
func BenchmarkParseResource(b *testing.B) {
	const p = "@main/runtimes/node/1.1.0/files/templates/src/index.ts"
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := parseResource(p); !ok {
				b.Fatal("rejected")
			}
		}
	})
	b.Run("table", func(b *testing.B) {
		c := &resourceCache{seed: maphash.MakeSeed()}
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := c.Parse(p); !ok {
				b.Fatal("rejected")
			}
		}
	})
}
