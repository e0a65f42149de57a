// Package envvar expands "${NAME}" references to environment variables in
// configuration values: the one rule the client's rc file and the
// server's upstreams file share.
package envvar

import (
	"os"
	"regexp"
	"sync"
)

// ref matches ${NAME}; compiled on first use, not on every start.
var ref = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`) })

// Expand replaces every ${NAME} of s with the variable's value from lookup
// (os.LookupEnv when nil). missing is the first variable that is not set,
// "" when all are; the caller turns it into an error naming where it was
// used. Text that is not a ${NAME} reference (a lone "$") is kept as it is.
func Expand(s string, lookup func(string) (string, bool)) (out, missing string) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	out = ref().ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		v, ok := lookup(name)
		if !ok && missing == "" {
			missing = name
		}
		return v
	})
	return out, missing
}
