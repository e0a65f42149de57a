package fleet

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Allow says which repository addresses a rollout may clone and push to
// when the addresses come from others: the census, where anyone who may
// report to a namespace names its project. The zero Allow allows nothing.
type Allow struct {
	// Hosts are the hosts allowed, as [ParseAllowHost] returns them:
	// "git.example.com" (on the scheme's default port) or
	// "git.example.com:2222" (on that port only). A host matches exactly:
	// no subdomains, no patterns.
	Hosts []string
	// Local allows absolute local paths.
	Local bool
}

// Refused is an address [Allow.Filter] left out: Repo as [Redact] shows
// it, and why.
type Refused struct {
	Repo   string
	Reason error
}

// Filter returns the addresses of repos that [Allow.Check] allows, in
// order, and the others with the reason.
func (a Allow) Filter(repos []string) (allowed []string, refused []Refused) {
	for _, r := range repos {
		if err := a.Check(r); err != nil {
			refused = append(refused, Refused{Repo: Redact(r), Reason: err})
			continue
		}
		allowed = append(allowed, r)
	}
	return allowed, refused
}

// defaultPorts are the ports a host without one in [Allow.Hosts] is
// allowed on, per scheme.
var defaultPorts = map[string]string{"https": "443", "ssh": "22", "git": "9418"}

// ParseAllowHost checks an allowed host as the operator gives it
// (--allow-host, the rc file) and returns it as [Allow.Hosts] holds it:
// lower case, without a trailing dot, with its port when it has one. A
// URL, a user name, a pattern or a name outside ASCII is refused with a
// message saying what to give instead.
func ParseAllowHost(s string) (string, error) {
	if strings.Contains(s, "://") || strings.ContainsAny(s, "@/") {
		return "", fmt.Errorf("allowed host %q: give a host name such as github.com (or git.example.com:2222), not a URL or an address", s)
	}
	host, port, err := hostPort(s)
	if err != nil {
		return "", fmt.Errorf("allowed host %q: %w", s, err)
	}
	if port != "" {
		return host + ":" + port, nil
	}
	return host, nil
}

// Check returns nil when repo may be cloned, else an error saying why
// and how to allow it. Only https, ssh (also written git@host:path) and
// git addresses on an allowed host pass, and absolute local paths when
// Local is set; never a git transport such as ext:: or file://, an
// address starting with "-", user information in an https or git URL, a
// host outside ASCII or with escapes.
func (a Allow) Check(repo string) error {
	addr, err := parseAddress(repo)
	if err != nil {
		return err
	}
	if addr.local {
		if !a.Local {
			return errors.New("a local path: the census may name any path on this machine; pass --allow-local to clone local paths")
		}
		return nil
	}
	port := addr.port
	if port == "" {
		port = defaultPorts[addr.scheme]
	}
	for _, h := range a.Hosts {
		host, want, _ := strings.Cut(h, ":")
		if host == addr.host && (want == port || want == "" && port == defaultPorts[addr.scheme]) {
			return nil
		}
	}
	shown := addr.host
	if addr.port != "" && addr.port != defaultPorts[addr.scheme] {
		shown += ":" + addr.port
	}
	return fmt.Errorf("host %s is not allowed: pass --allow-host %s (or list it under \"fleet\": {\"allowHosts\": [...]} in the rc file) if you trust it", shown, shown)
}

// address is a repository address as git reads it.
type address struct {
	local              bool
	scheme, host, port string
}

// parseAddress reads repo the way git decides what it is: a path when it
// starts with "/", a URL when it holds "://", else scp-like
// [user@]host:path (ssh). The rules are stricter than git's, so that what
// this reads as the host is the host git connects to.
func parseAddress(repo string) (address, error) {
	switch {
	case repo == "":
		return address{}, errors.New("an empty address")
	case strings.HasPrefix(repo, "-"):
		return address{}, errors.New("an address starting with \"-\" would be read as an option")
	case strings.Contains(repo, "::"):
		return address{}, errors.New("a git transport (<transport>::<address>) can run a program")
	case filepath.IsAbs(repo) && !strings.Contains(repo, "://"):
		return address{local: true}, nil
	}
	for _, r := range repo {
		if r <= ' ' || r >= 0x7f {
			return address{}, errors.New("an address with blanks, control characters or characters outside ASCII")
		}
	}
	var addr address
	var authority, path string
	if scheme, rest, ok := strings.Cut(repo, "://"); ok {
		if _, known := defaultPorts[scheme]; !known {
			return address{}, fmt.Errorf("a %s:// address: only https://, ssh:// and git:// addresses (and git@host:path) are cloned from the census", strings.ToLower(scheme))
		}
		addr.scheme = scheme
		var slash bool
		authority, path, slash = strings.Cut(rest, "/")
		if !slash || path == "" {
			return address{}, errors.New("a URL without a repository path")
		}
	} else {
		i := strings.IndexByte(repo, ':')
		if i < 0 || strings.ContainsAny(repo[:i], `/\`) {
			return address{}, errors.New("a relative path")
		}
		addr.scheme, authority, path = "ssh", repo[:i], repo[i+1:]
		if path == "" || path[0] == '-' || path[0] == ':' {
			return address{}, errors.New("an ssh address whose path is empty or starts with \"-\"")
		}
	}
	if user, host, ok := strings.Cut(authority, "@"); ok {
		if addr.scheme != "ssh" {
			return address{}, fmt.Errorf("a %s URL with user information (the census keeps none: the address was made up)", addr.scheme)
		}
		if user == "" || user[0] == '-' || strings.IndexFunc(user, func(r rune) bool { return !hostRune(r) && r != '_' }) >= 0 {
			return address{}, errors.New("an ssh address whose user name is not letters, digits, '.', '_' or '-'")
		}
		authority = host
	}
	var err error
	if addr.host, addr.port, err = hostPort(authority); err != nil {
		return address{}, err
	}
	return addr, nil
}

func hostRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.'
}

// hostPort reads host[:port]: a DNS name in ASCII (lower-cased, one
// trailing dot dropped) and a port from 1 to 65535 without leading zeros.
func hostPort(s string) (host, port string, err error) {
	host, port, hasPort := strings.Cut(s, ":")
	if hasPort {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return "", "", fmt.Errorf("the port %q is not a number from 1 to 65535", port)
		}
	}
	if strings.IndexFunc(host, func(r rune) bool { return !hostRune(r) }) >= 0 {
		return "", "", fmt.Errorf("the host %q is not a host name in ASCII (letters, digits, '-' and '.'; write an international name in its xn-- form)", host)
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" || len(host) > 253 {
		return "", "", errors.New("an empty or overlong host name")
	}
	if slices.ContainsFunc(strings.Split(host, "."), func(l string) bool {
		return l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-'
	}) {
		return "", "", fmt.Errorf("the host %q is not a host name (an empty label, or one starting or ending with '-')", host)
	}
	return host, port, nil
}

// protocols returns the configuration that keeps git to the transports a
// nil or given Allow lets through, should an address get past [Allow.Check]
// in a form git reads otherwise: no http, and no local paths unless Local.
func (a *Allow) protocols() []string {
	if a == nil {
		return nil
	}
	opts := []string{"protocol.http.allow=never"}
	if !a.Local {
		opts = append(opts, "protocol.file.allow=never")
	}
	return opts
}
