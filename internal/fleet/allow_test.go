package fleet

import (
	"net/url"
	"strings"
	"testing"
)

// TestAllowCheck: from the census, only https, ssh and git addresses on a
// host the operator allows are cloned, and local paths only when allowed;
// the tricks that make a parser and git disagree on the host are refused.
func TestAllowCheck(t *testing.T) {
	t.Parallel()
	allow := Allow{Hosts: []string{"git.example.com", "gitlab.example.com:2222"}}
	local := Allow{Hosts: allow.Hosts, Local: true}
	for _, c := range []struct {
		repo  string
		allow Allow
		want  string // "" for allowed, else a part of the error
	}{
		{"https://git.example.com/team/app.git", allow, ""},
		{"https://GIT.Example.COM/team/app.git", allow, ""},
		{"https://git.example.com./team/app.git", allow, ""},
		{"https://git.example.com:443/team/app.git", allow, ""},
		{"ssh://git@git.example.com/team/app.git", allow, ""},
		{"ssh://git@git.example.com:22/team/app.git", allow, ""},
		{"git://git.example.com/team/app.git", allow, ""},
		{"git@git.example.com:team/app.git", allow, ""},
		{"git.example.com:team/app.git", allow, ""},
		{"ssh://git@gitlab.example.com:2222/team/app.git", allow, ""},
		{"/srv/git/app.git", local, ""},

		{"/srv/git/app.git", allow, "pass --allow-local"},
		{"https://evil.example/team/app.git", allow, "host evil.example is not allowed: pass --allow-host evil.example"},
		{"https://git.example.com.evil.example/x.git", allow, "host git.example.com.evil.example is not allowed"},
		{"https://evil.git.example.com/x.git", allow, "not allowed"},
		{"https://git.example.com:8443/x.git", allow, "host git.example.com:8443 is not allowed: pass --allow-host git.example.com:8443"},
		{"ssh://git@gitlab.example.com/x.git", allow, "host gitlab.example.com is not allowed"},
		{"https://git.example.com@evil.example/x.git", allow, "user information"},
		{"https://user:pw@git.example.com/x.git", allow, "user information"},
		{"git://git.example.com@evil.example/x.git", allow, "user information"},
		{"ssh://git.example.com@evil.example/x.git", allow, "host evil.example is not allowed"},
		{"git.example.com@evil.example:x.git", allow, "host evil.example is not allowed"},
		{"ssh://a@b@git.example.com/x.git", allow, "not a host name"},
		{"https://evil.example\\@git.example.com/x.git", allow, "user information"},
		{"https://evil.example%2f@git.example.com/x.git", allow, "user information"},
		{"https://evil.example?@git.example.com/x.git", allow, "user information"},
		{"https://evil.example#@git.example.com/x.git", allow, "user information"},
		{"https://git.ex%61mple.com/x.git", allow, "not a host name in ASCII"},
		{"https://gіt.example.com/x.git", allow, "outside ASCII"}, // Cyrillic і
		{"https://git.example.com\u3002/x.git", allow, "outside ASCII"},
		{"https://[::1]/x.git", allow, "git transport"},
		{"https://git.example.com:0443/x.git", allow, "not a number"},
		{"https://git.example.com:/x.git", allow, "not a number"},
		{"https://git.example.com..//x.git", allow, "empty label"},
		{"https://-git.example.com/x.git", allow, "starting or ending with '-'"},
		{"https://git.example.com", allow, "without a repository path"},
		{"HTTPS://git.example.com/x.git", allow, "a https:// address: only"},
		{"http://git.example.com/x.git", allow, "a http:// address: only https://"},
		{"file:///srv/git/app.git", local, "a file:// address"},
		{"ext::sh -c touch% /tmp/x", allow, "git transport"},
		{"ext::git.example.com/x", allow, "git transport"},
		{"fd::3", allow, "git transport"},
		{"git.example.com::x", allow, "git transport"},
		{"-uhelp", allow, "option"},
		{"--upload-pack=touch /tmp/x", allow, "option"},
		{"git.example.com:-oProxyCommand=x", allow, "starts with \"-\""},
		{"-oProxyCommand=x:y", allow, "option"},
		{"ssh://-oProxyCommand=x/y", allow, "not a host name"},
		{"ssh://-git.example.com/y", allow, "starting or ending with '-'"},
		{"ssh://evil.example?.git.example.com/y", allow, "not a host name"},
		{"ssh://-git@git.example.com/x", allow, "user name"},
		{"git.example.com:2222:x.git", allow, ""}, // git reads host git.example.com, path 2222:x.git
		{"git.example.com/x:y.git", allow, "a relative path"},
		{"team/app.git", local, "a relative path"},
		{"./a:b", local, "a relative path"},
		{"https://git.example.com/x y.git", allow, "blanks"},
		{"", local, "empty"},
	} {
		err := c.allow.Check(c.repo)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Check(%q): got %v, want it allowed", c.repo, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Check(%q): got %v, want an error with %q", c.repo, err, c.want)
		}
	}
}

func TestParseAllowHost(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"GitHub.com":       "github.com",
		"git.example.com.": "git.example.com",
		"h.example:2222":   "h.example:2222",
		"xn--bcher-kva.ch": "xn--bcher-kva.ch",
	} {
		if got, err := ParseAllowHost(in); err != nil || got != want {
			t.Errorf("ParseAllowHost(%q): got %q, %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"https://github.com", "git@github.com", "github.com/org", "*.example.com", "bücher.ch", "", "h:0", "h:99999", "a..b"} {
		if got, err := ParseAllowHost(bad); err == nil {
			t.Errorf("ParseAllowHost(%q): got %q, want an error", bad, got)
		}
	}
}

// FuzzAllowCheck: an address Check allows names, as net/url or ssh reads
// it, the host Check read; it is never an option, a transport or a local
// path unless those are allowed.
func FuzzAllowCheck(f *testing.F) {
	for _, s := range []string{
		"https://git.example.com/a.git", "git@git.example.com:a.git", "ssh://u@git.example.com:22/a",
		"https://git.example.com@evil/a", "ext::sh", "/srv/a.git", "git.example.com.:a", "GIT.EXAMPLE.COM:x",
		"git://git.example.com:9418/x", "https://git.example.com\\@evil/x",
	} {
		f.Add(s)
	}
	allow := Allow{Hosts: []string{"git.example.com"}}
	f.Fuzz(func(t *testing.T, repo string) {
		if allow.Check(repo) != nil {
			return
		}
		if strings.HasPrefix(repo, "-") || strings.Contains(repo, "::") || strings.HasPrefix(repo, "/") {
			t.Fatalf("allowed %q", repo)
		}
		var host string
		if scheme, rest, ok := strings.Cut(repo, "://"); ok {
			// git hands the path on as it is; the host is what matters.
			authority, _, _ := strings.Cut(rest, "/")
			u, err := url.Parse(scheme + "://" + authority + "/")
			if err != nil {
				t.Fatalf("allowed %q, which net/url cannot read: %v", repo, err)
			}
			if u.Scheme != "https" && u.Scheme != "ssh" && u.Scheme != "git" {
				t.Fatalf("allowed %q with scheme %q", repo, u.Scheme)
			}
			host = u.Hostname()
		} else {
			// ssh reads [user@]host, the host after the last "@".
			h, _, _ := strings.Cut(repo, ":")
			host = h[strings.LastIndex(h, "@")+1:]
		}
		if got := strings.TrimSuffix(strings.ToLower(host), "."); got != "git.example.com" {
			t.Fatalf("allowed %q, whose host is %q", repo, host)
		}
	})
}
