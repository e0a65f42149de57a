package clientip

import (
	"bufio"
	"net/netip"
	"os"
	"strings"
	"testing"
)

func TestFromRequest(t *testing.T) {
	t.Parallel()
	const conn = "10.9.8.7:5555"
	tests := []struct {
		name   string
		remote string
		xff    []string
		hops   int
		want   string
	}{
		{"no trust ignores header", conn, []string{"203.0.113.7"}, 0, "10.9.8.7"},
		{"no header", conn, nil, TrustAll, "10.9.8.7"},
		{"empty header line", conn, []string{""}, TrustAll, "10.9.8.7"},
		{"trust all picks left-most", conn, []string{"203.0.113.7, 10.0.0.1, 10.0.0.2"}, TrustAll, "203.0.113.7"},
		{"trust all across header lines", conn, []string{"203.0.113.7", "10.0.0.1"}, TrustAll, "203.0.113.7"},
		{"one hop picks right-most", conn, []string{"203.0.113.7, 10.0.0.1"}, 1, "10.0.0.1"},
		{"two hops", conn, []string{"203.0.113.7, 198.51.100.1, 10.0.0.1"}, 2, "198.51.100.1"},
		{"two hops across lines", conn, []string{"203.0.113.7, 198.51.100.1", "10.0.0.1"}, 2, "198.51.100.1"},
		{"more hops than entries gives left-most", conn, []string{"203.0.113.7, 10.0.0.1"}, 5, "203.0.113.7"},
		{"garbage left of the trusted hops is ignored", conn, []string{"not-an-ip, 10.0.0.1"}, 1, "10.0.0.1"},
		{"spaces and tabs trimmed", conn, []string{" \t203.0.113.7\t , 10.0.0.1 "}, TrustAll, "203.0.113.7"},
		{"ipv6 normalised", conn, []string{"2001:DB8:0:0::1"}, TrustAll, "2001:db8::1"},
		{"bracketed ipv6 with port", conn, []string{"[2001:db8::1]:443"}, TrustAll, "2001:db8::1"},
		{"bracketed ipv6 without port", conn, []string{"[2001:db8::1]"}, TrustAll, "2001:db8::1"},
		{"ipv4 with port", conn, []string{"192.0.2.1:80"}, TrustAll, "192.0.2.1"},
		{"ipv4-mapped ipv6 unmapped", conn, []string{"::ffff:198.51.100.3"}, TrustAll, "198.51.100.3"},
		{"zone dropped", conn, []string{"fe80::1%eth0"}, TrustAll, "fe80::1"},
		{"malformed entry falls back", conn, []string{"unknown, 10.0.0.1"}, TrustAll, "10.9.8.7"},
		{"empty entry falls back", conn, []string{"203.0.113.7,,10.0.0.1"}, TrustAll, "10.9.8.7"},
		{"trailing comma falls back", conn, []string{"203.0.113.7,"}, 1, "10.9.8.7"},
		{"leading zeros are not an address", conn, []string{"01.2.3.4"}, TrustAll, "10.9.8.7"},
		{"out of range octet", conn, []string{"999.1.1.1"}, 1, "10.9.8.7"},
		{"unclosed bracket", conn, []string{"[::1"}, 1, "10.9.8.7"},
		{"too many entries falls back", conn, []string{strings.Repeat("192.0.2.1,", MaxEntries) + "192.0.2.2"}, TrustAll, "10.9.8.7"},
		{"long list fine when only the right is read", conn, []string{strings.Repeat("x,", 1000) + "192.0.2.2"}, 1, "192.0.2.2"},
		{"ipv6 connection", "[2001:db8::9]:443", nil, 0, "2001:db8::9"},
		{"mapped connection", "[::ffff:10.1.2.3]:80", nil, 0, "10.1.2.3"},
		{"non-IP connection kept as is", "@", []string{"garbage"}, 1, "@"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := FromRequest(tt.remote, tt.xff, tt.hops); got != tt.want {
				t.Errorf("FromRequest(%q, %q, %d): got %q, want %q", tt.remote, tt.xff, tt.hops, got, tt.want)
			}
		})
	}
}

func TestFromRequestNoAllocIPv4(t *testing.T) {
	xff := []string{"203.0.113.7, 10.0.0.1"}
	allocs := testing.AllocsPerRun(100, func() {
		_ = FromRequest("10.9.8.7:5555", xff, TrustAll)
		_ = FromRequest("10.9.8.7:5555", nil, 0)
	})
	if allocs != 0 {
		t.Errorf("got %v allocations per IPv4 lookup, want 0", allocs)
	}
}

func seeds(f *testing.F) []string {
	f.Helper()
	file, err := os.Open("testdata/xff.txt")
	if err != nil {
		f.Fatal(err)
	}
	defer file.Close()
	var out []string
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		f.Fatal(err)
	}
	return out
}

// FuzzFromRequest checks the properties that keep the limiter safe: the
// result is the connection address or a canonical address taken from the
// header; a trusted proxy's own entry can never be overridden by what the
// client sent; no trust means the header is ignored.
func FuzzFromRequest(f *testing.F) {
	for _, s := range seeds(f) {
		for _, hops := range []int{TrustAll, 0, 1, 2} {
			f.Add("10.9.8.7:5555", s, hops)
		}
	}
	f.Add("[2001:db8::9]:443", "2001:db8::1", 1)
	f.Fuzz(func(t *testing.T, remote, header string, hops int) {
		if hops < TrustAll {
			hops = TrustAll
		}
		conn := Normalize(remote)
		got := FromRequest(remote, []string{header}, hops)
		if got != conn {
			a, err := netip.ParseAddr(got)
			if err != nil {
				t.Fatalf("got %q, neither the connection address %q nor an IP address", got, conn)
			}
			if a.String() != got || a.Is4In6() || a.Zone() != "" {
				t.Fatalf("got %q, want it in canonical form %q", got, a.Unmap().WithZone("").String())
			}
			fromHeader := false
			for _, e := range strings.Split(header, ",") {
				if Normalize(e) == got {
					fromHeader = true
				}
			}
			if !fromHeader {
				t.Fatalf("got %q, which is no entry of the header %q", got, header)
			}
		}
		if hops == 0 && got != conn {
			t.Fatalf("hops 0: got %q, want the connection address %q", got, conn)
		}
		// A trusted proxy appends the address it saw; whatever the
		// client put before it, one trusted hop gives that address.
		if got := FromRequest(remote, []string{header, "192.0.2.77"}, 1); got != "192.0.2.77" {
			t.Fatalf("one hop with a proxy-appended entry: got %q, want 192.0.2.77", got)
		}
		if got := FromRequest(remote, []string{header + ", 192.0.2.77"}, 1); got != "192.0.2.77" {
			t.Fatalf("one hop with a proxy-appended entry on the same line: got %q, want 192.0.2.77", got)
		}
		if hops == TrustAll && got != conn {
			first := strings.SplitN(header, ",", 2)[0]
			if want := Normalize(first); want != got {
				t.Fatalf("trust all: got %q, want the left-most entry %q", got, want)
			}
		}
	})
}
