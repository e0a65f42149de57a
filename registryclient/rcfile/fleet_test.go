package rcfile_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/jigkit/jig/registryclient/rcfile"
)

// TestFleetAllowHosts reads the hosts jig fleet update --from-census may
// clone from; a malformed section is an error naming the file, and the
// section is kept on save.
func TestFleetAllowHosts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		data    string
		want    []string
		wantErr string
	}{
		{`{}`, nil, ""},
		{`{"fleet": null}`, nil, ""},
		{`{"fleet": {"allowHosts": ["git.example.com", "github.com"]}}`, []string{"git.example.com", "github.com"}, ""},
		{`{"fleet": {"allowHosts": "github.com"}}`, nil, `/x/.jigrc: "fleet" must be an object`},
	} {
		cfg, err := rcfile.Parse("/x/.jigrc", []byte(c.data))
		if err != nil {
			t.Fatal(err)
		}
		got, err := cfg.FleetAllowHosts()
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: got error %v, want %q", c.data, err, c.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, %v, want %q", c.data, got, err, c.want)
		}
	}
	cfg, err := rcfile.Parse("/x/.jigrc", []byte(`{"fleet": {"allowHosts": ["github.com"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Set("@team", rcfile.Update{URL: ptr("https://r.example.com")}); err != nil {
		t.Fatal(err)
	}
	data, err := cfg.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"allowHosts"`) {
		t.Errorf("the fleet section was lost on save:\n%s", data)
	}
}
