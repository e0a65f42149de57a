package registry

import (
	"strings"
)

// maxNPMNameLength is npm's limit on package name length.
const maxNPMNameLength = 214

// nodeBuiltins are the names of Node.js core modules, which npm refuses as
// names of new packages.
var nodeBuiltins = map[string]bool{
	"assert": true, "async_hooks": true, "buffer": true, "child_process": true, "cluster": true,
	"console": true, "constants": true, "crypto": true, "dgram": true, "diagnostics_channel": true,
	"dns": true, "domain": true, "events": true, "fs": true, "http": true, "http2": true, "https": true,
	"inspector": true, "module": true, "net": true, "os": true, "path": true, "perf_hooks": true,
	"process": true, "punycode": true, "querystring": true, "readline": true, "repl": true,
	"stream": true, "string_decoder": true, "sys": true, "timers": true, "tls": true,
	"trace_events": true, "tty": true, "url": true, "util": true, "v8": true, "vm": true, "wasi": true,
	"worker_threads": true, "zlib": true,
	// npm's own blacklist.
	"node_modules": true, "favicon.ico": true,
}

// ValidNPMName reports whether name is a valid name for a new, unscoped npm
// package: 1 to 214 characters of lowercase letters, digits, "-", "." and
// "_", not starting with "." or "_", and not the name of a Node.js core
// module, "node_modules" or "favicon.ico". (npm also allows "~", "'", "!",
// "(", ")" and "*" in old packages; they are refused here, as npm refuses
// them for new ones.)
func ValidNPMName(name string) bool {
	if name == "" || len(name) > maxNPMNameLength || name[0] == '.' || name[0] == '_' || nodeBuiltins[name] {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !npmNameByte(name[i]) {
			return false
		}
	}
	return true
}

func npmNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'
}

// NPMName derives a valid npm package name ([ValidNPMName]) from a project
// name: it is lowercased, every run of other characters becomes one "-",
// leading ".", "_" and "-" and trailing "-" and "." are dropped, the result
// is cut to 214 characters, and a core-module or reserved name gets "-app"
// appended. A name with nothing usable left gives "my-project". A valid
// name is returned unchanged: "MyApp" gives "myapp", "my app!" "my-app".
func NPMName(project string) string {
	if ValidNPMName(project) {
		return project
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(project) {
		if r < 0x80 && npmNameByte(byte(r)) {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimLeft(b.String(), "._-")
	if len(s) > maxNPMNameLength {
		s = s[:maxNPMNameLength]
	}
	s = strings.TrimRight(s, "-.")
	switch {
	case s == "":
		return "my-project"
	case nodeBuiltins[s]:
		s += "-app"
	}
	return s
}
