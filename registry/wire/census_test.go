package wire_test

import (
	"testing"

	"github.com/jigkit/jig/registry/wire"
)

func TestStripCredentials(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"https://user:pass@github.com/org/x.git", "https://github.com/org/x.git"},
		{"https://ghp_token@github.com/org/x.git", "https://github.com/org/x.git"},
		{"https://oauth2:glpat-xyz@gitlab.com/g/x", "https://gitlab.com/g/x"},
		{"HTTPS://u:p@host/x", "HTTPS://host/x"},
		{"https://host/x.git?private_token=abc#frag", "https://host/x.git"},
		{"https://u:p@host", "https://host"},
		{"https://a@b:c@host/x", "https://host/x"},
		{"ssh://git:pw@host/x.git", "ssh://git@host/x.git"},
		{"ssh://git@host:22/x.git", "ssh://git@host:22/x.git"},
		{"git@github.com:org/x.git", "git@github.com:org/x.git"},
		{"/srv/git/x.git", "/srv/git/x.git"},
		{"file:///srv/x.git", "file:///srv/x.git"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := wire.StripCredentials(tt.in); got != tt.want {
			t.Errorf("StripCredentials(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}
