package core

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jigkit/jig/registry"
	"github.com/jigkit/jig/registryserver/storage"
)

// seedLines adds every line of testdata/name to the fuzz corpus.
func seedLines(f *testing.F, name string) {
	f.Helper()
	file, err := os.Open("testdata/" + name)
	if err != nil {
		f.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		f.Add(sc.Text())
	}
	if err := sc.Err(); err != nil {
		f.Fatal(err)
	}
}

func TestNegotiateEncoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		header, want string
	}{
		{"", encIdentity},
		{"gzip, deflate, br", encBrotli},
		{"gzip, deflate", encGzip},
		{"deflate", encDeflate},
		{"br;q=0.5, gzip;q=0.8", encGzip},
		{"br;q=0, gzip", encGzip},
		{"gzip;q=0", encIdentity},
		{"*", encBrotli},
		{"*;q=0", encIdentity},
		{"*;q=0.5, br;q=0", encGzip},
		{"identity", encIdentity},
		{"x-gzip", encGzip},
		{"GZIP;Q=0.7, BR;q=0.700", encBrotli},
		{"gzip;q=1.5, br;q=abc, deflate", encDeflate},
		{"zstd, compress", encIdentity},
		{"deflate;q=0.5, gzip;q=0.5", encGzip},
		{"br;level=5;q=0.3, gzip;q=0.2", encBrotli},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			t.Parallel()
			if got := negotiateEncoding(tt.header); got != tt.want {
				t.Errorf("negotiateEncoding(%q) = %q, want %q", tt.header, got, tt.want)
			}
		})
	}
}

func formatAcceptEncoding(list []acceptedCoding) string {
	parts := make([]string, len(list))
	for i, a := range list {
		parts[i] = a.coding + ";q=" + strconv.FormatFloat(a.q, 'f', 3, 64)
	}
	return strings.Join(parts, ", ")
}

// weight is the weight the parsed header gives enc: its highest named
// weight, else the wildcard's, else -1 (not acceptable by name).
func weight(list []acceptedCoding, enc string) float64 {
	named, star := -1.0, -1.0
	for _, a := range list {
		switch {
		case a.coding == enc || (enc == encGzip && a.coding == "x-gzip"):
			named = max(named, a.q)
		case a.coding == "*":
			star = max(star, a.q)
		}
	}
	if named >= 0 {
		return named
	}
	return star
}

func FuzzAcceptEncoding(f *testing.F) {
	seedLines(f, "accept-encoding.txt")
	f.Fuzz(func(t *testing.T, header string) {
		list := parseAcceptEncoding(header)
		for _, a := range list {
			if a.q < 0 || a.q > 1 {
				t.Fatalf("parse(%q): weight %v of %q out of [0,1]", header, a.q, a.coding)
			}
			if a.coding == "" || a.coding != strings.ToLower(a.coding) || !isToken(a.coding) {
				t.Fatalf("parse(%q): coding %q is not a lowercase token", header, a.coding)
			}
		}
		// Round trip: formatting the parsed list and parsing it again
		// gives the same list.
		again := parseAcceptEncoding(formatAcceptEncoding(list))
		if diff := cmp.Diff(list, again, cmp.AllowUnexported(acceptedCoding{})); diff != "" && len(list) > 0 {
			t.Fatalf("round trip of %q (-first +second):\n%s", header, diff)
		}
		got := negotiateEncoding(header)
		bestQ := 0.0
		for _, enc := range supportedEncodings {
			bestQ = max(bestQ, weight(list, enc))
		}
		switch got {
		case encIdentity:
			if bestQ > 0 {
				t.Fatalf("negotiate(%q) = identity, but a supported coding has weight %v", header, bestQ)
			}
		case encBrotli, encGzip, encDeflate:
			if w := weight(list, got); w <= 0 || w < bestQ {
				t.Fatalf("negotiate(%q) = %q with weight %v, best is %v", header, got, w, bestQ)
			}
		default:
			t.Fatalf("negotiate(%q) = %q, not a supported coding", header, got)
		}
	})
}

