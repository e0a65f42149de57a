package redact

import (
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Mask replaces a secret value inside a URL ([URL]) or a secret in a
// message ([All]).
const Mask = "[REDACTED]"

// Blank replaces a secret that stands as a word of its own in free text
// ([Text], [Words]).
const Blank = "***"

// parsedMask replaces a secret query value in [Parsed]'s output: a word
// that query encoding leaves as it is.
const parsedMask = "REDACTED"

// secretParts are words that, anywhere in a query parameter's name (any
// case), make its value a possible secret: access_token, X-Api-Key,
// X-Amz-Signature, client_secret, sessionid, auth_code, ...
var secretParts = []string{"token", "key", "secret", "password", "passwd", "auth", "sig", "credential", "session", "code"}

// secretNames are query parameter names (any case) whose value may be a
// secret although they hold none of [secretParts].
var secretNames = []string{"pwd", "pass", "jwt"}

// SecretParam reports whether a query parameter named name (compared
// without regard to case) may carry a secret: a name holding token, key,
// secret, password, passwd, auth, sig, credential, session or code, or
// one of pwd, pass and jwt.
func SecretParam(name string) bool {
	n := strings.ToLower(name)
	for _, s := range secretParts {
		if strings.Contains(n, s) {
			return true
		}
	}
	return slices.Contains(secretNames, n)
}

// authority returns the bounds of the authority of raw when raw starts
// with "scheme://" (a scheme holding none of "/?#"): start is just after
// the "//", end at the first "/", "?" or "#" after it. ok is false for a
// request target ("/x?y"), an scp-like address ("git@host:x") or a path.
func authority(raw string) (start, end int, ok bool) {
	i := strings.Index(raw, "://")
	if i <= 0 || strings.ContainsAny(raw[:i], "/?#") {
		return 0, 0, false
	}
	start, end = i+3, len(raw)
	if j := strings.IndexAny(raw[start:], "/?#"); j >= 0 {
		end = start + j
	}
	return start, end, true
}

// URL returns raw, an absolute URL or a request target such as
// "/registries/@ns/x?token=abc", safe to log or show: the password of its
// user information becomes [Mask] ("https://user:[REDACTED]@host"), a user
// name given alone (possibly a token) becomes [Mask] too, and so does the
// value of each query parameter named as [SecretParam] says. Everything
// else is kept byte for byte, so a URL without credentials is returned
// unchanged.
func URL(raw string) string {
	if start, end, ok := authority(raw); ok {
		if at := strings.LastIndexByte(raw[start:end], '@'); at >= 0 {
			user, _, hasPass := strings.Cut(raw[start:start+at], ":")
			if hasPass {
				user += ":" + Mask
			} else {
				user = Mask
			}
			raw = raw[:start] + user + raw[start+at:]
		}
	}
	q := strings.IndexByte(raw, '?')
	if q < 0 {
		return raw
	}
	query, frag := raw[q+1:], ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, frag = query[:h], query[h:]
	}
	var b strings.Builder
	b.Grow(len(raw))
	b.WriteString(raw[:q+1])
	changed := false
	for i, pair := range strings.Split(query, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		name, _, hasValue := strings.Cut(pair, "=")
		if decoded, err := url.QueryUnescape(name); err == nil {
			name = decoded
		}
		if hasValue && SecretParam(name) {
			b.WriteString(pair[:strings.IndexByte(pair, '=')+1])
			b.WriteString(Mask)
			changed = true
			continue
		}
		b.WriteString(pair)
	}
	if !changed {
		return raw
	}
	b.WriteString(frag)
	return b.String()
}

// Parsed returns u as a client shows it in traces and messages: without
// user information, and with the value of each query parameter named as
// [SecretParam] says replaced by "REDACTED" (the query re-encoded, its
// parameters sorted by name). u is not changed.
func Parsed(u *url.URL) string {
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q := c.Query()
		for k, vs := range q {
			if SecretParam(k) {
				for i := range vs {
					vs[i] = parsedMask
				}
			}
		}
		c.RawQuery = q.Encode()
	}
	return c.String()
}

// Strip returns raw, a URL or a repository address, without anything that
// may be a secret: a URL with a scheme loses its user information
// (user:password@ or token@), its query and its fragment; an scp-like
// address ("git@host:org/x.git") or a path, which cannot carry a password,
// is returned as it is. The rest is kept byte for byte.
func Strip(raw string) string { return strip(raw, false) }

