package logx

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"go.uber.org/zap/zapcore"
)

// Redacted replaces a sensitive value in a log line.
const Redacted = "[REDACTED]"

// SensitiveHeaders are the request headers (lowercase) logged as
// [Redacted] unless the logger is at debug level or below.
var SensitiveHeaders = []string{"authorization", "cookie", "set-cookie", "x-registry-token", "proxy-authorization"}

func sensitiveHeader(lower string) bool {
	for _, h := range SensitiveHeaders {
		if h == lower {
			return true
		}
	}
	return false
}

// commonLower maps canonical names of common request headers to lowercase
// without allocating.
var commonLower = func() map[string]string {
	m := map[string]string{}
	for _, h := range []string{"Accept", "Accept-Encoding", "Accept-Language", "Authorization", "Cache-Control",
		"Connection", "Content-Length", "Content-Type", "Cookie", "If-None-Match", "If-Modified-Since",
		"Proxy-Authorization", "Referer", "Set-Cookie", "User-Agent", "X-Forwarded-For", "X-Forwarded-Host",
		"X-Forwarded-Proto", "X-Real-Ip", "X-Registry-Token", "X-Request-Id"} {
		m[h] = strings.ToLower(h)
	}
	return m
}()

// Headers returns h as a zap object with lowercase names (values of a
// repeated header joined with ", "). Sensitive headers are replaced by
// [Redacted] unless clear is true. Header names are written in sorted order.
func Headers(h http.Header, clear bool) zapcore.ObjectMarshaler {
	return headers{h: h, clear: clear}
}

// HeaderObject is [Headers] as a value a caller can keep in a reused
// struct and pass by pointer, so that logging headers does not allocate.
type HeaderObject struct {
	Header http.Header
	Clear  bool
}

// MarshalLogObject implements [zapcore.ObjectMarshaler] as [Headers] does.
func (h *HeaderObject) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	return headers{h: h.Header, clear: h.Clear}.MarshalLogObject(enc)
}

type headers struct {
	h     http.Header
	clear bool
}

// AppendFields implements [FieldsAppender] as MarshalLogObject does.
func (h *HeaderObject) AppendFields(f Fields) {
	headers{h: h.Header, clear: h.Clear}.each(f.String)
}

func (hs headers) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	hs.each(enc.AddString)
	return nil
}

// each calls add with the lowercase name and the value of each header, by
// name.
func (hs headers) each(add func(k, v string)) {
	var buf [32]string
	names := buf[:0]
	for k := range hs.h {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		lower, ok := commonLower[k]
		if !ok {
			lower = strings.ToLower(k)
		}
		if !hs.clear && sensitiveHeader(lower) {
			add(lower, Redacted)
			continue
		}
		v := hs.h[k]
		if len(v) == 1 {
			add(lower, v[0])
		} else {
			add(lower, strings.Join(v, ", "))
		}
	}
}

// sensitiveParam reports whether a query parameter name (any case) may
// carry a credential.
func sensitiveParam(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"token", "secret", "password", "passwd", "auth", "key", "signature", "credential", "session"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	switch n {
	case "sig", "pwd", "pass", "code", "jwt":
		return true
	}
	return false
}

// RedactURL returns a request URL (a request-target such as
// "/registries/@ns/x?token=abc", or an absolute URL) safe to log: the values
// of query parameters whose names suggest a credential (token, access_token,
// api_key, secret, password, sig, ...) become [Redacted], and so does the
// password of a userinfo part. Everything else is kept verbatim, so a URL
// without credentials is returned unchanged.
func RedactURL(raw string) string {
	if i := strings.Index(raw, "://"); i >= 0 && !strings.ContainsAny(raw[:i], "/?#") {
		raw = redactUserinfo(raw, i+3)
	}
	q := strings.IndexByte(raw, '?')
	if q < 0 {
		return raw
	}
	frag := ""
	query := raw[q+1:]
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
		if hasValue && sensitiveParam(name) {
			b.WriteString(pair[:strings.IndexByte(pair, '=')+1])
			b.WriteString(Redacted)
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

// redactUserinfo hides the password of "scheme://user:pass@host..." where
// authority starts at index start.
func redactUserinfo(raw string, start int) string {
	end := len(raw)
	if i := strings.IndexAny(raw[start:], "/?#"); i >= 0 {
		end = start + i
	}
	at := strings.LastIndexByte(raw[start:end], '@')
	if at < 0 {
		return raw
	}
	userinfo := raw[start : start+at]
	user, _, hasPass := strings.Cut(userinfo, ":")
	if !hasPass {
		// A lone user part can be a token (https://<token>@host).
		user = Redacted
	} else {
		user += ":" + Redacted
	}
	return raw[:start] + user + raw[start+at:]
}
