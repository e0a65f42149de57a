package envvar_test

import (
	"testing"

	"github.com/jigkit/jig/internal/envvar"
)

func TestExpand(t *testing.T) {
	t.Parallel()
	env := map[string]string{"A": "1", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range []struct{ in, want, missing string }{
		{"plain", "plain", ""},
		{"x${A}y${A}", "x1y1", ""},
		{"${EMPTY}", "", ""},
		{"$A and ${", "$A and ${", ""},
		{"${NOPE}-${A}-${ALSO}", "-1-", "NOPE"},
	} {
		got, missing := envvar.Expand(tc.in, lookup)
		if got != tc.want || missing != tc.missing {
			t.Errorf("Expand(%q) = %q, %q; want %q, %q", tc.in, got, missing, tc.want, tc.missing)
		}
	}
}
