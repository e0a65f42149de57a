package merge

import (
	"fmt"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&long, "%d\n", i)
	}
	longChanged := strings.Replace(strings.Replace(long.String(), "2\n", "two\n", 1), "19\n", "nineteen\n", 1)
	tests := []struct {
		name              string
		before, after     string
		beforeOK, afterOK bool
		want              string
	}{
		{"equal", "a\n", "a\n", true, true, ""},
		{"created", "", "x\ny\n", false, true, "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"deleted", "x\n", "", true, false, "--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"},
		{"no newline", "a\nb", "a\nc", true, true, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"two hunks", long.String(), longChanged, true, true,
			"--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -16,5 +16,5 @@\n 16\n 17\n 18\n-19\n+nineteen\n 20\n"},
		{"crlf counts", "a\r\n", "a\n", true, true, "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\r\n+a\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := UnifiedDiff("f", []byte(tt.before), tt.beforeOK, []byte(tt.after), tt.afterOK)
			if got != tt.want {
				t.Errorf("got:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}
