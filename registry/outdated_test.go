package registry

import "testing"

func TestUpdateCandidates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		installed      string
		versions       []string
		wanted, latest string
	}{
		{"1.0.0", []string{"2.0.0", "1.2.0", "1.1.0", "1.0.0"}, "1.2.0", "2.0.0"},
		{"1.0.0", []string{"1.0.0"}, "1.0.0", "1.0.0"},
		{"1.0.0", []string{"1.1.0-rc.1", "1.0.0"}, "1.0.0", "1.0.0"},
		{"1.1.0-rc.1", []string{"1.1.0-rc.2", "1.0.0"}, "1.1.0-rc.2", "1.1.0-rc.2"},
		{"0.2.1", []string{"0.3.0", "0.2.5", "0.2.1"}, "0.2.5", "0.3.0"},
		{"0.0.3", []string{"0.0.4", "0.0.3"}, "0.0.3", "0.0.4"},
		{"2.0.0", []string{"1.5.0", "2.0.0"}, "2.0.0", "2.0.0"},
		{"1.0.0", nil, "1.0.0", ""},
		{"1.0.0", []string{"garbage", "1.0.1"}, "1.0.1", "1.0.1"},
		{"1.0.0", []string{"2.0.0-beta.1"}, "1.0.0", "2.0.0-beta.1"},
	}
	for _, tt := range tests {
		w, l := UpdateCandidates(tt.installed, tt.versions)
		if w != tt.wanted || l != tt.latest {
			t.Errorf("UpdateCandidates(%s, %v) = %s, %s; want %s, %s", tt.installed, tt.versions, w, l, tt.wanted, tt.latest)
		}
	}
}
