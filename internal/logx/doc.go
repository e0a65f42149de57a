// Package logx builds jig-server's zap logger and holds the redaction rules
// for what it logs.
//
// [New] writes JSON lines with the fields pino (the reference server's
// logger) writes, so existing log pipelines keep working: a numeric "level"
// (trace 10, debug 20, info 30, warn 40, error 50, fatal 60), "time" in
// epoch milliseconds, "pid", "hostname" and "msg". In development it writes
// coloured console lines instead (see [ResolveFormat]). zap has no trace
// level; [TraceLevel] sits just below debug. A line whose only field is a
// [JSONObject] (the request log line) is written by the object itself,
// with the bytes zap's encoder would write.
//
// [Headers] renders request headers with the sensitive ones
// ([SensitiveHeaders]) replaced by "[REDACTED]", and [RedactURL] hides
// credentials in URLs (query parameters such as token=..., and userinfo),
// so tokens never reach a log line through a URL.
package logx