// WithCredentials returns u with user and password as its user
// information: the one place that puts a secret into a URL (a test's git
// remote holding a forge token), the inverse of [Strip]. Show the result
// only through [URL] or [Strip].
func WithCredentials(u *url.URL, user, password string) *url.URL {
	c := *u
	c.User = url.UserPassword(user, password)
	return &c
}

// Identity returns a git remote as a census report names its project:
// [Strip], except that a URL whose scheme is not http or https keeps its
// user name without the password ("ssh://git:pw@host/x" is
// "ssh://git@host/x"), since there the user is an account name rather
// than a token.
func Identity(remote string) string { return strip(remote, true) }

func strip(raw string, keepNonHTTPUser bool) string {
	start, end, ok := authority(raw)
	if !ok {
		return raw
	}
	rest := raw[end:]
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	host := raw[start:end]
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		user := ""
		if s := strings.ToLower(raw[:start-3]); keepNonHTTPUser && s != "http" && s != "https" {
			user, _, _ = strings.Cut(host[:at], ":")
		}
		host = host[at+1:]
		if user != "" {
			host = user + "@" + host
		}
	}
	return raw[:start] + host + rest
}

// Origin returns only the scheme and host of raw followed by "/…", for a
// URL whose path or query is itself a secret (a Slack or Discord webhook),
// or "<invalid url>" when raw is not an absolute URL.
func Origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "<invalid url>"
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// MinSecret is the length below which a part of an address is not
// returned by [Secrets]: "git", "main" or "u" are words of any message,
// not secrets (a URL's user information is removed by [Strip] whatever
// its length).
const MinSecret = 8

// Secrets returns the parts of repo, a URL, that must never be shown
// outside it either: the password, the user name when there is no
// password (a token given as user name), and every query value; each as
// written, query-escaped and path-escaped, when [MinSecret] bytes or
// longer. It returns nil for anything without a scheme.
func Secrets(repo string) []string {
	u, err := url.Parse(repo)
	if err != nil || u.Scheme == "" {
		return nil
	}
	var out []string
	add := func(v string) {
		if len(v) < MinSecret {
			return
		}
		for _, s := range []string{v, url.QueryEscape(v), url.PathEscape(v)} {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			add(v)
		}
	}
	if u.User == nil {
		return out
	}
	if p, ok := u.User.Password(); ok {
		add(p)
	} else {
		add(u.User.Username())
	}
	return out
}

// urlInText matches a URL with a scheme in a message, up to a blank, a
// quote or an angle bracket.
var urlInText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'"<>]+`)
})

// Text returns s, an error or a program's output, as it may be shown:
// every URL in it as [Strip] shows it (no user information, query or
// fragment), and each of secrets (see [Secrets]) that stands as a word of
// its own replaced by [Blank] ([Words]).
func Text(s string, secrets []string) string {
	if strings.Contains(s, "://") {
		s = urlInText().ReplaceAllStringFunc(s, Strip)
	}
	return Words(s, secrets)
}

// Words returns s with each of secrets that no letter, digit, "_" or
// non-ASCII byte touches on either side replaced by [Blank]. A secret
// inside a longer word is left: a user name "u" must not blank "exit
// status 128". Empty secrets are ignored.
func Words(s string, secrets []string) string {
	for _, sec := range secrets {
		s = replaceWord(s, sec)
	}
	return s
}

func replaceWord(s, w string) string {
	if w == "" || !strings.Contains(s, w) {
		return s
	}
	var b strings.Builder
	done := 0 // s[:done] is written
	for from := 0; ; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			break
		}
		i += from
		end := i + len(w)
		if (i == 0 || !wordByte(s[i-1])) && (end == len(s) || !wordByte(s[end])) {
			b.WriteString(s[done:i])
			b.WriteString(Blank)
			done, from = end, end
		} else {
			from = i + 1
		}
	}
	b.WriteString(s[done:])
	return b.String()
}

func wordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// All returns s with every occurrence of secret, inside a word or not,
// replaced by [Mask]: for a secret known to be one, such as a token the
// user typed, that a server might echo back. An empty secret leaves s as
// it is.
func All(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, Mask)
}

// Error returns err with every occurrence of secret in its text replaced
// by [Mask] ([All]), for the rare error that could hold it (a server that
// echoes a token back). An error without the secret, or a nil one, is
// returned as it is, so that [errors.Is] and [errors.As] still see it.
func Error(err error, secret string) error {
	if err == nil || secret == "" {
		return err
	}
	msg := err.Error()
	if shown := All(msg, secret); shown != msg {
		return errors.New(shown)
	}
	return err
}
