package targetversion

import (
	"strings"
	"testing"
)

// TestCheck: the one check of a target version, which jig update, jig
// diff, jig mcp and PlanUpdate share.
func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		to   string
		n    int
		want string
	}{
		{"", 0, ""}, {"", 3, ""}, {"1.2.0", 1, ""}, {"1.2.0-beta.1", 1, ""},
		{"1.2.0", 0, ErrNeedsOneRegistry.Error()}, {"1.2.0", 2, ErrNeedsOneRegistry.Error()},
		{"v1", 1, `"v1" is not a full SemVer version (for example 1.2.0)`}, {"^1.0.0", 1, "is not a full SemVer version"},
	} {
		err := Check(tc.to, tc.n)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%q, %d) = %v, want %q", tc.to, tc.n, err, tc.want)
		}
	}
}
