package logx

import (
	"net/http"
	"slices"
	"strings"

	"go.uber.org/zap/zapcore"

	"github.com/jigkit/jig/internal/redact"
)

// Redacted replaces a sensitive value in a log line ([redact.Mask]).
const Redacted = redact.Mask

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

// RedactURL returns a request URL (a request-target such as
// "/registries/@ns/x?token=abc", or an absolute URL) safe to log, as
// [redact.URL] shows it: the values of query parameters whose names
// suggest a credential and the password of a userinfo part become
// [Redacted]; a URL without credentials is returned unchanged.
func RedactURL(raw string) string { return redact.URL(raw) }
