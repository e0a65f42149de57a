package wire_test

import (
	"errors"
	"strings"
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

func TestParseCensusHistory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int // 0: refused
	}{
		{"90d", 90}, {"30d", 30}, {"7d", 7}, {"1d", 1}, {"732d", 732},
		{"733d", 0}, {"0d", 0}, {"07d", 0}, {"-1d", 0}, {"+7d", 0}, {"d", 0}, {"", 0},
		{"90", 0}, {"90h", 0}, {"90D", 0}, {" 90d", 0}, {"90d ", 0}, {"9_0d", 0}, {"1e2d", 0},
		{"99999999999999999999999d", 0}, {"90dd", 0}, {"0x10d", 0},
	}
	for _, tt := range tests {
		got, err := wire.ParseCensusHistory(tt.in)
		if got != tt.want || (err == nil) != (tt.want > 0) {
			t.Errorf("ParseCensusHistory(%q): got %d, %v; want %d", tt.in, got, err, tt.want)
		}
		if err != nil && (!errors.Is(err, wire.ErrInvalidHistory) || !strings.Contains(err.Error(), "such as 90d, from 1d to 732d")) {
			t.Errorf("ParseCensusHistory(%q): error %q does not say what it takes", tt.in, err)
		}
		if err == nil && wire.CensusHistoryWindow(got) != tt.in {
			t.Errorf("CensusHistoryWindow(%d): got %q, want %q", got, wire.CensusHistoryWindow(got), tt.in)
		}
	}
	if _, err := wire.ParseCensusHistory(strings.Repeat("9", 10000)); len(err.Error()) > 200 {
		t.Errorf("a long value is echoed whole: %d bytes", len(err.Error()))
	}
}

func TestCensusDayTotals(t *testing.T) {
	t.Parallel()
	d := wire.CensusDay{Versions: []wire.CensusVersionRow{{Version: "2.0.0", Projects: 3}, {Version: "1.0.0", Projects: 2}},
		Other: &wire.CensusOther{Versions: 4, Projects: 5}}
	if d.Total() != 10 || d.On("2.0.0") != 3 || d.On("3.0.0") != 0 {
		t.Errorf("Total %d, On(2.0.0) %d, On(3.0.0) %d: want 10, 3, 0", d.Total(), d.On("2.0.0"), d.On("3.0.0"))
	}
}