func TestParseResource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Resource
		ok   bool
	}{
		{"@main/runtimes/node", Resource{Kind: KindLatest, Namespace: "@main", Path: "runtimes/node"}, true},
		{"@main/runtimes/node/versions", Resource{Kind: KindVersions, Namespace: "@main", Path: "runtimes/node"}, true},
		{"@main/versions", Resource{Kind: KindLatest, Namespace: "@main", Path: "versions"}, true},
		{"@main/runtimes/node/1.0.0", Resource{Kind: KindVersioned, Namespace: "@main", Path: "runtimes/node", Version: "1.0.0"}, true},
		{"@main/a/1.0.0-rc.1+b/files/templates/.gitignore", Resource{Kind: kindFile, Namespace: "@main", Path: "a", Version: "1.0.0-rc.1+b", File: "templates/.gitignore"}, true},
		{"@main/a/versions/1.0.0", Resource{Kind: KindVersioned, Namespace: "@main", Path: "a/versions", Version: "1.0.0"}, true},
		{"@main/runtimes/node/1.0.0/digests", Resource{Kind: KindDigests, Namespace: "@main", Path: "runtimes/node", Version: "1.0.0"}, true},
		// A registry named digests, and a file named digests, keep their
		// meaning: the index needs a version right before it.
		{"@main/digests", Resource{Kind: KindLatest, Namespace: "@main", Path: "digests"}, true},
		{"@main/tools/digests", Resource{Kind: KindLatest, Namespace: "@main", Path: "tools/digests"}, true},
		{"@main/digests/versions", Resource{Kind: KindVersions, Namespace: "@main", Path: "digests"}, true},
		{"@main/digests/1.0.0", Resource{Kind: KindVersioned, Namespace: "@main", Path: "digests", Version: "1.0.0"}, true},
		{"@main/digests/1.0.0/digests", Resource{Kind: KindDigests, Namespace: "@main", Path: "digests", Version: "1.0.0"}, true},
		{"@main/a/1.0.0/files/digests", Resource{Kind: kindFile, Namespace: "@main", Path: "a", Version: "1.0.0", File: "digests"}, true},
		{"@main/a/1.0.0/digests/x", Resource{}, false},
		// Empty parts are left out, as the reference does (issue 36,
		// item 12).
		{"@main/a/1.0.0/digests/", Resource{Kind: KindDigests, Namespace: "@main", Path: "a", Version: "1.0.0"}, true},
		{"", Resource{}, false},
		{"@main", Resource{}, false},
		{"@main/1.0.0", Resource{}, false},
		{"@main/a/1.0.0/files", Resource{}, false},
		{"@main/a/1.0.0/files/../x", Resource{}, false},
		{"@main/a/1.0.0/files/./x", Resource{}, false},
		{"@main/a/1.0.0/other/x", Resource{}, false},
		{"@main/a//b", Resource{Kind: KindLatest, Namespace: "@main", Path: "a/b"}, true},
		{"@main/a/", Resource{Kind: KindLatest, Namespace: "@main", Path: "a"}, true},
		{"//@main//a//", Resource{Kind: KindLatest, Namespace: "@main", Path: "a"}, true},
		{"/", Resource{}, false},
		{"@Main/a", Resource{}, false},
		{"main/a", Resource{}, false},
		{"@main/A", Resource{}, false},
		{"@main/a_b", Resource{}, false},
		{"@main/a/1.0.0/files/x y", Resource{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, ok := parseResource(tt.in)
			if ok != tt.ok {
				t.Fatalf("parseResource(%q) ok = %v, want %v", tt.in, ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(Resource{})); diff != "" {
				t.Errorf("parseResource(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func formatResource(r Resource) string {
	switch r.Kind {
	case KindLatest:
		return r.dir()
	case KindVersions:
		return r.dir() + "/versions"
	case KindVersioned:
		return r.dir() + "/" + r.Version
	case KindDigests:
		return r.dir() + "/" + r.Version + "/digests"
	}
	return r.dir() + "/" + r.Version + "/files/" + r.File
}

func FuzzParseResource(f *testing.F) {
	seedLines(f, "registry-paths.txt")
	f.Fuzz(func(t *testing.T, p string) {
		r, ok := parseResource(p)
		if !ok {
			return
		}
		if !registry.ValidNamespace(r.Namespace) || !registry.ValidPath(r.Path) {
			t.Fatalf("parseResource(%q) accepted namespace %q path %q", p, r.Namespace, r.Path)
		}
		// Round trip: the parsed resource formats back to the input
		// without its empty parts.
		var parts []string
		for s := range strings.SplitSeq(p, "/") {
			if s != "" {
				parts = append(parts, s)
			}
		}
		if got := formatResource(r); got != strings.Join(parts, "/") {
			t.Fatalf("parseResource(%q) formats back as %q", p, got)
		}
		// No escape: the storage key stays under the registry's folder
		// and is a clean key.
		key := r.key("1.0.0")
		if !storage.ValidKey(key) || !strings.HasPrefix(key, r.dir()+"/") {
			t.Fatalf("parseResource(%q): key %q escapes %q", p, key, r.dir())
		}
		for seg := range strings.SplitSeq(key, "/") {
			if seg == ".." || seg == "." {
				t.Fatalf("parseResource(%q): key %q has a dot segment", p, key)
			}
		}
	})
}
