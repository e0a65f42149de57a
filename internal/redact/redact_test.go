package redact_test

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/internal/redact"
)

func TestSecretParam(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"token", true}, {"access_token", true}, {"X-Api-Key", true}, {"X-Amz-Signature", true},
		{"client_secret", true}, {"PASSWORD", true}, {"passwd", true}, {"authorization", true},
		{"sig", true}, {"Credential", true}, {"sessionid", true}, {"code", true},
		{"pwd", true}, {"PASS", true}, {"jwt", true},
		{"q", false}, {"page", false}, {"limit", false}, {"passage", false}, {"jwtx", false},
	} {
		if got := redact.SecretParam(tt.name); got != tt.want {
			t.Errorf("SecretParam(%q): got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"/registries/@main/runtimes/node", "/registries/@main/runtimes/node"},
		{"/x?a=1&b=2", "/x?a=1&b=2"},
		{"/x?token=s3cr3t", "/x?token=[REDACTED]"},
		{"/x?access_token=abc&page=2", "/x?access_token=[REDACTED]&page=2"},
		{"/x?API_KEY=abc#frag", "/x?API_KEY=[REDACTED]#frag"},
		{"/x?%74oken=abc", "/x?%74oken=[REDACTED]"},
		{"/x?token", "/x?token"},
		{"/x?token=&x=y", "/x?token=[REDACTED]&x=y"},
		{"/x?password=a=b=c", "/x?password=[REDACTED]"},
		{"/x?token=a&token=b", "/x?token=[REDACTED]&token=[REDACTED]"},
		{"/x?jwt=a&pwd=b&pass=c", "/x?jwt=[REDACTED]&pwd=[REDACTED]&pass=[REDACTED]"},
		{"https://user:pa55@example.com/x?sig=zzz", "https://user:[REDACTED]@example.com/x?sig=[REDACTED]"},
		{"https://t0ken@example.com/", "https://[REDACTED]@example.com/"},
		{"https://u:pw@a", "https://u:[REDACTED]@a"},
		{"/path/with://colon@x", "/path/with://colon@x"},
		{"git@github.com:a/b.git", "git@github.com:a/b.git"},
	} {
		if got := redact.URL(tt.in); got != tt.want {
			t.Errorf("URL(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParsed(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"http://u:pw@h/x", "http://h/x"},
		{"https://tok@h/x", "https://h/x"},
		{"https://h/search?q=lint&limit=5", "https://h/search?limit=5&q=lint"},
		{"https://h/x?access_token=s3cr3t&q=a", "https://h/x?access_token=REDACTED&q=a"},
		{"https://h/x?X-Amz-Signature=abc&apiKey=k", "https://h/x?X-Amz-Signature=REDACTED&apiKey=REDACTED"},
		{"https://h/x?pwd=abc", "https://h/x?pwd=REDACTED"},
	} {
		u, err := url.Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := redact.Parsed(u); got != tt.want {
			t.Errorf("Parsed(%q): got %q, want %q", tt.in, got, tt.want)
		}
		if u.String() != tt.in {
			t.Errorf("Parsed(%q) changed its argument to %q", tt.in, u)
		}
	}
}

func TestStripAndIdentity(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, strip, identity string }{
		{"https://user:pass@github.com/org/x.git", "https://github.com/org/x.git", "https://github.com/org/x.git"},
		{"https://ghp_token@github.com/org/x.git", "https://github.com/org/x.git", "https://github.com/org/x.git"},
		{"HTTPS://u:p@host/x", "HTTPS://host/x", "HTTPS://host/x"},
		{"https://host/x.git?private_token=abc#frag", "https://host/x.git", "https://host/x.git"},
		{"https://u:p@host", "https://host", "https://host"},
		{"https://a@b:c@host/x", "https://host/x", "https://host/x"},
		{"ssh://git:pw@host/x.git", "ssh://host/x.git", "ssh://git@host/x.git"},
		{"ssh://git@host:22/x.git", "ssh://host:22/x.git", "ssh://git@host:22/x.git"},
		{"git@github.com:org/x.git", "git@github.com:org/x.git", "git@github.com:org/x.git"},
		{"/srv/git/x.git", "/srv/git/x.git", "/srv/git/x.git"},
		{"file:///srv/x.git", "file:///srv/x.git", "file:///srv/x.git"},
		{"https://h/a b/%zz?x=1", "https://h/a b/%zz", "https://h/a b/%zz"},
		{"", "", ""},
	} {
		if got := redact.Strip(tt.in); got != tt.strip {
			t.Errorf("Strip(%q): got %q, want %q", tt.in, got, tt.strip)
		}
		if got := redact.Identity(tt.in); got != tt.identity {
			t.Errorf("Identity(%q): got %q, want %q", tt.in, got, tt.identity)
		}
	}
}

func TestOrigin(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"https://hooks.example.com/services/T0/B0/s3cret", "https://hooks.example.com/…"},
		{"https://u:p@h.example:8443/x?token=t", "https://h.example:8443/…"},
		{"not a url", "<invalid url>"},
		{"%zz", "<invalid url>"},
	} {
		if got := redact.Origin(tt.in); got != tt.want {
			t.Errorf("Origin(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ repo, in, want string }{
		{"https://u@git.example.com/a.git", "git clone: exit status 128: fatal: repository not found", "git clone: exit status 128: fatal: repository not found"},
		{"https://user:s3cret-pass@h.example/a.git", "fatal: unable to access 'https://user:s3cret-pass@h.example/a.git/': 403", "fatal: unable to access 'https://h.example/a.git/': 403"},
		{"https://user:s3cret-pass@h.example/a.git", "remote: password s3cret-pass rejected", "remote: password *** rejected"},
		{"https://user:s3cret-pass@h.example/a.git", "xs3cret-passy", "xs3cret-passy"},
		{"https://user:p%40ss-word1@h.example/a.git", "bad p@ss-word1 and p%40ss-word1", "bad *** and ***"},
		{"https://h.example/a.git?private_token=glpat-s3cret", "fatal: 'https://h.example/a.git?private_token=glpat-s3cret' not found; glpat-s3cret", "fatal: 'https://h.example/a.git' not found; ***"},
		{"/srv/git/a.git", "see https://other:pw@h.example/x#frag", "see https://h.example/x"},
		{"https://u:00000000@h/a.git", "host 0000000000000000 and 00000000.", "host 0000000000000000 and ***."},
		{"https://u:abcabcab@h/a.git", "abcabcabcabcab abcabcab", "abcabcabcabcab ***"},
	} {
		if got := redact.Text(tt.in, redact.Secrets(tt.repo)); got != tt.want {
			t.Errorf("Text(%q) for %s:\ngot  %q\nwant %q", tt.in, tt.repo, got, tt.want)
		}
	}
}

func TestAll(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, secret, want string }{
		{"401: bad token tok_abc", "tok_abc", "401: bad token [REDACTED]"},
		{"Bearer%20tok_abc", "tok_abc", "Bearer%20[REDACTED]"},
		{"nothing here", "", "nothing here"},
	} {
		if got := redact.All(tt.in, tt.secret); got != tt.want {
			t.Errorf("All(%q, %q): got %q, want %q", tt.in, tt.secret, got, tt.want)
		}
	}
}

// FuzzURL builds a URL from fuzzed parts with a user, a password and a
// secret query value, and checks for every form that the output holds no
// secret it promises to hide, and that redacting twice is redacting once.
func FuzzURL(f *testing.F) {
	f.Add("https", "user-name-1", "pa55word-xyz", "example.com", "/x/y", "access_token", "s3cret-value", "q=1")
	f.Add("ssh", "git", "pw-pw-pw-pw", "host:22", "/a.git", "X-Api-Key", "key-key-key", "")
	f.Add("http", "", "", "h", "", "sig", "zzzzzzzzz", "a=b&c")
	f.Fuzz(func(t *testing.T, scheme, user, pass, host, path, param, value, extra string) {
		if !validScheme(scheme) || strings.ContainsAny(host, "/?#@\\ %[]'\"<>\t\n\r\f\v") || host == "" ||
			!SecretParamOK(param) || strings.ContainsAny(path, "?#") || strings.ContainsAny(extra, "#") {
			return
		}
		if path != "" && path[0] != '/' {
			path = "/" + path
		}
		u := &url.URL{Scheme: scheme, Host: host, Path: path}
		switch {
		case user != "" && pass != "":
			u.User = url.UserPassword(user, pass)
		case user != "":
			u.User = url.User(user)
		}
		q := url.Values{param: {value}}.Encode()
		if extra != "" {
			q += "&" + extra
		}
		raw := u.String() + "?" + q + "#frag"
		if _, err := url.Parse(raw); err != nil {
			return
		}
		// Secrets that hold one another, as written or escaped, cannot be
		// told apart in the output.
		escUser, escPass, _ := strings.Cut(u.User.String(), ":")
		groups := [][]string{{user, escUser}, {pass, escPass}, {value, url.QueryEscape(value)}}
		for i, g := range groups {
			for j, h := range groups {
				for _, a := range g {
					for _, b := range h {
						if i != j && a != "" && b != "" && strings.Contains(a, b) {
							return
						}
					}
				}
			}
		}
		secrets := redact.Secrets(raw)
		// A host never holds a blank, a quote or an angle bracket, which
		// end a URL in text. A secret is checked only when it can be told
		// apart from the rest of the URL.
		others := (&url.URL{Scheme: scheme, Host: host, Path: path}).String() + "?" + param + "=&" + extra + "#frag" + redact.Mask + "REDACTED"
		if vs, err := url.ParseQuery(extra); err == nil {
			others += "&" + vs.Encode() // as Parsed re-encodes it
		}
		distinct := func(s string) bool { return len(s) >= 4 && !strings.Contains(others, s) }
		// always: hidden by every form; lone: a user name without a
		// password (maybe a token), hidden by all but Identity on ssh and
		// the like; named: a user name with a password, hidden by the forms
		// that drop the user.
		var always, lone, named []string
		// Each secret is looked for as the URL spells it (escaped).
		if distinct(escPass) {
			always = append(always, escPass)
		}
		if q := url.QueryEscape(value); distinct(q) {
			always = append(always, q)
		}
		if distinct(escUser) {
			if pass == "" {
				lone = append(lone, escUser)
			} else {
				named = append(named, escUser)
			}
		}
		for _, c := range []struct {
			name      string
			f         func(string) string
			keepsLone bool
			dropsUser bool
		}{
			{"URL", redact.URL, false, false},
			{"Parsed", func(s string) string {
				p, err := url.Parse(s)
				if err != nil {
					return s
				}
				return redact.Parsed(p)
			}, false, true},
			{"Strip", redact.Strip, false, true},
			{"Identity", redact.Identity, scheme != "http" && scheme != "https", scheme == "http" || scheme == "https"},
			{"Origin", redact.Origin, false, true},
			{"Text", func(s string) string {
				got := redact.Text("see "+s+" now", secrets)
				return strings.TrimSuffix(strings.TrimPrefix(got, "see "), " now")
			}, false, true},
		} {
			got := c.f(raw)
			hidden := slices.Clip(always)
			if !c.keepsLone {
				hidden = append(hidden, lone...)
			}
			if c.dropsUser {
				hidden = append(hidden, named...)
			}
			for _, s := range hidden {
				if strings.Contains(got, s) {
					t.Fatalf("%s(%q) = %q holds %q", c.name, raw, got, s)
				}
			}
			if c.name != "Text" {
				if again := c.f(got); again != got {
					t.Fatalf("%s(%q) = %q, but redacting that again gives %q", c.name, raw, got, again)
				}
			}
		}
		// A URL that text can hold whole (no blank, quote or angle
		// bracket) is shown the same when its text is redacted again.
		if got := redact.Text(raw, secrets); !strings.ContainsAny(raw, " \t\n\r\f\v'\"<>") && redact.Text(got, secrets) != got {
			t.Fatalf("Text(%q) = %q is not stable", raw, got)
		}
	})
}

func validScheme(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// SecretParamOK keeps the parameter names that are secret and that need
// no escaping, so that the name is found as written.
func SecretParamOK(p string) bool {
	return redact.SecretParam(p) && url.QueryEscape(p) == p
}

func TestError(t *testing.T) {
	t.Parallel()
	base := errors.New("server said: bad token tok_abc")
	if got := redact.Error(base, "tok_abc"); got.Error() != "server said: bad token [REDACTED]" {
		t.Errorf("Error: got %q, want the token masked", got)
	}
	if got := redact.Error(base, "other"); got != base {
		t.Errorf("Error without the secret: got %v, want the same error", got)
	}
	if redact.Error(nil, "tok") != nil {
		t.Error("Error(nil): got an error, want nil")
	}
}
