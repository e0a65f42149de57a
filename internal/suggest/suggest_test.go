package suggest

import "testing"

func TestRegistry(t *testing.T) {
	t.Parallel()
	keys := []string{"@main/quality/eslint", "@main/quality/prettier", "@rack/build/typescript", "@main/runtimes/node"}
	tests := []struct {
		want, got string
	}{
		{"@main/quality/eslnt", "@main/quality/eslint"},
		{"@main/quality/esilnt", "@main/quality/eslint"},
		{"@main/quality/prettier", ""},
		{"@main/build/typescript", "@rack/build/typescript"},
		{"@main/quality/stylelint", ""},
		{"@main/x", ""},
		{"@mian/runtimes/node", "@main/runtimes/node"},
		{"@main/runtimes/deno", ""},
		{"@main/runtime/node", "@main/runtimes/node"},
	}
	for _, tt := range tests {
		if got := Registry(tt.want, keys); got != tt.got {
			t.Errorf("Registry(%q) = %q, want %q", tt.want, got, tt.got)
		}
	}
	if got := Registry("@main/a", nil); got != "" {
		t.Errorf("no keys: got %q, want \"\"", got)
	}
}

func TestDistance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"eslnt", "eslint", 1}, {"abc", "abc", 0},
	}
	for _, tt := range tests {
		if got := distance(tt.a, tt.b, 10); got != tt.d {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
		if got := distance(tt.a, tt.b, 0); tt.d > 0 && got != 1 {
			t.Errorf("distance(%q, %q, limit 0) = %d, want 1 (above the limit)", tt.a, tt.b, got)
		}
	}
}

// TestCommands: the one spelling of the commands the CLI, the web catalog
// and jig mcp suggest.
func TestCommands(t *testing.T) {
	t.Parallel()
	if got := AddCommand("@main/quality/eslint@1.2.0"); got != "jig add @main/quality/eslint@1.2.0" {
		t.Errorf("AddCommand = %q", got)
	}
	if got := InitCommand("@presets/node"); got != "jig init -t @presets/node" {
		t.Errorf("InitCommand = %q", got)
	}
}
