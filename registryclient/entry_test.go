package registryclient

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDisplayHeaders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		e    Entry
		want []Header
	}{
		{name: "none", e: Entry{URL: "http://x"}},
		{name: "token first then sorted", e: Entry{Token: "t", Headers: map[string]string{"Z-Last": "z", "Accept-X": "a"}},
			want: []Header{{"Authorization", "Bearer t"}, {"Accept-X", "a"}, {"Z-Last", "z"}}},
		{name: "token overrides custom authorization", e: Entry{Token: "t", Headers: map[string]string{"authorization": "Basic x"}},
			want: []Header{{"Authorization", "Bearer t"}}},
		{name: "custom authorization first", e: Entry{Headers: map[string]string{"B": "b", "Authorization": "Basic x", "A": "a"}},
			want: []Header{{"Authorization", "Basic x"}, {"A", "a"}, {"B", "b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, tt.e.DisplayHeaders()); diff != "" {
				t.Errorf("DisplayHeaders mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
