package core

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/testenv"
	"github.com/jigkit/jig/registry"
)

// parseReprDigest returns the sha-256 member of an RFC 9530 Repr-Digest
// header value as "sha256:<hex>", or "" when the header names no valid
// sha-256 digest; other algorithms are ignored. It is what a client
// checking the header does, the oracle of the tests below.
func parseReprDigest(v string) string {
	for member := range strings.SplitSeq(v, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(member), "=")
		if !ok || strings.TrimSpace(strings.ToLower(k)) != "sha-256" {
			continue
		}
		val = strings.TrimSpace(val)
		if len(val) < 2 || val[0] != ':' || val[len(val)-1] != ':' {
			return ""
		}
		raw, err := base64.StdEncoding.DecodeString(val[1 : len(val)-1])
		if err != nil || len(raw) != sha256.Size {
			return ""
		}
		return registry.DigestPrefix + hex.EncodeToString(raw)
	}
	return ""
}

func TestReprDigestValue(t *testing.T) {
	t.Parallel()
	d := registry.Digest([]byte("hello\n"))
	if got, want := reprDigestValue(d), "sha-256=:WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM=:"; got != want {
		t.Errorf("reprDigestValue(%s) = %q, want %q", d, got, want)
	}
	if got := parseReprDigest("md5=:x:, " + reprDigestValue(d)); got != d {
		t.Errorf("parse after md5 member = %q, want %q", got, d)
	}
	for _, bad := range []string{"", "sha256:00", "SHA256:" + strings.Repeat("ab", 32)} {
		if got := reprDigestValue(bad); got != "" {
			t.Errorf("reprDigestValue(%q) = %q, want \"\"", bad, got)
		}
	}
	x := registry.Digest([]byte("x"))
	tests := []struct{ in, want string }{
		{reprDigestValue(x), x},
		{"SHA-256 = " + strings.TrimPrefix(reprDigestValue(x), "sha-256="), x},
		{"sha-512=:AAAA:", ""},
		{"sha-256=:AAAA:", ""},
		{"sha-256=AAAA", ""},
		{"", ""},
		{"sha-256=:!!:", ""},
	}
	for _, tt := range tests {
		if got := parseReprDigest(tt.in); got != tt.want {
			t.Errorf("parseReprDigest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzReprDigest: whatever parses is a valid digest that the server
// formats back to a header parsing to the same digest.
func FuzzReprDigest(f *testing.F) {
	testenv.AddSeedFiles(f, "testdata/fuzz/repr-digest/*.txt")
	f.Fuzz(func(t *testing.T, b []byte) {
		v := string(b)
		d := parseReprDigest(v)
		if d == "" {
			return
		}
		if !registry.ValidDigest(d) {
			t.Fatalf("parseReprDigest(%q) = %q, not a valid digest", v, d)
		}
		if got := parseReprDigest(reprDigestValue(d)); got != d {
			t.Fatalf("round trip of %q: got %q", d, got)
		}
	})
}
