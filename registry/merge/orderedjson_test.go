package merge

import "testing"

func TestJSONIndent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "  "},
		{"one line", `{"a": 1}`, "  "},
		{"two spaces", "{\n  \"a\": 1\n}\n", "  "},
		{"four spaces", "{\n    \"a\": {\n        \"b\": 1\n    }\n}\n", "    "},
		{"tab", "{\n\t\"a\": 1\n}\n", "\t"},
		{"CRLF", "{\r\n    \"a\": 1\r\n}\r\n", "    "},
		{"blank lines first", "{\n   \n\n   \"a\": 1\n}\n", "   "},
		{"too deep to be a unit", "{\n            \"a\": 1\n}\n", "  "},
		{"byte order mark", "\ufeff{\n    \"a\": 1\n}\n", "    "},
	} {
		if got := jsonIndent([]byte(tc.in)); got != tc.want {
			t.Errorf("%s: jsonIndent(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}
