package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestHuhInputPlaceholder: the default is a placeholder, not text to edit:
// typing replaces it (it once gave "my-projecttyped"), and an empty answer
// means the default. Both the plain (accessible) and the full form.
func TestHuhInputPlaceholder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		plain          bool
	}{
		{"plain typed", "typed\n", "typed", true},
		{"plain empty takes default", "\n", "my-project", true},
		{"form typed", "typed\r", "typed", false},
		{"form empty takes default", "\r", "my-project", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			p := newHuhPrompter(strings.NewReader(tt.in), &out, tt.plain)
			got, err := p.Input(t.Context(), "Project name", "my-project")
			if err != nil {
				t.Fatalf("Input: %v (output %q)", err, out.String())
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if tt.plain && strings.Contains(out.String(), "\x1b") {
				t.Errorf("plain prompt wrote escape sequences: %q", out.String())
			}
		})
	}
}
