package clientip

import (
	"net/netip"
	"strings"
)

// TrustAll as the hops argument of [FromRequest] trusts every proxy hop
// (TRUST_PROXY=true): the client is the left-most X-Forwarded-For entry.
const TrustAll = -1

// MaxEntries is the most X-Forwarded-For entries read; a longer list is
// treated as malformed.
const MaxEntries = 64

// FromRequest returns the client address for a request whose connection
// came from remoteAddr (as in [net/http.Request.RemoteAddr]) and that carried
// the X-Forwarded-For header lines xff, trusting hops proxy hops (0 trusts
// none; [TrustAll] trusts every hop). See the package documentation for the
// rule.
func FromRequest(remoteAddr string, xff []string, hops int) string {
	if hops == 0 || len(xff) == 0 {
		return Normalize(remoteAddr)
	}
	// Walk the entries from the right: the last header line first, each
	// line from its end.
	var (
		n        int    // entries read so far
		leftmost string // last entry read (the left-most so far)
	)
	for i := len(xff) - 1; i >= 0; i-- {
		line := xff[i]
		for end := len(line); end >= 0; {
			start := strings.LastIndexByte(line[:end], ',') + 1
			entry := line[start:end]
			end = start - 1
			n++
			if n > MaxEntries {
				return Normalize(remoteAddr)
			}
			addr, ok := parseEntry(entry)
			if !ok {
				return Normalize(remoteAddr)
			}
			leftmost = addr
			if n == hops {
				return addr
			}
		}
	}
	if n == 0 {
		return Normalize(remoteAddr)
	}
	return leftmost
}

// Normalize returns the canonical form of an address given as "ip",
// "ip:port" or "[ipv6]:port". A string that is none of these (a Unix socket
// peer, say) is returned unchanged.
func Normalize(remoteAddr string) string {
	if a, ok := parseEntry(remoteAddr); ok {
		return a
	}
	return remoteAddr
}

// parseEntry parses one X-Forwarded-For entry and returns its canonical
// address. It allocates only for IPv6 and malformed entries.
func parseEntry(s string) (string, bool) {
	s = strings.Trim(s, " \t")
	host := s
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 || !validPort(s[end+1:], true) {
			return "", false
		}
		host = s[1:end]
	case strings.Count(s, ":") == 1:
		i := strings.IndexByte(s, ':')
		if !validPort(s[i:], false) {
			return "", false
		}
		host = s[:i]
	}
	if host == "" {
		return "", false
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return "", false
	}
	return canonical(a, host), true
}

// validPort reports whether s is ":" followed by a port number (or empty,
// when optional).
func validPort(s string, optional bool) bool {
	if s == "" {
		return optional
	}
	if len(s) < 2 || len(s) > 6 || s[0] != ':' {
		return false
	}
	n := 0
	for _, c := range []byte(s[1:]) {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n <= 65535
}

// canonical formats a, reusing host (the text it was parsed from) when it
// is already canonical, so the common IPv4 case does not allocate.
func canonical(a netip.Addr, host string) string {
	if a.Is4() {
		// netip accepts only canonical dotted decimal for IPv4.
		return host
	}
	return a.Unmap().WithZone("").String()
}
